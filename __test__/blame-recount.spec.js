// Issue 44, item 10: family.blame() against a naive recount over every child, after
// random records (through the family and on the children themselves), late verdicts,
// clock moves and evictions. The recount is this spec's own: the G test of
// lib/blame.js's header, worked from `family.children()`'s window counts.
const test = require('ava')
const { BudgetFamily } = require('..')
const { prng } = require('../scripts/prng.js')

const CRITICAL_G = 10.828 // χ²(1) at 99.9 %

function g(a, b) {
  const cells = [
    [a.failed, a.ok],
    [b.failed, b.ok],
  ]
  const n = a.failed + a.ok + b.failed + b.ok
  const rows = [a.failed + a.ok, b.failed + b.ok]
  const columns = [a.failed + b.failed, a.ok + b.ok]
  let sum = 0
  for (let i = 0; i < 2; i++) for (let j = 0; j < 2; j++) if (cells[i][j] > 0) sum += cells[i][j] * Math.log((cells[i][j] * n) / (rows[i] * columns[j]))
  return 2 * sum
}

// Whether the suspect fails at a higher rate than the rest, and G > 10.828.
function worse(suspect, rest) {
  const s = suspect.failed + suspect.ok
  const r = rest.failed + rest.ok
  return s > 0 && r > 0 && suspect.failed / s > rest.failed / r && g(suspect, rest) > CRITICAL_G
}

function recount(family, p, s) {
  const zero = () => ({ failed: 0, ok: 0 })
  const add = (row, c) => {
    row.failed += c.tracker.failures
    row.ok += c.tracker.successes
  }
  // The provider test, over every other site: p against the other providers.
  const mine = zero()
  const others = zero()
  for (const c of family.children()) if (c.labels.site !== s) add(c.labels.provider === p ? mine : others, c)
  // The site test on each provider: s against its other sites.
  const byProvider = new Map()
  for (const c of family.children()) {
    if (!byProvider.has(c.labels.provider)) byProvider.set(c.labels.provider, { site: zero(), rest: zero() })
    add(c.labels.site === s ? byProvider.get(c.labels.provider).site : byProvider.get(c.labels.provider).rest, c)
  }
  const solvedFor = [...byProvider.values()].filter((x) => x.site.failed + x.site.ok > 0)
  const providerFault = worse(mine, others)
  const siteFault = solvedFor.length >= 2 && solvedFor.every((x) => worse(x.site, x.rest))
  if (providerFault === siteFault) return null
  return providerFault ? { label: 'provider', value: p } : { label: 'site', value: s }
}

test('10. blame() equals a naive recount over every child after random records, verdicts, clock moves and evictions', (t) => {
  const random = prng(44)
  const PROVIDERS = ['p0', 'p1', 'p2']
  const SITES = ['s0', 's1', 's2', 's3', 's4', 's5']
  const TYPES = ['image', 'token']
  const family = new BudgetFamily({
    labelNames: ['provider', 'site', 'type'],
    attribution: { provider: 'provider', site: 'site' },
    clock: 'manual',
    windowMs: 300_000,
    resolutionMs: 1000,
    maxChildren: 30,
    alerts: [],
  })
  t.teardown(() => family.close())
  const pick = (list) => list[Math.floor(random() * list.length)]
  // Failure rates that change in phases: a provider's outage, then a site's, then neither.
  const failRate = (phase, provider, site) => (phase === 0 ? (provider === 'p0' ? 0.8 : 0.05) : phase === 1 ? (site === 's3' ? 0.95 : 0.02) : 0.1)
  const seen = { provider: 0, site: 0, null: 0 }
  let now = 0
  for (let step = 0; step < 600; step++) {
    const phase = Math.floor(step / 200)
    const labels = { provider: pick(PROVIDERS), site: pick(SITES), type: pick(TYPES) }
    const r = random()
    try {
      if (r < 0.45) family.record(labels, random() >= failRate(phase, labels.provider, labels.site), now)
      else if (r < 0.75) {
        const ok = Math.floor(random() * 6)
        const failed = Math.round(ok * failRate(phase, labels.provider, labels.site) * 3)
        family.labels(labels).recordMany(ok, failed, now)
      } else if (r < 0.85) family.labels(labels).record(random() >= failRate(phase, labels.provider, labels.site))
      else if (r < 0.9) family.labels(labels).reject(now)
      else {
        now += Math.floor(random() * 20_000)
        family.advanceTo(now)
      }
    } catch (err) {
      // A full family (no child evictable) or a verdict with nothing to turn: both change nothing.
      if (err.code !== 'ERR_OUT_OF_RANGE' && err.code !== 'ERR_INVALID_STATE') throw err
    }
    if (step % 10 === 9) {
      for (const provider of PROVIDERS) {
        for (const site of SITES) {
          const expected = recount(family, provider, site)
          seen[expected === null ? 'null' : expected.label]++
          t.deepEqual(family.blame({ provider, site, type: 'image' }), expected, `step ${step}: (${provider}, ${site})`)
        }
      }
    }
  }
  // Each answer came up, so that the comparisons were not all null.
  t.true(seen.provider > 20 && seen.site > 20 && seen.null > 20, JSON.stringify(seen))
})
