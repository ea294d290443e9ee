'use strict'
// tracker.report() built in JavaScript: an object literal costs tens of ns,
// where building the same 15-property object through Node-API costs ≈3 µs
// (every property interns its name and walks V8's map transitions). The
// numbers come from the native tracker in one call, written into a shared
// Float64Array (layout in src/fast_path.rs, `write_report`).

/** The registered symbol each tracker's native report filler is stored under. */
const REPORT_INTO = Symbol.for('captcha-error-budget.reportInto')
/**
 * The statuses, in the order of the native status index (`write_report` in
 * src/fast_path.rs), as the core lists them (`Status::ALL`): the one list.
 */
const STATUSES = Object.freeze(require('../native.js').statusNames())
const HEAD = 15

// One buffer per module instance (one per thread): reports are built one at a
// time on a thread. A report holds at most every pair of its tracker's policy,
// so the buffer is grown to that size when a tracker is first seen, before
// filling: one report is one native call, one reading of the clock.
let buffer = new Float64Array(HEAD + 3 * 8)
// The alert policy of each tracker, read once (it never changes after construction).
const policies = new WeakMap()
// The native report() each installFastReport() replaced, by class: what the
// JavaScript one must equal (the parity spec compares against it).
const nativeReports = new WeakMap()

function policyOf(tracker) {
  let policy = policies.get(tracker)
  if (policy === undefined) {
    policy = tracker.alertPolicy
    policies.set(tracker, policy)
    if (HEAD + 3 * policy.length > buffer.length) buffer = new Float64Array(HEAD + 3 * policy.length)
  }
  return policy
}

function firingAlerts(policy, b, count) {
  const alerts = []
  for (let i = 0; i < count; i++) {
    const at = HEAD + 3 * i
    const rule = policy[b[at]]
    alerts.push({ name: rule.name, severity: rule.severity, burnRateLong: b[at + 1], burnRateShort: b[at + 2], threshold: rule.burnRate })
  }
  return alerts
}

/**
 * Replaces `Tracker.prototype.report` with one that builds the same object
 * (same fields, same order, same values) in JavaScript. A receiver without
 * the native filler (not a tracker) goes to the native report, whose receiver
 * check (lib/receiver.js) throws.
 * @param {Function} Tracker the native ErrorBudgetTracker class
 */
function installFastReport(Tracker) {
  const nativeReport = Tracker.prototype.report
  nativeReports.set(Tracker, nativeReport)
  function report() {
    // Not a tracker (unbound, wrong receiver): the native report's receiver check throws.
    if (this === null || typeof this !== 'object' || !Object.hasOwn(this, REPORT_INTO)) return nativeReport.call(this)
    const fill = this[REPORT_INTO]
    const policy = policyOf(this)
    const b = buffer
    // Never larger than the buffer (sized from the policy above); if it were, the native report.
    if (fill(b) > b.length) return nativeReport.call(this)
    const firing = b[14]
    return {
      status: STATUSES[b[0]],
      currentRate: b[1],
      total: b[2],
      failures: b[3],
      budgetRemainingPct: b[4],
      burnRate: b[5],
      sloTarget: b[6],
      successes: b[7],
      budgetTotal: b[8],
      budgetRemaining: b[9],
      dropped: b[10],
      at: b[11],
      alerts: firing === 0 ? [] : firingAlerts(policy, b, firing),
      insufficientData: b[12] === 1,
      exhaustsInMs: Number.isNaN(b[13]) ? null : b[13],
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(Tracker.prototype, 'report')
  Object.defineProperty(Tracker.prototype, 'report', { ...descriptor, value: report })
}

/**
 * The native `report()` that `installFastReport(Tracker)` replaced, called on
 * `tracker` (for specs that compare the two).
 * @param {Function} Tracker the class passed to installFastReport
 * @param {object} tracker
 */
function nativeReportOf(Tracker, tracker) {
  return nativeReports.get(Tracker).call(tracker)
}

module.exports = { installFastReport, nativeReportOf, REPORT_INTO, STATUSES }
