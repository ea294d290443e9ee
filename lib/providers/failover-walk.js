'use strict'
// The walk over providers that both forms of createFailover share: over solvers
// (lib/providers/failover.js) and over a family's children (lib/providers/failover-family.js). A
// provider that did not take the task hands it to the next:
// - its guard did not admit the attempt, nothing sent or recorded: its budget
//   refused (BudgetExhaustedError) or its provider's back-off holds it
//   (ProviderBackoffError, lib/guard/outcomes.js);
// - it was sent and turned away for capacity (by the solver's provider profile):
//   nothing was solved, the next provider may solve it.
// Any other outcome is final: a solve that ran and failed was recorded by its own
// budget, and is not sent twice.
const { BudgetExhaustedError, ProviderBackoffError } = require('../util/errors.js')
const { copyResult } = require('./solve-result.js')
const { classify, isInstance } = require('../guard/classify.js')

/**
 * Solves `task` with the first of `tries` that takes it: resolves with its result plus
 * `extra` (which provider solved it). When every one refuses or turns the task away,
 * rejects with a copy of the refusal (BudgetExhaustedError or ProviderBackoffError)
 * whose `retryAfterMs` is the soonest (null only if none can tell), its `refusals`
 * holding every one's — or, when every one was turned away for capacity, with the last
 * such error. `tries` may be a generator: each is made when its turn comes.
 * @param {Iterable<{ solver: { solve: Function, provider?: string }, extra: object }>} tries
 */
async function firstToSolve(tries, task, options) {
  const refusals = []
  let turnedAway = null
  for (const { solver, extra } of tries) {
    try {
      return copyResult(await solver.solve(task, options), extra)
    } catch (err) {
      // isInstance: a rejection that cannot be looked at (a revoked Proxy) is final, rejected as it is.
      if (isInstance(err, BudgetExhaustedError) || isInstance(err, ProviderBackoffError)) refusals.push(err)
      else if (isCapacity(solver, err)) turnedAway = err
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

/** Whether `err` from `solver` is a capacity answer by its provider's profile (lib/guard/classify.js). */
function isCapacity(solver, err) {
  return typeof solver.provider === 'string' && classify(undefined, solver.provider, err).outcome === 'capacity'
}

module.exports = { firstToSolve }
