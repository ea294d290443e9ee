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
// the policy is written here: both sides take it from the core.
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { ErrorBudgetTracker, prometheusRules } = require('..')
const { toYaml } = require('../lib/rules.js')
const { promtool, withBinary, tempDir, run } = require('./fixtures/prometheus-tools')

const HOUR = 3_600_000
const DAY = 24 * HOUR
const SCRAPE_MS = 15_000
const EVAL_MS = 60_000
const TOLERANCE_MS = 2 * EVAL_MS
const ALERT = {
  'fast-burn': 'CaptchaBudgetFastBurn',
  'budget-spend': 'CaptchaBudgetBudgetSpend',
  'slow-burn': 'CaptchaBudgetSlowBurn',
  'budget-leak': 'CaptchaBudgetBudgetLeak',
}

// Two streams of solves, the k-th at 3 s + k × the spacing (never on a scrape's
// instant); whether solve k fails, by phase:
//   busy, 10 a minute, 23 h: healthy at 0.67 % (every 150th) to 8 h; an outage
//     (every solve) to 8.5 h; healthy to 15 h; a slow burn at 20 % (every 5th,
//     4× a 95 % SLO's budget) to 18 h; healthy to the end. Every pair fires in the
//     outage; slow-burn and budget-leak in the slow burn.
//     (Not every 100th: that is one failure in every 10 minutes, and whether the
//     shortest recovery span, whose test then allows none, held one turned on
//     the second — a tracker resolving in the one clean minute no evaluation sees.)
//   low volume, one every 50 s, 30 h: healthy at 2 % (every 50th) to 8 h; an
//     outage to 10 h; healthy to 16 h; 25 % failing (every 4th) to 22 h; healthy to
//     the end. fast-burn never fires (its 2 min window never holds the 10 solves a
//     long window must), the others do; recovery waits for spans long enough to
//     hold a pair's minimum of solves.
//     Not one a minute: a 2 h window would hold 120 solves, 3× would be exactly 18
//     failures, and a tracker (which drops its oldest solve when time advances,
//     before the next arrives) fires on 18 of 119 for an instant no evaluation
//     sees — 4 minutes (one failure) before the rules. 144 solves put 3× at 21.6.
const HOURS = (h) => h * HOUR
const SCENARIOS = [
  {
    title: 'busy: 10 solves a minute',
    solveMs: 6000,
    endMs: HOURS(23),
    fails: (k, at) => (at >= HOURS(8) && at < HOURS(8.5)) || (at >= HOURS(15) && at < HOURS(18) ? k % 5 === 0 : k % 150 === 0),
    fired: { 'fast-burn': 1, 'budget-spend': 1, 'slow-burn': 2, 'budget-leak': 2 },
  },
  {
    title: 'low volume: a solve every 50 s',
    solveMs: 50_000,
    endMs: HOURS(30),
    fails: (k, at) => (at >= HOURS(8) && at < HOURS(10)) || (at >= HOURS(16) && at < HOURS(22) ? k % 4 === 0 : k % 50 === 0),
    fired: { 'budget-spend': 1, 'slow-burn': 2, 'budget-leak': 2 },
  },
]

function solvesOf({ solveMs, endMs, fails }) {
  const solves = []
  for (let k = 0, at = 3000; at < endMs; k++, at += solveMs) solves.push([at, fails(k, at)])
  return solves
}

const SLO = { name: 'parity', id: 'parity', targetRate: 0.95, windowMs: DAY }

/** The tracker's firing intervals per pair: { pair: [[start, stop], …] } (stop Infinity if still firing). */
function trackerIntervals(solves) {
  const tracker = new ErrorBudgetTracker({ targetRate: SLO.targetRate, windowMs: SLO.windowMs, clock: 'manual' })
  const intervals = {}
  const firing = new Set()
  try {
    for (const [at, failed] of solves) {
      tracker.advanceTo(at)
      tracker.record(!failed)
      const now = new Set(tracker.report().alerts.map((a) => a.name))
      for (const name of now) {
        if (!firing.has(name)) (intervals[name] ??= []).push([at, Infinity])
      }
      for (const name of firing) {
        if (!now.has(name)) intervals[name].at(-1)[1] = at
      }
      firing.clear()
      for (const name of now) firing.add(name)
    }
    return { intervals, policy: tracker.alertPolicy.map((p) => p.name) }
  } finally {
    tracker.close()
  }
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

const withPromtool = withBinary(test, promtool)

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
