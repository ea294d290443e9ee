// `captcha-budget replay` input handling: bad lines, --strict, CSV and JSON Lines
// alike, stdin, field names, timestamps, usage errors (exit 2).
const test = require('ava')
const path = require('node:path')
const { replayCli, replayJson, tempFiles } = require('../fixtures/replay/cli')
const { T0, outage, images, byTime, toJsonl, toCsv, at } = require('../fixtures/replay/logs')

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'replay')
const BAD_LINES = path.join(FIXTURES, 'bad-lines.jsonl')
const ARGS = ['--window', '12h', '--min-events', '0']

// bad-lines.jsonl: lines 1, 2, 7 and 11 are good; 4 is blank (skipped silently).
const EXPECTED_BAD = [
  { line: 3, message: 'not a JSON object' },
  { line: 5, message: 'missing field "ok"' },
  { line: 6, message: 'bad timestamp "yesterday": not epoch ms or ISO 8601' },
  { line: 8, message: 'bad ok "maybe": expected true, false, 1 or 0' },
  { line: 9, message: 'missing field "ts"' },
  // The line is 48 characters long and ends inside the object.
  { line: 10, message: 'invalid JSON at column 48: EOF while parsing an object' },
]

test('bad lines are reported on stderr with their line number and skipped', async (t) => {
  const r = await replayCli([BAD_LINES, '--by', 'type'])
  t.is(r.code, 0)
  t.deepEqual(
    r.stderr.trim().split('\n'),
    EXPECTED_BAD.map((b) => `captcha-budget replay: line ${b.line}: ${b.message} (skipped)`),
  )
  t.regex(r.stdout, /11 lines, 4 solves, 6 bad lines/)
})

test('--json lists the bad lines, and the good lines are replayed', async (t) => {
  const r = await replayJson([BAD_LINES, '--by', 'type'])
  t.is(r.lines, 11)
  t.is(r.events, 4)
  t.is(r.badLineCount, 6)
  t.deepEqual(r.badLines, EXPECTED_BAD)
  // turnstile: lines 1 (ok) and 2 (failed); image: 7 (ok) and 11 (ok as 1).
  t.deepEqual(
    r.trackers.map((s) => [s.name, s.final.total, s.final.failures]),
    [
      ['image', 2, 0],
      ['turnstile', 2, 1],
    ],
  )
})

test('--strict stops at the first bad line with exit code 2', async (t) => {
  const r = await replayCli([BAD_LINES, '--strict'])
  t.is(r.code, 2)
  t.is(r.stdout, '')
  t.is(r.stderr, 'captcha-budget replay: line 3: not a JSON object\n')
})

test('beyond 20 bad lines, stderr counts the rest', async (t) => {
  const lines = ['{"ts":0,"ok":true}', ...Array.from({ length: 25 }, () => 'oops')]
  const r = await replayCli(['-'], { stdin: lines.join('\n') })
  t.is(r.code, 0)
  const err = r.stderr.trim().split('\n')
  t.is(err.length, 21)
  t.is(err[19], 'captcha-budget replay: line 21: not a JSON object (skipped)')
  t.is(err[20], 'captcha-budget replay: … and 5 more bad lines (skipped; --json lists the first 1000)')
})

test('CSV and JSON Lines give the same results (epoch ms and ISO 8601 mixed)', async (t) => {
  const events = [...outage(), ...images()].sort(byTime)
  // CRLF line endings and a byte-order mark in the CSV: both are fine.
  const csv = '\ufeff' + toCsv(events, { isoEvery: 3 }).replace(/\n/g, '\r\n')
  const files = tempFiles({ 'log.jsonl': toJsonl(events, { isoEvery: 2 }), 'log.csv': csv })
  const args = [...ARGS, '--by', 'type', '--target', 'image=0.75']
  const [jsonl, fromCsv] = await Promise.all([replayJson([files['log.jsonl'], ...args]), replayJson([files['log.csv'], ...args])])
  t.is(jsonl.format, 'jsonl')
  t.is(fromCsv.format, 'csv')
  t.is(fromCsv.lines, jsonl.lines + 1) // the header
  const same = ({ events, badLineCount, from, to, trackers, timeline, advice }) => ({ events, badLineCount, from, to, trackers, timeline, advice })
  t.deepEqual(same(fromCsv), same(jsonl))
  // The 5 status changes of replay-scenarios.spec.js's --by type run, then its
  // fast-burn page (the workbook's 60 s / 5 s pair at 12 h, gated) at 643 s and
  // its resolve at 698 s, worked out there.
  t.deepEqual(
    jsonl.timeline.map((e) => e.kind),
    ['status', 'status', 'status', 'status', 'status', 'alert', 'resolve'],
  )
})

test('stdin: no file or "-", the format found from the first line', async (t) => {
  const events = outage()
  const files = tempFiles({ 'outage.jsonl': toJsonl(events) })
  const fromFile = await replayJson([files['outage.jsonl'], ...ARGS])
  const piped = await replayJson(ARGS, { stdin: toJsonl(events) })
  const dash = await replayJson(['-', ...ARGS], { stdin: toCsv(events) })
  t.is(piped.input, 'stdin')
  t.is(dash.format, 'csv')
  for (const r of [piped, dash]) {
    t.deepEqual(r.timeline, fromFile.timeline)
    t.deepEqual(r.trackers, fromFile.trackers)
  }
})

test('field names are configurable, for JSON keys and CSV columns', async (t) => {
  const fields = ['--ts-field', 'time', '--ok-field', 'solved', '--type-field', 'kind', '--by', 'type']
  // fields.csv: a BOM, CRLF, quoted fields, an extra column, ISO with an offset.
  const csv = await replayJson([path.join(FIXTURES, 'fields.csv'), ...fields])
  t.deepEqual(
    csv.trackers.map((s) => [s.name, s.events, s.final.failures]),
    [
      ['image', 1, 0],
      ['image, v2', 1, 1],
      ['turnstile', 1, 0],
    ],
  )
  t.is(csv.from, at(0))
  t.is(csv.to, at(2))
  const jsonl = '{"time":"2026-03-01T00:00:00Z","solved":true,"kind":"turnstile","ts":"ignored"}\n{"time":1772323201000,"solved":false}\n'
  const r = await replayJson(['-', ...fields], { stdin: jsonl })
  // A line without a type is counted as 'untyped'.
  t.deepEqual(
    r.trackers.map((s) => [s.name, s.events]),
    [
      ['turnstile', 1],
      ['untyped', 1],
    ],
  )
  t.is(r.badLineCount, 0)
})

test('out-of-order lines within the window go to their bucket; older ones are dropped', async (t) => {
  const events = outage()
  const late = events.splice(300, 1)[0] // the success of t = 300 s, moved after t = 700 s
  events.splice(700, 0, late)
  const ancient = { ts: T0 + 1100_000 - 13 * 3600_000, ok: false, type: 'turnstile' } // 13 h before the end
  events.push(ancient)
  const r = await replayJson(['-', ...ARGS], { stdin: toJsonl(events) })
  const s = r.trackers[0]
  t.is(s.final.total, 1101)
  t.is(s.final.failures, 60)
  t.is(s.dropped, 1)
  t.is(r.to, at(1100))
})

test('the span runs from the earliest event, not the first line', async (t) => {
  // The outage log with its first line moved: t = 30 s comes first, then 0 … 29 s, 31 … 1100 s.
  const events = outage()
  events.unshift(events.splice(30, 1)[0])
  const r = await replayJson(['-', ...ARGS], { stdin: toJsonl(events) })
  t.is(r.trackers[0].dropped, 0)
  t.is(r.from, at(0))
  t.is(r.to, at(1100))
  t.is(r.durationMs, 1100_000)
  // Time in each status covers the same span: healthy until 615 s (see replay-scenarios.spec.js),
  // warning until 628 s, critical until 631 s, exhausted to the end.
  t.deepEqual(r.trackers[0].timeInStatusMs, { healthy: 615_000, warning: 13_000, critical: 3_000, exhausted: 469_000 })
  const text = await replayCli(['-', ...ARGS], { stdin: toJsonl(events) })
  t.true(text.stdout.includes(`${at(0)} → ${at(1100)}`), text.stdout)
})

test('timestamps: ISO 8601 read as Date.parse reads it; no offset means UTC', (t) => {
  const { parseLogChunk } = require('../../native.js')
  const stamps = ['2026-03-01T00:00:00Z', '2026-03-01T12:34:56.789Z', '2026-03-01T12:34:56.789+05:30', '2024-02-29T23:59:59.999-08:00', '1999-12-31T23:59:59Z']
  const text = stamps.map((ts) => JSON.stringify({ ts, ok: true })).join('\n') + '\n{"ts":"2026-03-01T12:00:00","ok":true}\n{"ts":"2026-03-01","ok":true}'
  const r = parseLogChunk(Buffer.from(text), 'jsonl', ['ts', 'ok', 'type'], null, 1, true)
  t.deepEqual(r.badLines, [])
  t.deepEqual([...r.ts], [...stamps.map((s) => Date.parse(s)), Date.UTC(2026, 2, 1, 12), Date.UTC(2026, 2, 1)])
})

test('parseLogChunk: a bad format or field list is a TypeError ERR_INVALID_ARG_VALUE, like every other bad argument', (t) => {
  const { parseLogChunk } = require('../../native.js')
  const chunk = Buffer.from('{"ts":1,"ok":true}\n')
  t.throws(() => parseLogChunk(chunk, 'xml', ['ts', 'ok', 'type'], null, 1, true), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_VALUE',
    message: "parseLogChunk: format must be 'jsonl', or 'csv' with csvColumns [ts, ok, type, ...more]",
  })
  t.throws(() => parseLogChunk(chunk, 'jsonl', ['ts', 'ok'], null, 1, true), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_VALUE',
    message: 'parseLogChunk: fields must be [ts, ok, type, ...more]',
  })
  // CSV: a column per field, the further (--by) fields included.
  t.throws(() => parseLogChunk(chunk, 'csv', ['ts', 'ok', 'type', 'site'], [0, 1, 2], 1, true), { code: 'ERR_INVALID_ARG_VALUE' })
})

test('usage errors and unusable input exit 2 with a message', async (t) => {
  const files = tempFiles({ 'ok.jsonl': toJsonl(outage().slice(0, 5)), 'empty.jsonl': '\n\n', 'noheader.csv': 'time,ok\n1,true\n' })
  const cases = [
    [[path.join(FIXTURES, 'missing.jsonl')], /cannot read .*missing\.jsonl/],
    [[files['ok.jsonl'], '--target', '1.5'], /--target must be a rate in \(0, 1\]/],
    [[files['ok.jsonl'], '--target', '=0.9', '--by', 'type'], /the name before '=' is empty/],
    [[files['ok.jsonl'], '--target', 'turnstile=0.9'], /needs --by type/],
    [[files['ok.jsonl'], '--window', '0h'], /--window must be a duration/],
    [[files['ok.jsonl'], '--by', 'type,type'], /--by names a field twice/],
    [[files['ok.jsonl'], '--by', 'type,'], /--by must list field names separated by commas/],
    [[files['ok.jsonl'], '--by', 'ts'], /--by ts: that is the timestamp or outcome field/],
    [[files['ok.jsonl'], '--by', 'type', '--top', '0'], /--top must be a positive integer \(at least 1\), got '0'/],
    [[files['ok.jsonl'], '--by', 'type', '--top', '-1'], /--top must be a positive integer \(at least 1\), got '-1'/],
    [[files['ok.jsonl'], '--min-events', '-1'], /--min-events must be a non-negative integer/],
    [[files['ok.jsonl'], '--format', 'xml'], /--format must be jsonl or csv/],
    [[files['ok.jsonl'], '--alerts', '[oops'], /--alerts: not valid JSON/],
    [
      [files['ok.jsonl'], '--alerts', '[{"name":"x","severity":"page","longWindowMs":60000,"shortWindowMs":5000,"burnRate":50}]'],
      /invalid tracker settings: .*burnRate/,
    ],
    [[files['ok.jsonl'], '--ok-field', 'ts'], /must differ/],
    [[files['ok.jsonl'], '--no-such-option'], /unknown option/],
    [[files['empty.jsonl']], /nothing to replay: no valid event in 2 line\(s\)/],
    [[files['noheader.csv']], /the CSV header has no column 'ts'/],
  ]
  for (const [args, message] of cases) {
    const r = await replayCli(args)
    t.is(r.code, 2, args.join(' '))
    t.regex(r.stderr, message, args.join(' '))
    t.is(r.stdout, '', args.join(' '))
  }
})

test('a per-type setting for a type the log never mentions is warned about', async (t) => {
  const r = await replayCli(['-', '--by', 'type', '--target', 'turnstil=0.97', '--window', 'image=7d'], { stdin: toJsonl(outage()) })
  t.is(r.code, 0)
  t.deepEqual(r.stderr.trim().split('\n'), [
    "captcha-budget replay: warning: --target turnstil=…: no solve of type 'turnstil' in the log",
    "captcha-budget replay: warning: --window image=…: no solve of type 'image' in the log",
  ])
})
