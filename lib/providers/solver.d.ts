// Types of `captcha-error-budget/solver` (lib/providers/solver.js): the main entry re-exports
// the same declarations (lib/types/), so that both entries agree.
export { CALLER_ERROR_CODES, createFailover, createSolver, defaultCountsAsFailure } from '../types/solver.js'
export type { BadReports, CreateTaskTask, Failover, Solver, SolverOptions, SolveResult, SolveTask, SolveTaskParams } from '../types/solver.js'
export type { ProviderName, WhenExhausted } from '../types/guard.js'
