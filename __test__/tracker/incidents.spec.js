// Issue 24, part 1: on('incident') groups the per-pair 'alert' / 'resolve' events
// into incidents (lib/tracker/incidents.js). Manual clock; the expected minutes are worked
// out by hand below, from the solves, not from the tracker.
const test = require('ava')
const { catchWarnings } = require('../helpers/warnings')
const { ErrorBudgetTracker, BudgetFamily } = require('../..')

const M = 60_000
// Target 90 % (a failure is 10 solves' allowance), one solve a minute, at minute m.
// a: page, 1 h / 10 min above 2.6×  — long window 60 solves: more than 15.6 failures;
//                                     short 10 solves: more than 2.6 failures.
// b: page, 1 h / 10 min above 5.6×  — more than 33.6 failures in the hour, 5.6 in 10 min.
// leak: ticket, 6 h / 30 min above 1.2×. (No threshold lands on a whole count of
// failures: 1 − 0.9 is not exact in binary, and a burn of exactly 2.5 reads 2.5000…04.)
const POLICY = [
  { name: 'a', severity: 'page', longWindowMs: 60 * M, shortWindowMs: 10 * M, burnRate: 2.6 },
  { name: 'b', severity: 'page', longWindowMs: 60 * M, shortWindowMs: 10 * M, burnRate: 5.6 },
  { name: 'leak', severity: 'ticket', longWindowMs: 6 * 60 * M, shortWindowMs: 30 * M, burnRate: 1.2 },
]
// Failures in minutes [120, 160) and [400, 440), successes otherwise, 600 minutes.
const failing = (m) => (m >= 120 && m < 160) || (m >= 400 && m < 440)

function newTracker() {
  return new ErrorBudgetTracker({ targetRate: 0.9, windowMs: 24 * 3600_000, clock: 'manual', alerts: POLICY })
}

/** Replays minutes [from, to) into `tracker`. */
function replay(tracker, from, to) {
  for (let m = from; m < to; m++) tracker.record(!failing(m), m * M)
}

/**
 * Resolves once every listener call queued so far has run: listeners run in
 * order, so a transition made last (the window emptied, then one failure:
 * exhausted) is delivered last.
 */
function delivered(tracker) {
  const at = tracker.now + 2 * 24 * 3600_000
  const done = new Promise((resolve) => {
    const listener = (report) => {
      if (report.at !== at) return
      tracker.off('exhausted', listener)
      resolve()
    }
    tracker.on('exhausted', listener)
  })
  tracker.advanceTo(at)
  tracker.record(false)
  return done
}

const brief = (i) => [i.id, i.state, i.severity, i.openedAt / M, i.at / M, i.pair, i.firing.join(',')]

// Worked out by hand:
// first incident — a: the 16th failure of the hour comes at minute 135 (failures
//   from 120), with 10 of 10 failing in 10 min: opens the incident at page severity.
//   leak: at minute m its 6 h window holds m + 1 solves and m − 119 failures, above
//   1.2× once m − 119 > 0.12 (m + 1), at 136 (short: 17 of 30); b: the 34th
//   failure, at 153. Neither is a second page or an escalation. Failures end after
//   159: b's 10 min hold at most 5 failures at 164, a's at most 2 at 167, leak's
//   30 min at most 3 at 186 (its 6 h window, 40 of 187, is still above): resolved at 186.
// second incident — leak's 6 h window holds 360 solves and 40 + (m − 399)
//   failures, above 1.2× once that is over 43.2, at 403 (short: 4 of 30): a
//   ticket incident. a's 16th failure at 415 escalates it to page; b fires at 433.
//   Failures end after 439: b resolves at 444, a at 447, leak at 466: resolved at 466.
const EXPECTED = [
  [1, 'open', 'page', 135, 135, 'a', 'a'],
  [1, 'resolved', 'page', 135, 186, 'leak', ''],
  [2, 'open', 'ticket', 403, 403, 'leak', 'leak'],
  [2, 'escalated', 'page', 403, 415, 'a', 'leak,a'],
  [2, 'resolved', 'page', 403, 466, 'leak', ''],
]

test('several pairs, one incident: one open, an escalation ticket → page, resolved with its last pair, then a new one', async (t) => {
  const tracker = newTracker()
  const incidents = []
  const pairs = []
  tracker.on('incident', (i) => incidents.push(i))
  tracker.on('alert', (e) => pairs.push(['alert', e.name, e.at / M]))
  tracker.on('resolve', (e) => pairs.push(['resolve', e.name, e.at / M]))
  replay(tracker, 0, 600)
  await delivered(tracker)
  t.deepEqual(incidents.map(brief), EXPECTED)
  // The per-pair events stay: every pair fired and resolved in each incident (a, leak, b order of firing).
  t.deepEqual(
    pairs.filter(([kind]) => kind === 'alert').map(([, name, at]) => [name, at]),
    [
      ['a', 135],
      ['leak', 136],
      ['b', 153],
      ['leak', 403],
      ['a', 415],
      ['b', 433],
    ],
  )
  t.deepEqual(
    pairs.filter(([kind]) => kind === 'resolve').map(([, name, at]) => [name, at]),
    [
      ['b', 164],
      ['a', 167],
      ['leak', 186],
      ['b', 444],
      ['a', 447],
      ['leak', 466],
    ],
  )
  // The causing event's evidence and reason: a's 16 failures in its hour of 60 solves.
  t.like(incidents[0].evidence, { longWindowMs: 60 * M, longFailures: 16, longTotal: 60, shortFailures: 10, shortTotal: 10 })
  t.regex(incidents[0].reason, /^a: 16 failures in 60 solves/)
  t.is(incidents[1].evidence.shortFailures, 3, "leak's 30 min at its resolve: 3 failures")
  // Each page notification: an open at page severity or an escalation to page — one per incident.
  const pages = (id) => incidents.filter((i) => i.id === id && ((i.state === 'open' && i.severity === 'page') || i.state === 'escalated')).length
  t.deepEqual([pages(1), pages(2)], [1, 1])
  tracker.close()
})

test("off('incident') removes the listener: no more incidents for it, the other listener keeps its own", async (t) => {
  const tracker = newTracker()
  const kept = []
  const removed = []
  const gone = (i) => removed.push(brief(i))
  tracker.on('incident', (i) => kept.push(brief(i)))
  tracker.on('incident', gone)
  // The first incident ends with leak's resolve at minute 186 (listeners run in order:
  // the incident's 'resolved' comes before this listener's call).
  const firstOver = new Promise((resolve) => tracker.on('resolve', (e) => e.name === 'leak' && resolve()))
  replay(tracker, 0, 300)
  await firstOver
  t.is(tracker.off('incident', gone), tracker)
  t.is(tracker.off('incident', gone), tracker, 'removing it twice is harmless')
  t.is(
    tracker.off('incident', () => {}),
    tracker,
    'so is removing one never added',
  )
  replay(tracker, 300, 600)
  await delivered(tracker)
  t.deepEqual(removed, EXPECTED.slice(0, 2))
  t.deepEqual(kept, EXPECTED)
  tracker.close()
})

test('a throwing incident listener: the next listener still runs, a warning shows what it threw', async (t) => {
  const tracker = newTracker()
  const warnings = catchWarnings(t, undefined, (w) => `${w.name}: ${w.message}`)
  const seen = []
  tracker.on('incident', () => {
    throw new Error('incident listener exploded')
  })
  tracker.on('incident', () => {
    throw 'bad news'
  })
  tracker.on('incident', (i) => seen.push(i.state))
  replay(tracker, 0, 200)
  await delivered(tracker)
  // Warnings are emitted on the next tick.
  await new Promise((resolve) => setImmediate(resolve))
  t.deepEqual(seen, ['open', 'resolved'])
  t.deepEqual(warnings, [
    'Error: incident listener exploded',
    "Warning: an ErrorBudgetTracker 'incident' listener threw 'bad news'",
    'Error: incident listener exploded',
    "Warning: an ErrorBudgetTracker 'incident' listener threw 'bad news'",
  ])
  tracker.close()
})

test("bad arguments to on('incident') are the native TypeErrors; a closed tracker refuses", (t) => {
  const tracker = newTracker()
  t.throws(() => tracker.on('incident', 5), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_TYPE', message: /listener must be a function/ })
  t.throws(() => tracker.off('incident'), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => ErrorBudgetTracker.prototype.on.call({}, 'incident', () => {}), { code: 'ERR_INVALID_THIS' })
  tracker.close()
  t.throws(() => tracker.on('incident', () => {}), { code: 'ERR_TRACKER_CLOSED' })
})

test("family.on('incident', (incident, labels)) gets each child's incidents with its labels", async (t) => {
  const family = new BudgetFamily({ labelNames: ['site'], targetRate: 0.9, windowMs: 24 * 3600_000, clock: 'manual', alerts: POLICY })
  const seen = []
  family.on('incident', (i, labels) => seen.push([labels.site, i.id, i.state, i.at / M]))
  const child = family.labels({ site: 'x' })
  replay(child, 0, 200)
  await delivered(child)
  t.deepEqual(seen, [
    ['x', 1, 'open', 135],
    ['x', 1, 'resolved', 186],
  ])
  family.close()
})
