const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { ErrorBudgetTracker, prometheusRules } = require('..')
const { ruleGroups, toYaml } = require('../lib/rules.js')
const { promtool, withBinary, tempDir, run, cli } = require('./fixtures/prometheus-tools')

const MINUTE = 60_000
const DAY = 86_400_000
// Every scenario: the SLO `turnstile`, 95 % over 30 days, the default policy.
// From the README's table for P = 30 d (1-minute buckets):
//   fast-burn   page    1 h / 5 min  > 14.4  (error ratio > 0.72)
//   slow-burn   page    6 h / 30 min > 6     (> 0.3)
//   budget-leak ticket  3 d / 6 h    > 1     (> 0.05)
// each needing 10 solves in its long window.
const SLO = { name: 'turnstile', targetRate: 0.95, windowMs: 30 * DAY }
const SLO_ARGS = ['rules', '--name', 'turnstile', '--target', '0.95', '--window', '30d']

test('the rules for 30 d at 95 %: one recording per window and figure, the default policy as alerts', (t) => {
  const { groups } = ruleGroups(SLO)
  // One group, recordings first: the alerts read the recordings of the same evaluation.
  t.deepEqual(groups.map((g) => g.name), ['captcha-budget-turnstile'])
  const records = groups[0].rules.filter((r) => r.record).map((r) => r.record)
  t.deepEqual(groups[0].rules.map((r) => (r.record ? 'record' : 'alert')), [...Array(21).fill('record'), ...Array(3).fill('alert')])
  for (const w of ['5m', '30m', '1h', '6h', '3d', '30d']) {
    t.true(records.includes(`captcha_budget:solve_error:ratio_rate${w}`), w)
    t.true(records.includes(`captcha_budget:burn_rate:ratio_rate${w}`), w)
    t.true(records.includes(`captcha_budget:solves:increase${w}`), w)
  }
  t.is(records.length, 6 * 3 + 3)
  const error1h = groups[0].rules.find((r) => r.record === 'captcha_budget:solve_error:ratio_rate1h').expr
  // Summed over instances first, then divided: the fleet's ratio, not an average of ratios.
  t.is(
    error1h,
    'sum by (name) (rate(captcha_budget_solves_total{name="turnstile",outcome="failure"}[1h]))\n/\n' +
      'sum by (name) (rate(captcha_budget_solves_total{name="turnstile"}[1h]))',
  )
  t.deepEqual(
    groups[0].rules.filter((r) => r.alert).map((r) => [r.alert, r.labels.severity, r.labels.pair, r.expr.split('\nand\n')]),
    [
      ['CaptchaBudgetFastBurn', 'page', 'fast-burn', [
        'captcha_budget:burn_rate:ratio_rate1h{name="turnstile"} > 14.4',
        'captcha_budget:burn_rate:ratio_rate5m{name="turnstile"} > 14.4',
        'captcha_budget:solves:increase1h{name="turnstile"} >= 10',
      ]],
      ['CaptchaBudgetSlowBurn', 'page', 'slow-burn', [
        'captcha_budget:burn_rate:ratio_rate6h{name="turnstile"} > 6',
        'captcha_budget:burn_rate:ratio_rate30m{name="turnstile"} > 6',
        'captcha_budget:solves:increase6h{name="turnstile"} >= 10',
      ]],
      ['CaptchaBudgetBudgetLeak', 'ticket', 'budget-leak', [
        'captcha_budget:burn_rate:ratio_rate3d{name="turnstile"} > 1',
        'captcha_budget:burn_rate:ratio_rate6h{name="turnstile"} > 1',
        'captcha_budget:solves:increase3d{name="turnstile"} >= 10',
      ]],
    ],
  )
})

test('--min-events adds the period condition; a custom policy replaces the default', (t) => {
  const alerts = [{ name: 'outage', severity: 'page', longWindowMs: 3_600_000, shortWindowMs: 300_000, burnRate: 10, minEvents: 0 }]
  const { groups } = ruleGroups({ ...SLO, windowMs: DAY, minEvents: 100, alerts })
  t.deepEqual(groups[0].rules.filter((r) => r.alert).map((r) => [r.alert, r.expr.split('\nand\n')]), [
    ['CaptchaBudgetOutage', [
      'captcha_budget:burn_rate:ratio_rate1h{name="turnstile"} > 10',
      'captcha_budget:burn_rate:ratio_rate5m{name="turnstile"} > 10',
      'captcha_budget:solves:increase1d{name="turnstile"} >= 100',
    ]],
  ])
  // alerts: [] — recordings only.
  t.deepEqual(ruleGroups({ ...SLO, alerts: [] }).groups[0].rules.filter((r) => r.alert), [])
})

withBinary(test, promtool)('the CLI writes rules that promtool check rules accepts (stdout and -o)', async (t) => {
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
  // 6 windows × 3 + 3 + 3 alerts; 3 windows (30m, 6h, 30d) × 3 + 3 + 1 alert.
  const checked = await run(promtool, ['check', 'rules', path.join(dir, 'stdout.yml'), file])
  t.is(checked.code, 0, checked.stdout + checked.stderr)
  t.regex(checked.stdout, /stdout\.yml\n\s+SUCCESS: 24 rules found/)
  t.regex(checked.stdout, /rules\.yml\n\s+SUCCESS: 13 rules found/)
  // promtool is not a rubber stamp: a broken expression is refused.
  fs.writeFileSync(path.join(dir, 'broken.yml'), out.stdout.replace('sum by (name) (rate(', 'sum by (name) (rate(('))
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

test('alert windows shorter than 4 scrape intervals are warned about, not refused', async (t) => {
  // 1 h: fast-burn 4980 ms / 415 ms, slow-burn 29 963 / 2490 ms, budget-leak 359 971 / 29 963 ms.
  const out = await cli(['rules', '--name', 'x', '--target', '0.95', '--window', '1h'])
  t.is(out.code, 0, out.stderr)
  const warnings = out.stderr.trim().split('\n')
  t.is(warnings.length, 3)
  // Both windows are named when both are short (under 60 s here).
  t.regex(warnings[0], /warning: the 4980ms and 415ms windows of 'fast-burn' are shorter than 4 scrape intervals \(15s\)/)
  t.regex(warnings[2], /warning: the 29963ms window of 'budget-leak' is shorter than 4 scrape intervals \(15s\)/)
  const quiet = await cli(['rules', '--name', 'x', '--target', '0.95', '--window', '1h', '--scrape-interval', '5s'])
  t.deepEqual(quiet.stderr.trim().split('\n').length, 2) // 29 963 ms ≥ 20 s
})

const badInput = [
  [['--target', '0.95', '--window', '30d'], '--name is required'],
  [['--name', 'x', '--window', '30d'], '--target is required'],
  [['--name', 'x', '--target', '0.95'], '--window is required'],
  [['--name', '', '--target', '0.95', '--window', '30d'], '--name must not be empty'],
  // --target reads as in `replay` (lib/cli-values.js): a rate in (0, 1]; the rules refuse 1 on top.
  [['--name', 'x', '--target', '1', '--window', '30d'], "--target must be below 1 for rules: a 100% target leaves no error budget to burn, got '1'"],
  [['--name', 'x', '--target', '100%', '--window', '30d'], "--target must be below 1 for rules: a 100% target leaves no error budget to burn, got '100%'"],
  [['--name', 'x', '--target', '1.5', '--window', '30d'], "--target must be a rate in (0, 1] such as 0.95 or 95%, got '1.5'"],
  [['--name', 'x', '--target', '95', '--window', '30d'], "--target must be a rate in (0, 1] such as 0.95 or 95%, got '95'"],
  [['--name', 'x', '--target', '9.5e-1', '--window', '30d'], "--target must be a rate in (0, 1] such as 0.95 or 95%, got '9.5e-1'"],
  [['--name', 'x', '--target', '0.95', '--window', '30x'], "--window must be a duration like 30d, 24h, 90m or 1h30m (units w, d, h, m, s, ms), got '30x'"],
  [['--name', 'x', '--target', '0.95', '--window', '0s'], "--window must be a duration like 30d, 24h, 90m or 1h30m (units w, d, h, m, s, ms), got '0s'"],
  [['--name', 'x', '--target', '0.95', '--window', '30d', '--min-events', '-1'], "--min-events must be a non-negative integer, got '-1'"],
  [['--name', 'x', '--target', '0.95', '--window', '30d', '--alerts', '[{'], '--alerts: not valid JSON: '],
  [['--name', 'x', '--target', '0.95', '--window', '30d', '--alerts', '/nonexistent/alerts.json'],
    "--alerts: not 'default', 'none', inline JSON (starting with '[') or a readable file: ENOENT"],
  // The tracker's own checks, with the field named as in prometheusRules(slo).
  [['--name', 'x', '--target', '0.95', '--window', '30d', '--alerts',
    '[{"name":"x","severity":"page","longWindowMs":3600000,"shortWindowMs":300000,"burnRate":20}]'],
    "invalid SLO: slo.alerts['x'].burnRate must be in (0, 20): a 95% SLO burns at most 20× (every event failing), got 20"],
  [['--name', 'x', '--target', '0.95', '--window', '30d', '--alerts', '[{"name":"x"}]'], 'invalid SLO: slo.alerts[0].severity is required'],
  [['--name', 'x', '--target', '0.95', '--window', '1h', '--resolution', '2h'], 'invalid SLO: slo.resolutionMs (7200000) must not exceed windowMs (3600000)'],
]
for (const [args, message] of badInput) {
  test(`bad input exits 2: ${args.join(' ').slice(0, 70)}`, async (t) => {
    const out = await cli(['rules', ...args])
    t.is(out.code, 2)
    t.is(out.stdout, '')
    t.true(out.stderr.startsWith(`captcha-budget rules: ${message}`), out.stderr)
  })
}

test("--target 95% is 0.95, as in replay; --alerts 'none' and 'default' as in replay", async (t) => {
  const percent = await cli(['rules', '--name', 'turnstile', '--target', '95%', '--window', '30d'])
  t.is(percent.code, 0, percent.stderr)
  t.is(percent.stdout, prometheusRules(SLO))
  const none = await cli([...SLO_ARGS, '--alerts', 'none'])
  t.is(none.code, 0, none.stderr)
  t.is(none.stdout, prometheusRules({ ...SLO, alerts: [] }))
  t.notRegex(none.stdout, /alert:/)
  const byDefault = await cli([...SLO_ARGS, '--alerts', 'default'])
  t.is(byDefault.stdout, prometheusRules(SLO))
  t.regex(byDefault.stdout, /alert: CaptchaBudgetFastBurn$/m)
})

// prometheusRules(slo) checks slo itself: a typo must not drop a guard from the
// rules without a word, and messages name slo's fields, not the tracker config's.
const badSlo = [
  [null, TypeError, 'prometheusRules(slo): slo must be an object, got null'],
  [{ ...SLO, minEvent: 100 }, TypeError,
    "prometheusRules(slo): unknown key 'minEvent' in slo; known keys: name, targetRate, windowMs, alerts, minEvents, resolutionMs"],
  [{ targetRate: 0.95, windowMs: DAY }, TypeError, 'prometheusRules(slo): slo.name must be a non-empty string without control characters, got undefined'],
  [{ name: 'x', windowMs: DAY }, TypeError, 'prometheusRules(slo): slo.targetRate is required'],
  [{ name: 'x', targetRate: 0.95 }, TypeError, 'prometheusRules(slo): slo.windowMs is required'],
  [{ ...SLO, targetRate: '0.95' }, TypeError, 'prometheusRules(slo): slo.targetRate must be a number, got string'],
  [{ ...SLO, targetRate: 1 }, RangeError,
    'prometheusRules(slo): slo.targetRate must be in (0, 1) for rules (a 100% target leaves no error budget to burn), got 1'],
  [{ ...SLO, windowMs: 0 }, RangeError, 'prometheusRules(slo): slo.windowMs must be a positive integer of milliseconds, got 0'],
  [{ ...SLO, minEvents: -1 }, RangeError, 'prometheusRules(slo): slo.minEvents must be a non-negative integer, got -1'],
  [{ ...SLO, alerts: {} }, TypeError, 'prometheusRules(slo): slo.alerts must be an array, got object'],
  [{ ...SLO, alerts: [{ name: 'x' }] }, TypeError, 'prometheusRules(slo): slo.alerts[0].severity is required'],
]
for (const [slo, errorClass, message] of badSlo) {
  test(`prometheusRules refuses: ${message.slice(22, 90)}`, (t) => {
    const err = t.throws(() => prometheusRules(slo), { instanceOf: errorClass, message })
    t.is(err.code, errorClass === TypeError ? 'ERR_INVALID_ARG_TYPE' : 'ERR_OUT_OF_RANGE')
  })
}

test('an unknown option exits 2 too', async (t) => {
  const out = await cli([...SLO_ARGS, '--targets', '0.9'])
  t.is(out.code, 2)
  t.regex(out.stderr, /unknown option '--targets'/)
})

// ── Scenarios: the same solves replayed into the tracker and into promtool ──
//
// Counters are sampled every minute; sample k holds every solve up to minute k,
// and the tracker gets minute k's solves at k × 60 s (1-minute buckets), so the
// tracker's windows and Prometheus's [w] ranges hold exactly the same solves.
// `expected` maps a minute to the pairs firing then (policy order), worked out
// by hand below; both the tracker and Prometheus must agree with it.

const ALERT = { 'fast-burn': 'CaptchaBudgetFastBurn', 'slow-burn': 'CaptchaBudgetSlowBurn', 'budget-leak': 'CaptchaBudgetBudgetLeak' }

const SCENARIOS = [
  {
    // 2 instances × 30 solves/min; every solve fails in minutes 361–480.
    // x minutes into the outage (minute 360 + x):
    //   budget-leak long 3 d = x / (360 + x) > 0.05 → x = 19; short 6 h = x / 360 (1.06×)
    //   fast-burn   long 1 h = x / 60 > 0.72 → x = 44 (43: 14.33×, 44: 14.67×); short 5 min all failing
    //   slow-burn   long 6 h = x / 360 > 0.3 → x = 109 (107: 5.94×, 109: 6.06×)
    // y minutes after it (480 + y): fast-burn's 5 min holds 5 − y failing minutes:
    // y = 1 → 16×, firing; y = 2 → 12×, resolved, while the long windows still burn.
    title: 'total outage: the ticket at 19 min, the fast page at 44, the slow page at 109; the fast page ends 2 min after',
    minutes: 482,
    instances: { a: (k) => (k > 360 && k <= 480 ? [0, 30] : [30, 0]), b: (k) => (k > 360 && k <= 480 ? [0, 30] : [30, 0]) },
    expected: {
      378: [],
      379: ['budget-leak'],
      403: ['budget-leak'],
      404: ['fast-burn', 'budget-leak'],
      467: ['fast-burn', 'budget-leak'],
      469: ['fast-burn', 'slow-burn', 'budget-leak'],
      481: ['fast-burn', 'slow-burn', 'budget-leak'],
      482: ['slow-burn', 'budget-leak'],
    },
  },
  {
    // 2 × 40 solves/min, 3 of each 40 failing (7.5 %, burn 1.5) from the start:
    // above 1 (the ticket) in every window, far below 6 and 14.4 (the pages).
    title: 'slow leak at 1.5×: only the ticket, from the first minute, never a page',
    minutes: 720,
    instances: { a: () => [37, 3], b: () => [37, 3] },
    expected: { 1: ['budget-leak'], 60: ['budget-leak'], 360: ['budget-leak'], 720: ['budget-leak'] },
  },
  {
    // A retry storm: 2 × 30 successes/min, then for minutes 361–370 each instance
    // sends 600 solves/min that all fail (1200/min for the fleet). The budget is
    // spent per solve, not per minute. x minutes into it:
    //   fast-burn 1 h: 1200x / (60 (60 − x) + 1200x) > 0.72 → x = 7 (6: 13.79×, 7: 14.51×)
    //   slow-burn 6 h: 1200x / (60 (360 − x) + 1200x) > 0.3 → x = 8 (7: 5.68×, 8: 6.25×)
    //   budget-leak: 1200 / 22 800 = 1.05× at x = 1
    // After it (370 + y), the 5-min window still holds the last storm minute up to
    // y = 4 (1200 / 1440: 16.7×) and none at y = 5: the fast page resolves.
    title: 'retry storm: 10 minutes of 20× traffic, all failing, pages within 7 minutes',
    minutes: 375,
    instances: { a: (k) => (k > 360 && k <= 370 ? [0, 600] : [30, 0]), b: (k) => (k > 360 && k <= 370 ? [0, 600] : [30, 0]) },
    expected: {
      360: [],
      361: ['budget-leak'],
      366: ['budget-leak'],
      367: ['fast-burn', 'budget-leak'],
      368: ['fast-burn', 'slow-burn', 'budget-leak'],
      374: ['fast-burn', 'slow-burn', 'budget-leak'],
      375: ['slow-burn', 'budget-leak'],
    },
  },
  {
    // 2 × 50 solves/min, 1 failing on each (2 %, burn 0.4): no alert. The
    // recordings at minute 720: error ratio 2/100 over 1 h, 6000 solves in 1 h,
    // burn 0.02 / (1 − 0.95) over the period, budget left 1 − that = 0.6.
    title: 'healthy traffic at 2 % errors: nothing fires; the recordings hold the hand-worked figures',
    minutes: 720,
    instances: { a: () => [49, 1], b: () => [49, 1] },
    expected: { 60: [], 720: [] },
    values: [
      [720, 'captcha_budget:solve_error:ratio_rate1h', 2 / 100],
      [720, 'captcha_budget:solves:increase1h', 6000],
      [720, 'captcha_budget:burn_rate:ratio_rate30d', 0.02 / (1 - 0.95)],
      [720, 'captcha_budget:error_budget_remaining:ratio', 1 - 0.02 / (1 - 0.95)],
      [720, 'captcha_budget:objective:ratio', 0.95],
      [720, 'captcha_budget:period:seconds', 30 * 86400],
    ],
    remaining: 0.6,
  },
  {
    // Low volume across the fleet: 5 + 4 failures at minute 10 (9 < 10 solves in
    // any long window: nothing), 1 more at minute 20 makes 10, all failing:
    // burn 20× everywhere, every pair fires. At 25 the 5-min window is empty
    // (no burn): the fast page resolves, the others hold.
    title: 'low volume: 9 failing solves fire nothing, the 10th (on another instance) fires every pair',
    minutes: 25,
    instances: { a: (k) => [0, k === 10 ? 5 : 0], b: (k) => [0, k === 10 ? 4 : k === 20 ? 1 : 0] },
    expected: { 10: [], 20: ['fast-burn', 'slow-burn', 'budget-leak'], 25: ['slow-burn', 'budget-leak'] },
  },
]

function replayInTracker(scenario) {
  const tracker = new ErrorBudgetTracker({ targetRate: SLO.targetRate, windowMs: SLO.windowMs, clock: 'manual' })
  for (let k = 1; k <= scenario.minutes; k++) {
    for (const perMinute of Object.values(scenario.instances)) {
      const [ok, failed] = perMinute(k)
      for (let i = 0; i < ok; i++) tracker.record(true, k * MINUTE)
      for (let i = 0; i < failed; i++) tracker.record(false, k * MINUTE)
    }
    if (!(k in scenario.expected)) continue
    tracker.advanceTo(k * MINUTE)
    scenario.seen[k] = tracker.report().alerts.map((a) => a.name)
    if (scenario.remaining !== undefined && k === scenario.minutes) scenario.seenRemaining = tracker.remainingFraction
  }
  tracker.close()
}

function promtoolTest(scenario) {
  const input = []
  for (const [instance, perMinute] of Object.entries(scenario.instances)) {
    const ok = [0]
    const failed = [0]
    for (let k = 1; k <= scenario.minutes; k++) {
      const [s, f] = perMinute(k)
      ok.push(ok.at(-1) + s)
      failed.push(failed.at(-1) + f)
    }
    for (const [outcome, values] of [['success', ok], ['failure', failed]]) {
      input.push({ series: `captcha_budget_solves_total{name="turnstile",outcome="${outcome}",instance="${instance}"}`, values: values.join(' ') })
    }
  }
  const alertRules = ruleGroups(SLO).groups[0].rules
  const alerts = []
  for (const [minute, firing] of Object.entries(scenario.expected)) {
    for (const [pair, alertname] of Object.entries(ALERT)) {
      const rule = alertRules.find((r) => r.alert === alertname)
      alerts.push({
        eval_time: `${minute}m`,
        alertname,
        exp_alerts: firing.includes(pair)
          ? [{ exp_labels: { name: 'turnstile', severity: rule.labels.severity, pair }, exp_annotations: rule.annotations }]
          : [],
      })
    }
  }
  // promtool compares values exactly; `abs(…) < bool 1e-9` gives 1 when the
  // recording is the hand-worked figure to within float rounding.
  const values = (scenario.values || []).map(([minute, record, value]) => ({
    expr: `abs(${record}{name="turnstile"} - ${value}) < bool 1e-9`,
    eval_time: `${minute}m`,
    exp_samples: [{ labels: '{name="turnstile"}', value: 1 }],
  }))
  return {
    rule_files: ['rules.yml'],
    evaluation_interval: '1m',
    tests: [{ interval: '1m', input_series: input, alert_rule_test: alerts, promql_expr_test: values }],
  }
}

for (const scenario of SCENARIOS) {
  test(`tracker: ${scenario.title}`, (t) => {
    const replay = { ...scenario, seen: {} }
    replayInTracker(replay)
    t.deepEqual(replay.seen, scenario.expected)
    if (scenario.remaining !== undefined) t.true(Math.abs(replay.seenRemaining - scenario.remaining) < 1e-9, `${replay.seenRemaining}`)
  })

  withBinary(test, promtool)(`promtool test rules: ${scenario.title}`, async (t) => {
    t.truthy(promtool, 'promtool is not installed: apt-get install -y prometheus (.ci/run does)')
    if (!promtool) return
    const dir = tempDir(t)
    const rules = await cli([...SLO_ARGS, '-o', path.join(dir, 'rules.yml')])
    t.is(rules.code, 0, rules.stderr)
    fs.writeFileSync(path.join(dir, 'test.yml'), toYaml(promtoolTest(scenario)) + '\n')
    const result = await run(promtool, ['test', 'rules', path.join(dir, 'test.yml')])
    t.is(result.code, 0, result.stdout + result.stderr)
    t.regex(result.stdout, /SUCCESS/)
  })
}

withBinary(test, promtool)('promtool test rules catches wrong expectations (the fast page a minute early, the slow one missed)', async (t) => {
  t.truthy(promtool, 'promtool is not installed: apt-get install -y prometheus (.ci/run does)')
  if (!promtool) return
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'rules.yml'), prometheusRules(SLO))
  const outage = SCENARIOS[0]
  const wrong = { ...outage, expected: { 403: ['fast-burn', 'budget-leak'], 469: ['fast-burn', 'budget-leak'] } }
  fs.writeFileSync(path.join(dir, 'test.yml'), toYaml(promtoolTest(wrong)) + '\n')
  const result = await run(promtool, ['test', 'rules', path.join(dir, 'test.yml')])
  t.is(result.code, 1, result.stdout + result.stderr)
  const failures = (result.stdout + result.stderr).match(/alertname: \w+, time: [0-9hm]+/g)
  t.deepEqual(failures, ['alertname: CaptchaBudgetFastBurn, time: 6h43m', 'alertname: CaptchaBudgetSlowBurn, time: 7h49m'])
})
