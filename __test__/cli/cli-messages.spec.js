// Command-line messages at the edges: each names the argument and what is wrong
// with it, quotes at most a short excerpt of the input, and --help says the
// real defaults. Also the sample-log generator's own command line.
const test = require('ava')
const { execFile } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { replayCli, replayJson, tempFiles } = require('../fixtures/replay/cli')

const ROOT = path.join(__dirname, '..', '..')
const CLI = path.join(ROOT, 'bin', 'captcha-budget.js')
const GENERATOR = path.join(ROOT, 'scripts', 'generate-sample-log.js')

function run(file, args, { cwd } = {}) {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [file, ...args], { cwd, maxBuffer: 1 << 30 }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stdout, stderr })
    })
    child.stdin.end()
  })
}

const RULES = ['rules', '--name', 'x', '--target', '0.95']

test('dashboard -o into a missing directory names the path and the failure; exit 2 (the same writer as rules)', async (t) => {
  const { dir } = tempFiles({})
  const file = path.join(dir, 'no-such-dir', 'x.json')
  const out = await run(CLI, ['dashboard', '-o', file])
  t.is(out.code, 2)
  t.is(out.stdout, '')
  t.is(out.stderr, `captcha-budget dashboard: cannot write --output ${file}: no such file or directory (ENOENT)\n`)
})

test('rules -o into a missing directory names the path and the failure; exit 2', async (t) => {
  const { dir } = tempFiles({})
  const file = path.join(dir, 'no-such-dir', 'x.yml')
  const out = await run(CLI, [...RULES, '--window', '30d', '-o', file])
  t.is(out.code, 2)
  t.is(out.stdout, '')
  t.is(out.stderr, `captcha-budget rules: cannot write --output ${file}: no such file or directory (ENOENT)\n`)
  // A directory as the output: named too.
  const isDir = await run(CLI, [...RULES, '--window', '30d', '-o', dir])
  t.is(isDir.code, 2)
  t.is(isDir.stderr, `captcha-budget rules: cannot write --output ${dir}: illegal operation on a directory (EISDIR)\n`)
})

test('a well-formed duration that is too large says so, with the maximum', async (t) => {
  // 9 999 999 999 weeks is 6.05e18 ms; the largest is 2^53 − 1 ms, 14 892 855 weeks and a bit.
  const max = 'at most 9007199254740991ms (14892855w6d8h59m991ms)'
  const rules = await run(CLI, [...RULES, '--window', '9999999999w'])
  t.is(rules.code, 2)
  t.is(rules.stderr, `captcha-budget rules: --window is too large: ${max}, got '9999999999w'\n`)
  const replay = await replayCli(['-', '--window', 'image=9999999999w'], { stdin: '' })
  t.is(replay.code, 2)
  t.is(replay.stderr, `captcha-budget replay: --window image= is too large: ${max}, got '9999999999w'\n`)
  // Just below the limit is a valid duration (refused later only if the tracker refuses it).
  const ok = await run(CLI, [...RULES, '--window', '14892855w'])
  t.is(ok.code, 0, ok.stderr)
  // Still a format error for a bad format.
  const bad = await run(CLI, [...RULES, '--window', '30x'])
  t.regex(bad.stderr, /--window must be a duration like 30d/)
})

test('replay quotes at most about 100 characters of a huge bad line', async (t) => {
  // Half a MiB: under the 1 MiB a line may hold (a longer line is refused whole: replay-input.spec.js).
  const huge = 'x'.repeat(1 << 19)
  const files = tempFiles({
    // one line of neither JSON nor CSV: read as a CSV header without the columns
    'one-line.log': huge,
    'value.jsonl': `{"ts":1,"ok":true}\n{"ts":"${huge}","ok":true}\n{"ts":2,"ok":"${huge}"}\n`,
    'broken.jsonl': `{"ts":1,"ok":true}\n{"ts":1,"ok":${huge}}\n${huge}\n`,
  })
  const header = await replayCli([files['one-line.log']])
  t.is(header.code, 2)
  t.true(header.stderr.length < 300, `${header.stderr.length} characters: ${header.stderr.slice(0, 300)}`)
  t.regex(header.stderr, /^captcha-budget replay: the CSV header has no column 'ts' \(columns: x{100}… \(524288 characters\)\); see --ts-field, --ok-field\n$/)
  for (const name of ['value.jsonl', 'broken.jsonl']) {
    const r = await replayCli([files[name], '--min-events', '0'])
    t.is(r.code, 0, name)
    const lines = r.stderr.trim().split('\n')
    t.is(lines.length, 2, name)
    for (const line of lines) t.true(line.length < 300, `${name}: ${line.slice(0, 300)}`)
    const strict = await replayCli([files[name], '--strict'])
    t.is(strict.code, 2)
    t.true(strict.stderr.length < 300, strict.stderr.slice(0, 300))
    const json = await replayJson([files[name], '--min-events', '0'])
    for (const bad of json.badLines) t.true(bad.message.length < 250, bad.message.slice(0, 300))
  }
  // A quoted value is cut at 100 characters, and the cut is marked.
  const { badLines } = await replayJson([files['value.jsonl'], '--min-events', '0'])
  t.deepEqual(badLines, [
    { line: 2, message: `bad timestamp "${'x'.repeat(100)}… (524288 characters)": not epoch ms or ISO 8601` },
    { line: 3, message: `bad ok "${'x'.repeat(100)}… (524288 characters)": expected true, false, 1 or 0` },
  ])
})

test('a 50 MB quoted value is cut without overflowing the stack (a regular expression did)', (t) => {
  const { shortenMessages } = require('../../lib/cli/replay/reader')
  const value = `a\\"${'y'.repeat(50 << 20)}`
  const badLines = [
    { line: 1, message: `bad timestamp "${value}": not epoch ms or ISO 8601` },
    { line: 2, message: 'short "kept"' },
  ]
  shortenMessages(badLines)
  t.deepEqual(badLines, [
    { line: 1, message: `bad timestamp "a\\"${'y'.repeat(97)}… (${value.length} characters)": not epoch ms or ISO 8601` },
    { line: 2, message: 'short "kept"' },
  ])
})

test('replay --help shows the real defaults of --target and --window', async (t) => {
  const out = await run(CLI, ['replay', '--help'])
  t.is(out.code, 0)
  const help = out.stdout.replace(/\n\s+/g, ' ')
  t.false(help.includes('(default: [])'), out.stdout)
  t.regex(help, /--target <rate>\s+SLO target, .*\(default: 0\.95\)/)
  t.regex(help, /--window <duration>\s+SLO window, .*\(default: 24h\)/)
})

test('rules: no alert window under 4 scrape intervals, long ones included: defaults lengthened, a custom one refused by name', async (t) => {
  // A 1 h scrape interval: every rate() range must be at least 4h.
  const out = await run(CLI, [...RULES, '--window', '30d', '--scrape-interval', '1h'])
  t.is(out.code, 0)
  t.is(out.stderr, '')
  const ranges = [...out.stdout.matchAll(/\[(\d+)([smhdw])\]/g)].map(([, n, unit]) => Number(n) * { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[unit])
  t.true(ranges.length > 0)
  t.true(
    ranges.every((seconds) => seconds >= 4 * 3600),
    String(ranges),
  )
  // A custom pair whose windows are both under 4h: refused, the window named.
  const pair = { name: 'p', severity: 'page', longWindowMs: 7_200_000, shortWindowMs: 300_000, burnRate: 14.4 }
  const custom = await run(CLI, [...RULES, '--window', '30d', '--scrape-interval', '1h', '--alerts', JSON.stringify([pair])])
  t.is(custom.code, 2)
  t.regex(custom.stderr, /slo\.alerts\[0\]\.shortWindowMs \(5m\) must be at least 4 scrape intervals \(4h\)/)
})

test('generate-sample-log.js --help prints its usage and writes nothing; an unknown option is exit 2', async (t) => {
  const { dir } = tempFiles({})
  const help = await run(GENERATOR, ['--help'], { cwd: dir })
  t.is(help.code, 0)
  t.regex(help.stdout, /^Usage: node scripts\/generate-sample-log\.js \[--if-changed\] \[out\.jsonl\]/)
  t.deepEqual(fs.readdirSync(dir), [])
  const bad = await run(GENERATOR, ['--out', 'x.jsonl'], { cwd: dir })
  t.is(bad.code, 2)
  t.regex(bad.stderr, /generate-sample-log\.js: .*'--out'/)
  t.deepEqual(fs.readdirSync(dir), [])
})

test('a single-value option given twice is a usage error naming it, exit 2, nothing written (no longer the last one silently)', async (t) => {
  const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'cli-twice-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const out = path.join(dir, 'out')
  const cases = [
    [['rules', '--name', 'x', '--target', '0.9', '--target', '0.95', '--window', '30d', '-o', out], "option '--target <rate>'"],
    [['rules', '--name', 'x', '--target', '0.9', '--window', '30d', '-o', out, '--output', `${out}2`], "option '-o, --output <file>'"],
    [['dashboard', '--uid', 'a', '--uid', 'b', '-o', out], "option '--uid <uid>'"],
    [['replay', '--top', '2', '--top', '3', '--by', 'type', path.join(ROOT, 'sample', 'solves.jsonl')], "option '--top <n>'"],
    // A URL's credentials are not echoed.
    [['gate', '--prometheus', 'http://user:s3cret@127.0.0.1:1', '--prometheus', 'http://127.0.0.1:2', '--slo', 'x'], "option '--prometheus <url>'"],
  ]
  for (const [args, option] of cases) {
    const res = await run(CLI, args)
    t.is(res.code, 2, args.join(' '))
    t.true(res.stderr.startsWith(`error: ${option} given twice: give it once\n`), res.stderr)
    t.false(res.stderr.includes('s3cret'))
    t.is(res.stdout, '')
    t.false(fs.existsSync(out), args.join(' '))
  }
  // What may repeat still does: replay's --target per type, and flags.
  const ok = await run(CLI, [
    'replay',
    '--by',
    'type',
    '--target',
    'turnstile=0.9',
    '--target',
    'image=0.8',
    '--json',
    '--json',
    path.join(ROOT, 'sample', 'solves.jsonl'),
  ])
  t.is(ok.code, 0, ok.stderr)
})
