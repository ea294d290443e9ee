// Issue 12, item 4: counts above 2^53 − 1 are refused in a snapshot, a persist
// file and gate's input, and a record that would take a counter past it is a
// RangeError that records nothing. Counts are written into the JSON text as
// digits: a JavaScript number cannot hold 2^64 − 1 exactly.
const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { ErrorBudgetTracker } = require('../..')

const MAX = '9007199254740991' // 2^53 − 1
const U64_MAX = '18446744073709551615'

/** Snapshot JSON of one bucket at 1000 holding `successes` (digits), with totals and recorded to match. */
function snapshotWith(successes) {
  const tracker = new ErrorBudgetTracker({ clock: 'manual', windowMs: 60000, resolutionMs: 1000 })
  tracker.recordMany(424242, 0, 1000)
  const json = tracker.snapshot()
  tracker.close()
  // Three places: the bucket, totals, recorded.
  if (json.split('424242').length !== 4) throw new Error(`unexpected snapshot ${json}`)
  return json.replaceAll('424242', successes)
}

const ABOVE = `buckets[0].successes (${U64_MAX}) is above 2^53 − 1 (${MAX}), the largest count a snapshot may hold`

test('restore() refuses a count of 2^64 − 1 with ERR_SNAPSHOT_INVALID naming the field', (t) => {
  const err = t.throws(() => ErrorBudgetTracker.restore(snapshotWith(U64_MAX)), { code: 'ERR_SNAPSHOT_INVALID' })
  t.is(err.message, ABOVE)
  t.throws(() => ErrorBudgetTracker.restore(snapshotWith('9007199254740992')), {
    code: 'ERR_SNAPSHOT_INVALID',
    message: /^buckets\[0\]\.successes \(9007199254740992\) is above 2\^53 − 1/,
  })
})

test('a persist file with a count above 2^53 − 1 is refused naming the file and the field', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'i12-limits-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'budget.json')
  fs.writeFileSync(file, snapshotWith(U64_MAX))
  const err = t.throws(() => new ErrorBudgetTracker({ windowMs: 60000, resolutionMs: 1000, persist: { path: file } }), {
    code: 'ERR_SNAPSHOT_INVALID',
  })
  t.is(err.message, `${file}: ${ABOVE}`)
})

test('gate answers 2 (bad input) for a snapshot with a count above 2^53 − 1, naming the field', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'i12-limits-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'snap.json')
  fs.writeFileSync(file, snapshotWith(U64_MAX))
  const bin = path.join(__dirname, '..', '..', 'bin', 'captcha-budget.js')
  const run = await new Promise((resolve) => {
    execFile(process.execPath, [bin, 'gate', file], (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }))
  })
  t.is(run.code, 2)
  t.is(run.stderr, `captcha-budget gate: ${file}: ${ABOVE}\n`)
})

test('at 2^53 − 1 recorded successes, one more success is a RangeError that records nothing; failures still count', (t) => {
  const tracker = ErrorBudgetTracker.restore(snapshotWith(MAX), { clock: 'manual' })
  t.is(tracker.total, Number(MAX))
  t.is(tracker.recorded.successes, Number(MAX))
  const message = `record(success): the tracker has recorded ${MAX} successes: 1 more would pass 2^53 − 1 (${MAX}), the most a count may reach; nothing was recorded`
  const err = t.throws(() => tracker.record(true), { instanceOf: RangeError, code: 'ERR_OUT_OF_RANGE' })
  t.is(err.message, message)
  const detached = tracker.record // the raw fast path
  t.throws(() => detached(true, 1000), { code: 'ERR_OUT_OF_RANGE', message })
  t.throws(() => tracker.recordMany(1, 0), {
    code: 'ERR_OUT_OF_RANGE',
    message: `recordMany(successes, failures): the tracker has recorded ${MAX} successes: 1 more would pass 2^53 − 1 (${MAX}), the most a count may reach; nothing was recorded`,
  })
  t.deepEqual([tracker.total, tracker.successes, tracker.failures, tracker.recorded.successes], [Number(MAX), Number(MAX), 0, Number(MAX)])
  tracker.record(false)
  t.deepEqual([tracker.failures, tracker.report().failures], [1, 1])
  tracker.close()
})
