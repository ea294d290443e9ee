// `captcha-budget replay` on hand-made logs, with every transition, alert and
// summary figure worked out by hand. All runs: --window 12h (1 s buckets, so the
// window is exact for whole-second timestamps), --min-events 0, and the SRE
// Workbook pairs for 12 h given with --alerts (the default policy, with its
// gates, is in docs/alert-policy.md; of these short logs it pages on the outage
// only, with its fast-burn: the --by type run).
//
// The 12 h workbook pairs: fast-burn 60 s / 5 s > 14.4, slow-burn 360 s / 30 s > 6,
// budget-leak 4320 s / 360 s > 1. At 95 %, 1 − t = 0.050000000000000044.
//
// The outage (logs.js): one turnstile solve a second, t = 0 … 1100 s, the 60
// solves of t = 600 … 659 s failing. After the j-th failure (at t = 599 + j),
// 600 + j solves are in the window, budget 0.05 (600 + j), left 1 − j / budget:
//   warning   (< 0.5)  j = 16 → t = 615 s: 14.8 / 30.8 = 48.05 % left, burn 16 / 30.8 = 0.52
//             (j = 15: 15.75 / 30.75 = 0.512, still healthy)
//   critical  (< 0.1)  j = 29 → t = 628 s: 2.45 / 31.45 = 7.79 %, burn 0.92  (j = 28: 0.108)
//   exhausted (≤ 0)    j = 32 → t = 631 s: 31.6 − 32 < 0, burn 32 / 31.6 = 1.01  (j = 31: 0.55 left)
// and it stays exhausted: budget 0.05 × 1101 = 55.05 < 60 failures at the end.
// Alerts:
//   budget-leak: long = every solve so far, j / (0.05 (600 + j)) > 1 → j = 32 → t = 631 s
//     (1.0127; j = 31: 0.983); short 360 s holds 32 failures: 32 / 18 = 1.78. Fires after
//     the status change of the same instant.
//   fast-burn: fires at t = 643 s, as time reaches it and before that solve lands (the
//     tracker evaluates each new instant first): the solve of 583 s has left the 60 s
//     window, leaving 43 failures in 59 solves, 43 / 2.95 = 14.58 > 14.4; the 5 s window
//     holds 4 failures of 4: 20. (At 642 s, after its solve: 43 / 3 = 14.33.)
//   slow-burn: j / 18 > 6 needs 109 failures: never.
//   fast-burn resolves at t = 661 s: its 5 s short window holds 3 failures of 5 → 12
//     (at 660 s still 4 → 16); long 602 … 661 s: 58 failures → 19.33.
//   budget-leak resolves at t = 1001 s: its 360 s short window (642 … 1001 s) holds
//     18 failures → 18 / 18.000000000000016 ≤ 1 (at 1000 s: 19 → 1.06); long 60 / 50.1 = 1.2.
// Worst burn rate: after the last failure, 60 / 33 = 1.82 at t = 659 s.
const test = require('ava')
const { replayCli, replayJson, tempFiles } = require('../fixtures/replay/cli')
const { outage, images, byTime, toJsonl, at } = require('../fixtures/replay/logs')

const WORKBOOK_12H = JSON.stringify([
  { name: 'fast-burn', severity: 'page', longWindowMs: 60_000, shortWindowMs: 5000, burnRate: 14.4, minEvents: 10 },
  { name: 'slow-burn', severity: 'page', longWindowMs: 360_000, shortWindowMs: 30_000, burnRate: 6, minEvents: 10 },
  { name: 'budget-leak', severity: 'ticket', longWindowMs: 4_320_000, shortWindowMs: 360_000, burnRate: 1, minEvents: 10 },
])
const ARGS = ['--window', '12h', '--min-events', '0', '--alerts', WORKBOOK_12H]
const OUTAGE_TIMELINE = [
  { at: at(615), tracker: 'turnstile', kind: 'status', from: 'healthy', to: 'warning', budgetRemainingPct: 48.1, burnRate: 0.52 },
  { at: at(628), tracker: 'turnstile', kind: 'status', from: 'warning', to: 'critical', budgetRemainingPct: 7.8, burnRate: 0.92 },
  { at: at(631), tracker: 'turnstile', kind: 'status', from: 'critical', to: 'exhausted', budgetRemainingPct: 0, burnRate: 1.01 },
  { at: at(631), tracker: 'turnstile', kind: 'alert', name: 'budget-leak', severity: 'ticket', burnRateLong: 1.01, burnRateShort: 1.78, threshold: 1 },
  { at: at(643), tracker: 'turnstile', kind: 'alert', name: 'fast-burn', severity: 'page', burnRateLong: 14.58, burnRateShort: 20, threshold: 14.4 },
  { at: at(661), tracker: 'turnstile', kind: 'resolve', name: 'fast-burn', severity: 'page', burnRateLong: 19.33, burnRateShort: 12, threshold: 14.4 },
  { at: at(1001), tracker: 'turnstile', kind: 'resolve', name: 'budget-leak', severity: 'ticket', burnRateLong: 1.2, burnRateShort: 1, threshold: 1 },
]

// The turnstile tracker's summary, in either run.
function checkOutageSummary(t, s, alertsFired = { 'budget-leak': 1, 'fast-burn': 1 }) {
  t.is(s.name, 'turnstile')
  t.is(s.events, 1101)
  t.deepEqual(s.timeInStatusMs, { healthy: 615_000, warning: 13_000, critical: 3_000, exhausted: 469_000 })
  t.deepEqual(s.worstBurnRate, { burnRate: 1.82, at: at(659) })
  t.deepEqual(s.alertsFired, alertsFired)
  // At t = 1100 s: 1101 solves, 60 failed; budget 55.05 (→ 55.1), burn 60 / 55.05 = 1.09.
  const { status, total, failures, successes, currentRate, budgetTotal, budgetRemaining, budgetRemainingPct, burnRate, dropped } = s.final
  t.deepEqual(
    { status, total, failures, successes, currentRate, budgetTotal, budgetRemaining, budgetRemainingPct, burnRate, dropped },
    {
      status: 'exhausted',
      total: 1101,
      failures: 60,
      successes: 1041,
      currentRate: 0.9455,
      budgetTotal: 55.1,
      budgetRemaining: 0,
      budgetRemainingPct: 0,
      burnRate: 1.09,
      dropped: 0,
    },
  )
  t.is(s.final.at, at(1100))
}

test('an outage: every status change and alert at its instant, then the summary', async (t) => {
  const files = tempFiles({ 'outage.jsonl': toJsonl(outage()) })
  const r = await replayJson([files['outage.jsonl'], ...ARGS])
  t.is(r.events, 1101)
  t.is(r.from, at(0))
  t.is(r.to, at(1100))
  t.deepEqual(
    r.trackers.map((s) => s.name),
    ['all'],
  )
  t.deepEqual(
    r.timeline,
    OUTAGE_TIMELINE.map((e) => ({ ...e, tracker: 'all' })),
  )
  checkOutageSummary(t, { ...r.trackers[0], name: 'turnstile' })
})

test('the text output lists the same transitions in time order, then the summary', async (t) => {
  const files = tempFiles({ 'outage.jsonl': toJsonl(outage()) })
  const r = await replayCli([files['outage.jsonl'], ...ARGS, '--by', 'type'])
  t.is(r.code, 0, r.stderr)
  const lines = r.stdout.split('\n')
  const first = lines.findIndex((l) => l.startsWith('Timeline')) + 1
  const timeline = lines.slice(first, lines.indexOf('', first)).map((l) => l.trim().split(/\s+/).slice(0, 5).join(' '))
  t.deepEqual(timeline, [
    `${at(615)} turnstile healthy → warning`,
    `${at(628)} turnstile warning → critical`,
    `${at(631)} turnstile critical → exhausted`,
    `${at(631)} turnstile ALERT budget-leak (ticket):`,
    `${at(643)} turnstile ALERT fast-burn (page):`,
    `${at(661)} turnstile resolved fast-burn (page):`,
    `${at(1001)} turnstile resolved budget-leak (ticket):`,
  ])
  t.true(r.stdout.includes(`worst burn   1.82 at ${at(659)}`))
  t.true(r.stdout.includes('time spent   healthy 10m 15s (55.9 %), warning 13s (1.2 %), critical 3s (0.3 %), exhausted 7m 49s (42.6 %)'))
  t.true(r.stdout.includes('alerts fired budget-leak ×1, fast-burn ×1'))
  t.true(r.stdout.indexOf('Summary') > r.stdout.indexOf(at(1001)))
})

// With --by type, image solves interleave (t = 5, 15, …, 1095 s), with their own
// target of 75 % (1 − t = 0.25 exactly). 50 successes, then 8 failures:
//   warning when k / (0.25 (50 + k)) > 0.5 → k = 8 → t = 575 s: 6.5 / 14.5 = 44.8 % left,
//     burn 8 / 14.5 = 0.55 (k = 7: 7.25 / 14.25 = 0.509, healthy);
//   healthy again when 0.25 T − 8 ≥ 0.5 × 0.25 T → T = 64 solves → t = 635 s: exactly
//     50 % left (not < 0.5), burn 0.5.
// This run keeps the default policy (the workbook's 14.4 is out of range at
// 75 %). At 75 % the largest burn rate is 4: fast-burn (14.4) is left out, and no
// window of image's passes 8 / 14.5 = 0.55. Turnstile keeps the default 95 %, its
// status changes as alone; the default fast-burn is the workbook's 60 s / 5 s
// pair with gates, so it fires as the workbook's does, at 643 s (43 failures
// ≥ 5, 59 solves ≥ 10, 14.58 and 20 above 14.4, its 60 s warm-up long over), but
// resolves at half its threshold: at an expiry of t, before that solve lands, the
// 60 s window holds the 59 solves t − 60 … t − 1 and 719 − t failures:
// t = 697: 22 / 2.95 = 7.46 > 7.2, held; t = 698: 21 / 2.95 = 7.12 ≤ 7.2,
// resolved, the 5 s window (694 … 697) all successes: 0. (No recovery span
// qualifies: the shortest, 10 min, only from 600 s after it fired.) The other
// pairs wait for their long window of history (budget-spend 3 h, slow-burn 1 h,
// budget-leak 3 h) and the log is 1100 s long.
test('--by type: one tracker per type with its own target, timelines merged in time order', async (t) => {
  const files = tempFiles({ 'mixed.jsonl': toJsonl([...outage(), ...images()].sort(byTime)) })
  const r = await replayJson([files['mixed.jsonl'], '--window', '12h', '--min-events', '0', '--by', 'type', '--target', 'image=0.75'])
  t.deepEqual(
    r.trackers.map((s) => [s.name, s.targetRate, s.windowMs]),
    [
      ['image', 0.75, 43_200_000],
      ['turnstile', 0.95, 43_200_000],
    ],
  )
  const image = r.trackers[0]
  t.deepEqual(
    image.alertPolicy.map((p) => p.name),
    ['budget-spend', 'slow-burn', 'budget-leak'],
  )
  const statuses = OUTAGE_TIMELINE.filter((e) => e.kind === 'status')
  t.deepEqual(r.timeline, [
    { at: at(575), tracker: 'image', kind: 'status', from: 'healthy', to: 'warning', budgetRemainingPct: 44.8, burnRate: 0.55 },
    ...statuses.filter((e) => e.at < at(635)),
    { at: at(635), tracker: 'image', kind: 'status', from: 'warning', to: 'healthy', budgetRemainingPct: 50, burnRate: 0.5 },
    ...statuses.filter((e) => e.at >= at(635)),
    { at: at(643), tracker: 'turnstile', kind: 'alert', name: 'fast-burn', severity: 'page', burnRateLong: 14.58, burnRateShort: 20, threshold: 14.4 },
    { at: at(698), tracker: 'turnstile', kind: 'resolve', name: 'fast-burn', severity: 'page', burnRateLong: 7.12, burnRateShort: 0, threshold: 14.4 },
  ])
  checkOutageSummary(t, r.trackers[1], { 'fast-burn': 1 })
  t.is(image.events, 110)
  t.deepEqual(image.timeInStatusMs, { healthy: 1_040_000, warning: 60_000, critical: 0, exhausted: 0 })
  t.deepEqual(image.worstBurnRate, { burnRate: 0.55, at: at(575) })
  t.deepEqual(image.alertsFired, {})
  // 110 solves, 8 failed: budget 27.5, 19.5 left (70.9 %), burn 8 / 27.5 = 0.29.
  t.like(image.final, { status: 'healthy', total: 110, failures: 8, currentRate: 0.9273, budgetRemainingPct: 70.9, burnRate: 0.29 })
})

test('without --by, one tracker takes every type', async (t) => {
  const files = tempFiles({ 'mixed.jsonl': toJsonl([...outage(), ...images()].sort(byTime)) })
  const r = await replayJson([files['mixed.jsonl'], ...ARGS])
  t.deepEqual(
    r.trackers.map((s) => [s.name, s.events]),
    [['all', 1211]],
  )
  t.is(r.trackers[0].final.failures, 68)
  // The advice is per type all the same, plus a row for all of them.
  t.deepEqual(
    r.advice.rows.map((row) => [row.type, row.solves]),
    [
      ['image', 110],
      ['turnstile', 1101],
      ['(all)', 1211],
    ],
  )
})

test('alert options: --alerts none fires nothing; a custom pair fires by its own rule', async (t) => {
  const files = tempFiles({ 'outage.jsonl': toJsonl(outage()) })
  // ARGS without its own --alerts: an option given twice is a usage error.
  const ARGS_BUT_ALERTS = ARGS.slice(0, ARGS.indexOf('--alerts'))
  const none = await replayJson([files['outage.jsonl'], ...ARGS_BUT_ALERTS, '--alerts', 'none'])
  t.deepEqual(
    none.timeline.map((e) => e.kind),
    ['status', 'status', 'status'],
  )
  // A 20 s / 2 s pair at burn 10: its 20 s long window holds 20 solves, burn j / 1 > 10
  // → the 11th failure, t = 610 s (the 10th: 10 / 1.0000000000000009, not above 10).
  // It resolves as soon as its 2 s short window holds one failure in two, 1 / 0.1 = 10,
  // not above 10: t = 660 s.
  const pair = JSON.stringify([{ name: 'outage', severity: 'page', longWindowMs: 20_000, shortWindowMs: 2000, burnRate: 10 }])
  const custom = await replayJson([files['outage.jsonl'], ...ARGS_BUT_ALERTS, '--alerts', pair])
  t.deepEqual(
    custom.timeline.filter((e) => e.kind !== 'status').map((e) => [e.kind, e.name, e.at]),
    [
      ['alert', 'outage', at(610)],
      ['resolve', 'outage', at(660)],
    ],
  )
})
