// Late verdicts: tracker.reject(atMs) and guard()'s attempt.reject() turn a
// recorded success into a failure in the bucket where it was recorded, once.
const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { Worker } = require('node:worker_threads')
const { ErrorBudgetTracker, BudgetFamily } = require('../..')
const { noMoreDeliveries, waitForCalls } = require('../helpers/deliveries')
const acrossThreads = require('../helpers/binding').nativeOnly('WASI instances do not share memory across threads')

// An hour in 1 s buckets, status only, on the manual clock.
const hour = (config = {}) => new ErrorBudgetTracker({ clock: 'manual', windowMs: 3_600_000, resolutionMs: 1000, alerts: [], ...config })

// 100 successes, one a second from t = 0 (bucket i holds the one at i s).
function hundredSolves(tracker) {
  for (let i = 0; i < 100; i++) tracker.record(true, i * 1000)
  return tracker
}

test('100 solves, 10 rejected within the window: 90 successes, 10 failures, status and burn as if recorded so', async (t) => {
  const tracker = hundredSolves(hour())
  const changes = []
  for (const status of ['warning', 'critical', 'exhausted']) tracker.on(status, (report) => changes.push([report.status, report.failures]))
  for (let i = 0; i < 10; i++) t.true(tracker.reject(i * 10_000), `reject #${i}`)
  // budgetTotal = 100 × 0.050000000000000044 = 5.000000000000004: after k rejections the
  // remaining fraction is (5.000000000000004 − k) / 5.000000000000004 — 3 → 0.4 (warning),
  // 5 → 7e-16 (critical, > 0), 6 → 0 (exhausted): each listener once, at the crossing.
  await waitForCalls(changes, 3)
  await noMoreDeliveries(changes)
  t.deepEqual(changes, [
    ['warning', 3],
    ['critical', 5],
    ['exhausted', 6],
  ])
  const r = tracker.report()
  t.like(r, { successes: 90, failures: 10, total: 100, currentRate: 0.9, status: 'exhausted', burnRate: 2, budgetTotal: 5, budgetRemaining: 0 })
  t.is(tracker.rejected, 10)
  // Counters never go down: the success stays in `recorded`, the rejection is counted apart.
  t.deepEqual(tracker.recorded, { successes: 100, failures: 0, excluded: 0, capacity: 0 })
  // The same as 90 successes and 10 failures recorded in those buckets.
  const direct = hour()
  for (let i = 0; i < 100; i++) direct.record(i % 10 !== 0, i * 1000)
  t.deepEqual(tracker.report(), direct.report())
  // A second verdict on the solve at 0 (its bucket's only success is a failure now): false.
  t.false(tracker.reject(0))
  t.is(tracker.failures, 10)
})

test('too late: older than verdictWindowMs (default 15 min) or out of the window; nothing changes', (t) => {
  const tracker = hundredSolves(hour())
  tracker.advanceTo(950_000)
  // The solve at 49 s is 901 000 ms old, more than 900 000: refused.
  t.false(tracker.reject(49_000))
  t.like(tracker.report(), { successes: 100, failures: 0 })
  t.is(tracker.rejected, 0)
  // 900 000 ms old exactly: taken.
  t.true(tracker.reject(50_000))
  // A bucket with no solve (at 150 s): nothing to turn.
  t.false(tracker.reject(150_000))
  // A verdict window longer than the window: the bucket's leaving decides (49 s left at 3 649 s).
  const long = hundredSolves(hour({ verdictWindowMs: 36_000_000 }))
  long.advanceTo(3_649_500)
  t.false(long.reject(49_000))
  t.true(long.reject(50_000))
  // Buckets 50 to 99 are left: 50 solves, one of them rejected.
  t.like(long.report(), { successes: 49, failures: 1 })
})

test('bad input is a coded error and changes nothing', (t) => {
  const tracker = hundredSolves(hour())
  for (const [bad, type, code, message] of [
    [undefined, TypeError, 'ERR_INVALID_ARG_TYPE', 'reject(atMs): atMs must be a number of epoch ms, got undefined'],
    ['5', TypeError, 'ERR_INVALID_ARG_TYPE', 'reject(atMs): atMs must be a number of epoch ms, got string'],
    [Number.NaN, RangeError, 'ERR_OUT_OF_RANGE', 'reject(atMs): atMs must be a finite number of epoch ms, got NaN'],
  ]) {
    const err = t.throws(() => tracker.reject(bad), { instanceOf: type })
    t.is(err.code, code)
    t.is(err.message, message)
  }
  t.like(tracker.report(), { successes: 100, failures: 0 })
  const err = t.throws(() => new ErrorBudgetTracker({ verdictWindowMs: -1 }), { instanceOf: RangeError })
  t.is(err.code, 'ERR_OUT_OF_RANGE')
  t.is(err.message, 'config.verdictWindowMs must be a non-negative integer of milliseconds, got -1')
})

test('guard(): attempt.reject() turns that attempt into a failure, once; before its success, false', async (t) => {
  const tracker = hour()
  tracker.advanceTo(5000)
  let early
  let handle
  await tracker.guard(async (signal, attempt) => {
    early = attempt.reject('too soon')
    handle = attempt
    return 'token'
  })
  t.false(early, 'not a recorded success yet')
  t.like(tracker.report(), { successes: 1, failures: 0 })
  tracker.advanceTo(65_000)
  t.true(handle.reject('incorrect-captcha-sol'))
  t.is(handle.reason, 'incorrect-captcha-sol')
  t.false(handle.reject(), 'a second verdict')
  t.like(tracker.report(), { successes: 0, failures: 1 })
  // A failed attempt was never a success.
  let failed
  await t.throwsAsync(
    tracker.guard(async (signal, attempt) => {
      failed = attempt
      throw new Error('unsolvable')
    }),
  )
  t.false(failed.reject())
  t.like(tracker.report(), { successes: 0, failures: 2 })
  // Bad reason: a TypeError, nothing changed.
  let fresh
  await tracker.guard(async (signal, attempt) => {
    fresh = attempt
  })
  const err = t.throws(() => fresh.reject(42), { instanceOf: TypeError })
  t.is(err.code, 'ERR_INVALID_ARG_TYPE')
  t.is(err.message, 'attempt.reject(reason): reason must be a string, got number')
  t.like(tracker.report(), { successes: 1, failures: 2 })
  t.true(fresh.reject())
  // Too late: 15 min after the success.
  let late
  await tracker.guard(async (signal, attempt) => {
    late = attempt
  })
  tracker.advanceTo(65_000 + 900_001)
  t.false(late.reject())
})

test('the guard throttle takes the verdict: rejected successes count as failures of its recent evidence', async (t) => {
  // refuse mode, minSolves 0: 20 successes (healthy), then each rejected: the window turns
  // exhausted at the 2nd rejection (budget 20 × 0.05 = 1.0000000000000009: 2 failures > it).
  const tracker = hour()
  const attempts = []
  for (let i = 0; i < 20; i++) await tracker.guard(async (signal, attempt) => attempts.push(attempt), { whenExhausted: 'refuse' })
  t.true(attempts[0].reject())
  t.is(tracker.status, 'critical')
  t.true(attempts[1].reject())
  t.is(tracker.status, 'exhausted')
  await t.throwsAsync(
    tracker.guard(async () => 'x', { whenExhausted: 'refuse' }),
    { name: 'BudgetExhaustedError' },
  )
})

test('a family child takes a verdict like any tracker', (t) => {
  const family = new BudgetFamily({ labelNames: ['provider'], clock: 'manual', alerts: [] })
  const child = family.labels({ provider: 'a' })
  family.record({ provider: 'a' }, true, 1000)
  family.record({ provider: 'a' }, true, 2000)
  t.true(child.reject(1000))
  t.false(child.reject(1000))
  t.like(family.report()[0], { labels: { provider: 'a' }, successes: 1, failures: 1 })
  family.close()
})

test('persistence: a verdict on a solve recorded before a restore', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'verdicts-'))
  const file = path.join(dir, 'budget.json')
  const first = hundredSolves(hour({ persist: { path: file, intervalMs: 60_000 } }))
  first.close()
  const again = hour({ persist: { path: file, intervalMs: 60_000 } })
  t.is(again.now, 99_000)
  t.true(again.reject(10_000))
  t.like(again.report(), { successes: 99, failures: 1 })
  t.is(again.rejected, 1)
  again.close()
  // The verdict window is part of the config a snapshot keeps.
  const custom = hour({ verdictWindowMs: 60_000 })
  custom.record(true, 1000)
  const restored = ErrorBudgetTracker.restore(custom.snapshot(), { clock: 'manual' })
  restored.advanceTo(61_001)
  t.false(restored.reject(1000), 'older than the restored 60 s verdict window')
  fs.rmSync(dir, { recursive: true, force: true })
})

acrossThreads('shared across worker_threads: a verdict in one thread is seen in every handle', async (t) => {
  const name = `verdicts-${process.pid}`
  const here = new ErrorBudgetTracker({ shared: name, clock: 'manual', alerts: [] })
  here.record(true, 1000)
  here.record(true, 1000)
  const code = `
    const { parentPort, workerData } = require('node:worker_threads')
    const { ErrorBudgetTracker } = require(workerData.entry)
    const there = new ErrorBudgetTracker({ shared: workerData.name, clock: 'manual', alerts: [] })
    parentPort.postMessage([there.reject(1000), there.reject(1000), there.reject(1000)])
    there.close()`
  const worker = new Worker(code, { eval: true, workerData: { name, entry: path.join(__dirname, '..', '..') } })
  const [answers] = await Promise.all([new Promise((resolve) => worker.once('message', resolve)), new Promise((resolve) => worker.once('exit', resolve))])
  t.deepEqual(answers, [true, true, false])
  t.like(here.report(), { successes: 0, failures: 2 })
  here.close()
})

test('Prometheus: rejections are a counter of their own; the solves counter never goes down', (t) => {
  const tracker = hundredSolves(hour())
  tracker.reject(0)
  tracker.reject(1000)
  const text = tracker.metrics()
  t.true(text.includes('captcha_budget_solves_total{name="default",outcome="success"} 100\n'), text)
  t.true(text.includes('captcha_budget_solves_total{name="default",outcome="failure"} 0\n'), text)
  t.true(text.includes('# TYPE captcha_budget_rejections_total counter\ncaptcha_budget_rejections_total{name="default"} 2\n'), text)
  t.true(text.includes('captcha_budget_window_failures{name="default"} 2\n'), text)
})

test("the throttle's ledger takes a rejection as a failure noted instead of the success", (t) => {
  const { Throttle } = require('../../lib/guard/throttle.js')
  // Target 0.8: a success earns 1 − 0.8 = 0.19999999999999996 (in doubles), a failure costs 0.8.
  const rejected = new Throttle(0.8)
  const failed = new Throttle(0.8)
  for (let i = 0; i < 10; i++) rejected.note(true, 0, 20_000)
  rejected.noteRejected(0, 20_000)
  for (let i = 0; i < 9; i++) failed.note(true, 0, 20_000)
  failed.note(false, 0, 20_000)
  // 10 × 0.2 − (0.2 + 0.8) and 9 × 0.2 − 0.8: 1, to the last few ulps.
  t.true(Math.abs(rejected.ledger - 1) < 1e-9 && Math.abs(failed.ledger - 1) < 1e-9, `${rejected.ledger} ${failed.ledger}`)
  // Admitting, two more rejections take it below zero: a relapse, throttled from the
  // deeper floor (20 probes: −20 × 0.19999999999999996 = −3.999999999999999).
  rejected.moveTo('admitting', 0)
  rejected.noteRejected(1000, 20_000)
  t.is(rejected.state, 'admitting')
  rejected.noteRejected(2000, 20_000)
  t.is(rejected.state, 'throttled')
  t.is(rejected.ledger, -3.999999999999999)
  t.is(rejected.nextProbeAt, 22_000)
})

test('a rejection that starts an alert opens an incident, once', async (t) => {
  const page = { name: 'page', severity: 'page', longWindowMs: 60_000, shortWindowMs: 5_000, burnRate: 0.45 }
  const tracker = hour({ targetRate: 0.9, alerts: [page] })
  const incidents = []
  tracker.on('incident', (incident) => incidents.push([incident.state, incident.pair]))
  tracker.recordMany(100, 0, 1000)
  tracker.advanceTo(2000)
  // budgetTotal 100 × 0.09999999999999998: the burn k / 9.999999999999998 passes 0.45 at k = 5.
  const answers = []
  for (let k = 1; k <= 8; k++) answers.push(tracker.reject(1000))
  t.deepEqual(answers, [true, true, true, true, true, true, true, true])
  await waitForCalls(incidents, 1)
  await noMoreDeliveries(incidents)
  t.is(incidents.length, 1)
  t.deepEqual(incidents, [['open', 'page']])
  t.like(tracker.report(), { successes: 92, failures: 8 })
})
