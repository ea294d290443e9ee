// prometheusRules with slo.grouping (a BudgetFamily's labelNames): every recording
// sums by (name, type, site), every alert fires per label set — in `promtool test rules`.
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { prometheusRules } = require('../..')
const { toYaml } = require('../../lib/prometheus/rules.js')
const { promtool, withPromtoolRules, tempDir, run } = require('../fixtures/prometheus-tools')
const { execFileSync } = require('node:child_process')

const DAY = 86_400_000
const SLO = { name: 'solves', targetRate: 0.95, windowMs: 30 * DAY, grouping: ['type', 'site'] }
const ID = 'solves-95-30d'

test('with grouping, every recording that reads the counters sums by name and the grouping labels', (t) => {
  const yaml = prometheusRules(SLO)
  const sums = yaml.match(/sum by \([^)]*\)/g)
  // The pieces of the solves and of the failures (every window is summed from them at 30 d).
  t.true(sums.length >= 2)
  t.deepEqual([...new Set(sums)], ['sum by (name, type, site)'])
  // The warm-up and every other join of an alert: on the label set.
  t.regex(yaml, /\n +and on\(name, type, site\) captcha_budget_solves_total\{name="solves"\} offset 1h\n/)
  t.deepEqual([...new Set(yaml.match(/\bon\([^)]*\)/g))].sort(), ['on()', 'on(name, type, site)', 'on(window)'])
  t.regex(yaml, /summary: "\{\{ \$labels\.slo \}\} \(type=\{\{ \$labels\.type \}\}, site=\{\{ \$labels\.site \}\}\): the CAPTCHA error budget burns/)
  // Without grouping: as before.
  t.deepEqual([...new Set(prometheusRules({ ...SLO, grouping: undefined }).match(/sum by \([^)]*\)/g))], ['sum by (name)'])
  for (const [grouping, message] of [
    ['type', /slo\.grouping must be an array of label names, got string/],
    [['instance'], /'instance' is set by the rules or the scrape/],
    [['type', 'type'], /'type' is given twice/],
    [['a-b'], /not a Prometheus label name/],
    // The pieces and their sums tell solves from failures by this label: a grouping label of that name would be lost.
    [['events'], /'events' labels the rules' counts \(reserved: events\)/],
  ]) {
    t.throws(() => prometheusRules({ ...SLO, grouping }), { message })
  }
  // `span` labelled the recovery spans once, `failures` the rows of the recovery tables: the spans
  // are labelled `window` now and the tables are gone (a curve instead), so both are labels like any other.
  t.regex(prometheusRules({ ...SLO, grouping: ['span'] }), /sum by \(name, span\)/)
  t.regex(prometheusRules({ ...SLO, grouping: ['failures'] }), /sum by \(name, failures\)/)
})

test('captcha-budget rules --grouping type,site writes the same rules', (t) => {
  const cli = path.join(__dirname, '..', '..', 'bin', 'captcha-budget.js')
  const out = execFileSync(process.execPath, [cli, 'rules', '--name', 'solves', '--target', '0.95', '--window', '30d', '--grouping', 'type,site'], {
    encoding: 'utf8',
  })
  t.is(out, prometheusRules(SLO))
})

test("rules --compat sloth refuses a grouping label named sloth_*: Sloth's fixed labels would overwrite it", (t) => {
  const { spawnSync } = require('node:child_process')
  const cli = path.join(__dirname, '..', '..', 'bin', 'captcha-budget.js')
  for (const label of ['sloth_id', 'sloth_window', 'sloth_anything']) {
    const res = spawnSync(
      process.execPath,
      [cli, 'rules', '--name', 'solves', '--target', '0.95', '--window', '30d', '--grouping', `type,${label}`, '--compat', 'sloth'],
      { encoding: 'utf8' },
    )
    t.is(res.status, 2, label)
    t.is(res.stdout, '')
    t.regex(res.stderr, new RegExp(`slo\\.grouping: '${label}' clashes with compat 'sloth'`))
    t.throws(() => prometheusRules({ ...SLO, grouping: [label] }, { compat: 'sloth' }), {
      code: 'ERR_INVALID_ARG_VALUE',
      message: new RegExp(`'${label}' clashes`),
    })
  }
  // Without --compat sloth the label is anyone's.
  t.notThrows(() => prometheusRules({ ...SLO, grouping: ['sloth_id'] }))
})

// Two label sets of one family, each 30 solves a minute over two workers (15 each).
// turnstile/a fails every solve in minutes 361–480; image/b never fails. For a, by
// the tracker's default policy at 30 d (prometheus-rules.spec.js): x minutes in, the
// fast page's 1 h window burns x / 60 / 0.05 > 14.4 from x = 44 (43: 14.33×) and its
// 5 min one 20×, with 5 failures and 10 solves, and the counters are an hour old
// (its warm-up): firing at 404, no `for:`. The other pairs' warm-ups (60 h, 180 h)
// outlast the 7.5 hours of data, as a tracker's would. b stays at burn 0 and never alerts.
withPromtoolRules(test)('promtool test rules: the alerts fire for the failing label set only', async (t) => {
  t.truthy(promtool, 'promtool is not installed: apt-get install -y prometheus (.ci/run does)')
  if (!promtool) return
  const minutes = 452
  const input = []
  for (const [type, site, failing] of [
    ['turnstile', 'a', (k) => k > 360 && k <= 480],
    ['image', 'b', () => false],
  ]) {
    for (const instance of ['w1', 'w2']) {
      const ok = [0]
      const failed = [0]
      for (let k = 1; k <= minutes; k++) {
        ok.push(ok.at(-1) + (failing(k) ? 0 : 15))
        failed.push(failed.at(-1) + (failing(k) ? 15 : 0))
      }
      for (const [outcome, values] of [
        ['success', ok],
        ['failure', failed],
      ]) {
        input.push({
          series: `captcha_budget_solves_total{name="solves",type="${type}",site="${site}",outcome="${outcome}",instance="${instance}"}`,
          values: values.join(' '),
        })
      }
    }
  }
  const firing = (minute, alerts) => ({
    expr: `count by (alertname, type, site) (ALERTS{alertstate="firing",slo="${ID}"})`,
    eval_time: `${minute}m`,
    exp_samples: alerts.map((alertname) => ({ labels: `{alertname="${alertname}",site="a",type="turnstile"}`, value: 1 })),
  })
  const burn = (minute, type, site, value) => ({
    expr: `abs(captcha_budget:burn_rate:ratio{window="5m",slo="${ID}",site="${site}"} - ${value}) < bool 1e-9`,
    eval_time: `${minute}m`,
    exp_samples: [{ labels: `{name="solves",site="${site}",slo="${ID}",type="${type}",window="5m"}`, value: 1 }],
  })
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'rules.yml'), prometheusRules(SLO))
  const testCase = {
    interval: '1m',
    input_series: input,
    promql_expr_test: [
      firing(403, []),
      firing(404, ['CaptchaBudgetFastBurn']),
      firing(451, ['CaptchaBudgetFastBurn']),
      burn(405, 'turnstile', 'a', 20),
      burn(405, 'image', 'b', 0),
    ],
  }
  fs.writeFileSync(path.join(dir, 'test.yml'), toYaml({ rule_files: ['rules.yml'], evaluation_interval: '1m', tests: [testCase] }) + '\n')
  // Seven and a half hours of minute samples over every window: 20 s on a quiet machine, more under load.
  t.timeout(240_000)
  const result = await run(promtool, ['test', 'rules', path.join(dir, 'test.yml')], { timeout: 200_000 })
  t.is(result.code, 0, result.stdout + result.stderr)
})
