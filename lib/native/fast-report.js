'use strict'
// tracker.report() built in JavaScript: an object literal costs tens of ns,
// where building the same 15-property object through Node-API costs ≈3 µs
// (every property interns its name and walks V8's map transitions). The
// numbers come from the native tracker in one call, written into a shared
// Float64Array, read by name: `b[R.total]` (the layout is crates/budget-core/src/layout.rs's
// `ReportField` and `PairField`, which lib/native/contract.js checks at load).

const native = require('./load-native.js')
const { REPORT_INTO, REPORT: R, PAIR: P, REPORT_HEAD, REPORT_PAIR, STATUSES } = require('./contract.js')

const HEAD = REPORT_HEAD

// One buffer per thread, made and kept by the addon (`reportBuffer()`): the
// report filler called with no argument writes there, without the checks of a
// buffer argument. Reports are built one at a time on a thread. A report that
// needs more room (more firing pairs than the buffer holds: 64) writes nothing
// and says how much; it is then filled into a larger buffer of this module's.
// Neither buffer leaves lib/native/ (fast-state.js fills the thread's too, and
// reads it before anything else can).
let threadBuffer = null
let large = new Float64Array(0)
// The alert policy of each tracker, read once when a pair of it first fires or
// at its first scrape (it never changes after construction).
const policies = new WeakMap()

/** This thread's buffer (`reportBuffer()`), as a Float64Array made on first use. */
function threadValues() {
  return (threadBuffer ??= new Float64Array(native.reportBuffer()))
}

/** The alert policy of `tracker`, read once (also for its scrapes: lib/native/fast-state.js). */
function policyOf(tracker) {
  let policy = policies.get(tracker)
  if (policy === undefined) {
    policy = tracker.alertPolicy
    policies.set(tracker, policy)
  }
  return policy
}

function firingAlerts(policy, b, count) {
  const alerts = []
  for (let i = 0; i < count; i++) {
    const at = HEAD + REPORT_PAIR * i
    const rule = policy[b[at + P.index]]
    alerts.push({
      name: rule.name,
      severity: rule.severity,
      burnRateLong: b[at + P.burnRateLong],
      burnRateShort: b[at + P.burnRateShort],
      threshold: rule.burnRate,
    })
  }
  return alerts
}

/**
 * The report of `tracker` built in JavaScript: the same object as the native
 * `report()` (same fields, same order, same values), or `undefined` when
 * `tracker` has no native filler (not a tracker, or a primitive): the caller then goes to the
 * native report, whose receiver check throws.
 * @param {object} tracker
 */
function fastReport(tracker) {
  // Called as a method (V8 calls a native function with no receiver through a slower path).
  if (tracker?.[REPORT_INTO] === undefined) return undefined
  let b = threadValues()
  const needed = tracker[REPORT_INTO]()
  if (needed > b.length) {
    if (needed > large.length) large = new Float64Array(needed)
    b = large
    // Asked again (a second reading of the clock); more still, the native report.
    if (tracker[REPORT_INTO](b) > b.length) return undefined
  }
  const firing = b[R.firing]
  return {
    status: STATUSES[b[R.status]],
    currentRate: b[R.currentRate],
    total: b[R.total],
    failures: b[R.failures],
    budgetRemainingPct: b[R.budgetRemainingPct],
    burnRate: b[R.burnRate],
    sloTarget: b[R.sloTarget],
    successes: b[R.successes],
    budgetTotal: b[R.budgetTotal],
    budgetRemaining: b[R.budgetRemaining],
    dropped: b[R.dropped],
    at: b[R.at],
    alerts: firing === 0 ? [] : firingAlerts(policyOf(tracker), b, firing),
    insufficientData: b[R.insufficientData] === 1,
    exhaustsInMs: Number.isNaN(b[R.exhaustsInMs]) ? null : b[R.exhaustsInMs],
    // The guard's fields, filled in by lib/guard/state.js (report() in lib/tracker/tracker.js):
    // in the literal, so that filling them changes no object shape.
    excluded: 0,
    capacity: 0,
    throttle: null,
  }
}

/**
 * The native `report()` of the class `Tracker` (the addon's), called on
 * `tracker` (for specs that compare it with the one built here).
 * @param {Function} Tracker the native ErrorBudgetTracker class
 * @param {object} tracker
 */
function nativeReportOf(Tracker, tracker) {
  return Tracker.prototype.report.call(tracker)
}

module.exports = { fastReport, nativeReportOf, threadValues, policyOf, REPORT_INTO, STATUSES }
