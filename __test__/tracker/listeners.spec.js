const test = require('ava')
const { catchWarnings } = require('../helpers/warnings')
const { ErrorBudgetTracker } = require('../..')
const { noMoreDeliveries, waitForCalls } = require('../helpers/deliveries')

// A manual-clock tracker at 95 %: 100 successes, then failures one by one.
// Failure n (of 100 + n events): budget (100 + n) × 0.05, f = (budget − n) / budget.
// n = 3: 5.15 → 2.15 / 5.15 = 0.417 warning; n = 5: 5.25 → 0.25 / 5.25 = 0.048 critical;
// n = 6: 5.3 − 6 < 0 → exhausted.
function trackerWithSuccesses() {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  for (let i = 0; i < 100; i++) tracker.record(true, 1000)
  return tracker
}

test('listeners never run inside record(), and run in transition order', async (t) => {
  const tracker = trackerWithSuccesses()
  const calls = []
  for (const status of ['healthy', 'warning', 'critical', 'exhausted']) {
    tracker.on(status, (report) => calls.push([status, report.failures, report.status]))
  }
  for (let i = 0; i < 6; i++) tracker.record(false, 1000)
  t.deepEqual(calls, [], 'nothing synchronous')
  t.is(tracker.lastStatus, 'exhausted')
  await waitForCalls(calls, 3)
  await noMoreDeliveries(calls)
  t.deepEqual(calls, [
    ['warning', 3, 'warning'],
    ['critical', 5, 'critical'],
    ['exhausted', 6, 'exhausted'],
  ])
  tracker.close()
})

test('each listener gets the report captured at its transition', async (t) => {
  const tracker = trackerWithSuccesses()
  const reports = []
  tracker.on('warning', (r) => reports.push(r))
  for (let i = 0; i < 3; i++) tracker.record(false, 1000)
  for (let i = 0; i < 20; i++) tracker.record(true, 1000) // later events must not leak into it
  await waitForCalls(reports, 1)
  t.like(reports[0], { status: 'warning', total: 103, failures: 3, successes: 100, at: 1000 })
  tracker.close()
})

test('a listener may call record() and report() re-entrantly', async (t) => {
  const tracker = trackerWithSuccesses()
  const seen = []
  tracker.on('warning', (r) => {
    seen.push(['warning', r.failures])
    tracker.record(false, 1000) // 4 failures of 104: budget 5.2, f = 0.23: still warning
    tracker.record(false, 1000) // 5 of 105: critical
    seen.push(['report', tracker.report().status])
  })
  tracker.on('critical', (r) => seen.push(['critical', r.failures]))
  for (let i = 0; i < 3; i++) tracker.record(false, 1000)
  await waitForCalls(seen, 3)
  t.deepEqual(seen, [
    ['warning', 3],
    ['report', 'critical'],
    ['critical', 5],
  ])
  tracker.close()
})

test('a throwing listener does not stop the others and becomes a process warning', async (t) => {
  const tracker = trackerWithSuccesses()
  const warnings = catchWarnings(t, undefined, (w) => w.message)
  const calls = []
  tracker.on('warning', () => {
    throw new Error('listener exploded')
  })
  tracker.on('warning', () => calls.push('second'))
  for (let i = 0; i < 3; i++) tracker.record(false, 1000)
  await waitForCalls(calls, 1)
  await noMoreDeliveries(calls)
  t.deepEqual(calls, ['second'])
  t.deepEqual(warnings, ['listener exploded'])
  tracker.record(false, 1000) // the tracker still works
  t.is(tracker.failures, 4)
  tracker.close()
})

test('off() removes one registration; on()/off() return the tracker', async (t) => {
  const tracker = trackerWithSuccesses()
  const calls = []
  const listener = () => calls.push('a')
  t.is(tracker.on('warning', listener), tracker)
  tracker.on('warning', listener)
  t.is(tracker.off('warning', listener), tracker)
  tracker.off('warning', () => {}) // not registered: no effect
  for (let i = 0; i < 3; i++) tracker.record(false, 1000)
  await waitForCalls(calls, 1)
  await noMoreDeliveries(calls)
  t.deepEqual(calls, ['a'])
  tracker.close()
})

test('listeners fire only on a change of status', async (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const calls = []
  tracker.on('healthy', () => calls.push('healthy'))
  tracker.on('exhausted', () => calls.push('exhausted'))
  for (let i = 0; i < 10; i++) tracker.record(true, 1000) // healthy → healthy: nothing
  tracker.record(false, 1000) // 1 of 11: budget 0.55 → exhausted
  tracker.record(false, 1000) // exhausted → exhausted: nothing
  await waitForCalls(calls, 1)
  await noMoreDeliveries(calls)
  t.deepEqual(calls, ['exhausted'])
  tracker.close()
})

test('close() releases listeners and later record()/on() throw ERR_TRACKER_CLOSED', async (t) => {
  const tracker = trackerWithSuccesses()
  const calls = []
  tracker.on('warning', () => calls.push('warning'))
  tracker.close()
  tracker.close() // idempotent
  t.true(tracker.closed)
  const err = t.throws(() => tracker.record(false), { code: 'ERR_TRACKER_CLOSED' })
  t.is(err.message, 'cannot call record() on a closed ErrorBudgetTracker')
  t.throws(() => tracker.on('warning', () => {}), { code: 'ERR_TRACKER_CLOSED' })
  t.is(tracker.report().total, 100, 'reads still work')
  await noMoreDeliveries(calls)
  t.deepEqual(calls, [])
})

test('Symbol.dispose closes the tracker', (t) => {
  const tracker = new ErrorBudgetTracker()
  tracker[Symbol.dispose]()
  t.true(tracker.closed)
})
