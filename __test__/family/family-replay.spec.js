// `captcha-budget replay --by type,site`: one tracker per label set, worst first, --top.
const test = require('ava')
const { replayCli, replayJson, tempFiles } = require('../fixtures/replay/cli')
const { T0 } = require('../fixtures/replay/logs')

// Three label sets, 100 solves each, one a second, interleaved: turnstile/a.example
// with 10 failures, image/a.example with 2, turnstile/b.example with none. At 95 %
// 100 solves allow 5 failures: turnstile/a 0 % left (burn 10 / 100 / 0.05 = 2),
// image/a 60 % (burn 0.4), turnstile/b 100 %.
function log() {
  const sets = [
    ['turnstile', 'a.example', 10],
    ['image', 'a.example', 2],
    ['turnstile', 'b.example', 0],
  ]
  const events = []
  for (let i = 0; i < 100; i++) {
    sets.forEach(([type, site, failures], j) => events.push({ ts: T0 + (3 * i + j) * 1000, ok: i >= failures, type, site }))
  }
  return events
}
const jsonl = (events) => events.map((e) => JSON.stringify(e)).join('\n') + '\n'
const csv = (events) => ['ts,ok,site,type', ...events.map((e) => `${e.ts},${e.ok},${e.site},${e.type}`)].join('\n') + '\n'
const ARGS = ['--window', '12h', '--min-events', '0', '--alerts', 'none']

const rows = (r) => r.trackers.map((t) => [t.name, t.labels, t.events, t.final.budgetRemainingPct, t.final.burnRate])

test('--by type,site: one tracker per label set, worst first, with its labels (JSON Lines and CSV alike)', async (t) => {
  const files = tempFiles({ 'log.jsonl': jsonl(log()), 'log.csv': csv(log()) })
  for (const file of [files['log.jsonl'], files['log.csv']]) {
    const r = await replayJson([file, ...ARGS, '--by', 'type,site'])
    t.deepEqual(r.by, ['type', 'site'])
    t.is(r.order, 'worst first')
    t.is(r.trackerCount, 3)
    t.deepEqual(rows(r), [
      ['type=turnstile,site=a.example', { type: 'turnstile', site: 'a.example' }, 100, 0, 2],
      ['type=image,site=a.example', { type: 'image', site: 'a.example' }, 100, 60, 0.4],
      ['type=turnstile,site=b.example', { type: 'turnstile', site: 'b.example' }, 100, 100, 0],
    ])
  }
})

test('--top N keeps the N worst (their timeline and advice too); a per-value --target sets every set with that value', async (t) => {
  const files = tempFiles({ 'log.jsonl': jsonl(log()) })
  // image at 90 %: 100 solves allow 10 failures, 2 spent → 80 % left, burn 0.2.
  const r = await replayJson([files['log.jsonl'], ...ARGS, '--by', 'type,site', '--top', '2', '--target', 'image=0.9'])
  t.is(r.trackerCount, 3)
  t.deepEqual(rows(r), [
    ['type=turnstile,site=a.example', { type: 'turnstile', site: 'a.example' }, 100, 0, 2],
    ['type=image,site=a.example', { type: 'image', site: 'a.example' }, 100, 80, 0.2],
  ])
  t.true(r.timeline.every((e) => e.tracker !== 'type=turnstile,site=b.example'))
  t.deepEqual(r.advice.rows.map((row) => row.type).sort(), ['(all)', 'type=image,site=a.example', 'type=turnstile,site=a.example'])
  const text = await replayCli([files['log.jsonl'], ...ARGS, '--by', 'type,site', '--top', '1'])
  t.is(text.code, 0, text.stderr)
  t.regex(text.stdout, /\n {2}type=turnstile,site=a\.example: SLO 95\.0 % over 12h, 100 solves\n/)
  t.notRegex(text.stdout, /\n {2}type=image,site=a\.example: SLO/)
})

test('--by site alone groups by that field; a line without it is its own set', async (t) => {
  // a.example: 200 solves, 12 failures: 10 allowed → 0 % left, burn 12 / 200 / 0.05 = 1.2.
  const events = [...log(), { ts: T0 + 400_000, ok: true, type: 'image' }]
  const files = tempFiles({ 'log.jsonl': jsonl(events) })
  const r = await replayJson([files['log.jsonl'], ...ARGS, '--by', 'site'])
  t.deepEqual(
    r.trackers.map((tr) => [tr.name, tr.events, tr.final.budgetRemainingPct]),
    [
      ['a.example', 200, 0],
      ['b.example', 100, 100],
      ['untyped', 1, 100],
    ],
  )
})

test("--by type,site: values holding ',' '=' or '\\' never merge two label sets into one tracker", async (t) => {
  const events = []
  for (let i = 0; i < 10; i++) {
    events.push({ ts: T0 + 2 * i * 1000, ok: true, type: 'a,site=b', site: '' })
    events.push({ ts: T0 + (2 * i + 1) * 1000, ok: i >= 5, type: 'a', site: 'b,site=' })
  }
  events.push({ ts: T0 + 30_000, ok: true, type: 'x\\', site: 'y' })
  const files = tempFiles({ 'log.jsonl': jsonl(events) })
  const r = await replayJson([files['log.jsonl'], ...ARGS, '--by', 'type,site'])
  t.is(r.trackerCount, 3)
  t.deepEqual(
    r.trackers.map((tr) => [tr.name, tr.labels, tr.events]).sort((x, y) => (x[0] < y[0] ? -1 : 1)),
    [
      ['type=a,site=b\\,site\\=', { type: 'a', site: 'b,site=' }, 10],
      ['type=a\\,site\\=b,site=', { type: 'a,site=b', site: '' }, 10],
      ['type=x\\\\,site=y', { type: 'x\\', site: 'y' }, 1],
    ],
  )
})

test('--by naming a field no line has warns on stderr, naming it; the header names the --by fields', async (t) => {
  const files = tempFiles({ 'log.jsonl': jsonl(log()) })
  const typo = await replayCli([files['log.jsonl'], ...ARGS, '--by', 'type,sitee'])
  t.is(typo.code, 0, typo.stderr)
  t.is(typo.stderr, "captcha-budget replay: warning: --by sitee: no line has a value for field 'sitee' (every solve grouped under an empty one)\n")
  t.regex(typo.stdout, /, one tracker per type, sitee combination: type=turnstile,sitee=, type=image,sitee=\n/)
  const alone = await replayCli([files['log.jsonl'], ...ARGS, '--by', 'sitee'])
  t.is(alone.stderr, "captcha-budget replay: warning: --by sitee: no line has a value for field 'sitee' (every solve grouped under an empty one)\n")
  t.regex(alone.stdout, /, one tracker per sitee: untyped\n/)
  // Fields that lines have: no warning, and the header says what the trackers are per.
  const site = await replayCli([files['log.jsonl'], ...ARGS, '--by', 'site'])
  t.is(site.stderr, '')
  t.regex(site.stdout, /, one tracker per site: a\.example, b\.example\n/)
  const both = await replayCli([files['log.jsonl'], ...ARGS, '--by', 'type,site'])
  t.is(both.stderr, '')
  t.regex(both.stdout, /, one tracker per type, site combination: type=turnstile,site=a\.example, /)
  const type = await replayCli([files['log.jsonl'], ...ARGS, '--by', 'type'])
  t.is(type.stderr, '')
  t.regex(type.stdout, /, one tracker per type: image, turnstile\n/)
})
