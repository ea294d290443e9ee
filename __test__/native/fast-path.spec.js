// The hot paths: each tracker's own raw `record` function, its lifetime
// (taken off its tracker, collected tracker, closed tracker, worker threads
// that exit), recordMany(), and report() built in JavaScript. Speed itself is
// measured by `npm run bench`, not here.
const test = require('ava')
const { nativeOnly } = require('../helpers/binding')
const { execFile } = require('node:child_process')
const path = require('node:path')
const { Worker } = require('node:worker_threads')
const { ErrorBudgetTracker } = require('../..')
const native = require('../../native.js')
const { REPORT_INTO, nativeReportOf, fastReport } = require('../../lib/native/fast-report.js')
const { waitForCalls } = require('../helpers/deliveries')

test('record is an own, non-enumerable function of each tracker; the prototype keeps one', (t) => {
  const a = new ErrorBudgetTracker({ clock: 'manual' })
  const b = new ErrorBudgetTracker({ clock: 'manual' })
  const own = Object.getOwnPropertyDescriptor(a, 'record')
  t.is(typeof own.value, 'function')
  t.like(own, { writable: true, enumerable: false, configurable: true })
  t.not(a.record, b.record)
  t.not(a.record, ErrorBudgetTracker.prototype.record)
  t.deepEqual(Object.keys(a), [])
  t.is(typeof ErrorBudgetTracker.prototype.record, 'function')
})

test('a subclass that overrides record keeps its override; one that does not gets the own record', (t) => {
  class Counting extends ErrorBudgetTracker {
    constructor(config) {
      super(config)
      this.calls = 0
    }

    record(success, atMs) {
      this.calls++
      return super.record(success, atMs)
    }
  }
  class Plain extends ErrorBudgetTracker {}
  const counting = new Counting({ clock: 'manual' })
  counting.record(true)
  counting.record(false, 10)
  t.false(Object.hasOwn(counting, 'record'))
  t.deepEqual([counting.calls, counting.total, counting.failures, counting.now], [2, 2, 1, 10])
  const plain = new Plain({ clock: 'manual' })
  t.true(Object.hasOwn(plain, 'record'))
  plain.record(true)
  t.is(plain.total, 1)
  t.is(counting.report().total, 2) // the report filler is there either way
})

test('a detached record records into its own tracker, whatever `this` is', (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const other = new ErrorBudgetTracker({ clock: 'manual' })
  const record = tracker.record
  record(true)
  record.call(other, false)
  record.apply(null, [true, 5000])
  t.deepEqual([tracker.total, tracker.failures, tracker.now], [3, 1, 5000])
  t.is(other.total, 0)
})

test('the own record and the prototype method give the same figures and transitions', async (t) => {
  // 100 successes then failures at 95 %: 3 of 103 → warning (budget 5.15, 2.15 left),
  // 5 of 105 → critical (0.25 of 5.25 left), 6 of 106 → exhausted.
  const run = async (record) => {
    const tracker = new ErrorBudgetTracker({ clock: 'manual' })
    const calls = []
    for (const status of ['warning', 'critical', 'exhausted']) tracker.on(status, (r) => calls.push([status, r.total]))
    for (let i = 0; i < 100; i++) record(tracker, true, 1000)
    for (let i = 0; i < 6; i++) record(tracker, false)
    await waitForCalls(calls, 3)
    const { total, failures, status, lastStatus } = tracker
    tracker.close()
    return { calls, total, failures, status, lastStatus }
  }
  const own = await run((tracker, ...args) => tracker.record(...args))
  const proto = await run((tracker, ...args) => ErrorBudgetTracker.prototype.record.apply(tracker, args))
  t.deepEqual(own, {
    calls: [
      ['warning', 103],
      ['critical', 105],
      ['exhausted', 106],
    ],
    total: 106,
    failures: 6,
    status: 'exhausted',
    lastStatus: 'exhausted',
  })
  t.deepEqual(proto, own)
})

test('records between two decisions are seen at once, and each decision comes at its exact record', async (t) => {
  // Most records skip the lock (a lease on the quiet region, budget_core::lease):
  // they must be invisible nowhere. 1 s buckets, no alert policy, 95 %: after
  // 990 successes and 10 failures 0.2 of the budget is spent (healthy); the
  // 16th failure more spends 26 / (1 016 × 0.05) = 0.512, past the warning's
  // 0.5 (the 15th: 25 / (1 015 × 0.05) = 0.493).
  const tracker = new ErrorBudgetTracker({ clock: 'manual', windowMs: 3_600_000, resolutionMs: 1000, alerts: [] })
  const calls = []
  tracker.on('warning', (r) => calls.push(r.total))
  tracker.advanceTo(1500)
  tracker.recordMany(990, 10)
  const seen = []
  for (let i = 1; i <= 16; i++) {
    tracker.record(false)
    seen.push([tracker.failures, tracker.status])
  }
  t.deepEqual(seen.slice(13), [
    [24, 'healthy'],
    [25, 'healthy'],
    [26, 'warning'],
  ])
  t.deepEqual(
    seen.map(([failures]) => failures),
    Array.from({ length: 16 }, (_, i) => 11 + i),
  )
  // Without a read in between (reads settle the records: see lease.rs) and
  // into the next bucket: the report and the counters see every one.
  for (let i = 0; i < 500; i++) tracker.record(true)
  tracker.advanceTo(2000)
  for (let i = 0; i < 500; i++) tracker.record(true)
  const report = tracker.report()
  t.deepEqual([report.total, report.successes, report.failures], [2016, 1990, 26])
  t.deepEqual(tracker.recorded, { successes: 1990, failures: 26, excluded: 0, capacity: 0 })
  await waitForCalls(calls, 1)
  t.deepEqual(calls, [1016])
  tracker.close()
  t.is(tracker.total, 2016)
})

test('the own record checks its arguments like the prototype method, in the same order', (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const cases = [[], ['yes'], [1], [true, '1000'], [true, NaN], [true, Infinity], [false, 2 ** 60]]
  for (const args of cases) {
    const own = t.throws(() => tracker.record(...args))
    const proto = t.throws(() => ErrorBudgetTracker.prototype.record.apply(tracker, args))
    t.is(own.constructor, proto.constructor)
    t.is(own.code, proto.code)
    t.is(own.message, proto.message)
  }
  t.is(tracker.total, 0)
  t.is(tracker.now, 0)
  // `null` and `undefined` atMs mean "now", extra arguments are ignored.
  tracker.record(true, 700)
  tracker.record(false, null)
  tracker.record(true, undefined)
  tracker.record(true, 800, 'extra')
  t.deepEqual([tracker.total, tracker.failures, tracker.now], [4, 1, 800])
  tracker.close()
  const closed = t.throws(() => tracker.record('not even a boolean'))
  t.is(closed.code, 'ERR_TRACKER_CLOSED')
  t.is(closed.message, 'cannot call record() on a closed ErrorBudgetTracker')
})

test('a real-clock record lands within one bucket of its time', (t) => {
  // 1 h window, 83 ms buckets: wide enough for the coarse clock.
  const before = Date.now()
  const tracker = new ErrorBudgetTracker()
  tracker.record(true)
  const after = Date.now()
  t.is(tracker.total, 1)
  // The tracker's clock is anchored to the wall clock at creation, then monotonic;
  // generous bounds (a bucket plus scheduling).
  t.true(tracker.now >= before - 100 && tracker.now <= after + 200, `${tracker.now} vs ${before}..${after}`)
  // The report's time is the tracker's now when it was made: between two reads
  // of \`now\` around it (not within 1 ms of a later read: under load, WASI
  // runs showed 13 ms between two calls).
  const nowBefore = tracker.now
  const report = tracker.report()
  const nowAfter = tracker.now
  t.true(nowBefore <= report.at && report.at <= nowAfter, `${nowBefore} ≤ ${report.at} ≤ ${nowAfter}`)
})

test('a record taken off its tracker survives the tracker being collected; a closed one throws', async (t) => {
  const fixture = path.join(__dirname, '..', 'fixtures', 'record-outlives-tracker.js')
  const { stdout, stderr, code } = await new Promise((resolve) => {
    execFile(process.execPath, ['--expose-gc', fixture], { timeout: 30000 }, (error, stdout, stderr) =>
      resolve({ code: error ? error.code : 0, stdout, stderr }),
    )
  })
  t.is(code, 0, stderr)
  const steps = Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((line) => {
        const { step, ...rest } = JSON.parse(line)
        return [step, rest]
      }),
  )
  t.deepEqual(steps.bound, { ok: true })
  t.deepEqual(steps.collected, { collected: true, recordedAfter: 100 })
  t.deepEqual(steps.listening, {
    listeningCollected: false,
    seen: [
      ['warning', 103, 3],
      ['exhausted', 106, 6],
    ],
    collectedAfterClose: true,
  })
  const closedError = 'ERR_TRACKER_CLOSED: cannot call record() on a closed ErrorBudgetTracker'
  t.deepEqual(steps.closed, { closedCollected: true, errors: [closedError, closedError] })
  t.deepEqual(steps.validation, { message: 'TypeError: record(success): success must be a boolean, got string' })
  t.deepEqual(steps.freed, { collected: true })
})

// A worker thread that makes trackers, detaches their record functions, and
// exits (or is terminated) without closing anything.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const { ErrorBudgetTracker } = require(workerData.entry)
const records = []
for (let i = 0; i < 20; i++) {
  const tracker = new ErrorBudgetTracker(i % 2 ? { clock: 'manual' } : {})
  if (i % 3 === 0) tracker.on('exhausted', () => {})
  records.push(tracker.record.bind(tracker), tracker.record)
}
let n = 0
for (const record of records) for (let j = 0; j < 200; j++, n++) record(j % 7 !== 0)
parentPort.postMessage(n)
if (workerData.spin) for (;;) records[0](true)
`

function runWorker(spin) {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { entry: path.join(__dirname, '..', '..'), spin } })
    let recorded = 0
    worker.on('message', (n) => {
      recorded = n
      if (spin) worker.terminate()
    })
    worker.on('error', reject)
    worker.on('exit', (exitCode) => resolve({ exitCode, recorded }))
  })
}

test('worker threads with trackers and detached records exit, or are terminated mid-record, cleanly', async (t) => {
  for (let i = 0; i < 4; i++) {
    const done = await runWorker(false)
    t.deepEqual(done, { exitCode: 0, recorded: 40 * 200 })
  }
  const terminated = await runWorker(true)
  t.is(terminated.exitCode, 1)
  t.is(terminated.recorded, 40 * 200)
  // This thread's trackers are unaffected.
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  tracker.record(true)
  t.is(tracker.total, 1)
})

test('recordMany counts a batch in one bucket, with one evaluation', async (t) => {
  // 1 s window of 100 ms buckets, 95 %.
  const tracker = new ErrorBudgetTracker({ clock: 'manual', windowMs: 1000, resolutionMs: 100, alerts: [] })
  const calls = []
  for (const status of ['warning', 'critical', 'exhausted']) tracker.on(status, (r) => calls.push([status, r.total]))
  tracker.recordMany(100, 0, 250)
  // 7 failures with 100 successes: budget 5.35, nothing left → straight to
  // exhausted, with no warning or critical on the way (one evaluation).
  tracker.recordMany(0, 7)
  t.deepEqual([tracker.total, tracker.successes, tracker.failures, tracker.now], [107, 100, 7, 250])
  t.is(tracker.lastStatus, 'exhausted')
  await waitForCalls(calls, 1)
  t.deepEqual(calls, [['exhausted', 107]])
  // One bucket (200–300 ms): it all leaves at 200 + 1000.
  tracker.advanceTo(1199)
  t.is(tracker.total, 107)
  tracker.advanceTo(1200)
  t.is(tracker.total, 0)
  // Zero is allowed; late batches go to their bucket, too-old ones to `dropped`.
  tracker.recordMany(0, 0)
  tracker.recordMany(3, 1, 1150)
  tracker.recordMany(5, 5, 100)
  t.deepEqual([tracker.total, tracker.failures, tracker.report().dropped], [4, 1, 10])
  t.deepEqual(tracker.recorded, { successes: 108, failures: 13, excluded: 0, capacity: 0 })
  tracker.close()
})

test('recordMany checks its arguments, naming them, and records nothing on error', (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const cases = [
    [[-1, 0], RangeError, 'ERR_OUT_OF_RANGE', 'recordMany(successes, failures): successes must be an integer from 0 to 4294967295, got -1'],
    [[1.5, 0], RangeError, 'ERR_OUT_OF_RANGE', 'recordMany(successes, failures): successes must be an integer from 0 to 4294967295, got 1.5'],
    [[2 ** 32, 0], RangeError, 'ERR_OUT_OF_RANGE', `recordMany(successes, failures): successes must be an integer from 0 to 4294967295, got ${2 ** 32}`],
    [[NaN, 0], RangeError, 'ERR_OUT_OF_RANGE', 'recordMany(successes, failures): successes must be an integer from 0 to 4294967295, got NaN'],
    [['1', 0], TypeError, 'ERR_INVALID_ARG_TYPE', 'recordMany(successes, failures): successes must be an integer from 0 to 4294967295, got string'],
    [[1], TypeError, 'ERR_INVALID_ARG_TYPE', 'recordMany(successes, failures): failures must be an integer from 0 to 4294967295, got undefined'],
    [[1, -2], RangeError, 'ERR_OUT_OF_RANGE', 'recordMany(successes, failures): failures must be an integer from 0 to 4294967295, got -2'],
    [[1, 1, '5'], TypeError, 'ERR_INVALID_ARG_TYPE', 'recordMany(successes, failures, atMs): atMs must be a number of epoch ms, got string'],
    [[1, 1, Infinity], RangeError, 'ERR_OUT_OF_RANGE', 'recordMany(successes, failures, atMs): atMs must be a finite number of epoch ms, got Infinity'],
  ]
  for (const [args, errorClass, code, message] of cases) {
    const err = t.throws(() => tracker.recordMany(...args), { instanceOf: errorClass })
    t.is(err.code, code)
    t.is(err.message, message)
  }
  t.deepEqual([tracker.total, tracker.now], [0, 0])
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 0 })
  tracker.close()
  const closed = t.throws(() => tracker.recordMany(1, 0))
  t.is(closed.code, 'ERR_TRACKER_CLOSED')
  t.is(closed.message, 'cannot call recordMany() on a closed ErrorBudgetTracker')
})

// The native report, as it was before report() moved to JavaScript: index.js
// replaced the prototype's report (native.ErrorBudgetTracker is the same class),
// so the original comes from lib/native/fast-report.js, which kept it.
const nativeReport = (tracker) => nativeReportOf(native.ErrorBudgetTracker, tracker)

nativeOnly('the fast report() (reportInto) is native-only: on WASI report() is the native method itself')(
  'report() built in JavaScript is the native report: same fields, order and values',
  (t) => {
    // Twelve pairs, all firing under an outage, so the alert list outgrows the
    // initial buffer (room for 8).
    const alerts = Array.from({ length: 12 }, (_, i) => ({
      name: `p${i}`,
      severity: i % 2 ? 'ticket' : 'page',
      longWindowMs: 600_000 + i * 60_000,
      shortWindowMs: 60_000,
      burnRate: 1 + i / 2,
      minEvents: i,
    }))
    const trackers = [
      new ErrorBudgetTracker({ clock: 'manual' }),
      new ErrorBudgetTracker({ clock: 'manual', minEvents: 100 }),
      new ErrorBudgetTracker({ clock: 'manual', targetRate: 1 }),
      new ErrorBudgetTracker({ clock: 'manual', windowMs: 3_600_000, alerts }),
    ]
    const seen = new Set()
    for (const tracker of trackers) {
      const compare = () => {
        // The fast report holds the guard's fields too, for report() to fill (lib/guard/state.js).
        const { excluded, capacity, throttle, ...fast } = fastReport(tracker)
        t.deepEqual([excluded, capacity, throttle], [0, 0, null])
        t.deepEqual(fast, nativeReport(tracker))
        t.deepEqual(Object.keys(fast), Object.keys(nativeReport(tracker)))
        t.deepEqual(Object.keys(tracker.report()), [...Object.keys(fast), 'excluded', 'capacity', 'throttle'])
        seen.add(`${fast.status}/${fast.alerts.length}/${fast.insufficientData}/${fast.exhaustsInMs === null}`)
      }
      compare()
      for (let minute = 1; minute <= 40; minute++) {
        // Mostly successes, then a 15-minute outage, then recovery.
        const failing = minute > 10 && minute <= 25
        tracker.recordMany(failing ? 5 : 60, failing ? 55 : 1, minute * 60_000)
        compare()
      }
      tracker.advanceTo(5 * 3_600_000)
      compare()
    }
    // The scenarios reached every status, no/some/all alerts, both flags.
    const all = [...seen].join(' ')
    for (const part of ['healthy/', 'exhausted/', '/12/', '/0/', '/true/', '/false/', 'true', 'false']) {
      t.true(all.includes(part), `${part} in ${all}`)
    }
  },
)

test('the report filler is a per-tracker function under a registered symbol; it wants a Float64Array', (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  t.is(REPORT_INTO, Symbol.for('captcha-error-budget.reportInto'))
  t.is(typeof tracker[REPORT_INTO], 'function')
  t.deepEqual(Object.keys(tracker), [])
  const err = t.throws(() => tracker[REPORT_INTO]([0, 0]), { instanceOf: TypeError })
  t.is(err.message, 'reportInto(buffer): buffer must be a Float64Array')
  // Too small: nothing written, the size needed returned.
  const small = new Float64Array(3)
  t.is(tracker[REPORT_INTO](small), 15)
  t.deepEqual([...small], [0, 0, 0])
  // An object without the filler (made from the prototype) gets the native report's error.
  const bare = Object.create(ErrorBudgetTracker.prototype)
  t.throws(() => bare.report())
})
