// `npm start`: the replay of the shipped sample log (scripts/generate-sample-log.js).
// Its story — a flash sale on 2026-03-03 from 14:00 UTC saturates the Turnstile
// solver for 40 minutes — must show in the replay: Turnstile's budget exhausted
// during the sale and back once the sale leaves its 12 h window; the other types
// untouched. And the targets and windows `npm start` uses are the advice's own.
const test = require('ava')
const path = require('node:path')
const { replayJson, tempFiles } = require('../fixtures/replay/cli')
const { scripts } = require('../../package.json')

const ROOT = path.join(__dirname, '..', '..')

test('npm start replays the flash sale: Turnstile exhausted, then recovered', async (t) => {
  const words = scripts.start.split(' ')
  t.deepEqual(words.slice(0, 4), ['node', 'bin/captcha-budget.js', 'replay', 'sample/solves.jsonl'])
  const args = words.slice(3)
  args[args.indexOf('--chart') + 1] = path.join(tempFiles({}).dir, 'replay.svg')
  const r = await replayJson(args, { cwd: ROOT })
  t.is(r.badLineCount, 0)
  t.deepEqual(
    r.trackers.map((s) => s.name),
    ['image', 'recaptcha', 'turnstile'],
  )
  const changes = (name) => r.timeline.filter((e) => e.tracker === name && e.kind === 'status')
  t.deepEqual(changes('image'), [])
  t.deepEqual(changes('recaptcha'), [])
  const exhausted = changes('turnstile').filter((e) => e.to === 'exhausted')
  t.is(exhausted.length, 1)
  t.true(exhausted[0].at > '2026-03-03T14:00' && exhausted[0].at < '2026-03-03T15:00', exhausted[0].at)
  const recovered = changes('turnstile').find((e) => e.from === 'exhausted')
  // The sale's failures (14:00–15:30) leave the 12 h window from 02:00 to 03:30 the next day.
  t.true(recovered.at > '2026-03-04T02:00' && recovered.at < '2026-03-04T03:30', recovered.at)
  t.is(r.trackers[2].final.status, 'healthy')
  t.true(r.timeline.some((e) => e.tracker === 'turnstile' && e.kind === 'alert' && e.name === 'fast-burn'))
  // No flapping: npm start's --hysteresis 0.05 keeps a status from coming back
  // within 10 minutes of leaving it (without it: warning → healthy → warning in 4 s at 14:03).
  const turnstile = changes('turnstile')
  for (let i = 2; i < turnstile.length; i++) {
    const [before, now] = [turnstile[i - 2], turnstile[i]]
    t.false(now.to === before.to && Date.parse(now.at) - Date.parse(before.at) < 600_000, `${before.at} ${before.to} … ${now.at} ${now.to}`)
  }
  // Each alert pair fires once, and the first page comes before the budget is exhausted.
  const alerts = r.timeline.filter((e) => e.tracker === 'turnstile' && e.kind === 'alert')
  t.is(new Set(alerts.map((e) => e.name)).size, alerts.length)
  t.true(alerts[0].at < exhausted[0].at, `${alerts[0].at} ${exhausted[0].at}`)
  // The advice recommends what npm start uses.
  for (const row of r.advice.rows.filter((row) => row.type !== '(all)')) {
    const tracker = r.trackers.find((s) => s.name === row.type)
    t.is(tracker.targetRate, row.recommendedSlo, row.type)
    t.is(tracker.windowMs, row.recommendedWindowMs, row.type)
  }
})

test('the sample has a site on every line: replay --by type,site splits the flash sale by site without a warning', async (t) => {
  const fs = require('node:fs')
  const lines = fs
    .readFileSync(path.join(ROOT, 'sample', 'solves.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
  t.deepEqual([...new Set(lines.map((solve) => solve.site))].sort(), ['shop.example', 'tickets.example'])
  // The sale's extra traffic is the shop's: from 14:00 to 15:30, 14 of every 15 Turnstile solves.
  const sale = lines.filter((s) => s.type === 'turnstile' && s.ts >= '2026-03-03T14:00' && s.ts < '2026-03-03T15:30')
  const shopShare = sale.filter((s) => s.site === 'shop.example').length / sale.length
  t.true(shopShare > 0.97 && shopShare < 0.99, `${shopShare}`)
  const r = await replayJson(['sample/solves.jsonl', '--by', 'type,site', '--target', 'turnstile=0.967', '--window', 'turnstile=12h'], { cwd: ROOT })
  t.is(r.stderr, '')
  t.is(r.trackerCount, 6)
  t.deepEqual(r.trackers.map((s) => s.labels.site).sort(), [
    'shop.example',
    'shop.example',
    'shop.example',
    'tickets.example',
    'tickets.example',
    'tickets.example',
  ])
  // The saturated solver is shared: both sites' Turnstile budgets run out during the sale.
  for (const site of ['shop.example', 'tickets.example']) {
    const name = `type=turnstile,site=${site}`
    const exhausted = r.timeline.filter((e) => e.tracker === name && e.kind === 'status' && e.to === 'exhausted')
    t.true(exhausted.length >= 1 && exhausted[0].at > '2026-03-03T14:00' && exhausted[0].at < '2026-03-03T15:30', name)
  }
})
