// Compiled by `tsc -p __test__/types/tsconfig.subpaths.json` (see loading.spec.js):
// the subpath entries are typed, from CommonJS-compiled TypeScript (this file)
// and from ESM (subpaths.mts), and export only their own names.
import { ErrorBudgetTracker } from 'captcha-error-budget'
import {
  METRICS_CONTENT_TYPE,
  prometheusRules,
  registerMetrics,
  renderMetrics,
  type MetricsOptions,
  type PrometheusRulesOptions,
} from 'captcha-error-budget/prometheus'
import { CALLER_ERROR_CODES, createSolver, defaultCountsAsFailure, type Solver } from 'captcha-error-budget/solver'

const tracker = new ErrorBudgetTracker({ clock: 'manual' })
const options: MetricsOptions = { name: 'turnstile', labels: { region: 'eu' } }
const slo: PrometheusRulesOptions = { name: 'turnstile', targetRate: 0.95, windowMs: 86_400_000 }
const text: string = renderMetrics([{ tracker, ...options }]) + tracker.metrics(options)
const yaml: string = prometheusRules(slo)
const remove: () => void = registerMetrics(tracker, { registerMetric() {}, removeSingleMetric() {} })
const solver: Solver = createSolver({ apiKey: 'k', tracker })
const counts: boolean = defaultCountsAsFailure(new Error('x'))
const codes: readonly string[] = CALLER_ERROR_CODES
void [METRICS_CONTENT_TYPE.length, text, yaml, remove, solver.baseUrl, counts, codes]

// @ts-expect-error: targetRate is a number
prometheusRules({ name: 'turnstile', targetRate: '0.95', windowMs: 86_400_000 })
// @ts-expect-error: createSolver needs a tracker
createSolver({ apiKey: 'k' })
