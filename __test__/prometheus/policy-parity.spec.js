// Issue 24.3: one alert policy for the tracker and the Prometheus rules. The
// same solves — a healthy stretch, an outage, a recovery, a slow burn — go
// through a tracker on the manual clock and, as counters sampled at the
// scrape interval, through the rules in `promtool test rules`; each pair must
// start and stop firing within two evaluation intervals of the other.
//
// The tracker is the reference here: its firing intervals are read from
// report().alerts after each solve; what Prometheus must show is derived from
// them (firing at every evaluation more than two intervals from a tracker
// transition, as the tracker; the same number of firing episodes). No figure of
// the policy is written here: both sides take it from the core. The solve
// streams and the tracker's side: scripts/parity-scenarios.js.
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { prometheusRules } = require('../..')
const { toYaml } = require('../../lib/prometheus/rules.js')
const { nativeRuns } = require('../helpers/binding')
const { promtool, withBinary, tempDir, run } = require('../fixtures/prometheus-tools')
const { SLO, SCENARIOS, solvesOf, trackerIntervals } = require('../../scripts/parity-scenarios')

const HOUR = 3_600_000
const SCRAPE_MS = 15_000
const EVAL_MS = 60_000
const TOLERANCE_MS = 2 * EVAL_MS
const ALERT = {
  'fast-burn': 'CaptchaBudgetFastBurn',
  'budget-spend': 'CaptchaBudgetBudgetSpend',
  'slow-burn': 'CaptchaBudgetSlowBurn',
  'budget-leak': 'CaptchaBudgetBudgetLeak',
}

/** The counters sampled every SCRAPE_MS from 0 to END_MS: input_series for promtool. */
function inputSeries(solves, endMs) {
  const ok = []
  const failed = []
  let i = 0
  let s = 0
  let f = 0
  for (let at = 0; at <= endMs; at += SCRAPE_MS) {
    while (i < solves.length && solves[i][0] <= at) {
      if (solves[i][1]) f++
      else s++
      i++
    }
    ok.push(s)
    failed.push(f)
  }
  return [
    { series: `captcha_budget_solves_total{name="${SLO.name}",outcome="success",instance="a"}`, values: ok.join(' ') },
    { series: `captcha_budget_solves_total{name="${SLO.name}",outcome="failure",instance="a"}`, values: failed.join(' ') },
  ]
}

const firingAt = (intervals, at) => intervals.some(([start, stop]) => at >= start && at < stop)
const nearTransition = (intervals, at) => intervals.some(([start, stop]) => Math.abs(at - start) <= TOLERANCE_MS || Math.abs(at - stop) <= TOLERANCE_MS)

// On WASI the tracker's intervals are compared with native's instead, with the rules
// (scripts/same-report.js): promtool, the bulk of the time, would read the same text.
const withPromtool = nativeRuns('on WASI: the same rules and tracker alerts as native, compared by scripts/same-report.js', withBinary(test, promtool))

for (const scenario of SCENARIOS) {
  withPromtool(`${scenario.title}: each pair starts and stops firing in Prometheus within two evaluation intervals of the tracker`, async (t) => {
    // A day of 15 s samples through every window, a minute at a time: 30–100 s, more under load.
    t.timeout(600_000)
    const solves = solvesOf(scenario)
    const END_MS = scenario.endMs
    const { intervals, policy } = trackerIntervals(solves)
    t.deepEqual(policy, Object.keys(ALERT))
    // The scenario exercises the pairs it was built for, each ending well before the end.
    t.deepEqual(Object.fromEntries(Object.entries(intervals).map(([pair, list]) => [pair, list.length])), scenario.fired, JSON.stringify(intervals))
    for (const list of Object.values(intervals)) for (const [, stop] of list) t.true(stop < END_MS - HOUR, JSON.stringify(intervals))

    const tests = []
    for (const [pair, alertname] of Object.entries(ALERT)) {
      const list = intervals[pair] ?? []
      for (let at = EVAL_MS; at <= END_MS; at += EVAL_MS) {
        if (nearTransition(list, at)) continue
        tests.push({
          expr: `count(ALERTS{alertname="${alertname}",alertstate="firing",slo="${SLO.id}"})`,
          eval_time: `${at / 1000}s`,
          exp_samples: firingAt(list, at) ? [{ labels: '{}', value: 1 }] : [],
        })
      }
      // As many firing episodes: evaluations at which it fires and did not one interval before.
      const started = `ALERTS{alertname="${alertname}",alertstate="firing",slo="${SLO.id}"}`
      tests.push({
        expr: `count_over_time((${started} unless ${started} offset 1m)[${END_MS / 1000}s:1m])`,
        eval_time: `${END_MS / 1000}s`,
        exp_samples:
          list.length === 0
            ? []
            : [
                {
                  labels: `{alertname="${alertname}",alertstate="firing",name="${SLO.name}",pair="${pair}",severity="${pair === 'budget-leak' ? 'ticket' : 'page'}",slo="${SLO.id}"}`,
                  value: list.length,
                },
              ],
      })
    }

    const dir = tempDir(t)
    fs.writeFileSync(path.join(dir, 'rules.yml'), prometheusRules(SLO, { scrapeIntervalMs: SCRAPE_MS, evaluationIntervalMs: EVAL_MS }))
    const file = {
      rule_files: ['rules.yml'],
      evaluation_interval: `${EVAL_MS / 1000}s`,
      tests: [{ interval: `${SCRAPE_MS / 1000}s`, input_series: inputSeries(solves, END_MS), promql_expr_test: tests }],
    }
    fs.writeFileSync(path.join(dir, 'test.yml'), toYaml(file) + '\n')
    const result = await run(promtool, ['test', 'rules', path.join(dir, 'test.yml')], { timeout: 580_000 })
    t.is(result.code, 0, (result.stdout + result.stderr).slice(0, 6000))
  })
}
