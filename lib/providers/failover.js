'use strict'
// createFailover([primary, secondary, …]): solvers tried in order, each under its
// own budget. CaptchaAI and 2Captcha speak the same in.php / res.php protocol, so
// two `createSolver()`s with their own `baseUrl`, `apiKey` and tracker make a
// primary and a fallback. Which outcomes hand the task to the next solver (a budget
// that does not admit it, a provider's back-off, a capacity answer) is the walk both
// forms share, lib/providers/failover-walk.js.
const { describe, invalidArgType, outOfRange, checkOptionsObject } = require('../util/errors.js')
const { firstToSolve } = require('./failover-walk.js')

/**
 * @param {ReadonlyArray<{ solve: (task: object, options?: object) => Promise<unknown> }>} solvers in order of preference
 * @returns {{ solve: (task: object, options?: { critical?: boolean }) => Promise<unknown>, solvers: ReadonlyArray<object> }}
 */
function createFailover(solvers) {
  // Over a BudgetFamily with attribution, `createFailover(family, { providers })`:
  // providers × sites, with blame (lib/providers/failover-family.js).
  if (solvers !== null && typeof solvers === 'object' && !Array.isArray(solvers) && typeof solvers.blame === 'function') {
    return require('./failover-family.js').createFamilyFailover(solvers, arguments[1])
  }
  if (!Array.isArray(solvers)) throw invalidArgType(`createFailover(solvers): solvers must be an array, got ${describe(solvers)}`)
  if (solvers.length === 0) {
    throw outOfRange('createFailover(solvers): solvers must hold at least one solver, got an empty array')
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
   * Solves `task` with the first solver whose budget admits it and whose
   * provider has capacity. Resolves with that solver's result, plus `solver`: its
   * index. Rejects with that solver's error; when every solver refuses or turns
   * the task away, with a copy of the refusal (BudgetExhaustedError or ProviderBackoffError)
   * whose `retryAfterMs` is the soonest (null only if none can tell), its
   * `refusals` holding every solver's — or, when every one was turned away for
   * capacity, with the last such error.
   */
  async function solve(task, options) {
    checkOptionsObject(options, ['critical'], 'solve options')
    return firstToSolve(
      list.map((solver, i) => ({ solver, extra: { solver: i } })),
      task,
      options,
    )
  }

  return Object.freeze({ solve, solvers: list })
}

module.exports = { createFailover }
