// The fleet, end to end: two worker processes serve tracker.metrics() over
// node:http; a real Prometheus (127.0.0.1, free port, temp storage) scrapes them
// every second and evaluates the rules from `captcha-budget rules`; its HTTP API
// must give the fleet's figures the two trackers' reports add up to.
const test = require('ava')
const path = require('node:path')
const { ErrorBudgetTracker } = require('../..')
const { prometheus, withBinary, tempDir, cli } = require('../fixtures/prometheus-tools')
const { startWorker, startPrometheus, until, untilRead } = require('../fixtures/prometheus-fleet')

const TARGET = 0.8
const WINDOW = '10m'
const WINDOW_MS = 600_000
// Known sequences: worker a 42 ok + 18 failed (30 %), worker b 133 ok + 7 failed
// (5 %). The fleet: 25 failed of 200 = 0.125, burn 0.125 / 0.2 = 0.625, budget
// left 0.375. (Averaging the two ratios would say 0.175; adding them, 0.35.)
const SEQUENCES = { a: { ok: 42, failed: 18 }, b: { ok: 133, failed: 7 } }
const DEADLINE_MS = 45_000

withBinary(test, prometheus)('a real Prometheus scraping two workers: the fleet figures add up to their reports', async (t) => {
  t.truthy(prometheus, 'prometheus is not installed: apt-get install -y prometheus (.ci/run does)')
  if (!prometheus) return
  const deadline = Date.now() + DEADLINE_MS
  const dir = tempDir(t)

  const workers = { a: await startWorker(t, 'turnstile', TARGET, WINDOW_MS), b: await startWorker(t, 'turnstile', TARGET, WINDOW_MS) }
  const rules = await cli([
    'rules',
    '--name',
    'turnstile',
    '--target',
    String(TARGET),
    '--window',
    WINDOW,
    '--scrape-interval',
    '1s',
    '--alerts',
    '[{"name":"fleet-burn","severity":"page","longWindowMs":60000,"shortWindowMs":5000,"burnRate":2}]',
    '-o',
    path.join(dir, 'rules.yml'),
  ])
  t.is(rules.code, 0, rules.stderr)
  const { api, query } = await startPrometheus(
    t,
    dir,
    Object.values(workers).map((w) => w.port),
    'rules.yml',
    deadline,
  )
  const single = async (promql, time) => {
    const result = await query(promql, time)
    return result.length === 1 ? result[0].value : undefined
  }

  // Counters at 0 first, seen by at least 3 scrapes of each worker: increase()
  // then covers every solve recorded next.
  await until('3 scrapes of each worker', deadline, async () => {
    const counts = await query('count_over_time(captcha_budget_solves_total{outcome="failure"}[1m])')
    return counts.length === 2 && counts.every((c) => c.value >= 3) ? true : undefined
  })

  const reports = {}
  for (const [id, { ok, failed }] of Object.entries(SEQUENCES)) reports[id] = await workers[id].record(ok, failed)
  // The reports are what each tracker saw.
  t.like(reports.a.report, { total: 60, failures: 18 })
  t.like(reports.b.report, { total: 140, failures: 7 })

  // Wait until both workers' new counts have been scraped for 3 s, each series
  // is sampled over 11 s or more (see 4.), and the rules ran on them.
  await until('the recorded solves to be scraped', deadline, async () => {
    const seen = await single('sum(min_over_time(captcha_budget_solves_total[3s]))')
    const samples = await query('count_over_time(captcha_budget_solves_total[1m])')
    return seen === 200 && samples.length === 4 && samples.every((c) => c.value >= 12) ? true : undefined
  })
  await until('the recording rules', deadline, async () => {
    const solves = await single('captcha_budget:solves:increase{name="turnstile",window="10m"}')
    return solves > 0 ? true : undefined
  })

  const total = reports.a.report.total + reports.b.report.total
  const failures = reports.a.report.failures + reports.b.report.failures
  // 1. Exact: the window gauges summed over the fleet are the sum of the reports.
  t.is(await single('sum(captcha_budget_window_solves{name="turnstile"})'), total)
  t.is(await single('sum(captcha_budget_window_failures{name="turnstile"})'), failures)
  t.is(await single('sum(captcha_budget_solves_total{name="turnstile",outcome="failure"})'), reports.a.recorded.failures + reports.b.recorded.failures)

  // 2. Exact, per worker: increase() extrapolates a worker's counters by one
  // factor (both outcomes are scraped at the same instants and start at 0), so
  // its error ratio over the window is its report's failures / total.
  // All at one instant, 2 s back so that every scrape up to it is stored.
  const at = Date.now() / 1000 - 2
  const perWorker = async (expr) => Object.fromEntries((await query(expr, at)).map((r) => [r.labels.instance, r.value]))
  const failed = await perWorker(`sum by (instance) (increase(captcha_budget_solves_total{outcome="failure"}[${WINDOW}]))`)
  const all = await perWorker(`sum by (instance) (increase(captcha_budget_solves_total[${WINDOW}]))`)
  for (const [id, { port: p }] of Object.entries(workers)) {
    const instance = `127.0.0.1:${p}`
    const { report } = reports[id]
    t.true(Math.abs(failed[instance] / all[instance] - report.failures / report.total) < 1e-12, `${id}: ${failed[instance]} / ${all[instance]}`)
  }

  // 3. The fleet, with the rules' own expression at the same instant: the sum of
  // the workers' failures over the sum of their solves, each weighted by that
  // worker's extrapolation factor k (the increase Prometheus saw / the report's
  // count, within a few % of 1): Σ failures·k / Σ total·k, to float rounding.
  const k = (id) => all[`127.0.0.1:${workers[id].port}`] / reports[id].report.total
  const weighted = (k('a') * 18 + k('b') * 7) / (k('a') * 60 + k('b') * 140)
  const fleetExpr = `sum(rate(captcha_budget_solves_total{name="turnstile",outcome="failure"}[${WINDOW}])) / sum(rate(captcha_budget_solves_total{name="turnstile"}[${WINDOW}]))`
  const fleet = await single(fleetExpr, at)
  t.true(Math.abs(fleet - weighted) < 1e-12, `${fleet} vs ${weighted}`)

  // 4. The recorded rules, evaluated by Prometheus itself: the fleet's error
  // ratio and remaining budget match a single tracker holding all 200 solves,
  // within the extrapolation: k = (sampled span + at most 1.1 scrape interval) /
  // sampled span, with spans of 11 s or more, so the two k are within 11 % of
  // each other and the ratio within 0.125 ± 0.006 (0.1196 to 0.1305; far from
  // 0.175, the average of the two ratios), the budget left 0.375 ± 0.03.
  const merged = new ErrorBudgetTracker({ targetRate: TARGET, windowMs: WINDOW_MS, clock: 'manual' })
  for (let i = 0; i < total; i++) merged.record(i >= failures)
  t.is(merged.failures / merged.total, 0.125)
  // Read until an evaluation whose solves and failures saw the same scrapes (untilRead).
  const [ratio, remaining] = await untilRead(
    'an evaluation within the bounds',
    deadline,
    async () => [
      await single('captcha_budget:solve_error:ratio{name="turnstile",window="10m"}'),
      await single('captcha_budget:error_budget_remaining:ratio{name="turnstile"}'),
    ],
    ([r, left]) => Math.abs(r - 0.125) < 0.006 && Math.abs(left - merged.remainingFraction) < 0.03,
  )
  t.true(Math.abs(ratio - 0.125) < 0.006, `fleet error ratio ${ratio}`)
  t.true(Math.abs(remaining - merged.remainingFraction) < 0.03, `remaining ${remaining} vs ${merged.remainingFraction}`)
  t.true(Math.abs(merged.remainingFraction - 0.375) < 1e-12)
  t.is(await single('captcha_budget:objective:ratio{name="turnstile"}'), TARGET)
  merged.close()

  // Every rule loaded and evaluated without error.
  const groups = (await (await fetch(`${api}/api/v1/rules`)).json()).data.groups
  const loaded = groups.flatMap((g) => g.rules)
  // Solves, failures, error ratio and burn rate, one rule each over the 3 windows (5s, 1m, 10m); 7 per SLO; 1 alert and the absent-source one.
  t.is(loaded.length, 4 + 7 + 2)
  t.deepEqual(
    loaded.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.lastError}`),
    [],
  )
})
