'use strict'
// tracker.guard(fn, options): one solve attempt, recorded exactly once.
//
// The article's solve_with_budget records a failure, raises, and its own except
// records it again. Here the recording lives in one place, behind a latch: the
// first of fn's settle and the deadline wins, and whatever comes second is
// dropped, so an attempt can never be counted twice.
const {
  BudgetExhaustedError,
  ProviderBackoffError,
  GuardTimeoutError,
  describe,
  thrownText,
  invalidArgType,
  invalidArgValue,
  trackerClosed,
  checkOptionsObject,
  integerOption,
} = require('../util/errors.js')
const throttles = require('./throttle.js')
const outcomes = require('./outcomes.js')
const { classify } = require('./classify.js')
const { PROVIDER_NAMES } = require('./profiles.js')
const { Verdict } = require('./verdict.js')

// The guard() calls of each tracker whose fn has not settled (nor timed out) yet:
// a family never evicts a child with one (lib/family/children.js), its outcome would be lost.
const inFlight = new WeakMap()

const GUARD_OPTIONS = ['timeoutMs', 'critical', 'countsAsFailure', 'provider', 'whenExhausted', 'minSolves', 'probeIntervalMs']
// setTimeout's limit: a longer delay would fire at once (with a warning).
const MAX_TIMEOUT_MS = 2 ** 31 - 1

function parseGuardOptions(options) {
  const { timeoutMs, critical, countsAsFailure, provider, whenExhausted, minSolves, probeIntervalMs } = checkOptionsObject(
    options,
    GUARD_OPTIONS,
    'guard options',
  )
  if (critical !== undefined && typeof critical !== 'boolean') {
    throw invalidArgType(`guard options.critical must be a boolean, got ${describe(critical)}`)
  }
  if (countsAsFailure !== undefined && typeof countsAsFailure !== 'function') {
    throw invalidArgType(`guard options.countsAsFailure must be a function, got ${describe(countsAsFailure)}`)
  }
  return {
    timeoutMs: integerOption(timeoutMs, 'guard options.timeoutMs', 1, MAX_TIMEOUT_MS, undefined),
    critical: critical === true,
    countsAsFailure,
    provider: checkProvider(provider, 'guard options.provider'),
    ...throttles.checkOptions({ whenExhausted, minSolves, probeIntervalMs }, 'guard options'),
  }
}

/** `provider` (undefined, or a profile's name: lib/guard/profiles.js) checked; `where` names it. */
function checkProvider(provider, where) {
  if (provider === undefined || PROVIDER_NAMES.includes(provider)) return provider
  const known = PROVIDER_NAMES.map((p) => `'${p}'`).join(', ')
  if (typeof provider !== 'string') throw invalidArgType(`${where} must be one of ${known}, got ${describe(provider)}`)
  throw invalidArgValue(`${where} must be one of ${known}, got '${provider}'`)
}

// A tracker closed while fn ran can no longer record: the outcome still reaches
// the caller (a solved CAPTCHA is not thrown away at shutdown), unrecorded.
// What is recorded is also the throttle's recent evidence (lib/guard/throttle.js).
// Returns the stamp recorded at (a late verdict names it), undefined if none.
function record(tracker, ok, throttle, probeIntervalMs) {
  if (tracker.closed) return undefined
  const at = tracker.now
  tracker.record(ok, at)
  throttle.note(ok, at, probeIntervalMs)
  return at
}

// A rejection, classified (lib/guard/classify.js): a success or failure goes to the
// window, 'excluded' and 'capacity' to the outcome ledger (lib/guard/outcomes.js);
// the provider's published back-off, if any, holds its next attempts.
function recordRejection(tracker, error, { countsAsFailure, provider, probeIntervalMs }, throttle) {
  if (tracker.closed) return
  const { outcome, backoffMs, code } = classify(countsAsFailure, provider, error)
  const ledger = outcomes.of(tracker)
  ledger.holdOff(provider, code, tracker.now, backoffMs)
  if (outcome === 'success' || outcome === 'failure') record(tracker, outcome === 'success', throttle, probeIntervalMs)
  else ledger.count(outcome)
}

function attempt(tracker, fn, options, throttle) {
  const { timeoutMs, probeIntervalMs } = options
  const controller = new AbortController()
  return new Promise((resolve, reject) => {
    let settled = false
    let timer
    const verdict = new Verdict(tracker, throttle, probeIntervalMs)
    const finish = (recordOutcome, settle) => {
      if (settled) return // the loser of the race: already recorded and settled
      settled = true
      clearTimeout(timer)
      const left = inFlight.get(tracker) - 1
      if (left === 0) inFlight.delete(tracker)
      else inFlight.set(tracker, left)
      try {
        recordOutcome()
      } catch (recordError) {
        // Not expected (classify() reads the rejection without throwing), but a throw
        // here would leave the attempt unsettled and its rejection unhandled: the
        // caller still gets fn's outcome, and the bug is told, not thrown.
        process.emitWarning(`guard: recording the attempt failed (${thrownText(recordError)}); its outcome reaches the caller unrecorded`, 'BudgetGuardWarning')
      }
      settle()
    }
    inFlight.set(tracker, (inFlight.get(tracker) ?? 0) + 1)
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        const timeout = new GuardTimeoutError(timeoutMs)
        finish(
          () => record(tracker, false, throttle, probeIntervalMs),
          () => {
            controller.abort(timeout) // fn should stop working; its late settle is ignored
            reject(timeout)
          },
        )
      }, timeoutMs)
    }
    let outcome
    try {
      outcome = Promise.resolve(fn(controller.signal, verdict.handle))
    } catch (error) {
      outcome = Promise.reject(error) // a synchronous throw is a rejection like any other
    }
    // Both handlers are attached, so a rejection after a timeout is never unhandled.
    outcome.then(
      (value) =>
        finish(
          () => verdict.succeeded(record(tracker, true, throttle, probeIntervalMs)),
          () => resolve(value),
        ),
      (error) =>
        finish(
          () => recordRejection(tracker, error, options, throttle),
          () => reject(error),
        ),
    )
  })
}

function closedError() {
  return trackerClosed('cannot call guard() on a closed ErrorBudgetTracker')
}

/**
 * The `guard()` method of `Tracker` (lib/tracker/tracker.js puts it on the prototype).
 * @param {Function} Tracker the exported ErrorBudgetTracker
 */
function makeGuard(Tracker) {
  /**
   * Runs `fn(signal, attempt)` as one solve attempt and records its outcome exactly once:
   * resolve → one success; reject → one failure (unless `countsAsFailure(error)`
   * says false: then nothing); `timeoutMs` passed first → one failure, `signal`
   * aborted, rejection with a GuardTimeoutError, fn's late settle ignored. While
   * the budget is exhausted it throttles (`whenExhausted: 'throttle'`, the default:
   * probes only while recent attempts fall short of the SLO, lib/guard/throttle.js) or
   * refuses (`'refuse'`): an attempt not admitted rejects with a
   * BudgetExhaustedError (with `retryAfterMs`) without calling fn, unless
   * `critical: true`. Bad arguments reject with a TypeError/RangeError
   * before anything is called or recorded. `attempt.reject(reason?)`, once the
   * success is recorded, turns it into a failure when the site rejects the
   * token (lib/guard/verdict.js).
   * @template T
   * @param {(signal: AbortSignal, attempt: { reject(reason?: string): boolean }) => T | PromiseLike<T>} fn
   * @param {{ timeoutMs?: number, critical?: boolean, countsAsFailure?: (error: unknown) => boolean,
   *   whenExhausted?: 'throttle' | 'refuse', minSolves?: number, probeIntervalMs?: number }} [options]
   * @returns {Promise<T>}
   */
  async function guard(fn, options) {
    if (!(this instanceof Tracker)) {
      throw invalidArgType(`guard() must be called on an ErrorBudgetTracker, got ${describe(this)}`)
    }
    if (typeof fn !== 'function') throw invalidArgType(`guard(fn, options): fn must be a function, got ${describe(fn)}`)
    const parsed = parseGuardOptions(options)
    if (this.closed) throw closedError()
    // A provider's back-off (lib/guard/outcomes.js) holds every attempt, critical too: sending
    // during it gets the account banned. Then the throttle (lib/guard/throttle.js). Both on the tracker's clock.
    const held = outcomes.of(this).heldAt(parsed.provider, this.now)
    if (held !== null) throw new ProviderBackoffError(parsed.provider, held.code, held.retryAfterMs)
    const throttle = throttles.of(this)
    const decision = throttle.decide(this.now, this.status === 'exhausted', this.total, parsed, () => throttles.recentBurnRate(this))
    if (!decision.admit) throw new BudgetExhaustedError(this.report(), decision.retryAfterMs)
    return attempt(this, fn, parsed, throttle)
  }
  return guard
}

module.exports = { makeGuard, inFlight }
