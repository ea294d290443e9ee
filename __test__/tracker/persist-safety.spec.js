// Issue 12, items 1, 2, 3 and 7: what reaches the persist file, and when.
const test = require('ava')
const { nativeOnly } = require('../helpers/binding')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile, fork, execFileSync } = require('node:child_process')
const { ErrorBudgetTracker } = require('../..')

const LIFECYCLE = path.join(__dirname, '..', 'fixtures', 'persist-lifecycle.js')

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-budget-safety-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

function run(args, { env, execArgv = [] } = {}) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [...execArgv, LIFECYCLE, ...args], { env: { ...process.env, ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`))
      else resolve(stdout.trim() ? JSON.parse(stdout) : null)
    })
  })
}

const recordedIn = (file) => JSON.parse(fs.readFileSync(file, 'utf8')).recorded

test("close()'s final save is never overwritten by an older autosave taken before it", async (t) => {
  // The test hook holds the saving thread for 400 ms between taking its
  // snapshot (0 records) and writing it; close() saves 19 records meanwhile.
  const file = path.join(tempDir(t), 'race.json')
  const result = await run([file, 'close-race'], { env: { CAPTCHA_BUDGET_TEST_SAVE_DELAY_MS: '400' } })
  t.deepEqual(result.saved, { successes: 10, failures: 9 })
})

test('the native state owns its autosave: a detached record() keeps saving, and its collection saves last', async (t) => {
  const file = path.join(tempDir(t), 'detached.json')
  const result = await run([file, 'detached'], { execArgv: ['--expose-gc'] })
  t.deepEqual(result.autosaved, { successes: 0, failures: 7 }, 'autosaved after the tracker object was collected')
  t.deepEqual(result.saved, { successes: 2, failures: 7 }, 'final save when the last handle was collected')
})

for (const how of ['natural', 'exit']) {
  test(`a persisted tracker never closed is saved at ${how === 'exit' ? 'process.exit()' : 'natural exit'}`, async (t) => {
    const file = path.join(tempDir(t), `${how}.json`)
    await run([file, how])
    t.deepEqual(recordedIn(file), { successes: 4, failures: 1 })
  })
}

for (const signal of ['SIGTERM', 'SIGINT']) {
  test(`a persisted tracker never closed is saved on ${signal}, and the process still dies of it`, async (t) => {
    const file = path.join(tempDir(t), 'signal.json')
    const child = fork(LIFECYCLE, [file, 'signal'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
    await new Promise((resolve) => child.once('message', resolve))
    child.kill(signal)
    const [code, killedBy] = await new Promise((resolve) => child.once('exit', (...args) => resolve(args)))
    t.deepEqual([code, killedBy], [null, signal])
    t.deepEqual(recordedIn(file), { successes: 4, failures: 1 })
  })
}

test('with a SIGTERM listener of its own, the process saves and the listener decides', async (t) => {
  const file = path.join(tempDir(t), 'own.json')
  const child = fork(LIFECYCLE, [file, 'own-listener'], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  await new Promise((resolve) => child.once('message', resolve))
  child.kill('SIGTERM')
  const [code] = await new Promise((resolve) => child.once('exit', (...args) => resolve(args)))
  t.deepEqual([code, out], [3, '{"recorded":5}\nstill alive\n'])
  // Saved at the signal (5), then at exit with the listener's record (6).
  t.deepEqual(recordedIn(file), { successes: 5, failures: 1 })
})

nativeOnly('on WASI a worker runs its own instance, and terminate() ends it without the final save')(
  'a terminated worker saves its persisted tracker',
  async (t) => {
    const file = path.join(tempDir(t), 'worker.json')
    const result = await run([file, 'worker'])
    t.deepEqual(result.saved, { successes: 0, failures: 4 })
  },
)

test('a snapshot saved in the future (clock corrected since) is taken as saved now: nothing frozen, nothing lost', (t) => {
  // A manual-clock tracker 2 h ahead of the real clock: 40 successes + 3 failures.
  const ahead = Date.now() + 2 * 3_600_000
  const source = new ErrorBudgetTracker({ clock: 'manual', windowMs: 600_000, resolutionMs: 1000 })
  source.recordMany(40, 3, ahead)
  const json = source.snapshot()
  const restored = ErrorBudgetTracker.restore(json)
  const now = Date.now()
  // Not the saved 2 h ahead. 1 s of slack: the addon's own clock is not Date.now() (on WASI one CI
  // run read 12 ms ahead of it), and a second is still 7 200 times less than the saved lead.
  t.true(restored.now <= now + 1000, `now ${restored.now} is not ahead of the real clock ${now}`)
  t.deepEqual([restored.successes, restored.failures], [40, 3])
  // New events count (they were dropped as older than the window before).
  restored.record(true)
  restored.recordMany(5, 0)
  t.deepEqual([restored.successes, restored.total, restored.report().dropped], [46, 49, 0])
  // The same through a persist file.
  const file = path.join(tempDir(t), 'future.json')
  fs.writeFileSync(file, json)
  const persisted = new ErrorBudgetTracker({ windowMs: 600_000, resolutionMs: 1000, persist: { path: file } })
  persisted.record(false)
  t.deepEqual([persisted.successes, persisted.failures], [40, 4])
  persisted.close()
  t.true(JSON.parse(fs.readFileSync(file, 'utf8')).savedAt <= Date.now())
})

test('restore(json, { persist }) never overwrites an existing file', (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'other.json')
  fs.writeFileSync(file, 'somebody else\n')
  const json = new ErrorBudgetTracker().snapshot()
  const err = t.throws(() => ErrorBudgetTracker.restore(json, { persist: { path: file } }))
  t.is(err.code, 'ERR_PERSIST_WRITE')
  t.true(err.message.startsWith(`${file}: already exists: restore(json, { persist }) never overwrites it`), err.message)
  t.is(fs.readFileSync(file, 'utf8'), 'somebody else\n')
  // A new path is fine.
  const fresh = ErrorBudgetTracker.restore(json, { persist: { path: path.join(dir, 'fresh.json') } })
  fresh.close()
  t.true(fs.existsSync(path.join(dir, 'fresh.json')))
})

test('a symlinked persist path writes its target and stays a symlink', (t) => {
  const dir = tempDir(t)
  fs.mkdirSync(path.join(dir, 'data'))
  const link = path.join(dir, 'budget.json')
  fs.symlinkSync(path.join('data', 'budget.json'), link) // relative, dangling until the first save
  const tracker = new ErrorBudgetTracker({ persist: { path: link } })
  tracker.recordMany(3, 1)
  tracker.close()
  t.true(fs.lstatSync(link).isSymbolicLink())
  t.deepEqual(recordedIn(path.join(dir, 'data', 'budget.json')), { successes: 3, failures: 1 })
  // And it restores through the link.
  const again = new ErrorBudgetTracker({ persist: { path: link } })
  t.is(again.total, 4)
  again.close()
  t.deepEqual(fs.readdirSync(dir).sort(), ['budget.json', 'data'])
})

nativeOnly('WASI has no non-blocking open, and this check is not run there')('a FIFO or a directory as persist path is refused at once, not waited on', (t) => {
  const dir = tempDir(t)
  const fifo = path.join(dir, 'pipe')
  execFileSync('mkfifo', [fifo])
  // In a child with a deadline: on a FIFO the old constructor blocked forever.
  const script = `
    const { ErrorBudgetTracker } = require(${JSON.stringify(require.resolve('../..'))})
    for (const p of process.argv.slice(1)) {
      try { new ErrorBudgetTracker({ persist: { path: p } }); console.log('created') }
      catch (e) { console.log(e.code, e.message) }
    }`
  const out = execFileSync(process.execPath, ['-e', script, fifo, dir], { timeout: 20_000, encoding: 'utf8' }).trim().split('\n')
  const why = 'is not a regular file (a FIFO, device or directory?): persist.path must name a file'
  t.deepEqual(out, [`ERR_PERSIST_WRITE ${fifo}: ${why}`, `ERR_PERSIST_WRITE ${dir}: ${why}`])
})

nativeOnly('WASI cannot ask whether another process still runs: temporary files are kept there')(
  "temporary files left by killed processes are removed on start; a live process's are kept",
  (t) => {
    const dir = tempDir(t)
    const file = path.join(dir, 'budget.json')
    // The highest pid Linux allows is 2^22; these cannot be running.
    const stale = ['.budget.json.2147483646.0.tmp', '.budget.json.2147483645.17.tmp']
    const live = `.budget.json.${process.pid}.999999.tmp`
    for (const name of [...stale, live, '.other.json.2147483646.0.tmp']) fs.writeFileSync(path.join(dir, name), '{"torn')
    const tracker = new ErrorBudgetTracker({ persist: { path: file } })
    // budget.json.lock: the tracker's lock on the path (persist-owner.spec.js).
    t.deepEqual(fs.readdirSync(dir).sort(), [live, '.other.json.2147483646.0.tmp', 'budget.json.lock'].sort())
    tracker.close()
  },
)

test('with the manual clock, a persist file keeps its times: a replay continues where it stopped', (t) => {
  const file = path.join(tempDir(t), 'replay.json')
  const config = { clock: 'manual', windowMs: 60_000, resolutionMs: 1000, persist: { path: file } }
  const first = new ErrorBudgetTracker(config)
  first.recordMany(10, 2, 1_700_000_000_000)
  first.close()
  // The manual clock starts at 0, long before savedAt: the file is not moved
  // back to it (the next replayed event would then expire all of it).
  const again = new ErrorBudgetTracker(config)
  again.record(false, 1_700_000_030_000)
  t.deepEqual([again.successes, again.failures], [10, 3])
  again.close()
})
