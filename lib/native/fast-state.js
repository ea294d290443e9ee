'use strict'
// What one guard() decision and one Prometheus scrape read of a tracker, each in
// one call into the addon: the tracker's `guardStateInto` and `scrapeInto`
// (src/fast_state.rs) fill this thread's buffer, read here by name
// (`b[G.total]`; the layouts, crates/budget-core/src/layout.rs's `GuardField` and
// `ScrapeField`, are checked at load by lib/native/contract.js). Read getter by
// getter, a decision took 4–5 calls and a scrape 6 plus one per alert window.
// The buffer returned is overwritten by the next report, decision or scrape on
// this thread: the caller reads what it needs at once.
// On WASI the addon fills a copy in wasm memory, not this buffer: there the same
// values come from the getters (`guardStateFromGetters`, `scrapeFromGetters`).

const native = require('./load-native.js')
const { REPORT_INTO, GUARD: G, SCRAPE: S, SCRAPE_PAIR: SP, SCRAPE_WINDOW: SW } = require('./contract.js')
const { SCRAPE_HEAD, SCRAPE_PAIR_SIZE, SCRAPE_WINDOW_SIZE, STATUSES } = require('./contract.js')
const { threadValues, policyOf } = require('./fast-report.js')

const FAST = native.__napiBindingTarget === 'native'

// Each tracker's guardStateInto, scrapeInto and stamped record, bound to its native
// state (`guardFillers`, src/fast_path.rs): made on its first guard() or scrape and
// kept here, not on the tracker, so that a tracker that never guards nor is scraped
// does not pay for three more functions (20 000 made and closed grew RSS by 25 MiB).
const fillers = new WeakMap()

/** `{ guardStateInto, scrapeInto, recordStamped }` of `tracker` (a tracker made by the constructor: the caller checked). */
function fillersOf(tracker) {
  let bound = fillers.get(tracker)
  if (bound === undefined) {
    const [guardStateInto, scrapeInto, recordStamped] = native.guardFillers(tracker)
    bound = { guardStateInto, scrapeInto, recordStamped }
    fillers.set(tracker, bound)
  }
  return bound
}

// A scrape that needs more room than the thread's buffer (a policy of many pairs) fills this one.
let large = new Float64Array(0)

/**
 * The burn rate of `tracker` over its last `recentMs` (all of a shorter window):
 * what `recentBurnRate` of the guard buffer holds (lib/guard/throttle.js).
 */
function recentBurnRateOver(tracker, recentMs) {
  try {
    return tracker.burnRateOver(recentMs)
  } catch (err) {
    if (err.code === 'ERR_OUT_OF_RANGE') return tracker.burnRate // a window under recentMs: all of it
    throw err
  }
}

/**
 * What a guard() decision reads of `tracker` now, by `GUARD` index: closed (0 or 1), now,
 * status (a `STATUSES` index, without hysteresis), total, sloTarget, and with
 * `recentMs` while exhausted the recent burn rate (else NaN).
 */
function guardState(tracker, recentMs) {
  // (Not a tracker — an object made from the prototype: the getters' receiver check throws.)
  if (!FAST || tracker[REPORT_INTO] === undefined) return guardStateFromGetters(tracker, recentMs)
  const b = threadValues()
  fillersOf(tracker).guardStateInto(undefined, recentMs)
  return b
}

/** `guardState` read getter by getter (WASI; and the specs' reference). */
function guardStateFromGetters(tracker, recentMs) {
  const b = []
  b[G.closed] = tracker.closed ? 1 : 0
  b[G.now] = tracker.now
  b[G.status] = STATUSES.indexOf(tracker.status)
  b[G.total] = tracker.total
  b[G.sloTarget] = tracker.report().sloTarget
  b[G.recentBurnRate] = recentMs !== undefined && STATUSES[b[G.status]] === 'exhausted' ? recentBurnRateOver(tracker, recentMs) : NaN
  return b
}

/**
 * What a scrape reads of `tracker` now, by `SCRAPE` index: the head, then one
 * `SCRAPE_PAIR` per pair of its alert policy (policy order), then one
 * `SCRAPE_WINDOW` per distinct window of the policy, shortest first.
 */
function scrapeState(tracker) {
  if (!FAST || tracker[REPORT_INTO] === undefined) return scrapeFromGetters(tracker)
  const { scrapeInto } = fillersOf(tracker)
  const b = threadValues()
  const needed = scrapeInto()
  if (needed <= b.length) return b
  if (needed > large.length) large = new Float64Array(needed)
  scrapeInto(large)
  return large
}

/** `scrapeState` read getter by getter (WASI; and the specs' reference). */
function scrapeFromGetters(tracker) {
  const report = tracker.report()
  const policy = policyOf(tracker)
  const windows = [...new Set(policy.flatMap((r) => [r.longWindowMs, r.shortWindowMs]))].sort((a, b) => a - b)
  const firing = new Set(report.alerts.map((a) => a.name))
  const recorded = tracker.recorded
  const b = []
  b[S.status] = STATUSES.indexOf(report.status)
  b[S.total] = report.total
  b[S.failures] = report.failures
  b[S.sloTarget] = report.sloTarget
  b[S.insufficientData] = report.insufficientData ? 1 : 0
  b[S.at] = report.at
  b[S.remainingFraction] = tracker.remainingFraction
  b[S.burnRate] = tracker.burnRate
  b[S.recordedSuccesses] = recorded.successes
  b[S.recordedFailures] = recorded.failures
  b[S.rejected] = tracker.rejected
  b[S.pairs] = policy.length
  b[S.windows] = windows.length
  policy.forEach((rule, i) => (b[pairAt(i) + SP.firing] = firing.has(rule.name) ? 1 : 0))
  windows.forEach((ms, j) => {
    b[windowAt(policy.length, j) + SW.windowMs] = ms
    b[windowAt(policy.length, j) + SW.burnRate] = tracker.burnRateOver(ms)
  })
  return b
}

/** Where pair `i` of a scrape buffer starts. */
function pairAt(i) {
  return SCRAPE_HEAD + SCRAPE_PAIR_SIZE * i
}

/** Where window `j` of a scrape buffer of `pairs` pairs starts. */
function windowAt(pairs, j) {
  return SCRAPE_HEAD + SCRAPE_PAIR_SIZE * pairs + SCRAPE_WINDOW_SIZE * j
}

module.exports = { fillersOf, guardState, guardStateFromGetters, scrapeState, scrapeFromGetters, recentBurnRateOver, pairAt, windowAt }
