'use strict'
// Where a tracker's Prometheus counters start. A counter may only reset to zero,
// in a new process: a tracker restored from a snapshot or persist file that
// exported its restored lifetime counts would go down but not to zero after a
// crash (the last autosave is older than the last scrape), and rate() would
// count the whole restored value as new solves. So `captcha_budget_solves_total`
// is what a tracker recorded since it was created or restored in this process.
// Small and free of dependencies: index.js loads it with the package.

// Per tracker that started with counts (a restored one): its lifetime counts then.
const startCounts = new WeakMap()

/**
 * Notes `tracker`'s lifetime counts as they are now, just after its
 * construction: its Prometheus counters count from there.
 * @param {object} tracker an ErrorBudgetTracker
 */
function countFromHere(tracker) {
  const counts = tracker.recorded
  if (counts.successes !== 0 || counts.failures !== 0) startCounts.set(tracker, counts)
}

/**
 * `Tracker` behind a Proxy whose construction notes the counts a tracker starts
 * with (a `snapshot` or `persist` config restores lifetime counts). Not for
 * `shared` handles: a shared tracker is never restored, and a handle attaching
 * later would leave out what the others recorded. The config is not read (a
 * getter would run twice): an own `shared` key is enough to tell.
 * @template {Function} T
 * @param {T} Tracker
 * @returns {T}
 */
function countingFromConstruction(Tracker) {
  const proxy = new Proxy(Tracker, {
    construct(target, args, newTarget) {
      const tracker = Reflect.construct(target, args, newTarget === proxy ? target : newTarget)
      const config = args[0]
      const shared = typeof config === 'object' && config !== null && Object.getOwnPropertyDescriptor(config, 'shared') !== undefined
      if (!shared) countFromHere(tracker)
      return tracker
    },
  })
  return proxy
}

/**
 * What `tracker` recorded since it was created or restored in this process, by outcome.
 * @param {object} tracker an ErrorBudgetTracker
 * @returns {{ successes: number, failures: number }}
 */
function countedSinceStart(tracker) {
  const recorded = tracker.recorded
  const start = startCounts.get(tracker)
  if (start === undefined) return recorded
  return { successes: recorded.successes - start.successes, failures: recorded.failures - start.failures }
}

module.exports = { countFromHere, countingFromConstruction, countedSinceStart }
