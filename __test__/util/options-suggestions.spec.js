// Every options object of the package suggests the closest known key for a
// misspelt one (issue 44), as the tracker's config and the CLI's options do:
// guard(), createSolver() and solve(), createFailover() over solvers and over a
// family, BudgetFamily (persist, restore), config.fleet, config.persist and
// config.alerts[i], restore(), metrics() and registerMetrics(), prometheusRules()
// (the SLO, its parts and the options) and grafanaDashboard(). The error is the
// usual unknown key: ERR_INVALID_ARG_VALUE listing the known keys, nothing created.
const test = require('ava')
const { ErrorBudgetTracker, BudgetFamily, createSolver, createFailover, registerMetrics, prometheusRules } = require('../..')
const { grafanaDashboard } = require('../../lib/prometheus/dashboard.js')

const DAY = 86_400_000
const SLO = { name: 'turnstile', targetRate: 0.95, windowMs: 30 * DAY }
const manual = () => new ErrorBudgetTracker({ clock: 'manual' })
const family = () => new BudgetFamily({ labelNames: ['provider', 'site'], attribution: { provider: 'provider', site: 'site' }, clock: 'manual' })
const solverOf = (tracker) => createSolver({ apiKey: 'test-key', tracker, baseUrl: 'http://127.0.0.1:9/' })
// A registry as registerMetrics() needs one, never scraped here.
const registry = { registerMetric() {}, getSingleMetric() {} }

// [what, call (sync or async), the key written, the key it should have been]
const CASES = [
  ['guard options', () => manual().guard(() => 1, { timeout: 5000 }), 'timeout', 'timeoutMs'],
  ['guard options (probe)', () => manual().guard(() => 1, { probeInterval: 5000 }), 'probeInterval', 'probeIntervalMs'],
  ['createSolver options', () => createSolver({ apiKey: 'k', tracker: manual(), pollInterval: 10 }), 'pollInterval', 'pollIntervalMs'],
  ['createSolver options (timeout)', () => createSolver({ apiKey: 'k', tracker: manual(), timeout: 10 }), 'timeout', 'timeoutMs'],
  ["a solver's solve options", () => solverOf(manual()).solve({ method: 'turnstile' }, { critcal: true }), 'critcal', 'critical'],
  ["createFailover's solve options", () => createFailover([solverOf(manual())]).solve({}, { critcal: true }), 'critcal', 'critical'],
  ['createFailover(family, options)', () => createFailover(family(), { provider: {} }), 'provider', 'providers'],
  ["a family failover's solve options", () => createFailover(family(), { providers: { a: solverOf } }).solve({}, { label: {} }), 'label', 'labels'],
  ["BudgetFamily's persist", () => new BudgetFamily({ labelNames: ['site'], persist: { path: '/nonexistent/x.json', interval: 5 } }), 'interval', 'intervalMs'],
  ['BudgetFamily.restore options', () => BudgetFamily.restore('{}', { clok: 'manual' }), 'clok', 'clock'],
  ['config.fleet', () => new ErrorBudgetTracker({ fleet: { redis: {}, keys: 'a' } }), 'keys', 'key'],
  ['config.persist', () => new ErrorBudgetTracker({ persist: { path: '/nonexistent/x.json', interval: 5 } }), 'interval', 'intervalMs'],
  [
    'config.alerts[0]',
    () => new ErrorBudgetTracker({ alerts: [{ name: 'p', severity: 'page', longWindow: 3_600_000, shortWindowMs: 300_000, burnRate: 14.4 }] }),
    'longWindow',
    'longWindowMs',
  ],
  ['restore options', () => ErrorBudgetTracker.restore('{}', { clok: 'manual' }), 'clok', 'clock'],
  ['restore options.persist', () => ErrorBudgetTracker.restore(manual().snapshot(), { persist: { pth: '/nonexistent/x.json' } }), 'pth', 'path'],
  [
    "BudgetFamily's attribution",
    () => new BudgetFamily({ labelNames: ['provider', 'site'], attribution: { providr: 'provider', site: 'site' } }),
    'providr',
    'provider',
  ],
  // Unknown keys are checked before the required ones: the typo is named, not "labelNames … got undefined".
  ['BudgetFamily options, labelNames misspelt', () => new BudgetFamily({ labelnames: ['site'] }), 'labelnames', 'labelNames'],
  ['BudgetFamily options, a tracker option misspelt', () => new BudgetFamily({ targetrate: 0.9 }), 'targetrate', 'targetRate'],
  ['BudgetFamily.restore options.persist', () => BudgetFamily.restore(family().snapshot(), { persist: { pth: '/nonexistent/x.json' } }), 'pth', 'path'],
  ["family.metrics's options", () => family().metrics({ labls: {} }), 'labls', 'labels'],
  ['metrics options', () => manual().metrics({ nmae: 'x' }), 'nmae', 'name'],
  ["registerMetrics(family)'s options", () => registerMetrics(family(), registry, { label: {} }), 'label', 'labels'],
  ['prometheusRules slo', () => prometheusRules({ ...SLO, minEvent: 100 }), 'minEvent', 'minEvents'],
  ['prometheusRules slo.alerting', () => prometheusRules({ ...SLO, alerting: { nam: 'X' } }), 'nam', 'name'],
  ['prometheusRules slo.alerting.page', () => prometheusRules({ ...SLO, alerting: { page: { label: {} } } }), 'label', 'labels'],
  ['prometheusRules slo.sli', () => prometheusRules({ ...SLO, sli: { errorQuerry: 'x', totalQuery: 'y' } }), 'errorQuerry', 'errorQuery'],
  ['prometheusRules options', () => prometheusRules(SLO, { scrapeInterval: 15_000 }), 'scrapeInterval', 'scrapeIntervalMs'],
  ['prometheusRules options.metadata', () => prometheusRules(SLO, { metadata: { nme: 'x' } }), 'nme', 'name'],
  ['grafanaDashboard options', () => grafanaDashboard({ titel: 'x' }), 'titel', 'title'],
]

for (const [what, call, written, meant] of CASES) {
  test(`${what}: '${written}' → did you mean '${meant}'?`, async (t) => {
    const err = await t.throwsAsync(async () => call())
    t.is(err.code, 'ERR_INVALID_ARG_VALUE')
    t.true(err.message.includes(written), err.message)
    t.true(err.message.includes(meant), `the known keys are listed: ${err.message}`)
    t.true(err.message.endsWith(`; did you mean '${meant}'?`), err.message)
  })
}

test('the exact message: the known keys, then the suggestion', async (t) => {
  await t.throwsAsync(
    manual().guard(() => 1, { timeout: 5000 }),
    {
      instanceOf: TypeError,
      code: 'ERR_INVALID_ARG_VALUE',
      message:
        "unknown key 'timeout' in guard options; known keys: timeoutMs, critical, countsAsFailure, provider, whenExhausted, minSolves, probeIntervalMs; did you mean 'timeoutMs'?",
    },
  )
})

test('no known key close: no suggestion, the list alone', async (t) => {
  await t.throwsAsync(
    manual().guard(() => 1, { zzzzzzzz: 1 }),
    {
      message: "unknown key 'zzzzzzzz' in guard options; known keys: timeoutMs, critical, countsAsFailure, provider, whenExhausted, minSolves, probeIntervalMs",
    },
  )
})

test('a refused guard() records nothing and does not call fn', async (t) => {
  const tracker = manual()
  let called = false
  await t.throwsAsync(
    tracker.guard(
      () => {
        called = true
      },
      { timeout: 1 },
    ),
  )
  t.false(called)
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 0 })
})

test("family.metrics({ name }) is refused (the name is the family's), as registerMetrics(family)'s options are", (t) => {
  t.throws(() => family().metrics({ name: 'x' }), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_VALUE',
    message: "unknown key 'name' in family.metrics(options): options; known keys: labels (the name label is the family's)",
  })
})

test('family.metrics({ labels }) adds the constant labels to every child, sorted among its own', (t) => {
  const budgets = family()
  budgets.labels({ provider: 'a', site: 's' }).record(false)
  t.true(
    budgets.metrics({ labels: { env: 'prod' } }).includes('captcha_budget_solves_total{name="default",env="prod",provider="a",site="s",outcome="failure"} 1\n'),
  )
  t.true(budgets.metrics().includes('captcha_budget_solves_total{name="default",provider="a",site="s",outcome="failure"} 1\n'))
})
