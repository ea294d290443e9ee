const test = require('ava')
const { Registry } = require('prom-client')
const { BudgetFamily, registerMetrics } = require('../..')
const { promtool, withBinary, run } = require('../fixtures/prometheus-tools')

// Two children at 95 %: turnstile/shop with 9 successes and 1 failure
// (burn 0.1 / 0.05 = 2, 10 × 0.05 = 0.5 failures allowed: exhausted, 0 left),
// image/"quoted" with 4 successes (burn 0, all left).
function sampleFamily() {
  const family = new BudgetFamily({ labelNames: ['type', 'site'], clock: 'manual', name: 'solves', alerts: [] })
  for (let i = 0; i < 9; i++) family.record({ type: 'turnstile', site: 'shop.example' }, true, 1000)
  family.record({ type: 'turnstile', site: 'shop.example' }, false, 1000)
  for (let i = 0; i < 4; i++) family.record({ type: 'image', site: 'a "quoted" site' }, true, 1000)
  return family
}

const samples = (text) => text.split('\n').filter((line) => line && !line.startsWith('#'))

test('family.metrics(): every child series carries the family name and the child labels', (t) => {
  const family = sampleFamily()
  const lines = samples(family.metrics())
  const shop = 'name="solves",site="shop.example",type="turnstile"'
  const image = 'name="solves",site="a \\"quoted\\" site",type="image"'
  for (const line of [
    `captcha_budget_solves_total{${shop},outcome="success"} 9`,
    `captcha_budget_solves_total{${shop},outcome="failure"} 1`,
    `captcha_budget_solves_total{${image},outcome="success"} 4`,
    `captcha_budget_window_solves{${shop}} 10`,
    `captcha_budget_window_failures{${shop}} 1`,
    `captcha_budget_remaining_ratio{${shop}} 0`,
    `captcha_budget_status{${shop},status="exhausted"} 1`,
    `captcha_budget_remaining_ratio{${image}} 1`,
    `captcha_budget_status{${image},status="healthy"} 1`,
  ]) {
    t.true(lines.includes(line), line)
  }
  // 0.1 / (1 − 0.95) in floating point: 2 within a few ulps.
  const burn = lines.find((l) => l.startsWith(`captcha_budget_burn_rate{${shop}} `))
  t.true(Math.abs(Number(burn.split(' ')[1]) - 2) < 1e-9, burn)
  // One HELP per metric, not one per child.
  t.is(
    family
      .metrics()
      .split('\n')
      .filter((l) => l === '# TYPE captcha_budget_window_solves gauge').length,
    1,
  )
  family.close()
})

withBinary(test, promtool)('promtool check metrics accepts a family exposition', async (t) => {
  t.truthy(promtool, 'promtool is not installed: apt-get install -y prometheus (.ci/run does)')
  if (!promtool) return
  const family = sampleFamily()
  const ok = await run(promtool, ['check', 'metrics'], { input: family.metrics() })
  t.is(ok.code, 0, ok.stdout + ok.stderr)
  t.is(ok.stdout + ok.stderr, '')
  family.close()
})

test('registerMetrics(family, registry) reads the children at each scrape, a child created later included', async (t) => {
  const family = sampleFamily()
  const registry = new Registry()
  const unregister = registerMetrics(family, registry, { labels: { region: 'eu' } })
  let text = await registry.metrics()
  t.true(text.includes('captcha_budget_window_solves{name="solves",region="eu",site="shop.example",type="turnstile"} 10'), text)
  family.record({ type: 'recaptcha', site: 'late.example' }, false, 2000)
  text = await registry.metrics()
  t.true(text.includes('captcha_budget_window_failures{name="solves",region="eu",site="late.example",type="recaptcha"} 1'), text)
  t.true(text.includes('captcha_budget_window_solves{name="solves",region="eu",site="shop.example",type="turnstile"} 10'))
  t.throws(() => registerMetrics(family, new Registry(), { name: 'x' }), { code: 'ERR_INVALID_ARG_VALUE', message: /the name label is the family's/ })
  t.throws(() => registerMetrics(family, new Registry(), { labels: { site: 'x' } }), {
    code: 'ERR_INVALID_ARG_VALUE',
    message: /'site' is one of the family's label names/,
  })
  unregister()
  t.is(await registry.metrics(), '\n')
  family.close()
})
