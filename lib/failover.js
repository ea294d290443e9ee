'use strict'
// createFailover([primary, secondary, …]): solvers tried in order, each under its
// own budget. CaptchaAI and 2Captcha speak the same in.php / res.php protocol, so
// two `createSolver()`s with their own `baseUrl`, `apiKey` and tracker make a
// primary and a fallback. A solver whose guard does not admit the attempt (its
// budget exhausted: throttled or refused, a BudgetExhaustedError, nothing sent or
// recorded), or whose provider's back-off holds it (a ProviderBackoffError,
// lib/outcomes.js), or whose provider turned it away for capacity (by the
// solver's profile: nothing solved), hands the task to the next; any other outcome is final — a solve that
// ran and failed was recorded by its own budget, and is not sent twice.
const { BudgetExhaustedError, ProviderBackoffError, describe, invalidArgType, checkOptionsObject } = require('./errors.js')
const { copyResult } = require('./solve-result.js')
const { classify } = require('./classify.js')

/**
 * @param {ReadonlyArray<{ solve: (task: object, options?: object) => Promise<unknown> }>} solvers in order of preference
 * @returns {{ solve: (task: object, options?: { critical?: boolean }) => Promise<unknown>, solvers: ReadonlyArray<object> }}
 */
function createFailover(solvers) {
  // Over a BudgetFamily with attribution, `createFailover(family, { providers })`:
  // providers × sites, with blame (lib/failover-family.js).
  if (solvers !== null && typeof solvers === 'object' && !Array.isArray(solvers) && typeof solvers.blame === 'function') {
    return require('./failover-family.js').createFamilyFailover(solvers, arguments[1])
  }
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
    const refusals = []
    let turnedAway = null
    for (let i = 0; i < list.length; i++) {
      try {
        const result = await list[i].solve(task, options)
        return copyResult(result, { solver: i })
      } catch (err) {
        // Not admitted (nothing sent): its budget refused, or its provider's back-off holds it.
        if (err instanceof BudgetExhaustedError || err instanceof ProviderBackoffError) refusals.push(err)
        // Sent, and turned away for capacity (its provider's profile): nothing was solved, the next may.
        else if (isCapacity(list[i], err)) turnedAway = err
        else throw err
      }
    }
    if (refusals.length === 0) throw turnedAway
    const soonest = refusals.reduce((a, b) => (a.retryAfterMs !== null && (b.retryAfterMs === null || a.retryAfterMs <= b.retryAfterMs) ? a : b))
    // A copy of it, so that the error is not in its own refusals (a cycle JSON.stringify refuses).
    const err =
      soonest instanceof ProviderBackoffError
        ? new ProviderBackoffError(soonest.provider, soonest.providerCode, soonest.retryAfterMs)
        : new BudgetExhaustedError(soonest.report, soonest.retryAfterMs)
    err.refusals = refusals
    throw err
  }

  return Object.freeze({ solve, solvers: list })
}

/** Whether `err` from `solver` is a capacity answer by its provider's profile (lib/classify.js). */
function isCapacity(solver, err) {
  return typeof solver.provider === 'string' && classify(undefined, solver.provider, err).outcome === 'capacity'
}

module.exports = { createFailover }
