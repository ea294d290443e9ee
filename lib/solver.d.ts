// Types of `captcha-error-budget/solver` (lib/solver.js): the same declarations
// as the main entry's, so that both entries agree.
export { CALLER_ERROR_CODES, createFailover, createSolver, defaultCountsAsFailure } from '../index'
export type { BadReports, CreateTaskTask, Failover, ProviderName, Solver, SolverOptions, SolveResult, SolveTask, SolveTaskParams, WhenExhausted } from '../index'
