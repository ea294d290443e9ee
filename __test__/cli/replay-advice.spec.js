// The baseline and advice of `captcha-budget replay`: success rate per type over
// the whole log and per UTC day, the recommended SLO (baseline − 2.5 points), the
// recommended window by volume.
const test = require('ava')
const { adviceFor, Baseline } = require('../../lib/cli/replay/baseline')
const { replayCli, replayJson } = require('../fixtures/replay/cli')
const { T0, toJsonl } = require('../fixtures/replay/logs')

const DAY = 86_400_000
const days = (...counts) => new Map(counts.map(([ok, fail], i) => [19_000 + i, [ok, fail]]))

test('three days or more: the baseline is the median day, so one bad day does not lower it', (t) => {
  // 98 %, 90 %, 99 %: whole log 287 / 300; median 98 % → SLO 95.5 %.
  const a = adviceFor('turnstile', days([98, 2], [90, 10], [99, 1]), 3 * DAY)
  t.is(a.solves, 300)
  t.is(a.successRate, 287 / 300)
  t.deepEqual(
    a.days.map((d) => [d.day, d.solves, d.successRate]),
    [
      ['2022-01-08', 100, 0.98],
      ['2022-01-09', 100, 0.9],
      ['2022-01-10', 100, 0.99],
    ],
  )
  t.is(a.baseline, 0.98)
  t.is(a.baselineFrom, 'median of daily rates')
  t.is(a.recommendedSlo, 0.955)
  // Four days: the mean of the middle two (0.96 and 0.98) → 0.97 → SLO 94.5 %.
  const b = adviceFor('x', days([96, 4], [98, 2], [50, 50], [99, 1]), 4 * DAY)
  t.is(b.baseline, 0.97)
  t.is(b.recommendedSlo, 0.945)
})

test('fewer than three days: the whole-log rate is the baseline', (t) => {
  // 1400 + 1380 of 3000 → 0.92667 → − 0.025 = 0.90167 → 90.2 %.
  const a = adviceFor('image', days([1400, 100], [1380, 120]), 2 * DAY)
  t.is(a.baselineFrom, 'whole log')
  t.is(a.baseline, 2780 / 3000)
  t.is(a.recommendedSlo, 0.902)
  // A baseline under 2.5 % leaves no SLO to recommend.
  t.is(adviceFor('bad', days([2, 98]), DAY).recommendedSlo, null)
})

test('the window by volume: 7 d under 1,000 a day, 24 h under 10,000, 12 h under 50,000, else 6 h', (t) => {
  const windowFor = (solves, spanMs) => adviceFor('x', days([solves, 0]), spanMs).recommendedWindowMs
  t.is(windowFor(999, DAY), 7 * DAY)
  t.is(windowFor(1000, DAY), DAY)
  t.is(windowFor(9999, DAY), DAY)
  t.is(windowFor(10_000, DAY), 12 * 3600_000)
  t.is(windowFor(49_999, DAY), 12 * 3600_000)
  t.is(windowFor(50_000, DAY), 6 * 3600_000)
  // The rate per day, from the log's span: 3000 in 2 days is 1500 a day → 24 h;
  // spans under an hour count as an hour (500 in 10 min → 12,000 a day, not 72,000).
  t.is(adviceFor('x', days([3000, 0]), 2 * DAY).solvesPerDay, 1500)
  t.is(adviceFor('x', days([500, 0]), 600_000).solvesPerDay, 12_000)
})

test('Baseline sums the types into an (all) row', (t) => {
  const b = new Baseline()
  b.counts('turnstile').add(T0, true)
  b.counts('turnstile').add(T0 + DAY, false) // the next UTC day
  b.counts('image').add(T0 + 1, true)
  const advice = b.advice(DAY)
  t.deepEqual(
    advice.rows.map((r) => [r.type, r.solves, r.successRate, r.days.length]),
    [
      ['image', 1, 1, 1],
      ['turnstile', 2, 0.5, 2],
      ['(all)', 3, 2 / 3, 2],
    ],
  )
  t.true(advice.shortLog)
})

test('the CLI prints the advice from a three-day log', async (t) => {
  // 100 solves a day, one a minute from midnight, the first 2, 10 and 1 failing.
  const events = []
  ;[2, 10, 1].forEach((fails, d) => {
    for (let i = 0; i < 100; i++) events.push({ ts: T0 + d * DAY + i * 60_000, ok: i >= fails, type: 'image' })
  })
  const stdin = toJsonl(events)
  const r = await replayJson(['-'], { stdin })
  t.deepEqual(
    r.advice.rows.map((row) => [row.type, row.solves, row.baseline, row.recommendedSlo, row.recommendedWindowMs]),
    [['image', 300, 0.98, 0.955, 7 * DAY]],
  )
  t.deepEqual(
    r.advice.rows[0].days.map((d) => [d.day, d.successRate]),
    [
      ['2026-03-01', 0.98],
      ['2026-03-02', 0.9],
      ['2026-03-03', 0.99],
    ],
  )
  const text = await replayCli(['-'], { stdin })
  t.regex(text.stdout, /image +300 +95\.7 % +98\.0 % +· +90\.0 % +· +99\.0 % +98\.0 % \(median day\) +95\.5 % +145 +7d/)
  t.regex(text.stdout, /Recommended SLO = baseline − 2\.5 points \(the article: 2–3 % below the baseline\)/)
})
