const test = require('ava')
const { ErrorBudgetTracker } = require('../..')
const { settle, noMoreDeliveries, waitForCalls } = require('../helpers/deliveries')

const STATUSES = ['healthy', 'warning', 'critical', 'exhausted']

function recordingTracker(config) {
  const tracker = new ErrorBudgetTracker({ clock: 'manual', windowMs: 1000, resolutionMs: 100, ...config })
  const calls = []
  for (const s of STATUSES) tracker.on(s, (r) => calls.push([s, r.at, r.total]))
  return { tracker, calls }
}

function record(tracker, ok, n, at) {
  for (let i = 0; i < n; i++) tracker.record(ok, at)
}

// Burst that ages out. 100 successes at 0, then 10 failures at 200, one by one:
// after n failures budget = (100 + n) × 0.05: n = 3 → f = 2.15 / 5.15 = 0.42
// warning, n = 5 → 0.25 / 5.25 = 0.048 critical, n = 6 → exhausted. At 1000 the successes' bucket (start 0)
// leaves the window: 10 failures of 10, still exhausted, no transition. At 1200
// the failures' bucket leaves: the window is empty → healthy, at exactly 1200.
// The burst's own transitions, at 200 ms: [status, at, total].
const BURST = [
  ['warning', 200, 103],
  ['critical', 200, 105],
  ['exhausted', 200, 106],
]

test('a burst of failures ages out: exhausted → healthy at the exact expiry instant', async (t) => {
  const { tracker, calls } = recordingTracker()
  record(tracker, true, 100, 0)
  record(tracker, false, 10, 200)
  tracker.advanceTo(1150)
  t.is(tracker.status, 'exhausted')
  t.is(tracker.total, 10)
  tracker.advanceTo(1200)
  t.is(tracker.status, 'healthy')
  await waitForCalls(calls, 4)
  await noMoreDeliveries(calls)
  t.deepEqual(calls, [...BURST, ['healthy', 1200, 0]])
  tracker.close()
})

// Successes ageing out under failures. 100 successes at 0, 20 at 300, 80 at 500,
// 4 failures at 600: 204 events, budget 10.2, f = 6.2 / 10.2 = 0.61 → healthy.
// 1000: bucket 0 leaves → 104 events, budget 5.2, f = 1.2 / 5.2 = 0.23 → warning.
// 1300: bucket 3 leaves → 84 events, budget 4.2, f = 0.2 / 4.2 = 0.048 → critical.
// 1500: bucket 5 leaves → 4 failures, budget 0.2 → exhausted.
// 1600: bucket 6 leaves → empty → healthy.
const AGEING = [
  ['warning', 1000, 104],
  ['critical', 1300, 84],
  ['exhausted', 1500, 4],
  ['healthy', 1600, 0],
]

function ageingTracker() {
  const r = recordingTracker()
  record(r.tracker, true, 100, 0)
  record(r.tracker, true, 20, 300)
  record(r.tracker, true, 80, 500)
  record(r.tracker, false, 4, 600)
  return r
}

test('successes ageing out: every time-driven transition at its instant, in one jump', async (t) => {
  const { tracker, calls } = ageingTracker()
  t.is(tracker.status, 'healthy')
  tracker.advanceTo(5000)
  await waitForCalls(calls, 4)
  await noMoreDeliveries(calls)
  t.deepEqual(calls, AGEING)
  tracker.close()
})

test('successes ageing out: the same transitions when time moves in small steps', async (t) => {
  const { tracker, calls } = ageingTracker()
  const statuses = []
  for (let now = 650; now <= 2000; now += 50) {
    tracker.advanceTo(now)
    statuses.push([now, tracker.status])
  }
  await waitForCalls(calls, 4)
  await noMoreDeliveries(calls)
  t.deepEqual(calls, AGEING)
  const at = (ms) => statuses.find(([now]) => now === ms)[1]
  t.deepEqual(
    [at(950), at(1000), at(1250), at(1300), at(1450), at(1500), at(1550), at(1600)],
    ['healthy', 'warning', 'warning', 'critical', 'critical', 'exhausted', 'exhausted', 'healthy'],
  )
  tracker.close()
})

test('a replayed event after an expiry sees the time-driven transition first', async (t) => {
  const { tracker, calls } = recordingTracker()
  record(tracker, true, 100, 0)
  record(tracker, false, 10, 200)
  // One call: time moves to 1250 (failures expire at 1200 → healthy), then the
  // failure at 1250 is alone in the window → exhausted.
  tracker.record(false, 1250)
  await waitForCalls(calls, 5)
  await noMoreDeliveries(calls)
  t.deepEqual(calls, [...BURST, ['healthy', 1200, 0], ['exhausted', 1250, 1]])
  tracker.close()
})

test('reads reflect the window now, with nothing recorded since', (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual', windowMs: 1000, resolutionMs: 100 })
  record(tracker, false, 3, 100)
  t.is(tracker.failures, 3)
  tracker.advanceTo(1099)
  t.deepEqual([tracker.failures, tracker.status], [3, 'exhausted'])
  tracker.advanceTo(1100)
  t.deepEqual([tracker.failures, tracker.status, tracker.lastStatus], [0, 'healthy', 'healthy'])
  t.like(tracker.report(), { total: 0, failures: 0, status: 'healthy', budgetRemainingPct: 100, at: 1100 })
})

// The reference's usage pattern: refuse to solve while exhausted, else solve and
// record. With the reference tracker this loop pauses forever; here the window
// moves with the clock and the loop resumes by itself.
test('a guard-style loop resumes by itself after the window passes (real clock)', async (t) => {
  const tracker = new ErrorBudgetTracker({ windowMs: 300, resolutionMs: 10 })
  let serviceUp = false
  const solve = async () => serviceUp
  const log = []
  const started = Date.now()
  setTimeout(() => {
    serviceUp = true
  }, 50) // the outage ends long before the window does
  let exhaustedAtOnce = null
  while (Date.now() - started < 20_000) {
    if (tracker.status === 'exhausted') {
      log.push('refused')
    } else {
      const ok = await solve()
      tracker.record(ok)
      exhaustedAtOnce ??= tracker.status === 'exhausted' // read at once: a loaded machine may stall past the window
      log.push(ok ? 'solved' : 'failed')
      if (ok) break
    }
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  const elapsed = Date.now() - started
  t.true(exhaustedAtOnce)
  // Failed, refused while exhausted (unless the event loop stalled past the window), then solved.
  t.is(log[0], 'failed')
  t.true(
    log.slice(1, -1).every((entry) => entry === 'refused'),
    log.join(' '),
  )
  t.is(log.at(-1), 'solved')
  t.true(elapsed >= 250 && elapsed < 20_000, `resumed after ${elapsed} ms`)
  t.is(tracker.status, 'healthy')
})

// close() does two things, each tested alone: it releases the handle's listeners
// (another handle's transitions no longer reach them), and the closed tracker
// stands still (its window no longer moves with the clock).
test('a closed handle no longer receives transitions: its listeners are released', async (t) => {
  const a = ErrorBudgetTracker.shared('time-spec-closed', { clock: 'manual', windowMs: 1000, resolutionMs: 100 })
  const b = ErrorBudgetTracker.shared('time-spec-closed')
  const [toA, toB] = [[], []]
  a.on('exhausted', () => toA.push('exhausted'))
  b.on('exhausted', () => toB.push('exhausted'))
  a.close()
  b.record(false, 0)
  await waitForCalls(toB, 1) // the transition happened, and reached the open handle
  await noMoreDeliveries(toB)
  t.deepEqual([toA, toB], [[], ['exhausted']])
  b.close()
})

test('a closed tracker stands still: its window no longer moves with the clock', async (t) => {
  const tracker = new ErrorBudgetTracker({ windowMs: 100, resolutionMs: 10 })
  tracker.record(false)
  // The clock stops at close(), which may be a millisecond after the record: read it after.
  const beforeClose = Date.now()
  tracker.close()
  const afterClose = Date.now()
  const frozen = tracker.now
  // 5 ms slack: the tracker's epoch clock is a monotonic clock anchored once, not Date.now()
  t.true(frozen >= beforeClose - 5 && frozen <= afterClose + 5, `${frozen} outside [${beforeClose}, ${afterClose}]`)
  await settle(300) // three windows: an open tracker would be healthy again by now
  t.deepEqual([tracker.now, tracker.failures, tracker.status], [frozen, 1, 'exhausted'])
})

test('the real clock reports epoch milliseconds', (t) => {
  const before = Date.now()
  const tracker = new ErrorBudgetTracker()
  const now = tracker.now
  t.true(now >= before - 5 && now <= Date.now() + 5, `${now} vs ${before}`)
})
