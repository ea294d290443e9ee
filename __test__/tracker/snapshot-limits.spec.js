// What `gate` and a persisted tracker read as a snapshot: a regular file (or, for
// gate, stdin that is a pipe or a file), at most 256 MiB. /dev/zero, a FIFO or a
// 300 MiB file is refused at once, without reading it (gate /dev/zero read until
// 16.8 GB and aborted with std::bad_alloc).
const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFile, execFileSync } = require('node:child_process')
const { ErrorBudgetTracker } = require('../..')
const { MAX_SNAPSHOT_BYTES } = require('../../lib/cli/commands/gate')

const CLI = path.join(__dirname, '..', '..', 'bin', 'captcha-budget.js')
const NOT_REGULAR = "is not a regular file (a FIFO, device or directory?): give a snapshot file, or '-' for stdin"
const STDIN_DEVICE = 'stdin is a device (such as /dev/null or /dev/zero), not a snapshot: pipe or redirect a snapshot file into it'
const TOO_LARGE = 'larger than the 256 MiB (268435456 bytes) a snapshot may hold'

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'snapshot-limits-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Runs `captcha-budget gate …` through /bin/sh (for `< file` redirections); resolves to { code, stdout, stderr }. */
function gateSh(command) {
  return new Promise((resolve) => {
    execFile('/bin/sh', ['-c', `"$0" "$1" gate ${command}`, process.execPath, CLI], (err, stdout, stderr) =>
      resolve({ code: err ? err.code : 0, stdout, stderr }),
    )
  })
}

/** A sparse file of `bytes` bytes: no disk used, nothing to read but zeros. */
function sparse(file, bytes) {
  const fd = fs.openSync(file, 'w')
  fs.ftruncateSync(fd, bytes)
  fs.closeSync(fd)
}

test('gate refuses a device, a FIFO and a directory at once (exit 2), never reading them', async (t) => {
  const dir = tempDir(t)
  const fifo = path.join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
  for (const file of ['/dev/zero', fifo, dir]) {
    const r = await gateSh(`'${file}'`)
    t.is(r.code, 2, file)
    t.is(r.stderr, `captcha-budget gate: ${file}: ${NOT_REGULAR}\n`)
  }
  // /dev/zero or /dev/null as stdin too, saying what stdin is ('-' was given); a pipe on stdin still works (persist.spec.js reads one).
  for (const device of ['/dev/zero', '/dev/null']) {
    const stdin = await gateSh(`- < ${device}`)
    t.is(stdin.code, 2, device)
    t.is(stdin.stderr, `captcha-budget gate: -: ${STDIN_DEVICE}\n`)
  }
})

test("gate: --labels or --family with a tracker's snapshot (not a family's) is bad input, as is --labels with --family; exit 2", async (t) => {
  const file = path.join(tempDir(t), 'snap.json')
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  fs.writeFileSync(file, tracker.snapshot())
  tracker.close()
  t.is((await gateSh(`'${file}'`)).code, 0)
  for (const [flags, message] of [
    ['--labels type=turnstile', `${file}: --labels needs a BudgetFamily snapshot (family.snapshot() or its persist file); this is a tracker's`],
    ['--family', `${file}: --family needs a BudgetFamily snapshot (family.snapshot() or its persist file); this is a tracker's`],
    ['--labels type=turnstile --family --redis redis://127.0.0.1:1 --key k', 'give --labels (one child) or --family (the worst child), not both'],
  ]) {
    const r = await gateSh(`'${file}' ${flags}`)
    t.is(r.code, 2, flags)
    t.is(r.stdout, '')
    t.is(r.stderr, `captcha-budget gate: ${message}\n`)
  }
})

test('gate refuses a snapshot over 256 MiB, from a file or from stdin', async (t) => {
  t.is(MAX_SNAPSHOT_BYTES, 256 * 1024 * 1024)
  const file = path.join(tempDir(t), 'huge.json')
  sparse(file, 300 * 1024 * 1024)
  const r = await gateSh(`'${file}'`)
  t.is(r.code, 2)
  t.is(r.stderr, `captcha-budget gate: ${file}: ${TOO_LARGE}\n`)
  const stdin = await gateSh(`- < '${file}'`)
  t.is(stdin.stderr, `captcha-budget gate: -: ${TOO_LARGE}\n`)
})

test('a persist file over 256 MiB is refused with ERR_PERSIST_READ, not read', (t) => {
  const file = path.join(tempDir(t), 'state.json')
  sparse(file, MAX_SNAPSHOT_BYTES + 1)
  t.throws(() => new ErrorBudgetTracker({ clock: 'manual', persist: { path: file } }), {
    code: 'ERR_PERSIST_READ',
    message: `${file}: is larger than the 256 MiB (268435456 bytes) a snapshot may hold: not a persist file?`,
  })
  // Refused before anything was written over it.
  t.is(fs.statSync(file).size, MAX_SNAPSHOT_BYTES + 1)
})
