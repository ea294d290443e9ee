// The subpath entries from ESM TypeScript (see subpaths.ts).
import { ErrorBudgetTracker } from 'captcha-error-budget'
import { prometheusRules, renderMetrics } from 'captcha-error-budget/prometheus'
import { createSolver, type SolverOptions } from 'captcha-error-budget/solver'

const tracker = new ErrorBudgetTracker()
const options: SolverOptions = { apiKey: 'k', tracker, pollIntervalMs: 5000 }
void [createSolver(options), renderMetrics([{ tracker }]), prometheusRules({ name: 'x', targetRate: 0.9, windowMs: 3_600_000 })]

// @ts-expect-error: the tracker class is the main entry's, not this subpath's
import { ErrorBudgetTracker as NotHere } from 'captcha-error-budget/solver'
void NotHere
