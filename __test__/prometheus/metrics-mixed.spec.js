// A BudgetFamily and plain trackers in one scrape (issue 35): renderMetrics() takes
// a family as a source, each metric's HELP/TYPE comes once, and a registry that
// refuses a tracker for its label names says which labels to give it.
const test = require('ava')
const { Registry } = require('prom-client')
const { BudgetFamily, ErrorBudgetTracker, renderMetrics, registerMetrics } = require('../..')
const { promtool, withBinary, run } = require('../fixtures/prometheus-tools')

function budgets(t) {
  const family = new BudgetFamily({ name: 'solves', labelNames: ['type', 'site'], clock: 'manual' })
  family.labels({ type: 'turnstile', site: 'a.example' }).recordMany(9, 1)
  family.labels({ type: 'image', site: 'b.example' }).recordMany(4, 0)
  const checkout = new ErrorBudgetTracker({ clock: 'manual' })
  checkout.recordMany(3, 1)
  t.teardown(() => {
    family.close()
    checkout.close()
  })
  return { family, checkout, all: { name: 'checkout', labels: { type: 'all', site: 'all' } } }
}

const series = (text) => text.split('\n').filter((line) => line !== '' && !line.startsWith('#'))

test('renderMetrics([{ tracker: family }, { tracker, name, labels }]): every HELP and TYPE once, the series of both', (t) => {
  const { family, checkout, all } = budgets(t)
  const text = renderMetrics([{ tracker: family }, { tracker: checkout, ...all }])
  const helps = text.split('\n').filter((line) => line.startsWith('# HELP '))
  t.is(helps.length, new Set(helps).size)
  t.is(helps.length, 15) // the fifteen metrics of tracker.metrics(): twelve, excluded, capacity, rejections
  // The same series as family.metrics() and checkout.metrics(all), only without the second HELP/TYPE.
  t.deepEqual(series(text).sort(), [...series(family.metrics()), ...series(checkout.metrics(all))].sort())
  t.true(text.includes('captcha_budget_window_solves{name="solves",site="a.example",type="turnstile"} 10\n'))
  t.true(text.includes('captcha_budget_window_failures{name="checkout",site="all",type="all"} 1\n'))
  // Constant labels on a family's children; a closed family adds nothing.
  t.true(
    renderMetrics([{ tracker: family, labels: { region: 'eu' } }]).includes(
      'captcha_budget_window_solves{name="solves",region="eu",site="b.example",type="image"} 4\n',
    ),
  )
  const closed = new BudgetFamily({ labelNames: ['type'] })
  closed.close()
  t.deepEqual(series(renderMetrics([{ tracker: closed }, { tracker: checkout, ...all }])), series(checkout.metrics(all)))
})

test('renderMetrics with a family: bad sources are the same coded errors', (t) => {
  const { family, checkout } = budgets(t)
  t.throws(() => renderMetrics([{ tracker: family, name: 'x' }]), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_VALUE',
    message: /unknown key 'name' in renderMetrics\(sources\): sources\[0\]; known keys: labels \(the name label is the family's\)/,
  })
  t.throws(() => renderMetrics([{ tracker: family, labels: { site: 'x' } }]), {
    code: 'ERR_INVALID_ARG_VALUE',
    message: /'site' is one of the family's label names/,
  })
  // A tracker with the labels of one of the family's children.
  t.throws(() => renderMetrics([{ tracker: family }, { tracker: checkout, name: 'solves', labels: { type: 'image', site: 'b.example' } }]), {
    code: 'ERR_INVALID_ARG_VALUE',
    message: /sources\[1\]: another tracker already has the labels/,
  })
  t.throws(() => renderMetrics([{ tracker: 5 }]), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_TYPE',
    message: 'renderMetrics(sources): sources[0].tracker must be an ErrorBudgetTracker or a BudgetFamily, got number',
  })
})

test("registerMetrics: a tracker without the family's label names is refused with the labels to give it; with them it registers", async (t) => {
  const { family, checkout, all } = budgets(t)
  const registry = new Registry()
  registerMetrics(family, registry)
  t.throws(() => registerMetrics(checkout, registry, { name: 'checkout' }), {
    code: 'ERR_INVALID_ARG_VALUE',
    message:
      "registerMetrics: trackers in one registry need the same label names; registered: [site,type], given: []; give this one labels: { site: 'all', type: 'all' } (docs/prometheus.md#several-budgets-in-one-scrape)",
  })
  registerMetrics(checkout, registry, all)
  const text = await registry.getSingleMetricAsString('captcha_budget_window_solves')
  t.deepEqual(series(text), [
    'captcha_budget_window_solves{name="solves",site="a.example",type="turnstile"} 10',
    'captcha_budget_window_solves{name="solves",site="b.example",type="image"} 4',
    'captcha_budget_window_solves{name="checkout",site="all",type="all"} 4',
  ])
  // The other way round: the plain tracker first, then the family.
  const other = new Registry()
  registerMetrics(checkout, other, { name: 'checkout' })
  t.throws(() => registerMetrics(family, other), {
    message: /registered: \[\], given: \[site,type\]; register the ones before with labels: \{ site: 'all', type: 'all' \}/,
  })
})

withBinary(test, promtool)('promtool check metrics accepts a family and a tracker in one exposition', async (t) => {
  t.truthy(promtool, 'promtool is not installed: apt-get install -y prometheus (.ci/run does)')
  if (!promtool) return
  const { family, checkout, all } = budgets(t)
  const result = await run(promtool, ['check', 'metrics'], { input: renderMetrics([{ tracker: family }, { tracker: checkout, ...all }]) })
  t.is(result.code, 0, result.stdout + result.stderr)
})
