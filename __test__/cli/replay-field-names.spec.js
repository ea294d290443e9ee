// `captcha-budget replay` on a log whose fields have other names than ts / ok: the
// message names the fields it saw and the options that would read them.
const test = require('ava')
const fs = require('node:fs')
const { replayCli, tempFiles } = require('../fixtures/replay/cli')

const T = Date.parse('2025-11-30T00:00:00Z')
const solves = Array.from({ length: 30 }, (_, i) => ({ timestamp: new Date(T + i * 1000).toISOString(), success: i % 5 !== 0, type: 'image' }))
const jsonl = solves.map((s) => JSON.stringify(s)).join('\n') + '\n'
const csv = 'timestamp,success,type\n' + solves.map((s) => `${s.timestamp},${s.success},${s.type}`).join('\n') + '\n'

test('JSON Lines with timestamp / success: the fields seen and --ts-field timestamp --ok-field success', async (t) => {
  const files = tempFiles({ 'solves.jsonl': jsonl })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const r = await replayCli([files['solves.jsonl']])
  t.is(r.code, 2)
  const last = r.stderr.trimEnd().split('\n').at(-1)
  t.is(
    last,
    `captcha-budget replay: nothing to replay: no valid event in 30 line(s): the lines have no field "ts" or "ok" ` +
      `(fields of line 1: timestamp, success, type); name them: --ts-field timestamp --ok-field success`,
  )
  // As the message says, the log replays: 30 solves, 6 failures.
  const fixed = await replayCli([files['solves.jsonl'], '--ts-field', 'timestamp', '--ok-field', 'success', '--json'])
  t.is(fixed.code, 0)
  t.like(JSON.parse(fixed.stdout).trackers[0].final, { total: 30, failures: 6 })
})

test('only the field that is missing is named; a value that is no timestamp is not offered as one', async (t) => {
  // `ok` is right; the time is in `at` (epoch ms), `attempts` is a count.
  const lines = solves.map((s, i) => JSON.stringify({ attempts: 2, at: T + i * 1000, ok: s.success }))
  const files = tempFiles({ 'at.jsonl': lines.join('\n') + '\n' })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const r = await replayCli([files['at.jsonl']])
  t.is(r.code, 2)
  t.regex(r.stderr, /the lines have no field "ts" \(fields of line 1: attempts, at, ok\); name it: --ts-field at\n$/)
})

test('no field looks like one: the fields seen, and the options to name them', async (t) => {
  const files = tempFiles({ 'odd.jsonl': '{"a":"x","b":"y"}\n{"a":"z","b":"w"}\n' })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const r = await replayCli([files['odd.jsonl']])
  t.is(r.code, 2)
  t.regex(r.stderr, /the lines have no field "ts" or "ok" \(fields of line 1: a, b\); name them with --ts-field and --ok-field\n$/)
})

test('a CSV header with timestamp / success: the columns and --ts-field timestamp --ok-field success', async (t) => {
  const files = tempFiles({ 'solves.csv': csv })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const r = await replayCli([files['solves.csv']])
  t.is(r.code, 2)
  t.is(
    r.stderr,
    "captcha-budget replay: the CSV header has no column 'ts' (columns: timestamp, success, type); name them: --ts-field timestamp --ok-field success\n",
  )
})
