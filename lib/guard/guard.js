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
const { stateOf } = require('./state.js')
const { guardState, fillersOf } = require('../native/fast-state.js')
const { GUARD: G, STATUSES } = require('../native/contract.js')
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
  const at = recordStamped(tracker, ok)
  if (at !== undefined) throttle.note(ok, at, probeIntervalMs)
  return at
}

// One call into the addon: the tracker's own stamped `record` stays on record()'s
// lock-free path and hands back the stamp it recorded at, where reading `now` and
// passing it as `record(ok, at)` took three calls and the locked path. A subclass
// that overrides `record` (it has no own `record` then) still has its override called.
function recordStamped(tracker, ok) {
  if (!Object.hasOwn(tracker, 'record')) {
    if (tracker.closed) return undefined
    const at = tracker.now
    tracker.record(ok, at)
    return at
  }
  try {
    return fillersOf(tracker).recordStamped(ok)
  } catch (err) {
    if (err?.code === 'ERR_TRACKER_CLOSED') return undefined
    throw err
  }
}

// A rejection, classified (lib/guard/classify.js): a success or failure goes to the
// window, 'excluded' and 'capacity' to the outcome ledger (lib/guard/outcomes.js);
// the provider's published back-off, if any, holds its next attempts from the
// attempt's stamp (a recorded one's, else the clock's: one more call, only then).
function recordRejection(tracker, error, { countsAsFailure, provider, probeIntervalMs }, throttle) {
  const { outcome, backoffMs, code } = classify(countsAsFailure, provider, error)
  const { ledger } = stateOf(tracker)
  if (outcome === 'success' || outcome === 'failure') {
    const at = record(tracker, outcome === 'success', throttle, probeIntervalMs)
    if (at !== undefined) ledger.holdOff(provider, code, at, backoffMs)
    return
  }
  const b = guardState(tracker)
  if (b[G.closed] === 1) return
  ledger.holdOff(provider, code, b[G.now], backoffMs)
  ledger.count(outcome)
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
    const state = stateOf(this)
    // Everything the decision reads, in one call at one instant (lib/native/fast-state.js), copied
    // out before anything refills the buffer. The recent burn rate (O(buckets)) is asked for only
    // where the throttle may read it: as a throttling guard finds the window exhausted.
    const asksRecent =
      parsed.whenExhausted === 'throttle' && (state.throttle === null || state.throttle.state === 'open' || state.throttle.state === 'refusing')
    const b = guardState(this, asksRecent ? throttles.RECENT_MS : undefined)
    if (b[G.closed] === 1) throw closedError()
    const now = b[G.now]
    const exhausted = STATUSES[b[G.status]] === 'exhausted'
    const total = b[G.total]
    const recentBurnRate = b[G.recentBurnRate]
    const sloTarget = b[G.sloTarget]
    // A provider's back-off (lib/guard/outcomes.js) holds every attempt, critical too: sending
    // during it gets the account banned. Then the throttle (lib/guard/throttle.js). Both on the tracker's clock.
    const held = state.ledger.heldAt(parsed.provider, now)
    if (held !== null) throw new ProviderBackoffError(parsed.provider, held.code, held.retryAfterMs)
    const throttle = state.throttleFor(sloTarget)
    const decision = throttle.decide(now, exhausted, total, parsed, () => recentBurnRate)
    if (!decision.admit) throw new BudgetExhaustedError(this.report(), decision.retryAfterMs)
    return attempt(this, fn, parsed, throttle)
  }
  return guard
}

module.exports = { makeGuard, inFlight }
