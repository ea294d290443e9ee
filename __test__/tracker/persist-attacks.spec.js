// Issue 30, items 1 and 2 (the tracker's half): a config's own `__proto__` key is an
// unknown key, never a prototype whose keys become fields; a persist write never goes
// through a file or symlink planted at its temp file's name.
const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { ErrorBudgetTracker } = require('../..')

const KNOWN =
  'targetRate, windowMs, warningThreshold, criticalThreshold, minEvents, resolutionMs, hysteresis, verdictWindowMs, clock, alerts, snapshot, now, persist, shared, fleet'

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'persist-attacks-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

test("an own '__proto__' key (as JSON.parse makes) is an unknown config key, not a prototype holding fields", (t) => {
  const config = JSON.parse('{"__proto__":{"targetRate":0.5}}')
  t.throws(() => new ErrorBudgetTracker(config), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_VALUE',
    message: `unknown config key '__proto__'; known keys: ${KNOWN}`,
  })
})

test("an own '__proto__' key inside persist is refused too, by name, and nothing is created", (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'state.json')
  const persist = JSON.parse(`{"path":${JSON.stringify(file)},"__proto__":{"intervalMs":5}}`)
  t.throws(() => new ErrorBudgetTracker({ clock: 'manual', persist }), {
    code: 'ERR_INVALID_ARG_VALUE',
    message: "config.persist has an unknown key '__proto__'; known keys: path, intervalMs",
  })
  // Nothing was created at the path.
  t.deepEqual(fs.readdirSync(dir), [])
})

test('a config whose prototype chain holds a field still reads it (only own keys changed meaning)', (t) => {
  // Inherited enumerable keys were read before (for…in); that stays: the fix is about own `__proto__` keys.
  const tracker = new ErrorBudgetTracker(Object.create({ targetRate: 0.9 }, { clock: { value: 'manual', enumerable: true } }))
  t.is(tracker.report().sloTarget, 0.9)
  tracker.close()
})

test("a save never writes through a symlink planted at a temp file's name, and the persist path stays a file", (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'state.json')
  const victim = path.join(dir, 'victim.txt')
  fs.writeFileSync(victim, 'precious\n')
  // The names the writes of this process would have used (`.<name>.<pid>.<n>.tmp`), each a
  // symlink to the victim: a write that follows one overwrites it.
  for (let n = 0; n < 64; n++) fs.symlinkSync(victim, path.join(dir, `.state.json.${process.pid}.${n}.tmp`))
  const tracker = new ErrorBudgetTracker({ clock: 'manual', persist: { path: file } })
  tracker.recordMany(3, 1)
  tracker.close() // the final save
  t.is(fs.readFileSync(victim, 'utf8'), 'precious\n')
  t.false(fs.lstatSync(file).isSymbolicLink())
  t.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')).recorded, { successes: 3, failures: 1 })
  // Every planted link is still there, still a link to the victim; no other temp file is left.
  const left = fs.readdirSync(dir).filter((n) => n.endsWith('.tmp'))
  t.is(left.length, 64)
  for (const name of left) t.is(fs.readlinkSync(path.join(dir, name)), victim)
})

test('temp file names are not a counter: a file planted at each name a counter would pick is left alone', (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'state.json')
  for (let n = 0; n < 64; n++) fs.writeFileSync(path.join(dir, `.state.json.${process.pid}.${n}.tmp`), 'planted')
  const tracker = new ErrorBudgetTracker({ clock: 'manual', persist: { path: file } })
  tracker.recordMany(1, 0)
  tracker.close()
  t.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')).recorded, { successes: 1, failures: 0 })
  for (let n = 0; n < 64; n++) t.is(fs.readFileSync(path.join(dir, `.state.json.${process.pid}.${n}.tmp`), 'utf8'), 'planted')
})
