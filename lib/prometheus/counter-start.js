'use strict'
// Where a tracker's Prometheus counters start. A counter may only reset to zero,
// in a new process: a tracker restored from a snapshot or persist file that
// exported its restored lifetime counts would go down but not to zero after a
// crash (the last autosave is older than the last scrape), and rate() would
// count the whole restored value as new solves. So `captcha_budget_solves_total`
// is what a tracker recorded since it was created or restored in this process.
// Small and free of dependencies: lib/tracker/tracker.js calls countFromHere() from its constructor.

// Per tracker that started with counts (a restored one): its lifetime counts then.
const startCounts = new WeakMap()

/**
 * Notes `tracker`'s lifetime counts as they are now, just after its
 * construction: its Prometheus counters count from there. Not for `shared`
 * handles: a shared tracker is never restored, and a handle attaching later
 * would leave out what the others recorded.
 * @param {object} tracker an ErrorBudgetTracker
 */
function countFromHere(tracker) {
  const counts = tracker.recorded
  if (counts.successes !== 0 || counts.failures !== 0) startCounts.set(tracker, counts)
}

/**
 * What `tracker` recorded since it was created or restored in this process, by outcome,
 * from its lifetime counts `successes` and `failures` (the native `recorded`, as one
 * scrape's buffer holds them: lib/prometheus/metrics.js).
 * @param {object} tracker an ErrorBudgetTracker
 * @returns {{ successes: number, failures: number }}
 */
function sinceStart(tracker, successes, failures) {
  const start = startCounts.get(tracker)
  if (start === undefined) return { successes, failures }
  return { successes: successes - start.successes, failures: failures - start.failures }
}

module.exports = { countFromHere, sinceStart }
