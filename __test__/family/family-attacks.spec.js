// Issue 30, the BudgetFamily items: what a snapshot document, a planted file, a stale
// lock or a hostile stream of label values could make a family do.
const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile, execFileSync, fork } = require('node:child_process')
const { BudgetFamily, ErrorBudgetTracker } = require('../..')
const { nativeOnly } = require('../helpers/binding')
const { waitForCalls, noMoreDeliveries } = require('../helpers/deliveries')

const manualFamily = (options = {}) => new BudgetFamily({ labelNames: ['type', 'site'], clock: 'manual', ...options })
const PACKAGE = JSON.stringify(require.resolve('../..'))

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'family-attacks-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

// A family snapshot with one child {a, a} (9 successes, 1 failure at 1 s), as an object to edit.
function snapshotObject(options = {}) {
  const family = manualFamily(options)
  for (let i = 0; i < 10; i++) family.record({ type: 'a', site: 'a' }, i < 9, 1000)
  const snap = JSON.parse(family.snapshot())
  family.close()
  return snap
}

// Runs `script` in a child node (the package as `BudgetFamily`) with a deadline: on the old code
// some of these blocked or aborted the process. Resolves to its stdout lines. Asynchronous: a
// synchronous run would stall this thread's event loop, and the other specs' deliveries with it.
function inChild(script, args = []) {
  const source = `const { BudgetFamily } = require(${PACKAGE}); ${script}`
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', source, ...args], { encoding: 'utf8', timeout: 30_000 }, (err, stdout, stderr) =>
      err ? reject(Object.assign(err, { message: `${err.message}\n${stderr}` })) : resolve(stdout.trim().split('\n')),
    )
  })
}

// Item 1

test("1. restore(): persist, shared, snapshot or targetRate under an options '__proto__' key is refused, and nothing is written", (t) => {
  const dir = tempDir(t)
  const target = path.join(dir, 'chosen-by-the-document.json')
  const snap = snapshotObject()
  const smuggled = JSON.stringify({ persist: { path: target }, shared: 'x', snapshot: '{}', targetRate: 0.5 })
  const json = JSON.stringify(snap).replace('"options":{', `"options":{"__proto__":${smuggled},`)
  t.true(Object.hasOwn(JSON.parse(json).options, '__proto__'))
  const err = t.throws(() => BudgetFamily.restore(json), { code: 'ERR_SNAPSHOT_INVALID' })
  t.regex(err.message, /^BudgetFamily\.restore\(json\): unknown config key '__proto__'/)
  t.deepEqual(fs.readdirSync(dir), [])
})

test("1. new BudgetFamily(options) with an own '__proto__' key is refused as an unknown key, not a prototype", (t) => {
  const options = JSON.parse('{"labelNames":["type"],"clock":"manual","__proto__":{"targetRate":0.5}}')
  const err = t.throws(() => new BudgetFamily(options), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_VALUE' })
  t.regex(err.message, /^unknown key '__proto__' in new BudgetFamily\(options\): options; known keys: labelNames, /)
})

// Item 2

test('2. a family save never writes through a symlink planted at its temp file name; the persist path stays a file', (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'family.json')
  const victim = path.join(dir, 'victim.txt')
  fs.writeFileSync(victim, 'precious\n')
  // The name the old code used: `.<name>.<pid>.tmp`.
  fs.symlinkSync(victim, path.join(dir, `.family.json.${process.pid}.tmp`))
  const family = manualFamily({ persist: { path: file } })
  family.record({ type: 'a', site: 'a' }, false, 1000)
  family.save()
  family.close()
  t.is(fs.readFileSync(victim, 'utf8'), 'precious\n')
  t.false(fs.lstatSync(file).isSymbolicLink())
  const saved = JSON.parse(fs.readFileSync(file, 'utf8'))
  t.is(saved.format, 'captcha-error-budget.family')
  t.deepEqual(saved.children[0].snapshot.recorded, { successes: 0, failures: 1 })
})

// Item 7 (and issue 32: one lock for families and trackers)

const lockedBy = (file, holder, rule) => ({ code: 'ERR_PERSIST_LOCKED', message: `${file}: is in use by ${holder} (lock ${file}.lock): ${rule}` })
const MIXED = 'a family and a tracker cannot share a persist path; close() the other first, or give each its own path'

nativeOnly('WASI has no file locks')('7. a family persisting to a path, then a tracker on that path: ERR_PERSIST_LOCKED, and the other order', (t) => {
  const file = path.join(tempDir(t), 'state.json')
  const family = manualFamily({ persist: { path: file } })
  t.throws(() => new ErrorBudgetTracker({ clock: 'manual', persist: { path: file } }), lockedBy(file, 'a family of this process', MIXED))
  t.throws(
    () => manualFamily({ persist: { path: file } }),
    lockedBy(file, 'another family of this process', 'one family owns a persist path; close() the other first, or give each family its own path'),
  )
  family.close()
  t.false(fs.existsSync(`${file}.lock`))
  fs.rmSync(file)
  const tracker = new ErrorBudgetTracker({ clock: 'manual', persist: { path: file } })
  t.throws(() => manualFamily({ persist: { path: file } }), lockedBy(file, 'a tracker of this process', MIXED))
  tracker.close()
  t.false(fs.existsSync(`${file}.lock`))
})

test('7. a lock file naming this process or a live process, left behind by no live owner, does not keep a family out', (t) => {
  const file = path.join(tempDir(t), 'state.json')
  // As after a kill -9 of a family that ran as pid 1 in a container with a persistent volume.
  for (const pid of [process.pid, process.ppid]) {
    fs.writeFileSync(`${file}.lock`, `${pid}\n`)
    const family = manualFamily({ persist: { path: file } })
    family.record({ type: 'a', site: 'a' }, true, 1000)
    family.close()
  }
  t.is(JSON.parse(fs.readFileSync(file, 'utf8')).children.length, 1)
})

nativeOnly('WASI has no file locks')(
  '7. a family of another process owns its path until kill -9; then the lock is taken over and its last save read',
  async (t) => {
    const file = path.join(tempDir(t), 'state.json')
    const child = fork(path.join(__dirname, '..', 'fixtures', 'family-owner.js'), [file], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
    t.teardown(() => child.kill('SIGKILL'))
    await new Promise((resolve) => child.once('message', resolve))
    const holder = `process ${child.pid}`
    t.throws(
      () => manualFamily({ persist: { path: file } }),
      lockedBy(file, holder, 'one family owns a persist path; close() the other first, or give each family its own path'),
    )
    t.throws(() => new ErrorBudgetTracker({ clock: 'manual', persist: { path: file } }), lockedBy(file, holder, MIXED))
    child.kill('SIGKILL')
    await new Promise((resolve) => child.once('exit', resolve))
    t.true(fs.existsSync(`${file}.lock`), 'the lock file stays behind, its lock died with the process')
    const family = manualFamily({ persist: { path: file } })
    const restored = family.labels({ type: 'a', site: 'a' })
    t.deepEqual([restored.successes, restored.failures], [9, 1])
    family.close()
  },
)

// Item 8 (and issue 35: a worker that exits after its last solve keeps its `exhausted` message)

test('8. close() right after the records delivers the events they caused to the family listeners, as a tracker does', async (t) => {
  const config = { targetRate: 0.9, minEvents: 1 }
  const family = manualFamily(config)
  const tracker = new ErrorBudgetTracker({ clock: 'manual', ...config })
  const familyCalls = []
  const trackerCalls = []
  for (const event of ['warning', 'critical', 'exhausted']) {
    family.on(event, (payload, labels) => familyCalls.push([event, labels.site]))
    tracker.on(event, () => trackerCalls.push([event, 'a']))
  }
  // One failure in one event: 10 % failures spends a 10 % budget at once: exhausted.
  family.record({ type: 'a', site: 'a' }, false, 1000)
  tracker.record(false, 1000)
  family.close()
  tracker.close()
  await waitForCalls(trackerCalls, 1).catch((err) => Promise.reject(new Error(`tracker: ${err.message}`)))
  await waitForCalls(familyCalls, 1).catch((err) => Promise.reject(new Error(`family: ${err.message}`)))
  await noMoreDeliveries(familyCalls)
  t.deepEqual(familyCalls, [['exhausted', 'a']])
  t.deepEqual(familyCalls, trackerCalls)
})

test('8. a worker that records its last solve, closes its family and ends still sends its exhausted message', async (t) => {
  const { Worker } = require('node:worker_threads')
  const source = `
    const { parentPort } = require('node:worker_threads')
    const { BudgetFamily } = require(${PACKAGE})
    const family = new BudgetFamily({ labelNames: ['type'], clock: 'manual', targetRate: 0.9, minEvents: 1 })
    family.on('exhausted', (report, labels) => parentPort.postMessage(['exhausted', labels.type, report.failures]))
    family.record({ type: 'image' }, false, 1000)
    family.close()`
  const worker = new Worker(source, { eval: true })
  const messages = []
  worker.on('message', (m) => messages.push(m))
  const code = await new Promise((resolve, reject) => worker.once('exit', resolve).once('error', reject))
  t.is(code, 0)
  t.deepEqual(messages, [['exhausted', 'image', 1]])
})

// Item 11

nativeOnly('WASI has no non-blocking open')('11. a FIFO, or /dev/zero behind a symlink, as a family persist path is refused at once', async (t) => {
  const dir = tempDir(t)
  const fifo = path.join(dir, 'pipe')
  execFileSync('mkfifo', [fifo])
  const zero = path.join(dir, 'zero.json')
  fs.symlinkSync('/dev/zero', zero)
  const script = `for (const p of process.argv.slice(1)) {
    try { new BudgetFamily({ labelNames: ['type'], persist: { path: p } }).close(); console.log('created') }
    catch (e) { console.log(e.code, e.message) } }`
  const why = 'is not a regular file (a FIFO, device or directory?): persist.path must name a file'
  t.deepEqual(await inChild(script, [fifo, zero]), [`ERR_PERSIST_WRITE ${fifo}: ${why}`, `ERR_PERSIST_WRITE ${zero}: ${why}`])
})

test('11. restore() refuses a snapshot over its maxChildren before restoring any child', (t) => {
  const snap = snapshotObject({ maxChildren: 1 })
  // The second child is malformed: read before the count is checked, it would be the error.
  snap.children.push({ labels: { type: 'b', site: 'b' }, snapshot: { format: 'not a tracker' } })
  t.throws(() => BudgetFamily.restore(JSON.stringify(snap)), {
    code: 'ERR_SNAPSHOT_INVALID',
    message: 'BudgetFamily.restore(json): 2 children, over maxChildren (1)',
  })
})

// Item 5's bound, item 13

test('5. a label value longer than 1024 characters is a RangeError naming the label; 1024 is accepted', (t) => {
  const family = manualFamily()
  t.throws(() => family.labels({ type: 'a', site: 'x'.repeat(1 << 20) }), {
    instanceOf: RangeError,
    code: 'ERR_OUT_OF_RANGE',
    message: 'family.labels(labels): labels.site must be at most 1024 characters long, got 1048576',
  })
  t.throws(() => family.record({ type: 'a'.repeat(1025), site: 'a' }, true, 1000), {
    code: 'ERR_OUT_OF_RANGE',
    message: /labels\.type must be at most 1024 characters long, got 1025$/,
  })
  t.is(family.size, 0)
  family.labels({ type: 'a', site: 'x'.repeat(1024) })
  t.is(family.size, 1)
  family.close()
})

test('13. label values with a lone surrogate are refused (two of them would be one series), in labels() and in restore()', (t) => {
  const family = manualFamily()
  for (const [value, unit] of [
    ['x\uD800', 'd800'],
    ['x\uDBFF', 'dbff'],
    ['\uDC00x', 'dc00'],
  ]) {
    const at = value.indexOf(String.fromCharCode(parseInt(unit, 16)))
    t.throws(() => family.labels({ type: 'a', site: value }), {
      instanceOf: TypeError,
      code: 'ERR_INVALID_ARG_VALUE',
      message: `family.labels(labels): labels.site must be well-formed Unicode: it has a lone surrogate (\\u${unit}) at index ${at}, which would make it the same as another string`,
    })
  }
  family.labels({ type: 'a', site: 'x\uD83D\uDE00' }) // a pair is fine
  t.is(family.size, 1)
  family.close()
  const snap = snapshotObject()
  snap.children[0].labels.site = 'x\uD800'
  t.throws(() => BudgetFamily.restore(JSON.stringify(snap)), {
    code: 'ERR_SNAPSHOT_INVALID',
    message: /children\[0\]\.labels\.site must be well-formed Unicode/,
  })
})

// Item 14

test("14. manual clock: a child idle for longer than its window is evicted at the family's time, not judged by its own stale clock", (t) => {
  const family = manualFamily({ maxChildren: 2, windowMs: 3_600_000 })
  family.record({ type: 'a', site: 'old' }, true, 0)
  family.record({ type: 'a', site: 'recent' }, true, 36_000_000) // 10 h later, family time
  const old = family.labels({ type: 'a', site: 'old' })
  family.labels({ type: 'a', site: 'new' })
  t.true(old.closed)
  t.deepEqual(
    family.children().map((c) => c.labels.site),
    ['recent', 'new'],
  )
  family.close()
})

test('10. eviction takes the oldest child whose window is empty, whichever order the windows empty in', (t) => {
  // windowMs 1 h, resolutionMs 1 s: a solve at t leaves the window at floor(t / 1 s) × 1 s + 1 h.
  const family = manualFamily({ maxChildren: 3, windowMs: 3_600_000, resolutionMs: 1000 })
  family.record({ type: 'a', site: 'A' }, true, 1_800_000) // empty from 5 400 000
  family.record({ type: 'a', site: 'B' }, true, 0) // empty from 3 600 000
  family.record({ type: 'a', site: 'C' }, true, 1_800_000)
  t.throws(() => family.labels({ type: 'a', site: 'D' }), { code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => family.labels({ type: 'a', site: 'D' }), { code: 'ERR_OUT_OF_RANGE' }, 'refused again, nothing changed')
  family.advanceTo(3_599_999)
  t.throws(() => family.labels({ type: 'a', site: 'D' }), { code: 'ERR_OUT_OF_RANGE' }, "B's solve is still in its window")
  family.advanceTo(3_600_000)
  family.labels({ type: 'a', site: 'D' }) // B goes
  t.deepEqual(
    family.children().map((c) => c.labels.site),
    ['A', 'C', 'D'],
  )
  family.labels({ type: 'a', site: 'E' }) // D is empty: it goes
  t.deepEqual(
    family.children().map((c) => c.labels.site),
    ['A', 'C', 'E'],
  )
  family.labels({ type: 'a', site: 'E' }).record(true, 3_600_000)
  family.advanceTo(5_400_000) // A and C empty now: the older, A, goes first
  family.labels({ type: 'a', site: 'F' })
  t.deepEqual(
    family.children().map((c) => c.labels.site),
    ['C', 'E', 'F'],
  )
  family.close()
})

test('10. eviction agrees with a reference model over random records, clock moves, own listeners and new label sets', (t) => {
  const { prng } = require('../../scripts/prng.js')
  // The model: a child is empty at family time T when every solve's bucket has left the window
  // (floor(t / res) × res + window ≤ T); the one evicted is the oldest empty child without an own listener.
  const WINDOW = 10_000
  const RES = 1000
  const seen = { refused: 0, evicted: 0 }
  for (let seed = 1; seed <= 20; seed++) {
    const random = prng(seed)
    const family = manualFamily({ maxChildren: 4, windowMs: WINDOW, resolutionMs: RES })
    const model = [] // { site, solves: [t], listeners: number }, oldest first
    let now = 0
    let next = 0
    const listener = () => {}
    for (let step = 0; step < 300; step++) {
      const r = random()
      if (r < 0.3) {
        now += Math.floor(random() * 4000)
        family.advanceTo(now)
      } else if (r < 0.5 && model.length > 0) {
        const m = model[Math.floor(random() * model.length)]
        const at = now - Math.floor(random() * 3000)
        const child = family.labels({ type: 'a', site: m.site })
        child.record(true, at)
        if (at > now - WINDOW) m.solves.push(at)
      } else if (r < 0.6 && model.length > 0) {
        const m = model[Math.floor(random() * model.length)]
        const child = family.labels({ type: 'a', site: m.site })
        if (m.listeners > 0 && random() < 0.7) {
          child.off('warning', listener)
          m.listeners--
        } else {
          child.on('warning', listener)
          m.listeners++
        }
      } else {
        const site = `s${next++}`
        const empty = (m) => m.solves.every((at) => Math.floor(at / RES) * RES + WINDOW <= now)
        const victim = model.length < 4 ? undefined : model.findIndex((m) => m.listeners === 0 && empty(m))
        if (victim === -1) {
          t.throws(() => family.labels({ type: 'a', site }), { code: 'ERR_OUT_OF_RANGE' }, `seed ${seed} step ${step}`)
          seen.refused++
          continue
        }
        family.labels({ type: 'a', site })
        if (victim !== undefined) {
          model.splice(victim, 1)
          seen.evicted++
        }
        model.push({ site, solves: [], listeners: 0 })
      }
      t.deepEqual(
        family.children().map((c) => c.labels.site),
        model.map((m) => m.site),
        `seed ${seed} step ${step}`,
      )
    }
    family.close()
  }
  // Both outcomes were exercised, many times.
  t.true(seen.refused > 100 && seen.evicted > 100, JSON.stringify(seen))
})

// Item 15

test('15. family.record() with a bad atMs on a full family evicts nothing and creates nothing', (t) => {
  const family = manualFamily({ maxChildren: 1 })
  const idle = family.labels({ type: 'a', site: 'idle' })
  t.throws(() => family.record({ type: 'b', site: 'b' }, true, 'x'), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_TYPE',
    message: 'family.record(labels, success, atMs): atMs must be a number of epoch ms, got string',
  })
  t.throws(() => family.record({ type: 'b', site: 'b' }, true, NaN), {
    instanceOf: RangeError,
    code: 'ERR_OUT_OF_RANGE',
    message: 'family.record(labels, success, atMs): atMs must be a finite number of epoch ms, got NaN',
  })
  t.false(idle.closed)
  t.deepEqual(
    family.children().map((c) => c.labels.site),
    ['idle'],
  )
  family.close()
})

// Item 17

test('17. malformed children in a snapshot are ERR_SNAPSHOT_INVALID naming the child', (t) => {
  const snap = snapshotObject()
  const cases = [
    [[null], 'children[0] must be an object { labels, snapshot }, got null'],
    [[snap.children[0], 7], 'children[1] must be an object { labels, snapshot }, got number'],
    [[{ labels: snap.children[0].labels }], "children[0].snapshot must be a tracker's snapshot (an object), got undefined"],
    [[{ labels: snap.children[0].labels, snapshot: 'x' }], "children[0].snapshot must be a tracker's snapshot (an object), got string"],
  ]
  for (const [children, message] of cases) {
    t.throws(() => BudgetFamily.restore(JSON.stringify({ ...snap, children })), {
      code: 'ERR_SNAPSHOT_INVALID',
      message: `BudgetFamily.restore(json): ${message}`,
    })
  }
})

// Item 20

test('20. eleven open persisted families give no MaxListenersExceededWarning', async (t) => {
  const dir = tempDir(t)
  const script = `
    // (The WASI build's ExperimentalWarning is not the family's.)
    process.on('warning', (w) => w.name !== 'ExperimentalWarning' && console.log('warning', w.name))
    const families = []
    for (let i = 0; i < 11; i++) families.push(new BudgetFamily({ labelNames: ['type'], persist: { path: process.argv[1] + '/f' + i + '.json' } }))
    for (const f of families) f.close()
    setImmediate(() => console.log('done'))`
  t.deepEqual(await inChild(script, [dir]), ['done'])
})
