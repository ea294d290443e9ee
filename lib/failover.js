'use strict'
// createFailover([primary, secondary, …]): solvers tried in order, each under its
// own budget. CaptchaAI and 2Captcha speak the same in.php / res.php protocol, so
// two `createSolver()`s with their own `baseUrl`, `apiKey` and tracker make a
// primary and a fallback. A solver whose guard does not admit the attempt (its
// budget exhausted: throttled or refused, a BudgetExhaustedError, nothing sent or
// recorded) hands the task to the next; any other outcome is final — a solve that
// ran and failed was recorded by its own budget, and is not sent twice.
const { BudgetExhaustedError, describe, invalidArgType, checkOptionsObject } = require('./errors.js')

/**
 * @param {ReadonlyArray<{ solve: (task: object, options?: object) => Promise<unknown> }>} solvers in order of preference
 * @returns {{ solve: (task: object, options?: { critical?: boolean }) => Promise<unknown>, solvers: ReadonlyArray<object> }}
 */
function createFailover(solvers) {
  if (!Array.isArray(solvers)) throw invalidArgType(`createFailover(solvers): solvers must be an array, got ${describe(solvers)}`)
  if (solvers.length === 0) {
    const err = new RangeError('createFailover(solvers): solvers must hold at least one solver, got an empty array')
    err.code = 'ERR_OUT_OF_RANGE'
    throw err
  }
  // Every index, holes included (forEach skips a hole: `[, solver]`).
  const list = []
  for (let i = 0; i < solvers.length; i++) {
    const solver = solvers[i]
    if (solver === null || typeof solver !== 'object' || typeof solver.solve !== 'function') {
      throw invalidArgType(`createFailover(solvers): solvers[${i}] must be a solver (createSolver()), got ${describe(solver)}`)
    }
    list.push(solver)
  }
  Object.freeze(list)

  /**
   * Solves `task` with the first solver whose budget admits it. Resolves with
   * that solver's result, plus `solver`: its index. Rejects with that solver's
   * error; when every budget refuses, with the BudgetExhaustedError whose
   * `retryAfterMs` is the soonest (null only if none can tell), its `refusals`
   * holding every solver's.
   */
  async function solve(task, options) {
    checkOptionsObject(options, ['critical'], 'solve options')
    const refusals = []
    for (let i = 0; i < list.length; i++) {
      try {
        const result = await list[i].solve(task, options)
        return { ...result, solver: i }
      } catch (err) {
        if (!(err instanceof BudgetExhaustedError)) throw err
        refusals.push(err)
      }
    }
    const soonest = refusals.reduce((a, b) => (a.retryAfterMs !== null && (b.retryAfterMs === null || a.retryAfterMs <= b.retryAfterMs) ? a : b))
    soonest.refusals = refusals
    throw soonest
  }

  return Object.freeze({ solve, solvers: list })
}

module.exports = { createFailover }
