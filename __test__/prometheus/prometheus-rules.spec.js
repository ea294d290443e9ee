const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const YAML = require('yaml')
const { prometheusRules, ErrorBudgetTracker } = require('../..')
const { ruleGroups, prometheusPolicy, toYaml } = require('../../lib/prometheus/rules.js')
const { policyOf } = require('../../lib/prometheus/rules-slo.js')
const { promDuration } = require('../../lib/util/duration.js')
const { promtool, withPromtoolRules, tempDir, run, cli } = require('../fixtures/prometheus-tools')

const DAY = 86_400_000
// The SLO `turnstile`, 95 % over 30 days (60 s buckets). The rules implement
// the tracker's default policy (crates/budget-core/src/alerts.rs), worked out
// from its proportions of the period P:
//   fast-burn     page    P/720 = 1 h   / 5 min  > 14.4
//   budget-spend  page    P/72  = 10 h  / 50 min > 2, failures ≥ 20 % of the period's budget, warm-up P/4
//   slow-burn     page    P/12  = 60 h  / 5 h    > 3
//   budget-leak   ticket  P/4   = 180 h / 15 h   > 1.5
// each needing 5 failures and 10 solves in its long window (budget-spend 4 and 4), and held until
// recovered (half its threshold) instead of `for:` / keep_firing_for.
const SLO = { name: 'turnstile', targetRate: 0.95, windowMs: 30 * DAY }
const ID = 'turnstile-95-30d'
const SLO_ARGS = ['rules', '--name', 'turnstile', '--target', '0.95', '--window', '30d']
const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
const alertsOf = (groups) => groups.flatMap((g) => g.rules.filter((r) => r.alert))
// The recovery spans are the core's (RECOVERY_SPANS_MS, another change's to tune): read, not written here.
const SPANS = policyOf(SLO, 15_000).recoverySpansMs.map(promDuration)
// The windows of the error ratio and burn rate at 30 d: the pairs' 8 (by hand, above) and the period;
// the counts also cover the recovery spans. Each window is a label value of one series (issue 31).
const WINDOWS = ['5m', '50m', '1h', '5h', '10h', '15h', '60h', '180h', '30d']
// Windows of 1 h or more are sums of the recorded 1 m increases over the window less half a minute,
// solves and failures in one sum (the pieces: one name, labelled events, read with no regex matcher).
const summed = (range) => `sum_over_time(captcha_budget:counts:increase1m{slo="${ID}"}[${range}])`

test('the rules for 30 d at 95 %: recordings per window, fixed-name series, the policy as alerts, all labelled with the SLO', (t) => {
  const { groups } = ruleGroups(SLO)
  t.deepEqual(
    groups.map((g) => g.name),
    [`captcha-budget-${ID}`],
  )
  const records = groups[0].rules.filter((r) => r.record)
  t.true(SPANS.length > 0)
  // Every recording carries the SLO's identity next to the source's name.
  t.true(records.every((r) => r.labels.slo === ID))
  const byName = (name) => records.filter((r) => r.record === name)
  // One series per window, the window as a label (issue 31): each count over the pairs' windows
  // and the period, each window once, and so the ratio and burn rate. The recovery spans (but
  // 1 h, fast-burn's long window) are counted only while an alert fires (below).
  const labelled = (expr, label) => [...expr.matchAll(new RegExp(`"${label}","([^"]+)"`, 'g'))].map((m) => m[1])
  // Both counts in one recording labelled events and window; each count its share of it.
  t.is(byName('captcha_budget:counts:increase').length, 1)
  t.deepEqual(labelled(byName('captcha_budget:counts:increase')[0].expr, 'window'), WINDOWS)
  for (const kind of ['solves', 'solve_failures']) {
    t.is(byName(`captcha_budget:${kind}:increase`).length, 1, kind)
    t.is(byName(`captcha_budget:${kind}:increase`)[0].expr, `sum without (events) (captcha_budget:counts:increase{slo="${ID}",events="${kind}"})`)
  }
  t.deepEqual(
    byName('captcha_budget:counts:increase1m').map((r) => r.labels),
    [
      { slo: ID, events: 'solves' },
      { slo: ID, events: 'solve_failures' },
    ],
  )
  // The counts hold the ratio's windows only: no matcher picks them.
  t.is(
    byName('captcha_budget:solve_error:ratio')[0].expr,
    `captcha_budget:solve_failures:increase{slo="${ID}"}\n/\ncaptcha_budget:solves:increase{slo="${ID}"}`,
  )
  t.is(byName('captcha_budget:burn_rate:ratio')[0].expr, `captcha_budget:solve_error:ratio{slo="${ID}"} / 0.05`)
  // Each recovery span's length, labelled window, spread over the label sets (each span's solves).
  const spanExpr = byName('captcha_budget:recovery_span:seconds')[0].expr
  t.deepEqual(
    [...spanExpr.matchAll(/"window","([^"]+)"/g)].map((m) => m[1]),
    SPANS,
  )
  // Every held window: `on(window)` keeps the spans' (no regex matcher listing them).
  t.true(spanExpr.startsWith(`0 * captcha_budget:held_solves:increase{slo="${ID}"}\n+ on(window) group_left() (\n`))
  // The held pairs' recovery tests read copies of the counts recorded only while an alert of the
  // SLO fires for the label set: the held pairs' long and short windows, which at 30 d is every
  // window but the period (left out with `!=`, not listed in a regex), and the spans. A span
  // judges a page only once the page is as old as the span, so its sum reads only pieces of the
  // time an alert has fired: pieces recorded only then.
  const firing = `ALERTS{alertstate="firing",slo="${ID}"}`
  t.is(byName('captcha_budget:held_counts:increase1m')[0].expr, `captcha_budget:counts:increase1m{slo="${ID}"}\nand on(name) ${firing}`)
  const heldSpans = SPANS.filter((w) => !WINDOWS.includes(w))
  t.deepEqual(heldSpans, ['10m', '20m', '30m', '45m', '90m', '2h', '3h', '4h', '6h', '8h'])
  const spanSums = byName('captcha_budget:held_counts:increase')[0].expr
  t.deepEqual(labelled(spanSums, 'window'), heldSpans)
  t.true(spanSums.includes(`label_replace(sum_over_time(captcha_budget:held_counts:increase1m{slo="${ID}"}[7h59m30s]),"window","8h","","")`))
  for (const [kind, held] of [
    ['solves', 'held_solves'],
    ['solve_failures', 'held_failures'],
  ]) {
    t.is(
      byName(`captcha_budget:${held}:increase`)[0].expr,
      `captcha_budget:${kind}:increase{slo="${ID}",window!="30d"}\nand on(name) ${firing}\nor sum without (events) (captcha_budget:held_counts:increase{slo="${ID}",events="${kind}"})`,
    )
  }
  t.true(spanExpr.includes(`label_replace(vector(${policyOf(SLO, 15_000).recoverySpansMs[0] / 1000}),"window","${SPANS[0]}","","")`))
  t.deepEqual(byName('captcha_budget:slo_info')[0].labels, { slo: ID, name: 'turnstile', objective: '0.95', period: '30d' })
  t.is(byName('captcha_budget:error_budget:ratio')[0].expr, 'vector(0.05)')
  t.is(byName('captcha_budget:current_burn_rate:ratio')[0].expr, `sum without (window) (captcha_budget:burn_rate:ratio{slo="${ID}",window="5m"})`)
  t.is(byName('captcha_budget:period_burn_rate:ratio')[0].expr, `sum without (window) (captcha_budget:burn_rate:ratio{slo="${ID}",window="30d"})`)
  // Summed over instances first (the 1 m pieces), then over the window, then divided: the fleet's
  // ratio, not an average of ratios.
  // A piece: each counter now less a minute ago (after a restart, the counter itself).
  const piece = (sel) => `sum by (name) (\n  (${sel} - ${sel} offset 1m) >= 0\n  or (${sel} and ${sel} offset 1m)\n)`
  const [solvePiece, failurePiece] = byName('captcha_budget:counts:increase1m')
  t.is(solvePiece.expr, piece('captcha_budget_solves_total{name="turnstile"}'))
  // The errors: the failed solves and the rejected ones (their own counter, without outcome), each
  // with its offset.
  const either = (offset) =>
    `(captcha_budget_solves_total{name="turnstile",outcome="failure"}${offset} or captcha_budget_rejections_total{name="turnstile"}${offset})`
  t.is(failurePiece.expr, `sum by (name) (\n  (${either('')} - ${either(' offset 1m')}) >= 0\n  or (${either('')} and ${either(' offset 1m')})\n)`)
  const legs = byName('captcha_budget:counts:increase')[0].expr
  const leg = (expr, w) => `label_replace(${expr},"window","${w}","","")`
  t.true(legs.includes(leg(summed('59m30s'), '1h')))
  t.true(legs.includes(leg(summed('4h59m30s'), '5h')))
  t.false(legs.includes(summed('7h59m30s')))
  // Windows of 2 days and more: the hours' sums over the window's range, plus this hour so far,
  // less this hour so far a window ago (all of it while the rules are younger than the window).
  const thisHour = `captcha_budget:counts:increase_this_hour{slo="${ID}"}`
  const byHours = (range, w) =>
    `sum_over_time(captcha_budget:counts:increase1h{slo="${ID}"}[${range}]) + (${thisHour} - ${thisHour} offset ${w} or ${thisHour})`
  t.true(legs.includes(leg(byHours('719h59m30s', '30d'), '30d')))
  t.true(legs.includes(leg(byHours('59h59m30s', '60h'), '60h')))
  t.false(legs.includes(summed('59h59m30s')))
  // Windows of whole hours under 2 days: plain sums.
  t.true(legs.includes(leg(summed('14h59m30s'), '15h')))
  // This hour so far adds each piece to its last value, except at an hour's first evaluation;
  // each hour's sum is recorded then (and 0 at the rules' first evaluation).
  const piecesSel = `captcha_budget:counts:increase1m{slo="${ID}"}`
  const hourStarts = 'on() (vector(time() % 3600) < 60)'
  t.is(byName('captcha_budget:counts:increase_this_hour')[0].expr, `${piecesSel} + (${thisHour} offset 1m unless ${hourStarts})\nor ${piecesSel}`)
  t.is(byName('captcha_budget:counts:increase1h')[0].expr, `${thisHour} offset 1m and ${hourStarts}\nor 0 * ${piecesSel} unless ${thisHour} offset 1m`)
  // Shorter windows too: every window here is a whole number of pieces, none reads the counters.
  t.true(legs.includes(leg(summed('49m30s'), '50m')))
  t.false(records.some((r) => r.expr.includes('increase(captcha_budget_solves_total')))
  // The pieces are one evaluation interval each: the group runs at that interval.
  t.is(groups[0].interval, '1m')
  const warmUp = (w) => `on(name) captcha_budget_solves_total{name="turnstile"} offset ${w}`
  const at = (w) => `{slo="${ID}",window="${w}"}`
  // budget-spend needs 4 failures and 4 solves, the other pairs 5 and 10.
  const fire = (long, short, rate, minFailures = 5, minSolves = 10) => [
    `captcha_budget:burn_rate:ratio${at(long)} > ${rate}`,
    `on(name) captcha_budget:burn_rate:ratio${at(short)} > ${rate}`,
    `on(name) captcha_budget:solve_failures:increase${at(long)} >= ${minFailures}`,
    `on(name) captcha_budget:solves:increase${at(long)} >= ${minSolves}`,
  ]
  t.deepEqual(
    alertsOf(groups).map((r) => [r.alert, r.labels.severity, r.labels.pair, r.for, r.keep_firing_for, fireConditions(r.expr)]),
    [
      ['CaptchaBudgetFastBurn', 'page', 'fast-burn', undefined, undefined, [...fire('1h', '5m', 14.4), warmUp('1h')]],
      [
        'CaptchaBudgetBudgetSpend',
        'page',
        'budget-spend',
        undefined,
        undefined,
        [
          ...fire('10h', '50m', 2, 4, 4),
          `on(name) captcha_budget:solve_failures:increase${at('10h')} >= on(name) 0.2 * 0.05 * captcha_budget:solves:increase${at('30d')}`,
          warmUp('180h'),
        ],
      ],
      ['CaptchaBudgetSlowBurn', 'page', 'slow-burn', undefined, undefined, [...fire('60h', '5h', 3), warmUp('60h')]],
      ['CaptchaBudgetBudgetLeak', 'ticket', 'budget-leak', undefined, undefined, [...fire('180h', '15h', 1.5), warmUp('180h')]],
      ['CaptchaBudgetSourceAbsent', 'ticket', undefined, '10m', undefined, ['absent(captcha_budget_solves_total{name="turnstile"})']],
    ],
  )
  // Each pair is held while firing (its own ALERTS series) until recovered: its long window or any
  // recovery span (one test over both, label window) at half the threshold, …
  const pairs = alertsOf(groups).slice(0, 4)
  // The fewest solves a span needs (the binomial test at 0.01 %, worked out in Python): 10, 88, 57, 119,
  // the tables' first entries (below).
  for (const [a, long, resolve] of [
    [pairs[0], '1h', 7.2],
    [pairs[1], '10h', 1],
    [pairs[2], '60h', 1.5],
    [pairs[3], '180h', 0.75],
  ]) {
    const firing = `ALERTS{alertname="${a.alert}",slo="${ID}"}`
    // The value once, kept while the pair fires or while its page is held.
    t.true(a.expr.startsWith(`sum without (window) (captcha_budget:burn_rate:ratio${at(long)})\nand on(name) (\n(\n`), a.alert)
    t.true(a.expr.includes(`\nor\n(\n${firing}\nunless on(name) (\n`), a.alert)
    const failuresAllowed = Number((resolve * 0.05).toPrecision(12))
    // Every term reads every held window; the span term (last) keeps the judged ones. Any window
    // that passes ends the page (`unless` matches many on the label set).
    t.true(
      a.expr.includes(
        `unless on(name) (\n(\ncaptcha_budget:held_failures:increase{slo="${ID}"} <= ${failuresAllowed} * captcha_budget:held_solves:increase{slo="${ID}"}\nand `,
      ),
      a.alert,
    )
    // … a span once this firing episode is as old as it; the long window at any time.
    t.true(
      a.expr.includes(
        `\n  captcha_budget:recovery_span:seconds{slo="${ID}"} <= on(name) group_left() (time() - ALERTS_FOR_STATE{alertname="${a.alert}",slo="${ID}"})\n  or captcha_budget:held_solves:increase${at(long)}\n)`,
      ),
      a.alert,
    )
  }
  // Below 281 solves slow-burn's spans also pass the binomial test at its 3× (15 % failing): at most
  // 0 failures in 57–72 solves, 1 from 73, 2 from 87, 3 from 100, 4 from 112, … (math.comb in Python).
  // The alert reads it as a curve of the failures that a span's solves must reach: a start, a
  // slope, a change of slope at each knot, capped at 281 (the burn alone) and never under 57.
  const all = `{slo="${ID}"}`
  const n = `captcha_budget:held_solves:increase${all}`
  const f = `captcha_budget:held_failures:increase${all}`
  const open = `\nand ${n} >= clamp_min(clamp_max(\n`
  const close = `,\n  281), 57\n)`
  t.true(pairs[2].expr.includes(open) && pairs[2].expr.includes(close), pairs[2].expr)
  const [start, slope, ...knots] = pairs[2].expr.split(open)[1].split(close)[0].split('\n')
  const slopeTerm = new RegExp(`^  \\+ ([\\d.]+) \\* ${escape(f)}$`).exec(slope)
  // (A change of 1 is written without its factor.)
  const knotTerms = knots.map((k) => new RegExp(`^  - (?:([\\d.]+) \\* )?clamp_min\\(${escape(f)} - ([\\d.]+), 0\\)$`).exec(k))
  t.truthy(slopeTerm, slope)
  t.true(knotTerms.every(Boolean), knots.join('\n'))
  t.true(knots.length >= 1 && knots.length <= 7, String(knots.length))
  const needs = (failures) => {
    let value = Number(start) + Number(slopeTerm[1]) * failures
    for (const [, change = 1, at] of knotTerms) value -= Number(change) * Math.max(failures - Number(at), 0)
    return Math.max(57, Math.ceil(Math.min(value, 281)))
  }
  t.deepEqual([0, 1, 2, 3, 4].map(needs), [57, 73, 87, 100, 112])
  // No table and no lookup any more (issue 31).
  t.is(byName('captcha_budget:recovery_solves_needed').length, 0)
  t.false(pairs[2].expr.includes('count_values'))
  // Readable: no line of the file over 400 characters, grouped or not.
  for (const grouping of [undefined, ['type', 'site']]) {
    t.true(
      prometheusRules({ ...SLO, grouping })
        .split('\n')
        .every((line) => line.length <= 400),
    )
  }
})

/** The firing conditions of a pair's alert: the `and` terms before its re-arm and hold parts. */
function fireConditions(expr) {
  // A held pair's fire block is the first bracket after the value (its terms one to a line, `and `).
  const held = /^sum without \(window\) \(.*\)\nand on\([^)]*\) \(\n\(\n/.exec(expr)
  if (held) return expr.slice(held[0].length).split('\nunless ')[0].split('\nand ')
  return expr.split('\nunless ')[0].split('\nand\n')
}

test("the Prometheus policy is the tracker's: a window under 4 scrape intervals lengthened, unreachable pairs left out", (t) => {
  const pairs = (slo, scrapeMs) => prometheusPolicy(slo, scrapeMs).map((p) => [p.name, p.longWindowMs / 1000, p.shortWindowMs / 1000, p.burnRate])
  // 24 h (2 s buckets): 2 min / 10 s, 20 min / 100 s, 2 h / 10 min, 6 h / 30 min;
  // at a 15 s scrape only fast-burn's 10 s is under 4 scrapes: 1 min.
  t.deepEqual(pairs({ ...SLO, windowMs: DAY }, 15_000), [
    ['fast-burn', 120, 60, 14.4],
    ['budget-spend', 1200, 100, 2],
    ['slow-burn', 7200, 600, 3],
    ['budget-leak', 21_600, 1800, 1.5],
  ])
  // At a 1-minute scrape the short windows are at least 4 min, the long ones at least their short one.
  t.deepEqual(pairs({ ...SLO, windowMs: DAY }, 60_000), [
    ['fast-burn', 240, 240, 14.4],
    ['budget-spend', 1200, 240, 2],
    ['slow-burn', 7200, 600, 3],
    ['budget-leak', 21_600, 1800, 1.5],
  ])
  // 90 %: every solve failing burns 10×, so 14.4 could never fire: left out, as the tracker leaves it out.
  t.deepEqual(
    pairs({ ...SLO, targetRate: 0.9 }, 15_000).map((p) => p[0]),
    ['budget-spend', 'slow-burn', 'budget-leak'],
  )
  // Where no window is lengthened, pair for pair the tracker's policy in force, gates and all.
  for (const [targetRate, windowMs] of [
    [0.95, 30 * DAY],
    [0.9, 7 * DAY],
    [0.999, 30 * DAY],
  ]) {
    const tracker = new ErrorBudgetTracker({ targetRate, windowMs })
    t.deepEqual(prometheusPolicy({ ...SLO, targetRate, windowMs }, 15_000), tracker.alertPolicy)
    tracker.close()
  }
  const custom = [{ name: 'x', severity: 'page', longWindowMs: 60_000, shortWindowMs: 5000, burnRate: 10 }]
  const hour = { ...SLO, windowMs: 3_600_000, resolutionMs: 1000 }
  t.throws(() => prometheusRules({ ...hour, alerts: custom }), {
    code: 'ERR_OUT_OF_RANGE',
    message:
      'prometheusRules(slo): slo.alerts[0].shortWindowMs (5s) must be at least 4 scrape intervals (1m): a shorter rate() range holds too few samples to ever fire',
  })
  t.notThrows(() => prometheusRules({ ...hour, alerts: custom }, { scrapeIntervalMs: 1000 }))
  t.throws(() => prometheusRules({ ...SLO, windowMs: 30_000 }), {
    message: 'prometheusRules(slo): slo.windowMs (30s) must be at least 4 scrape intervals (1m)',
  })
})

// A 7-day SLO's tracker has 14 s buckets, so its 10 min span is 43 of them, 602 s. The rules
// judge on the policy's own lengths, whole minutes: summed from the pieces, as the pairs'
// windows that are, and compared unrounded; only 70 s and 700 s (P/8640, P/864) are read with
// increase() from the counters.
test("a 7 d SLO's recovery spans are the policy's whole minutes, summed from the pieces (the tracker's: 602 s…)", (t) => {
  const week = { ...SLO, windowMs: 7 * DAY }
  const minutes = [10, 20, 30, 45, 60, 90, 120, 180, 240, 360, 480]
  t.deepEqual(
    policyOf(week, 15_000).recoverySpansMs,
    minutes.map((m) => m * 60_000),
  )
  const text = prometheusRules(week)
  const raw = [...text.matchAll(/increase\(captcha_budget_solves_total\{name="turnstile"\}\[(\w+)\]\)/g)].map((m) => m[1])
  t.deepEqual(raw, ['70s', '700s'])
  t.false(text.includes('round('))
  t.true(text.includes('label_replace(vector(600),"window","10m","","")'))
  t.true(text.includes('label_replace(vector(28800),"window","8h","","")'))
  t.false(/\b602s?\b/.test(text))
})

// Issue 25: a page resolves within 60 minutes of an outage's end, and the rules
// follow the tracker's rule: no `for:` or keep_firing_for on any pair, which
// would hold a page past it; a firing pair ends when the tracker's would (its
// hold part), shown in promtool by prometheus-rules-scenarios.spec.js and
// policy-parity.spec.js.
test('page resets: no pair has for: or keep_firing_for, for every period from 6 h to 30 d; each held pair resolves on the recovery spans', (t) => {
  for (const days of [0.25, 1, 7, 14, 30]) {
    const { groups } = ruleGroups({ ...SLO, windowMs: days * DAY })
    const pairs = alertsOf(groups).filter((a) => a.labels.pair)
    t.is(pairs.length, 4)
    for (const a of pairs) {
      t.is(a.for, undefined, `${days} d ${a.alert}`)
      t.is(a.keep_firing_for, undefined, `${days} d ${a.alert}`)
      t.true(a.expr.includes(`ALERTS{alertname="${a.alert}",slo=`), `${days} d ${a.alert}`)
    }
  }
  // A custom pair is not held (the tracker's custom pairs stop with their condition): its condition alone.
  const alerts = [{ name: 'outage', severity: 'page', longWindowMs: 3_600_000, shortWindowMs: 300_000, burnRate: 10 }]
  const [custom] = alertsOf(ruleGroups({ ...SLO, alerts }).groups)
  t.false(custom.expr.includes('ALERTS'))
  t.is(custom.for, undefined)
  t.is(custom.keep_firing_for, undefined)
})

test('--min-events and minEvents of custom pairs add their conditions; alerts: [] leaves the absent alert only', (t) => {
  const alerts = [{ name: 'outage', severity: 'page', longWindowMs: 3_600_000, shortWindowMs: 300_000, burnRate: 10, minEvents: 50 }]
  const { groups } = ruleGroups({ ...SLO, id: 'x', windowMs: DAY, minEvents: 100, minFailures: 0, alerts })
  t.deepEqual(
    alertsOf(groups).map((r) => [r.alert, r.expr.split('\nand\n')]),
    [
      [
        'CaptchaBudgetOutage',
        [
          'sum without (window) (captcha_budget:burn_rate:ratio{slo="x",window="1h"}) > 10',
          'on(name) captcha_budget:burn_rate:ratio{slo="x",window="5m"} > 10',
          'on(name) captcha_budget:solves:increase{slo="x",window="1h"} >= 50',
          'on(name) captcha_budget:solves:increase{slo="x",window="1d"} >= 100',
        ],
      ],
      ['CaptchaBudgetSourceAbsent', ['absent(captcha_budget_solves_total{name="turnstile"})']],
    ],
  )
  t.deepEqual(
    alertsOf(ruleGroups({ ...SLO, alerts: [] }).groups).map((r) => r.alert),
    ['CaptchaBudgetSourceAbsent'],
  )
})

test('routing: labels and annotations per SLO and per severity; a severity can be disabled', (t) => {
  const alerting = {
    name: 'Turnstile',
    labels: { team: 'captcha' },
    annotations: { runbook_url: 'https://runbooks.example/captcha' },
    page: { labels: { severity: 'critical' } },
    ticket: { disable: true },
  }
  const alerts = alertsOf(ruleGroups({ ...SLO, alerting }).groups)
  t.deepEqual(
    alerts.map((a) => [a.alert, a.labels]),
    [
      ['TurnstileFastBurn', { slo: ID, severity: 'critical', pair: 'fast-burn', team: 'captcha' }],
      ['TurnstileBudgetSpend', { slo: ID, severity: 'critical', pair: 'budget-spend', team: 'captcha' }],
      ['TurnstileSlowBurn', { slo: ID, severity: 'critical', pair: 'slow-burn', team: 'captcha' }],
      // The absent alert stays: it says the SLO cannot be judged at all.
      ['TurnstileSourceAbsent', { slo: ID, severity: 'ticket', team: 'captcha' }],
    ],
  )
  t.true(alerts.every((a) => a.annotations.runbook_url === 'https://runbooks.example/captcha'))
})

test('prometheus-operator: a PrometheusRule holding the same groups', (t) => {
  const text = prometheusRules(SLO, { format: 'prometheus-operator', namespace: 'monitoring' })
  const object = YAML.parse(text)
  t.is(object.apiVersion, 'monitoring.coreos.com/v1')
  t.is(object.kind, 'PrometheusRule')
  t.deepEqual(object.metadata, { name: `captcha-budget-${ID}`, namespace: 'monitoring', labels: { 'app.kubernetes.io/managed-by': 'captcha-error-budget' } })
  t.deepEqual(object.spec, ruleGroups(SLO))
})

test('two SLOs in one call need distinct ids', (t) => {
  t.throws(() => prometheusRules([SLO, { ...SLO }]), {
    code: 'ERR_INVALID_ARG_VALUE',
    message: `prometheusRules(slo): two SLOs have the id '${ID}': give each its own slo.id`,
  })
  t.deepEqual(
    ruleGroups([SLO, { ...SLO, targetRate: 0.99 }]).groups.map((g) => g.name),
    [`captcha-budget-${ID}`, 'captcha-budget-turnstile-99-30d'],
  )
})

withPromtoolRules(test)('the CLI writes rules that promtool check rules accepts (stdout, -o, both formats, optimised period)', async (t) => {
  t.truthy(promtool, 'promtool is not installed: apt-get install -y prometheus (.ci/run does)')
  if (!promtool) return
  const dir = tempDir(t)
  const out = await cli(SLO_ARGS)
  t.is(out.code, 0, out.stderr)
  t.is(out.stderr, '')
  t.is(out.stdout, prometheusRules(SLO))
  fs.writeFileSync(path.join(dir, 'stdout.yml'), out.stdout)
  const file = path.join(dir, 'rules.yml')
  const inline = JSON.stringify([{ name: 'leak', severity: 'ticket', longWindowMs: 6 * 3_600_000, shortWindowMs: 1_800_000, burnRate: 2 }])
  const custom = await cli([...SLO_ARGS, '--alerts', inline, '--min-events', '500', '-o', file])
  t.is(custom.code, 0, custom.stderr)
  t.is(custom.stdout, '')
  t.regex(fs.readFileSync(file, 'utf8'), /alert: CaptchaBudgetLeak$/m)
  const optimised = await cli([...SLO_ARGS, '--period-rules', 'optimised', '-o', path.join(dir, 'optimised.yml')])
  t.is(optimised.code, 0, optimised.stderr)
  const operator = await cli([...SLO_ARGS, '--format', 'prometheus-operator'])
  t.is(operator.code, 0, operator.stderr)
  // promtool reads rule files: the PrometheusRule's spec is one.
  fs.writeFileSync(path.join(dir, 'operator.yml'), toYaml(YAML.parse(operator.stdout).spec))
  // The 1 m pieces (2) + this hour's and the hours' sums of them (2, for the 30 d window: whole
  // hours, 10 h or more) + their sums per window (1) + solves, failures, error ratio and burn
  // rate, each one series per window (4) + the pieces while an alert fires and the recovery
  // spans' sums of them (2) + the held copies of solves and failures (2) + the recovery spans'
  // lengths + 7 per SLO + 4 alerts + absent = 26; optimised, the period's solves and failures
  // are 2 rules of their own: 28. A custom pair holds nothing, so no held copies nor recovery
  // spans: 2 + 2 + 1 + 4 + 7 + 1 + 1 = 18.
  const count = 2 + 2 + 1 + 4 + 2 + 2 + 1 + 7 + 5
  const checked = await run(promtool, ['check', 'rules', ...['stdout', 'rules', 'optimised', 'operator'].map((f) => path.join(dir, `${f}.yml`))])
  t.is(checked.code, 0, checked.stdout + checked.stderr)
  t.regex(checked.stdout, new RegExp(`stdout\\.yml\\n\\s+SUCCESS: ${count} rules found`))
  t.regex(checked.stdout, /rules\.yml\n\s+SUCCESS: 18 rules found/)
  t.regex(checked.stdout, new RegExp(`optimised\\.yml\\n\\s+SUCCESS: ${count + 2} rules found`))
  t.regex(checked.stdout, new RegExp(`operator\\.yml\\n\\s+SUCCESS: ${count} rules found`))
  // promtool is not a rubber stamp: a broken expression is refused.
  fs.writeFileSync(path.join(dir, 'broken.yml'), out.stdout.replace('sum_over_time(', 'sum_over_time(('))
  t.not((await run(promtool, ['check', 'rules', path.join(dir, 'broken.yml')])).code, 0)
})

test('--alerts from a file, in the shape of config.alerts', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'alerts.json')
  const alerts = [{ name: 'outage', severity: 'page', longWindowMs: 3_600_000, shortWindowMs: 300_000, burnRate: 10 }]
  fs.writeFileSync(file, JSON.stringify(alerts))
  const out = await cli([...SLO_ARGS, '--alerts', file])
  t.is(out.code, 0, out.stderr)
  t.is(out.stdout, prometheusRules({ ...SLO, alerts }))
})

test('--slo sets the identity; --scrape-interval lengthens the default windows', async (t) => {
  const out = await cli(['rules', '--name', 'x', '--target', '0.95', '--window', '1h', '--slo', 'x-checkout', '--scrape-interval', '1m'])
  t.is(out.code, 0, out.stderr)
  t.is(out.stderr, '')
  t.is(out.stdout, prometheusRules({ name: 'x', id: 'x-checkout', targetRate: 0.95, windowMs: 3_600_000 }, { scrapeIntervalMs: 60_000 }))
  // A 1-hour SLO: every window is at least 4 minutes.
  t.notRegex(out.stdout, /\[(\d+s|[1-3]m)\]/)
})

const badInput = [
  [['--target', '0.95', '--window', '30d'], '--name is required (or --spec <file>)'],
  [['--name', 'x', '--window', '30d'], '--target is required (or --spec <file>)'],
  [['--name', 'x', '--target', '0.95'], '--window is required (or --spec <file>)'],
  [['--name', '', '--target', '0.95', '--window', '30d'], '--name must not be empty'],
  // --target reads as in `replay` (lib/cli/values.js): a rate in (0, 1]; the rules refuse 1 on top.
  [['--name', 'x', '--target', '1', '--window', '30d'], "--target must be below 1 for rules: a 100% target leaves no error budget to burn, got '1'"],
  [['--name', 'x', '--target', '100%', '--window', '30d'], "--target must be below 1 for rules: a 100% target leaves no error budget to burn, got '100%'"],
  [['--name', 'x', '--target', '1.5', '--window', '30d'], "--target must be a rate in (0, 1] such as 0.95 or 95%, got '1.5'"],
  [['--name', 'x', '--target', '9.5e-1', '--window', '30d'], "--target must be a rate in (0, 1] such as 0.95 or 95%, got '9.5e-1'"],
  [['--name', 'x', '--target', '0.95', '--window', '30x'], "--window must be a duration like 30d, 24h, 90m or 1h30m (units w, d, h, m, s, ms), got '30x'"],
  [['--name', 'x', '--target', '0.95', '--window', '30d', '--min-events', '-1'], "--min-events must be a non-negative integer, got '-1'"],
  [['--name', 'x', '--target', '0.95', '--window', '30d', '--min-failures', 'ten'], "--min-failures must be a non-negative integer, got 'ten'"],
  [['--name', 'x', '--target', '0.95', '--window', '30d', '--format', 'json'], "--format must be one of rules, prometheus-operator, got 'json'"],
  [['--name', 'x', '--target', '0.95', '--window', '30d', '--period-rules', 'fast'], "--period-rules must be one of exact, optimised, got 'fast'"],
  [['--name', 'x', '--target', '0.95', '--window', '30d', '--scrape-interval', '1500ms'], "--scrape-interval must be a whole number of seconds, got '1500ms'"],
  [['--name', 'x', '--target', '0.95', '--window', '30d', '--alerts', '[{'], '--alerts: not valid JSON: '],
  [['--name', 'x', '--target', '0.95', '--window', '30d', '--spec', 'x.yaml'], '--name cannot be given with --spec (the file describes the SLOs)'],
  // The tracker's own checks, with the field named as in prometheusRules(slo).
  [
    [
      '--name',
      'x',
      '--target',
      '0.95',
      '--window',
      '30d',
      '--alerts',
      '[{"name":"x","severity":"page","longWindowMs":3600000,"shortWindowMs":300000,"burnRate":20}]',
    ],
    'invalid SLO: slo.alerts[0].burnRate must be in (0, 20): a 95% SLO burns at most 20× (every event failing), got 20',
  ],
  [['--name', 'x', '--target', '0.95', '--window', '30d', '--alerts', '[{"name":"x"}]'], 'invalid SLO: slo.alerts[0].severity is required'],
  [
    [
      '--name',
      'x',
      '--target',
      '0.95',
      '--window',
      '1h',
      '--resolution',
      '1s',
      '--alerts',
      '[{"name":"x","severity":"page","longWindowMs":600000,"shortWindowMs":30000,"burnRate":10}]',
    ],
    'invalid SLO: slo.alerts[0].shortWindowMs (30s) must be at least 4 scrape intervals (1m)',
  ],
]
for (const [args, message] of badInput) {
  test(`bad input exits 2: ${message.slice(0, 90)}`, async (t) => {
    const out = await cli(['rules', ...args])
    t.is(out.code, 2)
    t.is(out.stdout, '')
    t.true(out.stderr.startsWith(`captcha-budget rules: ${message}`), out.stderr)
  })
}

// prometheusRules(slo) checks slo itself: a typo must not drop a guard from the
// rules without a word, and messages name slo's fields, not the tracker config's.
const badSlo = [
  [null, TypeError, 'prometheusRules(slo): slo must be an object, got null'],
  [
    { ...SLO, minEvent: 100 },
    TypeError,
    "prometheusRules(slo): unknown key 'minEvent' in slo; known keys: id, name, targetRate, windowMs, alerts, minEvents, minFailures, resolutionMs, labels, alerting, description, grouping, sli; did you mean 'minEvents'?",
    'ERR_INVALID_ARG_VALUE',
  ],
  [{ targetRate: 0.95, windowMs: DAY }, TypeError, 'prometheusRules(slo): slo.name must be a non-empty string without control characters, got undefined'],
  [{ ...SLO, id: '' }, TypeError, 'prometheusRules(slo): slo.id must be a non-empty string without control characters, got ""'],
  [{ name: 'x', windowMs: DAY }, TypeError, 'prometheusRules(slo): slo.targetRate is required', 'ERR_INVALID_ARG_VALUE'],
  [{ ...SLO, targetRate: '0.95' }, TypeError, 'prometheusRules(slo): slo.targetRate must be a number, got string'],
  [
    { ...SLO, targetRate: 1 },
    RangeError,
    'prometheusRules(slo): slo.targetRate must be in (0, 1) for rules (a 100% target leaves no error budget to burn), got 1',
  ],
  [{ ...SLO, windowMs: 0 }, RangeError, 'prometheusRules(slo): slo.windowMs must be a positive integer of milliseconds, got 0'],
  [{ ...SLO, minFailures: -1 }, RangeError, 'prometheusRules(slo): slo.minFailures must be a non-negative integer, got -1'],
  [
    { ...SLO, labels: { slo: 'x' } },
    TypeError,
    "prometheusRules(slo): slo.labels: 'slo' is set by the rules (reserved: slo, name, pair, window, outcome, alertname, alertstate, objective, period, description)",
    'ERR_INVALID_ARG_VALUE',
  ],
  [
    { ...SLO, labels: { 'team-name': 'x' } },
    TypeError,
    "prometheusRules(slo): slo.labels: 'team-name' is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, no leading __)",
    'ERR_INVALID_ARG_VALUE',
  ],
  [
    { ...SLO, alerting: { page: { label: {} } } },
    TypeError,
    "prometheusRules(slo): unknown key 'label' in slo.alerting.page; known keys: labels, annotations, disable; did you mean 'labels'?",
    'ERR_INVALID_ARG_VALUE',
  ],
  [{ ...SLO, alerting: { annotations: { summary: 1 } } }, TypeError, 'prometheusRules(slo): slo.alerting.annotations.summary must be a string, got number'],
  [
    { ...SLO, alerting: { name: 'Turnstile alerts' } },
    TypeError,
    'prometheusRules(slo): slo.alerting.name must be an alert name ([a-zA-Z_][a-zA-Z0-9_]*), got "Turnstile alerts"',
  ],
  [{ ...SLO, alerts: [{ name: 'x' }] }, TypeError, 'prometheusRules(slo): slo.alerts[0].severity is required', 'ERR_INVALID_ARG_VALUE'],
]
// [slo, error class, message, code (default: by class)]
for (const [slo, errorClass, message, code] of badSlo) {
  test(`prometheusRules refuses: ${message.slice(22, 90)}`, (t) => {
    const err = t.throws(() => prometheusRules(slo), { instanceOf: errorClass, message })
    t.is(err.code, code ?? (errorClass === TypeError ? 'ERR_INVALID_ARG_TYPE' : 'ERR_OUT_OF_RANGE'))
  })
}

test('an unknown option exits 2 too', async (t) => {
  const out = await cli([...SLO_ARGS, '--targets', '0.9'])
  t.is(out.code, 2)
  t.regex(out.stderr, /unknown option '--targets'/)
})

test('loading the package loads no YAML or CLI code; prometheusRules loads it on first use', async (t) => {
  const script = [
    "require('captcha-error-budget')",
    'const loaded = () => Object.keys(require.cache).filter((f) => /node_modules[\\\\/](yaml|commander)[\\\\/]|lib[\\\\/](rules|cli|slo)/.test(f)).length',
    'const before = loaded()',
    "require('captcha-error-budget').prometheusRules({ name: 'x', targetRate: 0.9, windowMs: 86400000 })",
    'console.log(before, loaded() > 0)',
  ].join('\n')
  const out = await run(process.execPath, ['-e', script], {})
  t.is(out.stdout.trim(), '0 true', out.stderr)
})

withPromtoolRules(test)('rejections count as errors; a source without the rejections counter counts its failures alone', async (t) => {
  t.truthy(promtool, 'promtool is not installed: apt-get install -y prometheus (.ci/run does)')
  if (!promtool) return
  const dir = tempDir(t)
  // Two sources, 30 days at 95 %: each minute 9 successes and 1 failure; on `a`, 2 of
  // the successes are rejected later (captcha_budget_rejections_total), `b` has no
  // such counter. Over the hour to minute 70: 600 solves each; errors 60 + 120 = 180
  // on a (ratio 0.3), 60 on b (ratio 0.1); over 5 min: 50 solves, 15 and 5 errors.
  const slos = ['a', 'b'].map((name) => ({ name, targetRate: 0.95, windowMs: 30 * DAY }))
  fs.writeFileSync(path.join(dir, 'rules.yml'), prometheusRules(slos))
  const minutes = Array.from({ length: 71 }, (_, k) => k)
  const input = ['a', 'b'].flatMap((name) => [
    { series: `captcha_budget_solves_total{name="${name}",outcome="success",instance="w"}`, values: minutes.map((k) => 9 * k).join(' ') },
    { series: `captcha_budget_solves_total{name="${name}",outcome="failure",instance="w"}`, values: minutes.map((k) => k).join(' ') },
  ])
  input.push({ series: 'captcha_budget_rejections_total{name="a",instance="w"}', values: minutes.map((k) => 2 * k).join(' ') })
  // Each series of one window (its label, kept in the sample).
  const value = (series, window, name, expected) => ({
    expr: `abs(${series}{name="${name}",window="${window}"} - ${expected}) < bool 1e-9`,
    eval_time: '70m',
    exp_samples: [{ labels: `{name="${name}",slo="${name}-95-30d",window="${window}"}`, value: 1 }],
  })
  const tests = [
    value('captcha_budget:solves:increase', '1h', 'a', 600),
    value('captcha_budget:solve_failures:increase', '1h', 'a', 180),
    value('captcha_budget:solve_error:ratio', '1h', 'a', 0.3),
    value('captcha_budget:solve_failures:increase', '5m', 'a', 15),
    value('captcha_budget:solve_failures:increase', '1h', 'b', 60),
    value('captcha_budget:solve_error:ratio', '1h', 'b', 0.1),
    value('captcha_budget:solve_failures:increase', '5m', 'b', 5),
  ]
  const file = { rule_files: ['rules.yml'], evaluation_interval: '1m', tests: [{ interval: '1m', input_series: input, promql_expr_test: tests }] }
  fs.writeFileSync(path.join(dir, 'test.yml'), toYaml(file) + '\n')
  const result = await run(promtool, ['test', 'rules', path.join(dir, 'test.yml')], { timeout: 200_000 })
  t.is(result.code, 0, result.stdout + result.stderr)
})
