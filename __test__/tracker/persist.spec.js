const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { fork, execFile } = require('node:child_process')
const { ErrorBudgetTracker } = require('../..')

const CLI = path.join(__dirname, '..', '..', 'bin', 'captcha-budget.js')

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-budget-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

// 1 s window of 100 ms buckets at 95 %: 30 successes + 1 failure at 200 ms
// (31 events, budget 1.55, 35 % left: warning), 10 + 2 at 700 ms (43 events,
// budget 2.15 < 3 failures: exhausted), 1 dropped (older than the window).
function sampleTracker(config = {}) {
  const tracker = new ErrorBudgetTracker({ clock: 'manual', windowMs: 1000, resolutionMs: 100, ...config })
  for (let i = 0; i < 30; i++) tracker.record(true, 200)
  tracker.record(false, 200)
  for (let i = 0; i < 10; i++) tracker.record(true, 700)
  tracker.record(false, 700)
  tracker.record(false, 700)
  tracker.record(true, -500)
  return tracker
}

test('restore(snapshot()) gives the same report, policy and counters', (t) => {
  const original = sampleTracker({ alerts: [{ name: 'p', severity: 'page', longWindowMs: 500, shortWindowMs: 100, burnRate: 2, minEvents: 0 }] })
  const json = original.snapshot()
  const restored = ErrorBudgetTracker.restore(json, { clock: 'manual' })
  t.deepEqual(restored.report(), original.report())
  t.deepEqual(restored.alertPolicy, original.alertPolicy)
  t.deepEqual(restored.recorded, { successes: 41, failures: 3, excluded: 0, capacity: 0 })
  t.is(restored.report().dropped, 1)
  t.is(restored.lastStatus, 'exhausted')
  t.is(restored.snapshot(), json)
})

test('the snapshot schema: versioned, config, buckets with epoch-ms starts, totals', (t) => {
  const snap = JSON.parse(sampleTracker().snapshot())
  t.like(snap, { format: 'captcha-error-budget.snapshot', version: 1, savedAt: 700, lastStatus: 'exhausted', dropped: 1 })
  t.like(snap.config, { targetRate: 0.95, windowMs: 1000, resolutionMs: 100 })
  t.deepEqual(snap.buckets, [
    { startMs: 200, successes: 30, failures: 1 },
    { startMs: 700, successes: 10, failures: 2 },
  ])
  t.deepEqual(snap.totals, { successes: 40, failures: 3 })
  t.deepEqual(snap.recorded, { successes: 41, failures: 3 })
})

test('the time between snapshot and restore ages the window', (t) => {
  const json = sampleTracker().snapshot()
  // The 200 ms bucket leaves at 1200, the 700 ms one at 1700.
  t.is(ErrorBudgetTracker.restore(json, { clock: 'manual', now: 1199 }).total, 43)
  const later = ErrorBudgetTracker.restore(json, { clock: 'manual', now: 1200 })
  t.deepEqual([later.total, later.failures, later.status], [12, 2, 'exhausted'])
  const gone = ErrorBudgetTracker.restore(json, { clock: 'manual', now: 1700 })
  t.deepEqual([gone.total, gone.status], [0, 'healthy'])
  // A real clock restores at the current time: a 1970 snapshot is long gone.
  t.is(ErrorBudgetTracker.restore(json).total, 0)
})

const damaged = [
  ['truncated', (j) => j.slice(0, j.length - 20), /^snapshot is truncated/],
  ['not JSON', () => 'snapshot', /^snapshot is not valid JSON/],
  ['wrong version', (j) => j.replace('"version":1', '"version":7'), /unsupported snapshot version 7 \(this build reads version 1\)/],
  ['negative count', (j) => j.replace('"dropped":1', '"dropped":-1'), /does not match the schema/],
  [
    'sums that do not add up',
    (j) => j.replace('"totals":{"successes":40', '"totals":{"successes":41'),
    /totals \(41 successes, 3 failures\) do not match the buckets \(40 successes, 3 failures\)/,
  ],
  ['bucket outside the window', (j) => j.replace('"startMs":200', '"startMs":-300'), /bucket startMs -300 is outside the window \(-300, 700\]/],
  [
    'status that contradicts the counts',
    (j) => j.replace('"lastStatus":"exhausted"', '"lastStatus":"healthy"'),
    /lastStatus 'healthy' does not match the buckets, which give 'exhausted'/,
  ],
]
for (const [what, damage, message] of damaged) {
  test(`a ${what} snapshot is ERR_SNAPSHOT_INVALID`, (t) => {
    const json = damage(sampleTracker().snapshot())
    const err = t.throws(() => ErrorBudgetTracker.restore(json, { clock: 'manual' }))
    t.is(err.code, 'ERR_SNAPSHOT_INVALID')
    t.regex(err.message, message)
  })
}

test('restore() checks its arguments', (t) => {
  t.throws(() => ErrorBudgetTracker.restore({}), { instanceOf: TypeError, message: 'restore(json): json must be a string, got object' })
  const json = sampleTracker().snapshot()
  const err = t.throws(() => ErrorBudgetTracker.restore(json, { windowMs: 10 }), { instanceOf: TypeError })
  t.regex(err.message, /^restore\(json, options\): options.windowMs is not an option of restore/)
  t.throws(() => ErrorBudgetTracker.restore(json, { now: 5 }), { message: /options.now needs clock: 'manual'/ })
  // savedAt is 700: a tracker cannot be restored to an earlier moment.
  t.throws(() => ErrorBudgetTracker.restore(json, { clock: 'manual', now: 699 }), {
    instanceOf: RangeError,
    message: "restore(json, options): options.now (699) is earlier than the snapshot's savedAt (700): restore at or after it",
  })
})

test('persist: autosaves on the interval and on close(), and restores from the file on start', async (t) => {
  const dir = tempDir(t)
  // Nothing is written at creation (a long interval: with 10 ms, a loaded machine may
  // let the first autosave land before the check).
  const idle = path.join(dir, 'idle.json')
  const quiet = new ErrorBudgetTracker({ persist: { path: idle, intervalMs: 60_000 } })
  t.false(fs.existsSync(idle))
  quiet.close()
  const file = path.join(dir, 'turnstile.json')
  const tracker = new ErrorBudgetTracker({ persist: { path: file, intervalMs: 10 } })
  tracker.record(true)
  tracker.record(false)
  const started = Date.now()
  while (!fs.existsSync(file) && Date.now() - started < 5000) await new Promise((r) => setTimeout(r, 10))
  t.like(JSON.parse(fs.readFileSync(file, 'utf8')).totals, { successes: 1, failures: 1 })
  tracker.record(false)
  tracker.close() // the final save
  t.like(JSON.parse(fs.readFileSync(file, 'utf8')).totals, { successes: 1, failures: 2 })
  const again = new ErrorBudgetTracker({ persist: { path: file, intervalMs: 10 } })
  t.deepEqual([again.successes, again.failures, again.recorded.failures], [1, 2, 2])
  again.close()
  // A different config must not silently reuse the file.
  const err = t.throws(() => new ErrorBudgetTracker({ targetRate: 0.9, persist: { path: file } }))
  t.is(err.code, 'ERR_SNAPSHOT_INVALID')
  // At 90 % the default policy differs too (the 14.4 page is out of reach).
  t.regex(err.message, /holds a tracker with another config \(targetRate, alerts differ\)/)
})

test('persist: bad settings and failed writes are clear errors', (t) => {
  t.throws(() => new ErrorBudgetTracker({ persist: { path: '' } }), { instanceOf: TypeError, message: 'config.persist.path must be a non-empty string' })
  t.throws(() => new ErrorBudgetTracker({ persist: { path: 'x.json', intervalMs: 0 } }), { instanceOf: RangeError })
  t.throws(() => new ErrorBudgetTracker().save(), { code: 'ERR_INVALID_STATE' })
  const missingDir = path.join(tempDir(t), 'missing-dir')
  const unwritable = new ErrorBudgetTracker({ persist: { path: path.join(missingDir, 'x.json'), intervalMs: 60_000 } })
  const err = t.throws(() => unwritable.save())
  t.is(err.code, 'ERR_PERSIST_WRITE')
  // A failed final save keeps the tracker open (nothing lost; save() still works).
  t.throws(() => unwritable.close(), { code: 'ERR_PERSIST_WRITE' })
  t.false(unwritable.closed)
  t.throws(() => unwritable.save(), { code: 'ERR_PERSIST_WRITE' })
  // Once the directory exists it closes (left open, its save at the thread's exit would fail on stderr).
  fs.mkdirSync(missingDir)
  unwritable.close()
  t.true(unwritable.closed)
  t.true(fs.existsSync(path.join(missingDir, 'x.json')))
})

test('persist: a snapshot file that cannot be read is ERR_PERSIST_READ, not a write error; nothing is created', (t) => {
  // A path through a regular file: opening it fails (ENOTDIR, even for root), it is not "missing".
  const dir = tempDir(t)
  const blocker = path.join(dir, 'a-file')
  fs.writeFileSync(blocker, 'x')
  const file = path.join(blocker, 'budget.json')
  const err = t.throws(() => new ErrorBudgetTracker({ persist: { path: file } }), { instanceOf: Error })
  t.is(err.code, 'ERR_PERSIST_READ')
  t.true(err.message.startsWith(`${file}: cannot read it: `), err.message)
  t.deepEqual(fs.readdirSync(dir), ['a-file'])
})

test('kill -9 while saving never leaves a torn snapshot file', async (t) => {
  const file = path.join(tempDir(t), 'budget.json')
  const fixture = path.join(__dirname, '..', 'fixtures', 'autosave-forever.js')
  for (let round = 0; round < 15; round++) {
    const child = fork(fixture, [file], { stdio: 'ignore' })
    await new Promise((resolve) => child.once('message', resolve))
    await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 60))
    child.kill('SIGKILL')
    await new Promise((resolve) => child.once('exit', resolve))
    const text = fs.readFileSync(file, 'utf8')
    const restored = ErrorBudgetTracker.restore(text)
    t.true(restored.recorded.successes + restored.recorded.failures > 0, `round ${round}`)
  }
})

function runGate(args, input) {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, 'gate', ...args], (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stdout, stderr })
    })
    if (input !== undefined) child.stdin.end(input)
  })
}

// Real-clock trackers (a gate ages the snapshot to now): 1 h window at 95 %.
function snapshotFile(t, successes, failures) {
  const tracker = new ErrorBudgetTracker()
  for (let i = 0; i < successes; i++) tracker.record(true)
  for (let i = 0; i < failures; i++) tracker.record(false)
  const file = path.join(tempDir(t), 'snap.json')
  fs.writeFileSync(file, tracker.snapshot())
  return file
}

test('gate: 0 when healthy, 3 when exhausted, 3 for critical only with --strict', async (t) => {
  // 100 events: 1 failure → 80 % left; 5 → 0.000…% left (critical); 6 → exhausted.
  const healthy = await runGate([snapshotFile(t, 99, 1)])
  t.is(healthy.code, 0, healthy.stderr)
  t.regex(healthy.stdout, /status {12}healthy[\s\S]*deploys may proceed/)
  const critical = snapshotFile(t, 95, 5)
  t.is((await runGate([critical])).code, 0)
  const strict = await runGate([critical, '--strict'])
  t.is(strict.code, 3)
  t.regex(strict.stdout, /deploys stop: the budget is critical/)
  const exhausted = await runGate([snapshotFile(t, 94, 6), '--json'])
  t.is(exhausted.code, 3)
  const out = JSON.parse(exhausted.stdout)
  t.like(out, { proceed: false, strict: false, report: { status: 'exhausted', total: 100, failures: 6 } })
})

test('gate: 2 for a missing or invalid snapshot; reads stdin with -', async (t) => {
  const missing = await runGate([path.join(tempDir(t), 'nope.json')])
  t.is(missing.code, 2)
  t.regex(missing.stderr, /ENOENT/)
  const bad = await runGate(['-'], '{"format":"captcha-error-budget.snapshot","version":2}')
  t.is(bad.code, 2)
  t.regex(bad.stderr, /captcha-budget gate: -: /)
  const fromStdin = await runGate(['-'], fs.readFileSync(snapshotFile(t, 10, 0), 'utf8'))
  t.is(fromStdin.code, 0)
})
