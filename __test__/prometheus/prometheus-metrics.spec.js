const test = require('ava')
const { Registry, register: globalRegistry, Gauge } = require('prom-client')
const { ErrorBudgetTracker, registerMetrics, renderMetrics, METRICS_CONTENT_TYPE } = require('../..')
const { promtool, withBinary, run } = require('../fixtures/prometheus-tools')

const DAY = 86_400_000

// 24 h at 95 %, the SRE Workbook pairs as a custom policy (2 s buckets; the
// default policy's are in docs/alert-policy.md): fast-burn 2 min / 10 s > 14.4,
// slow-burn 12 min / 1 min > 6, budget-leak 144 min / 12 min > 1.
// 100 solves, one every 2 s (i × 2 s, i = 0…99), every 10th failing (i = 0, 10, …, 90).
// At 198 s: budget 100 × 0.05 = 5 < 10 failures → nothing left, exhausted;
// burn 10 / 5 = 2 over the window, 12 min and 144 min; 2 min holds i = 40…99
// (6 failures in 60: 6 / 3 = 2); 1 min i = 70…99 (3 in 30: 2); 10 s i = 95…99 (none: 0).
// Only budget-leak fires (2 > 1 on both windows); the pages need 14.4 and 6.
const WORKBOOK_24H = [
  { name: 'fast-burn', severity: 'page', longWindowMs: 120_000, shortWindowMs: 10_000, burnRate: 14.4, minEvents: 10 },
  { name: 'slow-burn', severity: 'page', longWindowMs: 720_000, shortWindowMs: 60_000, burnRate: 6, minEvents: 10 },
  { name: 'budget-leak', severity: 'ticket', longWindowMs: 8_640_000, shortWindowMs: 720_000, burnRate: 1, minEvents: 10 },
]

function sampleTracker() {
  const tracker = new ErrorBudgetTracker({ windowMs: DAY, clock: 'manual', alerts: WORKBOOK_24H })
  for (let i = 0; i < 100; i++) tracker.record(i % 10 !== 0, i * 2000)
  return tracker
}

const burn = (failures, total) => failures / (total * (1 - 0.95))

test('metrics(): the exposition of a hand-worked tracker, line by line', (t) => {
  const tracker = sampleTracker()
  const l = 'name="turnstile",pool="b",region="eu"'
  t.is(
    tracker.metrics({ name: 'turnstile', labels: { region: 'eu', pool: 'b' } }),
    [
      '# HELP captcha_budget_solves_total CAPTCHA solves recorded by the tracker since it was created or restored in this process, by outcome; never reset by the window.',
      '# TYPE captcha_budget_solves_total counter',
      `captcha_budget_solves_total{${l},outcome="success"} 90`,
      `captcha_budget_solves_total{${l},outcome="failure"} 10`,
      '# HELP captcha_budget_rejections_total Solves counted as successes that the target site rejected later (reject()) in this process; each is a failure in the window.',
      '# TYPE captcha_budget_rejections_total counter',
      `captcha_budget_rejections_total{${l}} 0`,
      "# HELP captcha_budget_window_solves Solves inside the tracker's rolling window.",
      '# TYPE captcha_budget_window_solves gauge',
      `captcha_budget_window_solves{${l}} 100`,
      "# HELP captcha_budget_window_failures Failed solves inside the tracker's rolling window.",
      '# TYPE captcha_budget_window_failures gauge',
      `captcha_budget_window_failures{${l}} 10`,
      '# HELP captcha_budget_objective_ratio The SLO target: the fraction of solves that must succeed.',
      '# TYPE captcha_budget_objective_ratio gauge',
      `captcha_budget_objective_ratio{${l}} 0.95`,
      "# HELP captcha_budget_remaining_ratio Fraction of the window's error budget left, 0 to 1.",
      '# TYPE captcha_budget_remaining_ratio gauge',
      `captcha_budget_remaining_ratio{${l}} 0`,
      "# HELP captcha_budget_burn_rate Burn rate over the tracker's whole window: 1 spends the budget exactly over the window.",
      '# TYPE captcha_budget_burn_rate gauge',
      `captcha_budget_burn_rate{${l}} ${burn(10, 100)}`,
      '# HELP captcha_budget_alert_window_burn_rate Burn rate over each window of the alert policy.',
      '# TYPE captcha_budget_alert_window_burn_rate gauge',
      `captcha_budget_alert_window_burn_rate{${l},window="10s"} 0`,
      `captcha_budget_alert_window_burn_rate{${l},window="1m"} ${burn(3, 30)}`,
      `captcha_budget_alert_window_burn_rate{${l},window="2m"} ${burn(6, 60)}`,
      `captcha_budget_alert_window_burn_rate{${l},window="12m"} ${burn(10, 100)}`,
      `captcha_budget_alert_window_burn_rate{${l},window="144m"} ${burn(10, 100)}`,
      '# HELP captcha_budget_status Budget status: 1 for the current one, 0 for the others.',
      '# TYPE captcha_budget_status gauge',
      `captcha_budget_status{${l},status="healthy"} 0`,
      `captcha_budget_status{${l},status="warning"} 0`,
      `captcha_budget_status{${l},status="critical"} 0`,
      `captcha_budget_status{${l},status="exhausted"} 1`,
      '# HELP captcha_budget_alert_firing Each pair of the alert policy: 1 while it fires.',
      '# TYPE captcha_budget_alert_firing gauge',
      `captcha_budget_alert_firing{${l},alert="fast-burn",severity="page"} 0`,
      `captcha_budget_alert_firing{${l},alert="slow-burn",severity="page"} 0`,
      `captcha_budget_alert_firing{${l},alert="budget-leak",severity="ticket"} 1`,
      '# HELP captcha_budget_insufficient_data 1 while the tracker has too few events to judge (no alert can fire).',
      '# TYPE captcha_budget_insufficient_data gauge',
      `captcha_budget_insufficient_data{${l}} 0`,
      '# HELP captcha_budget_guard_attempts_total Solve attempts tracker.guard() admitted (ran) or refused (while the budget was exhausted: throttled or refused) in this process.',
      '# TYPE captcha_budget_guard_attempts_total counter',
      `captcha_budget_guard_attempts_total{${l},decision="admitted"} 0`, // no guard() ran on it
      `captcha_budget_guard_attempts_total{${l},decision="refused"} 0`,
      "# HELP captcha_budget_throttle_state tracker.guard()'s state: 1 for the current one (open, admitting, throttled, refusing), 0 for the others; all 0 before the first guard().",
      '# TYPE captcha_budget_throttle_state gauge',
      `captcha_budget_throttle_state{${l},state="open"} 0`,
      `captcha_budget_throttle_state{${l},state="admitting"} 0`,
      `captcha_budget_throttle_state{${l},state="throttled"} 0`,
      `captcha_budget_throttle_state{${l},state="refusing"} 0`,
      "# HELP captcha_budget_excluded_total Attempts tracker.guard() ran that were the caller's or the account's problem (outcome excluded: neither a solve nor a failure) in this process.",
      '# TYPE captcha_budget_excluded_total counter',
      `captcha_budget_excluded_total{${l}} 0`,
      '# HELP captcha_budget_capacity_total Attempts tracker.guard() ran that the provider turned away for want of a free worker, thread or slot (outcome capacity: neither a solve nor a failure) in this process.',
      '# TYPE captcha_budget_capacity_total counter',
      `captcha_budget_capacity_total{${l}} 0`,
      '',
    ].join('\n'),
  )
})

test('the counters are never reset by the window; the gauges follow it', (t) => {
  const tracker = sampleTracker()
  tracker.advanceTo(198_000 + DAY) // every solve has left the window
  const lines = tracker.metrics().split('\n')
  const value = (series) => lines.find((line) => line.startsWith(`${series} `))?.split(' ')[1]
  t.is(value('captcha_budget_solves_total{name="default",outcome="success"}'), '90')
  t.is(value('captcha_budget_solves_total{name="default",outcome="failure"}'), '10')
  t.is(value('captcha_budget_window_solves{name="default"}'), '0')
  t.is(value('captcha_budget_remaining_ratio{name="default"}'), '1')
  t.is(value('captcha_budget_burn_rate{name="default"}'), '0')
  t.is(value('captcha_budget_status{name="default",status="healthy"}'), '1')
  t.is(value('captcha_budget_alert_firing{name="default",alert="budget-leak",severity="ticket"}'), '0')
  t.is(value('captcha_budget_insufficient_data{name="default"}'), '1')
  // A replayed solve older than the window is dropped from the window but counted.
  tracker.record(false, 0)
  t.is(tracker.report().dropped, 1)
  t.true(tracker.metrics().includes('captcha_budget_solves_total{name="default",outcome="failure"} 11\n'))
})

test('metrics is a method on the prototype, not an own or enumerable property; works after close()', (t) => {
  const tracker = sampleTracker()
  t.false(Object.keys(ErrorBudgetTracker.prototype).includes('metrics'))
  t.false(Object.hasOwn(tracker, 'metrics'))
  tracker.close()
  t.regex(tracker.metrics(), /captcha_budget_window_solves\{name="default"\} 100\n/)
  t.is(METRICS_CONTENT_TYPE, 'text/plain; version=0.0.4; charset=utf-8')
})

test('renderMetrics: several trackers share a scrape, each family once; label values are escaped', (t) => {
  const a = sampleTracker()
  const b = new ErrorBudgetTracker({ targetRate: 0.9, clock: 'manual', alerts: [] })
  b.record(false, 0)
  const text = renderMetrics([
    { tracker: a, name: 'turnstile' },
    { tracker: b, name: 'image "v2"\\\n' },
  ])
  t.is(text.match(/^# TYPE captcha_budget_window_solves gauge$/gm).length, 1)
  t.true(text.includes('captcha_budget_window_solves{name="turnstile"} 100\ncaptcha_budget_window_solves{name="image \\"v2\\"\\\\\\n"} 1\n'))
  t.true(text.includes('captcha_budget_objective_ratio{name="image \\"v2\\"\\\\\\n"} 0.9\n'))
  // No policy, no per-window burn or alert series for b.
  t.false(/alert_firing\{name="image/.test(text))
})

withBinary(test, promtool)('promtool check metrics accepts the exposition (and flags a broken one)', async (t) => {
  t.truthy(promtool, 'promtool is not installed: apt-get install -y prometheus (.ci/run does)')
  if (!promtool) return
  const a = sampleTracker()
  const b = new ErrorBudgetTracker({ clock: 'manual' })
  const text = renderMetrics([
    { tracker: a, name: 'turnstile', labels: { region: 'eu' } },
    { tracker: b, name: 'recaptcha "v3"', labels: { region: 'us' } },
  ])
  const ok = await run(promtool, ['check', 'metrics'], { input: text })
  t.is(ok.code, 0, ok.stdout + ok.stderr)
  t.is(ok.stdout + ok.stderr, '')
  // The same text with the counter typed as a gauge: promtool objects to the _total name.
  const broken = await run(promtool, ['check', 'metrics'], { input: text.replace('captcha_budget_solves_total counter', 'captcha_budget_solves_total gauge') })
  t.not(broken.code, 0)
  t.regex(broken.stdout + broken.stderr, /non-counter metrics should not have "_total" suffix/)
})

const badOptions = [
  [
    () => sampleTracker().metrics({ labels: { 'bad-name': 'x' } }),
    TypeError,
    "metrics(options): options.labels: 'bad-name' is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, no leading __)",
    'ERR_INVALID_ARG_VALUE',
  ],
  [
    () => sampleTracker().metrics({ labels: { __meta: 'x' } }),
    TypeError,
    "metrics(options): options.labels: '__meta' is not a Prometheus label name",
    'ERR_INVALID_ARG_VALUE',
  ],
  [() => sampleTracker().metrics({ labels: { outcome: 'x' } }), TypeError, "metrics(options): options.labels: 'outcome' is reserved", 'ERR_INVALID_ARG_VALUE'],
  [() => sampleTracker().metrics({ labels: { region: 1 } }), TypeError, 'metrics(options): options.labels.region must be a string, got number'],
  [() => sampleTracker().metrics({ name: '' }), TypeError, 'metrics(options): options.name must be a non-empty string, got string'],
  [
    () => sampleTracker().metrics({ nmae: 'x' }),
    TypeError,
    "unknown key 'nmae' in metrics(options): options; known keys: name, labels",
    'ERR_INVALID_ARG_VALUE',
  ],
  [() => sampleTracker().metrics('turnstile'), TypeError, 'metrics(options): options must be an object, got string'],
  [() => ErrorBudgetTracker.prototype.metrics.call({}), TypeError, 'metrics(): this must be an ErrorBudgetTracker, got object'],
  [() => renderMetrics('x'), TypeError, 'renderMetrics(sources): sources must be an array, got string'],
  [() => renderMetrics([{ tracker: {} }]), TypeError, 'renderMetrics(sources): sources[0].tracker must be an ErrorBudgetTracker or a BudgetFamily, got object'],
  [
    () => {
      const a = sampleTracker()
      return renderMetrics([
        { tracker: a, name: 'x' },
        { tracker: sampleTracker(), name: 'x' },
      ])
    },
    TypeError,
    'renderMetrics(sources): sources[1]: another tracker already has the labels {"name":"x"}; give each a distinct name',
    'ERR_INVALID_ARG_VALUE',
  ],
]
// [call, error class, message, code (default: by class)]
for (const [call, errorClass, message, code] of badOptions) {
  test(`bad options: ${message.slice(0, 70)}`, (t) => {
    const err = t.throws(call, { instanceOf: errorClass })
    t.true(err.message.startsWith(message), err.message)
    t.is(err.code, code ?? (errorClass === TypeError ? 'ERR_INVALID_ARG_TYPE' : 'ERR_OUT_OF_RANGE'))
  })
}

// Sample lines (not comments), sorted: prom-client puts blank lines between families.
const samples = (text) =>
  text
    .split('\n')
    .filter((line) => line && !line.startsWith('#'))
    .sort()
const comments = (text) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('#'))
    .sort()

test('registerMetrics: the same series through a prom-client Registry; nothing in the global one', async (t) => {
  const globalBefore = await globalRegistry.metrics()
  const registry = new Registry()
  const a = sampleTracker()
  const b = new ErrorBudgetTracker({ clock: 'manual' })
  b.record(false, 0)
  registerMetrics(a, registry, { name: 'turnstile', labels: { region: 'eu' } })
  const unregister = registerMetrics(b, registry, { name: 'recaptcha', labels: { region: 'eu' } })
  const expected = renderMetrics([
    { tracker: a, name: 'turnstile', labels: { region: 'eu' } },
    { tracker: b, name: 'recaptcha', labels: { region: 'eu' } },
  ])
  const got = await registry.metrics()
  t.deepEqual(samples(got), samples(expected))
  t.deepEqual(comments(got), comments(expected))
  t.is(await globalRegistry.metrics(), globalBefore)
  // Collected at each scrape: a new solve shows up without registering again.
  a.record(false, 200_000)
  t.true((await registry.metrics()).includes('captcha_budget_solves_total{name="turnstile",region="eu",outcome="failure"} 11'))
  unregister()
  t.false((await registry.metrics()).includes('recaptcha'))
})

test('registerMetrics: bad registry, duplicate tracker, other label names, a clashing metric', (t) => {
  const tracker = sampleTracker()
  t.throws(() => registerMetrics(tracker, undefined), {
    instanceOf: TypeError,
    message: 'registerMetrics(tracker, registry): registry must be a prom-client Registry (new Registry(), or register for the global one), got undefined',
  })
  t.throws(() => registerMetrics({}, new Registry()), {
    instanceOf: TypeError,
    message: 'registerMetrics(tracker, registry): tracker must be an ErrorBudgetTracker, got object',
  })
  const registry = new Registry()
  const unregister = registerMetrics(tracker, registry, { name: 'x' })
  t.throws(() => registerMetrics(sampleTracker(), registry, { name: 'x' }), {
    message: 'registerMetrics: a tracker with the labels {"name":"x"} is already registered in this registry',
  })
  t.throws(() => registerMetrics(sampleTracker(), registry, { name: 'y', labels: { region: 'eu' } }), {
    message:
      "registerMetrics: trackers in one registry need the same label names; registered: [], given: [region]; register the ones before with labels: { region: 'all' } (docs/prometheus.md#several-budgets-in-one-scrape)",
  })
  unregister()
  t.deepEqual(registry.getMetricsAsArray(), [])
  // A registry that already has one of the names: refused, and left as it was.
  const taken = new Registry()
  new Gauge({ name: 'captcha_budget_status', help: 'mine', registers: [taken] })
  t.throws(() => registerMetrics(tracker, taken), { message: /captcha_budget_status has already been registered/ })
  t.deepEqual(
    taken.getMetricsAsArray().map((m) => m.name),
    ['captcha_budget_status'],
  )
})
