// A PromQL SLI summed by a label of its own (`sum by (region) (…)`): each label set is paged and
// held on its own, in `promtool test rules`. The recovery spans' age test joins the alert's
// ALERTS_FOR_STATE on every label but those the rule adds, as the hold does: it joined on `name`
// alone, which an SLI's series lack, so two regions held at once were one match group and the
// alert failed to evaluate ("found duplicate series for the match group").
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { prometheusRules } = require('../..')
const { toYaml } = require('../../lib/prometheus/rules.js')
const { promtool, withPromtoolRules, tempDir, run } = require('../fixtures/prometheus-tools')

const SLO = {
  id: 'api',
  targetRate: 0.95,
  windowMs: 86_400_000,
  sli: { errorQuery: 'sum by (region) (rate(errors_total[{{.window}}]))', totalQuery: 'sum by (region) (rate(requests_total[{{.window}}]))' },
}

/** 10 requests a minute in each region, scraped every minute; every one fails in minutes 61–80. */
function inputSeries() {
  const input = []
  for (const region of ['a', 'b']) {
    const [requests, errors] = [[], []]
    for (let minute = 0, total = 0, failed = 0; minute <= 180; minute++) {
      if (minute > 0) total += 10
      if (minute > 60 && minute <= 80) failed += 10
      requests.push(total)
      errors.push(failed)
    }
    input.push(
      { series: `requests_total{region="${region}"}`, values: requests.join(' ') },
      { series: `errors_total{region="${region}"}`, values: errors.join(' ') },
    )
  }
  return input
}

withPromtoolRules(test)('a PromQL SLI by region: both regions page at once, each held and resolved on its own', async (t) => {
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'rules.yml'), prometheusRules(SLO))
  // fast-burn (2 min and 1 min windows at 14.4x) pages each region from its first failing minute;
  // both resolve 2 minutes after the outage, on a clean short window (the lull rule).
  const fastBurn = (minute, regions) => ({
    expr: 'ALERTS{alertname="CaptchaBudgetFastBurn",alertstate="firing"}',
    eval_time: `${minute}m`,
    exp_samples: regions.map((region) => ({
      labels: `ALERTS{alertname="CaptchaBudgetFastBurn",alertstate="firing",pair="fast-burn",region="${region}",severity="page",slo="api"}`,
      value: 1,
    })),
  })
  const tests = [fastBurn(60, []), fastBurn(62, ['a', 'b']), fastBurn(70, ['a', 'b']), fastBurn(81, ['a', 'b']), fastBurn(83, []), fastBurn(180, [])]
  const file = { rule_files: ['rules.yml'], evaluation_interval: '1m', tests: [{ interval: '1m', input_series: inputSeries(), promql_expr_test: tests }] }
  fs.writeFileSync(path.join(dir, 'test.yml'), toYaml(file) + '\n')
  t.timeout(120_000)
  // promtool fails the test on any rule that failed to evaluate, too.
  const result = await run(promtool, ['test', 'rules', path.join(dir, 'test.yml')], { timeout: 100_000 })
  t.is(result.code, 0, result.stdout + result.stderr)
})
