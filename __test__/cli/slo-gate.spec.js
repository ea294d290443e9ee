// `captcha-budget gate --prometheus <url> --slo <id>` (lib/cli/gate/prometheus.js):
// end to end against a real Prometheus scraping live workers, and the status
// mapping and failure modes against a canned Prometheus API on loopback.
const test = require('ava')
const http = require('node:http')
const path = require('node:path')
const { prometheus, withBinary, tempDir, cli } = require('../fixtures/prometheus-tools')
const { startWorker, startPrometheus, until, untilRead } = require('../fixtures/prometheus-fleet')
const { freePort } = require('../helpers/ports')

const DEADLINE_MS = 50_000

withBinary(test, prometheus)('a real Prometheus scraping two workers: healthy proceeds, exhausted stops, --max-burn-rate stops on the burn', async (t) => {
  t.truthy(prometheus, 'prometheus is not installed: apt-get install -y prometheus (.ci/run does)')
  if (!prometheus) return
  const deadline = Date.now() + DEADLINE_MS
  const dir = tempDir(t)
  // SLO 80 % over 10 min (budget 0.2); one pair whose short window, 5 min, is
  // the current burn rate's.
  const [a, b] = [await startWorker(t, 'turnstile', 0.8, 600_000), await startWorker(t, 'turnstile', 0.8, 600_000)]
  const rules = await cli([
    'rules',
    '--name',
    'turnstile',
    '--target',
    '0.8',
    '--window',
    '10m',
    '--slo',
    'turnstile-fleet',
    '--scrape-interval',
    '1s',
    '--resolution',
    '1s',
    '--alerts',
    '[{"name":"fleet-burn","severity":"page","longWindowMs":600000,"shortWindowMs":300000,"burnRate":2}]',
    '-o',
    path.join(dir, 'rules.yml'),
  ])
  t.is(rules.code, 0, rules.stderr)
  const { api, query } = await startPrometheus(t, dir, [a.port, b.port], 'rules.yml', deadline)
  const gate = (...args) => cli(['gate', '--prometheus', api, '--slo', 'turnstile-fleet', ...args])
  const json = async (...args) => {
    const out = await gate('--json', ...args)
    return { code: out.code, decision: out.stdout ? JSON.parse(out.stdout) : null, stderr: out.stderr }
  }

  // Counters at 0 seen by 3 scrapes of each worker (increase() then covers every
  // solve recorded next), and the rules evaluated.
  await until('3 scrapes of each worker and the info series', deadline, async () => {
    const counts = await query('count_over_time(captcha_budget_solves_total{outcome="failure"}[1m])')
    const info = await query('captcha_budget:slo_info{slo="turnstile-fleet"}')
    return counts.length === 2 && counts.every((c) => c.value >= 3) && info.length === 1 ? true : undefined
  })
  // No solve yet: no ratio (0 / 0), nothing spent — healthy, as a fresh tracker.
  const fresh = await json()
  t.is(fresh.code, 0, fresh.stderr)
  t.like(fresh.decision, { proceed: true, status: 'healthy', noData: true, budgetRemaining: 1, source: 'turnstile', objective: 0.8, period: '10m' })

  // Both workers at 5 % failing: the fleet at 5 %, whatever each worker's
  // extrapolation (a weighted mean of equal ratios): burn 0.05 / 0.2 = 0.25,
  // budget left 0.75.
  await a.record(95, 5)
  await b.record(95, 5)
  const settled = (solves) => async () => {
    const seen = await query('sum(min_over_time(captcha_budget_solves_total[3s]))')
    const recorded = await query('captcha_budget:solves:increase{slo="turnstile-fleet",window="10m"}')
    return seen[0]?.value === solves && recorded[0]?.value > 0 ? true : undefined
  }
  await until('200 solves scraped', deadline, settled(200))
  // Asked until it reads an evaluation whose solves and failures saw the same scrapes
  // (untilRead): exactly 75 % and 0.25.
  const near = (value, expected) => Math.abs(value - expected) < 1e-9
  const healthy = await untilRead(
    'the gate to read 75 % left at burn 0.25',
    deadline,
    () => json(),
    (out) => out.code === 0 && near(out.decision.budgetRemaining, 0.75) && near(out.decision.currentBurnRate, 0.25),
  )
  t.like(healthy.decision, { proceed: true, status: 'healthy', noData: false, reasons: [] })
  const burning = await untilRead(
    'the gate to stop on the burn 0.25',
    deadline,
    () => json('--max-burn-rate', '0.2'),
    (out) => out.code === 3 && out.decision.reasons[0].startsWith('the current burn rate 0.25 is above --max-burn-rate 0.2'),
  )
  t.is(burning.decision.reasons.length, 1)
  t.is((await gate('--max-burn-rate', '1')).code, 0)
  const text = await untilRead(
    'the gate to print 75 % left',
    deadline,
    () => gate(),
    (out) => / {7}75 %\n/.test(out.stdout),
  )
  t.regex(
    text.stdout,
    /^slo {15}turnstile-fleet \(source turnstile, SLO 80 % over 10m, fleet-wide from http:\/\/127\.0\.0\.1:\d+\)\nstatus {12}healthy\nbudget left {7}75 %\n/,
  )
  t.regex(text.stdout, /\ndeploys may proceed\n$/)

  // One worker fails 100 more: 110 failures of 300 solves, far past the budget.
  await b.record(0, 100)
  await until('300 solves scraped', deadline, settled(300))
  await until('the rules to see them', deadline, async () =>
    (await query('captcha_budget:error_budget_remaining:ratio{slo="turnstile-fleet"} == 0')).length ? true : undefined,
  )
  const exhausted = await json()
  t.is(exhausted.code, 3, exhausted.stderr)
  t.like(exhausted.decision, { proceed: false, status: 'exhausted', budgetRemaining: 0, reasons: ['the budget is exhausted'] })
  t.regex((await gate()).stdout, /\ndeploys stop: the budget is exhausted\n$/)

  const unknown = await cli(['gate', '--prometheus', api, '--slo', 'recaptcha-fleet'])
  t.is(unknown.code, 2)
  t.regex(unknown.stderr, /^captcha-budget gate: Prometheus has no SLO 'recaptcha-fleet' \(no captcha_budget:slo_info\{slo="recaptcha-fleet"\}\)/)
})

/** A canned Prometheus API on loopback: `answers[promql]` is a list of [labels, value] (or a status and body). */
async function fakePrometheus(t, answers) {
  const server = http.createServer((req, res) => {
    const promql = new URL(req.url, 'http://x').searchParams.get('query')
    const answer = answers[promql] ?? []
    if (answer.status) {
      res.writeHead(answer.status, { 'Content-Type': 'application/json' }).end(JSON.stringify(answer.body))
      return
    }
    const result = answer.map(([metric, value]) => ({ metric, value: [1_700_000_000, String(value)] }))
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  return `http://127.0.0.1:${server.address().port}`
}

const SEL = '{slo="x"}'
const canned = (remaining, burn = 1, extra = {}) => ({
  [`captcha_budget:slo_info${SEL}`]: [[{ slo: 'x', name: 'turnstile', objective: '0.95', period: '30d' }, 1]],
  [`captcha_budget:error_budget_remaining:ratio${SEL}`]: remaining.map((v) => [{ slo: 'x', name: 'turnstile' }, v]),
  [`captcha_budget:current_burn_rate:ratio${SEL}`]: [[{ slo: 'x', name: 'turnstile' }, burn]],
  [`captcha_budget:period_burn_rate:ratio${SEL}`]: [[{ slo: 'x', name: 'turnstile' }, 0.5]],
  ...extra,
})

// Remaining fraction → status with the tracker's default thresholds (0.5, 0.1),
// and the exit code without and with --strict.
const statuses = [
  [[0.5], 'healthy', 0, 0],
  [[0.4999], 'warning', 0, 0],
  [[0.1], 'warning', 0, 0],
  [[0.0999], 'critical', 0, 3],
  [[0], 'exhausted', 3, 3],
  // Two samples (two servers behind one front end): the worst one judges.
  [[0.8, 0.05], 'critical', 0, 3],
  // NaN: no solve in the period.
  [['NaN'], 'healthy', 0, 0],
]
for (const [remaining, status, code, strictCode] of statuses) {
  test(`canned Prometheus: remaining ${remaining.join(', ')} is ${status}, exit ${code}, with --strict ${strictCode}`, async (t) => {
    const url = await fakePrometheus(t, canned(remaining))
    const plain = await cli(['gate', '--prometheus', url, '--slo', 'x', '--json'])
    t.is(plain.code, code, plain.stderr)
    t.is(JSON.parse(plain.stdout).status, status)
    t.is((await cli(['gate', '--prometheus', url, '--slo', 'x', '--strict'])).code, strictCode)
  })
}

test('canned Prometheus: firing alerts are listed; thresholds can be set', async (t) => {
  const url = await fakePrometheus(
    t,
    canned([0.3], 1, {
      'ALERTS{alertstate="firing",slo="x"}': [[{ alertname: 'CaptchaBudgetSlowBurn', severity: 'page', slo: 'x' }, 1]],
    }),
  )
  const out = await cli(['gate', '--prometheus', url, '--slo', 'x'])
  t.is(out.code, 0, out.stderr)
  t.regex(out.stdout, /\nstatus {12}warning\n/)
  t.regex(out.stdout, /\nalerts firing {5}CaptchaBudgetSlowBurn \(page\)\n/)
  t.regex(out.stdout, /\nburn rate {9}1 now, 0\.5 over the period\n/)
  const stricter = await cli(['gate', '--prometheus', url, '--slo', 'x', '--strict', '--critical-threshold', '0.4'])
  t.is(stricter.code, 3)
  t.regex(stricter.stdout, /deploys stop: the budget is critical\n$/)
})

test('gate --prometheus: unreachable, refused queries and bad flags exit 2', async (t) => {
  const closed = `http://127.0.0.1:${await freePort()}`
  const unreachable = await cli(['gate', '--prometheus', closed, '--slo', 'x'])
  t.is(unreachable.code, 2)
  t.regex(unreachable.stderr, /^captcha-budget gate: cannot reach Prometheus at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/)
  const refusing = await fakePrometheus(t, {
    [`captcha_budget:slo_info${SEL}`]: { status: 400, body: { status: 'error', errorType: 'bad_data', error: 'parse error' } },
  })
  const refused = await cli(['gate', '--prometheus', refusing, '--slo', 'x'])
  t.is(refused.code, 2)
  t.regex(refused.stderr, /^captcha-budget gate: Prometheus refused captcha_budget:slo_info\{slo="x"\}: bad_data: parse error/)
  const bad = [
    [['gate', '--prometheus', 'localhost:9090', '--slo', 'x'], "--prometheus must be an http(s) URL such as http://127.0.0.1:9090, got 'localhost:9090'"],
    [['gate', '--prometheus', closed], '--slo <id> is required with --prometheus'],
    [['gate', '--prometheus', closed, '--slo', 'x', '--max-burn-rate', '-1'], "--max-burn-rate must be a positive number such as 2, got '-1'"],
    [['gate', '--prometheus', closed, '--slo', 'x', '--critical-threshold', '0.6'], '--critical-threshold (0.6) must not exceed --warning-threshold (0.5)'],
    [['gate', 'snap.json', '--prometheus', closed, '--slo', 'x'], 'give a snapshot or --prometheus, not both'],
    [['gate', 'snap.json', '--slo', 'x'], '--slo needs --prometheus <url>'],
  ]
  for (const [args, message] of bad) {
    const out = await cli(args)
    t.is(out.code, 2, args.join(' '))
    t.true(out.stderr.startsWith(`captcha-budget gate: ${message}`), out.stderr)
  }
})
