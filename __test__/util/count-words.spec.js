// Messages that quote counts say "1 failure" and "1 success", not "1 failures":
// the snapshot consistency errors (the core's tracker/snapshot.rs) and the guard's
// refusal (lib/util/errors.js). Each count word agrees with its number.
const test = require('ava')
const { ErrorBudgetTracker, BudgetExhaustedError } = require('../..')

const OPTIONS = { clock: 'manual', windowMs: 60_000, resolutionMs: 1000, alerts: [] }

// One success and one failure at 0 ms, as a snapshot object to edit.
function snapshotOfOneEach(t) {
  const tracker = new ErrorBudgetTracker(OPTIONS)
  t.teardown(() => tracker.close())
  tracker.record(true, 0)
  tracker.record(false, 0)
  return JSON.parse(tracker.snapshot())
}

const restoreFails = (t, snapshot) => t.throws(() => ErrorBudgetTracker.restore(JSON.stringify(snapshot), { clock: 'manual' }))

test('totals that do not match the buckets: "1 success, 2 failures" against "1 success, 1 failure"', (t) => {
  const snapshot = snapshotOfOneEach(t)
  snapshot.totals = { successes: 1, failures: 2 }
  const err = restoreFails(t, snapshot)
  t.regex(err.message, /totals \(1 success, 2 failures\) do not match the buckets \(1 success, 1 failure\)/)
})

test('recorded counts below the window\'s: "0 successes, 1 failure" against "1 success, 1 failure"', (t) => {
  const snapshot = snapshotOfOneEach(t)
  snapshot.recorded = { successes: 0, failures: 1 }
  const err = restoreFails(t, snapshot)
  t.regex(err.message, /recorded counts \(0 successes, 1 failure\) are smaller than the counts in the window \(1 success, 1 failure\)/)
})

test('the guard\'s refusal: "1 failure of 2 solves", and "2 failures of 3 solves"', async (t) => {
  // 50 %: one failure in two solves spends the whole budget (2 × 0.5 = 1).
  const tracker = new ErrorBudgetTracker({ ...OPTIONS, targetRate: 0.5 })
  t.teardown(() => tracker.close())
  tracker.record(true, 0)
  tracker.record(false, 0)
  const refuse = () =>
    t.throwsAsync(
      tracker.guard(async () => 'token', { whenExhausted: 'refuse' }),
      { instanceOf: BudgetExhaustedError },
    )
  t.regex((await refuse()).message, /: 1 failure of 2 solves in the window/)
  // 2 failures of 3: 1.5 allowed, still exhausted.
  tracker.record(false, 0)
  t.regex((await refuse()).message, /: 2 failures of 3 solves in the window/)
})
