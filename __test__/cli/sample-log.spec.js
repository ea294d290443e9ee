// Issue 45: the sample log `npm start` replays is generated at first use (seeded,
// the same bytes every run), not committed nor shipped; README stays short.
const test = require('ava')
const crypto = require('node:crypto')
const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const root = process.env.SPEC_ROOT ?? path.join(__dirname, '..', '..')
const generator = path.join(root, 'scripts', 'generate-sample-log.js')
// The sha256 of sample/solves.jsonl as it was committed until issue 45: the figures
// docs/cli.md and docs/alert-policy.md quote were read from these bytes.
const SAMPLE_SHA256 = 'f95f87b31fedba34cf11f778cd1c7b31c6d6cdbf635112c3705361e15eafe5ed'

const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-budget-sample-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('README is at most 220 lines', (t) => {
  const lines = fs.readFileSync(path.join(root, 'README.md'), 'utf8').split('\n')
  t.true(lines.length - 1 <= 220, `${lines.length - 1} lines`)
})

test('the shipped generator alone writes the sample log, byte for byte the one that was committed', (t) => {
  // Only what the package ships of scripts/, as a user's node_modules holds it.
  const dir = tempDir(t)
  fs.mkdirSync(path.join(dir, 'scripts'))
  for (const file of ['generate-sample-log.js', 'prng.js']) fs.copyFileSync(path.join(root, 'scripts', file), path.join(dir, 'scripts', file))
  const out = path.join(dir, 'out', 'solves.jsonl')
  execFileSync(process.execPath, [path.join(dir, 'scripts', 'generate-sample-log.js'), out])
  t.is(sha256(out), SAMPLE_SHA256)
})

test('--if-changed leaves a current log untouched and quiet, and rewrites one that differs', (t) => {
  const dir = tempDir(t)
  const out = path.join(dir, 'solves.jsonl')
  const first = execFileSync(process.execPath, [generator, '--if-changed', out], { encoding: 'utf8' })
  t.regex(first, /wrote .*solves\.jsonl: 45546 solves/)
  t.is(sha256(out), SAMPLE_SHA256)
  // A current file keeps its (here: made-up) modification time: it was not rewritten.
  fs.utimesSync(out, 0, 0)
  t.is(execFileSync(process.execPath, [generator, '--if-changed', out], { encoding: 'utf8' }), '')
  t.is(fs.statSync(out).mtimeMs, 0)
  fs.appendFileSync(out, '{"ts":"2026-03-05T00:00:00Z","type":"image","ok":true}\n')
  t.regex(execFileSync(process.execPath, [generator, '--if-changed', out], { encoding: 'utf8' }), /wrote /)
  t.is(sha256(out), SAMPLE_SHA256)
})

test('npm start and npm test write the sample log first', (t) => {
  const { scripts } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
  for (const hook of ['prestart', 'pretest']) t.regex(scripts[hook], /node scripts\/generate-sample-log\.js --if-changed/, hook)
  t.regex(scripts.start, / replay sample\/solves\.jsonl /)
})
