// Fault attribution in a family of providers × sites: family.blame(labels),
// incident.blame, and createFailover(family, …) failing over on a provider's fault
// and refusing a site's.
const test = require('ava')
const { BudgetFamily, BudgetExhaustedError, FaultError, createFailover } = require('../..')
const { gStatistic, CRITICAL_G } = require('../../lib/providers/blame.js')
const { waitForCalls } = require('../helpers/deliveries')

const SITES = ['s0', 's1', 's2', 's3', 's4', 's5', 's6', 's7', 's8', 'x']
const PAGE = { name: 'page', severity: 'page', longWindowMs: 60_000, shortWindowMs: 5_000, burnRate: 2 }

function family(options = {}) {
  return new BudgetFamily({
    labelNames: ['provider', 'site'],
    attribution: { provider: 'provider', site: 'site' },
    clock: 'manual',
    windowMs: 3_600_000,
    resolutionMs: 1000,
    alerts: [],
    ...options,
  })
}

// 20 solves a child at t = 1000, all failed when `fails(provider, site)` is true, that
// many when it is a number.
function history(f, fails) {
  for (const provider of ['a', 'b']) {
    for (const site of SITES) {
      const answer = fails(provider, site)
      const failed = answer === true ? 20 : answer || 0
      f.labels({ provider, site }).recordMany(20 - failed, failed, 1000)
    }
  }
  f.advanceTo(2000)
}

// A solver over a child's budget: one guard() attempt, failing when `fails(labels)`.
const solvers = (fails) => {
  const make = (tracker, labels) => ({
    solve: (task, options) =>
      tracker.guard(
        async () => {
          if (fails(labels)) throw new Error(`${labels.provider} cannot solve on ${labels.site}`)
          return { token: `${labels.provider}:${labels.site}:${task.id}` }
        },
        { whenExhausted: 'refuse', ...options },
      ),
  })
  return { a: make, b: make }
}

test('the G statistic, by hand', (t) => {
  // [[180, 0], [0, 180]]: every expected count is 90; G = 2 × 360 × ln 2.
  t.is(gStatistic(180, 0, 0, 180), 2 * 360 * Math.log(2))
  // Independent rows: G = 0.
  t.is(gStatistic(2, 8, 4, 16), 0)
  // χ²(1) at 99.9 %.
  t.is(CRITICAL_G, 10.828)
})

test('provider a at 0 % on every site: blame { provider: a }, and the failover goes to b without burning a', async (t) => {
  const f = family()
  history(f, (provider) => provider === 'a')
  // Provider test for (a, s3), over the 9 other sites: a 180 failed of 180, b 0 of 180:
  // G = 2 × 360 × ln 2 = 499 > 10.83, a worse. Site test: on a, s3 20 of 20 against
  // 180 of 180, on b 0 of 20 against 0 of 180: not worse on either.
  t.deepEqual(f.blame({ provider: 'a', site: 's3' }), { label: 'provider', value: 'a' })
  // (b, s3): b is the better provider, and s3 fails on a as a's other sites do: nobody.
  t.is(f.blame({ provider: 'b', site: 's3' }), null)
  const failover = createFailover(f, { providers: solvers(({ provider }) => provider === 'a') })
  const before = f.labels({ provider: 'a', site: 's3' }).report()
  const result = await failover.solve({ id: 1 }, { labels: { site: 's3' } })
  t.deepEqual(result, { token: 'b:s3:1', provider: 'b' })
  t.deepEqual(f.labels({ provider: 'a', site: 's3' }).report(), before, "a's budget for s3: not asked")
  t.like(f.labels({ provider: 'b', site: 's3' }).report(), { successes: 21, failures: 0 })
  f.close()
})

test("site x at 0 % on both providers: blame { site: x }; the failover refuses x and b's budget for x burns no more", async (t) => {
  const f = family()
  history(f, (provider, site) => site === 'x')
  // Provider test for (a, x), over the other sites: a and b both 0 of 180: nothing.
  // Site test: on a and on b, x 20 failed of 20 against 0 of 180: G = 2 × 20 × ln 10 +
  // 2 × 180 × ln(200 / 180) = 130 > 10.83 on both.
  t.deepEqual(f.blame({ provider: 'a', site: 'x' }), { label: 'site', value: 'x' })
  t.deepEqual(f.blame({ provider: 'b', site: 'x' }), { label: 'site', value: 'x' })
  const failover = createFailover(f, { providers: solvers(({ site }) => site === 'x') })
  const bBefore = f.labels({ provider: 'b', site: 'x' }).report()
  const aBefore = f.labels({ provider: 'a', site: 'x' }).report()
  for (let i = 0; i < 5; i++) {
    const err = await t.throwsAsync(failover.solve({ id: i }, { labels: { site: 'x' } }), { instanceOf: FaultError })
    t.is(err.code, 'ESITE_FAULT')
    t.deepEqual(err.blame, { label: 'site', value: 'x' })
    t.regex(err.message, /^site 'x' is at fault/)
  }
  t.deepEqual(f.labels({ provider: 'b', site: 'x' }).report(), bBefore)
  t.deepEqual(f.labels({ provider: 'a', site: 'x' }).report(), aBefore)
  // Another site is solved as ever, by the first provider.
  t.deepEqual(await failover.solve({ id: 9 }, { labels: { site: 's1' } }), { token: 'a:s1:9', provider: 'a' })
  f.close()
})

test('ambiguous evidence: null, and the failover asks the providers in order', async (t) => {
  // One child failing alone: a does well on its other sites, b on x: no one's fault.
  const alone = family()
  history(alone, (provider, site) => provider === 'a' && site === 'x')
  t.is(alone.blame({ provider: 'a', site: 'x' }), null)
  t.is(alone.blame({ provider: 'b', site: 'x' }), null)
  const failover = createFailover(alone, { providers: solvers(({ provider, site }) => provider === 'a' && site === 'x') })
  // a is asked first; its budget for x is spent (20 failures of 20): b solves it.
  t.deepEqual(await failover.solve({ id: 1 }, { labels: { site: 'x' } }), { token: 'b:x:1', provider: 'b' })
  t.like(alone.labels({ provider: 'a', site: 'x' }).report(), { failures: 20, successes: 0 })
  t.like(alone.labels({ provider: 'b', site: 'x' }).report(), { failures: 0, successes: 21 })
  alone.close()
  // Provider a at 50 % on every site and site x at 0 % on both: for (a, x) the provider
  // test finds (a 90 of 180 against b 0 of 180 on the other sites) and so does the site
  // test (x 20 of 20 against 90 of 180 on a: G = 25.7; against 0 of 180 on b):
  // neither is singled out.
  const both = family()
  history(both, (provider, site) => (site === 'x' ? true : provider === 'a' ? 10 : 0))
  t.is(both.blame({ provider: 'a', site: 'x' }), null)
  both.close()
})

test('a provider blamed is still tried when every other budget refuses', async (t) => {
  const f = family()
  history(f, (provider, site) => (provider === 'a' ? true : site === 's1' ? 2 : 0))
  // b's budget for s1 is exhausted (2 failures of 20, budget 1), a is blamed (the site
  // test on b: s1 2 of 20 against 0 of 180, G = 9.4 < 10.83): a is asked last.
  t.deepEqual(f.blame({ provider: 'a', site: 's1' }), { label: 'provider', value: 'a' })
  const failover = createFailover(f, { providers: solvers(() => false) })
  const err = await t.throwsAsync(failover.solve({ id: 1 }, { labels: { site: 's1' } }), { instanceOf: BudgetExhaustedError })
  // Both budgets refused: b's first (asked first), then a's.
  t.is(err.refusals.length, 2)
  f.close()
})

test("family 'incident' listeners get incident.blame", async (t) => {
  const f = family({ alerts: [PAGE] })
  const incidents = []
  f.on('incident', (incident, labels) => incidents.push([labels.provider, labels.site, incident.state, incident.blame]))
  history(f, (provider) => provider === 'a')
  await waitForCalls(incidents, 10)
  // Every child of a opened an incident (burn 20 > 2); each is a's fault.
  t.is(incidents.length, 10)
  for (const [provider, , state, blame] of incidents) {
    t.is(provider, 'a')
    t.is(state, 'open')
    t.deepEqual(blame, { label: 'provider', value: 'a' })
  }
  f.close()
})

test('bad input: attribution and blame() are checked; blame() needs attribution', (t) => {
  const labelNames = ['provider', 'site']
  for (const [attribution, type, code, message] of [
    ['provider', TypeError, 'ERR_INVALID_ARG_TYPE', 'new BudgetFamily(options): options.attribution must be an object { provider, site }, got string'],
    [
      { provider: 'provider' },
      TypeError,
      'ERR_INVALID_ARG_TYPE',
      'new BudgetFamily(options): options.attribution.site must be a label name (a string), got undefined',
    ],
    [
      { provider: 'provider', site: 'region' },
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      "new BudgetFamily(options): options.attribution.site must be one of the family's labelNames (provider, site), got 'region'",
    ],
    [
      { provider: 'site', site: 'site' },
      TypeError,
      'ERR_INVALID_ARG_VALUE',
      "new BudgetFamily(options): options.attribution: provider and site must be two different labels, got 'site' for both",
    ],
  ]) {
    const err = t.throws(() => new BudgetFamily({ labelNames, attribution }), { instanceOf: type })
    t.is(err.code, code)
    t.is(err.message, message)
  }
  const plain = new BudgetFamily({ labelNames })
  t.is(t.throws(() => plain.blame({ provider: 'a', site: 'x' })).code, 'ERR_INVALID_STATE')
  t.is(t.throws(() => createFailover(plain, { providers: solvers(() => false) })).code, 'ERR_INVALID_ARG_VALUE')
  plain.close()
  const f = family()
  t.is(t.throws(() => f.blame({ provider: 'a' })).code, 'ERR_INVALID_ARG_VALUE')
  t.is(f.children().length, 0, 'blame() creates no child')
  f.close()
})

test('BudgetFamily.restore(json, { attribution }): a restored family blames as before', (t) => {
  const f = family()
  history(f, (provider) => provider === 'a')
  const json = f.snapshot()
  f.close()
  const restored = BudgetFamily.restore(json, { attribution: { provider: 'provider', site: 'site' } })
  t.deepEqual(restored.attribution, { provider: 'provider', site: 'site' })
  t.deepEqual(restored.blame({ provider: 'a', site: 's3' }), { label: 'provider', value: 'a' })
  restored.close()
  // Not in the snapshot: restored without it, a family has none.
  const plain = BudgetFamily.restore(json)
  t.is(plain.attribution, null)
  plain.close()
})
