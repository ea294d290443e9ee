// `captcha-budget replay --verdict-field`: the site's verdict column turns a
// line's success into a failure found later (tracker.reject()), CSV and JSON Lines alike.
const test = require('ava')
const fs = require('node:fs')
const { replayCli, replayJson, tempFiles } = require('../fixtures/replay/cli')

const T = Date.parse('2025-11-30T00:00:00Z')
const ARGS = ['--window', '1h', '--min-events', '0', '--alerts', 'none']

// 100 solves a second apart, all solved; every 10th rejected by the site (10).
const lines = Array.from({ length: 100 }, (_, i) => ({
  ts: T + i * 1000,
  ok: true,
  type: i < 50 ? 'turnstile' : 'image',
  ...(i % 10 === 0 ? { verdict: 'rejected' } : i % 10 === 1 ? { verdict: 'accepted' } : {}),
}))
const jsonl = lines.map((l) => JSON.stringify(l)).join('\n') + '\n'
const csv = 'ts,ok,type,verdict\n' + lines.map((l) => `${l.ts},${l.ok},${l.type},${l.verdict ?? ''}`).join('\n') + '\n'

test('100 solves, 10 rejected: 90 successes and 10 failures, status and burn as recorded so', async (t) => {
  const files = tempFiles({ 'solves.jsonl': jsonl, 'solves.csv': csv })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  for (const file of [files['solves.jsonl'], files['solves.csv']]) {
    const r = await replayJson([file, ...ARGS, '--verdict-field', 'verdict'])
    // budgetTotal 100 × 0.050000000000000044 ≈ 5: 10 failures spend it twice over (burn 2).
    t.like(r.trackers[0].final, { successes: 90, failures: 10, total: 100, status: 'exhausted', burnRate: 2 }, file)
    // Without the flag the column is another field, ignored.
    const plain = await replayJson([file, ...ARGS])
    t.like(plain.trackers[0].final, { successes: 100, failures: 0, status: 'healthy' }, file)
  }
})

test('with --by type, each type takes its own verdicts', async (t) => {
  const files = tempFiles({ 'solves.jsonl': jsonl })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const r = await replayJson([files['solves.jsonl'], ...ARGS, '--verdict-field', 'verdict', '--by', 'type'])
  const byName = Object.fromEntries(r.trackers.map((tr) => [tr.name, tr.final]))
  t.deepEqual(Object.keys(byName).sort(), ['image', 'turnstile'])
  t.like(byName.turnstile, { successes: 45, failures: 5 })
  t.like(byName.image, { successes: 45, failures: 5 })
})

test('a verdict field that is another field is a usage error (exit 2)', async (t) => {
  const files = tempFiles({ 'solves.jsonl': jsonl })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const r = await replayCli([files['solves.jsonl'], ...ARGS, '--verdict-field', 'ok'])
  t.is(r.code, 2)
  t.regex(r.stderr, /--verdict-field must differ from the other fields, got ok/)
})

test('a verdict field no line has (a typo) is warned about, naming it; one some line has is not', async (t) => {
  const files = tempFiles({ 'solves.jsonl': jsonl, 'solves.csv': csv })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  for (const file of [files['solves.jsonl'], files['solves.csv']]) {
    const typo = await replayJson([file, ...ARGS, '--verdict-field', 'verdcit'])
    t.like(typo.trackers[0].final, { successes: 100, failures: 0 }, file)
    t.regex(typo.stderr, /warning: --verdict-field verdcit: no line has a value for field 'verdcit' \(no verdict applied\)/, file)
    const right = await replayJson([file, ...ARGS, '--verdict-field', 'verdict'])
    t.notRegex(right.stderr, /warning/, file)
  }
})

test('verdicts match without regard to case; unrecognised ones are counted and reported, the outcome left', async (t) => {
  const verdicts = ['REJECTED', 'Rejected', 'rejected', 'ACCEPTED', 'Accepted', 'denied', 'denied', 'denied', 'reject', '']
  // 100 solves a second apart, all solved; the i-th of every 10 has verdicts[i].
  const solves = Array.from({ length: 100 }, (_, i) => ({ ts: T + i * 1000, ok: true, verdict: verdicts[i % 10] }))
  const files = tempFiles({
    'cased.jsonl': solves.map((l) => JSON.stringify(l)).join('\n') + '\n',
    'cased.csv': 'ts,ok,verdict\n' + solves.map((l) => `${l.ts},true,${l.verdict}`).join('\n') + '\n',
  })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  for (const file of [files['cased.jsonl'], files['cased.csv']]) {
    const r = await replayJson([file, ...ARGS, '--verdict-field', 'verdict'])
    // Three spellings of rejected in every 10 lines: 30 failures.
    t.like(r.trackers[0].final, { successes: 70, failures: 30 }, file)
    // denied ×3 and reject ×1 in every 10 lines: 40 lines, most frequent first.
    t.regex(
      r.stderr,
      /warning: --verdict-field verdict: 40 lines with a verdict other than rejected or accepted \(any case\), their outcome left as it is: "denied" ×30, "reject" ×10\n/,
      file,
    )
  }
})
