// One owner per persist path (a lock on `<file>.lock`, docs/persistence-guarantees.md):
// a second tracker, in this process or another, is refused with ERR_PERSIST_LOCKED
// naming the owner; a dead owner's lock is taken over. And a write that fails part-way
// (a full disk, stood in for by a file-size limit) leaves the previous snapshot whole.
const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { fork, execFile } = require('node:child_process')
const { ErrorBudgetTracker } = require('../..')

const OWNER = path.join(__dirname, '..', 'fixtures', 'persist-owner.js')

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'persist-owner-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

const persisted = (file, config = {}) => new ErrorBudgetTracker({ clock: 'manual', ...config, persist: { path: file } })
const locked = (file, owner) => ({
  code: 'ERR_PERSIST_LOCKED',
  message: `${file}: is in use by ${owner} (lock ${file}.lock): one tracker owns a persist path; close() the other first, or give each tracker its own path`,
})

require('../helpers/binding').nativeOnly('WASI has no file locks: a persist path is not locked there')(
  'a second tracker on one persist path in this process is refused until the first closes',
  (t) => {
    const file = path.join(tempDir(t), 'state.json')
    const first = persisted(file)
    first.recordMany(99, 1)
    t.throws(() => persisted(file), locked(file, 'another tracker of this process'))
    // restore(json, { persist }) too, and through a symlink to the same file.
    t.throws(() => ErrorBudgetTracker.restore(first.snapshot(), { persist: { path: file } }), { code: 'ERR_PERSIST_LOCKED' })
    fs.writeFileSync(file, '') // the symlink's target must exist to be resolved; the first tracker overwrites it
    const link = path.join(path.dirname(file), 'link.json')
    fs.symlinkSync(file, link)
    t.throws(() => persisted(link), { code: 'ERR_PERSIST_LOCKED', message: new RegExp(`^${link}: is in use by another tracker of this process`) })
    t.is(fs.readFileSync(`${file}.lock`, 'utf8'), `${process.pid}\n`)
    first.close()
    t.false(fs.existsSync(`${file}.lock`))
    // The next owner starts from the first one's final save.
    const second = persisted(file)
    t.deepEqual([second.successes, second.failures], [99, 1])
    second.close()
  },
)

require('../helpers/binding').nativeOnly('WASI has no file locks: a persist path is not locked there')(
  'a second process is refused, naming the owner; after a kill -9 the lock is taken over and the last save read',
  async (t) => {
    const file = path.join(tempDir(t), 'state.json')
    const child = fork(OWNER, [file, 'hold'], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
    t.teardown(() => child.kill('SIGKILL'))
    await new Promise((resolve) => child.once('message', resolve))
    t.throws(() => persisted(file), locked(file, `process ${child.pid}`))
    // Nothing was written by the refused tracker: the owner's save stands.
    t.is(JSON.parse(fs.readFileSync(file, 'utf8')).recorded.successes, 90)
    child.kill('SIGKILL')
    await new Promise((resolve) => child.once('exit', resolve))
    // The lock file stays behind (nobody deleted it), but its lock died with the process.
    t.is(fs.readFileSync(`${file}.lock`, 'utf8'), `${child.pid}\n`)
    const next = persisted(file)
    t.deepEqual([next.successes, next.failures], [90, 10])
    t.is(fs.readFileSync(`${file}.lock`, 'utf8'), `${process.pid}\n`)
    next.close()
  },
)

test('a lock file naming a process that no longer runs does not keep a tracker out', (t) => {
  const file = path.join(tempDir(t), 'state.json')
  fs.writeFileSync(`${file}.lock`, '2147483646\n')
  const tracker = persisted(file)
  tracker.recordMany(3, 0)
  tracker.close()
  t.is(JSON.parse(fs.readFileSync(file, 'utf8')).recorded.successes, 3)
})

test('a full disk: the failed write leaves the previous snapshot whole and no temporary file; close() keeps the tracker open', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'state.json')
  const config = { windowMs: 3_600_000, resolutionMs: 1000 }
  const before = persisted(file, config)
  before.recordMany(95, 5)
  before.close()
  const saved = fs.readFileSync(file, 'utf8')
  t.true(saved.length < 8192, `${saved.length} bytes`)
  // A file-size limit of 16 × 512 bytes (dash's ulimit -f unit), SIGXFSZ ignored: a write past it
  // fails part-way with EFBIG, as one on a full disk fails with ENOSPC.
  const { stdout, stderr } = await new Promise((resolve, reject) => {
    const script = `trap '' XFSZ; ulimit -f 16; exec "$0" "$@"`
    execFile('/bin/sh', ['-c', script, process.execPath, OWNER, file, 'fill'], (err, stdout, stderr) => (err ? reject(err) : resolve({ stdout, stderr })))
  })
  const out = JSON.parse(stdout)
  t.is(out.restored, 100)
  t.is(out.save.code, 'ERR_PERSIST_WRITE')
  t.regex(out.save.message, new RegExp(`^${file}: cannot write it: File too large`))
  t.is(out.close.code, 'ERR_PERSIST_WRITE')
  t.false(out.closed)
  // 100 restored, then Σ (1 000 000 + i) + (1000 + i) for i < 600: 600 × 1 001 000 + 2 × (599 × 600 / 2).
  t.is(out.total, 100 + 600 * 1_001_000 + 599 * 600)
  // The exit hook tried once more and said so.
  t.regex(stderr, /the save at exit failed: .*File too large/)
  t.is(fs.readFileSync(file, 'utf8'), saved)
  t.deepEqual(
    fs.readdirSync(dir).filter((name) => name.endsWith('.tmp')),
    [],
  )
})
