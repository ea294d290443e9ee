'use strict'
// family.blame() worked out naively, over every child's window counts (issue 44,
// item 10): the G test of lib/providers/blame.js's header, with this file's own arithmetic,
// for the specs that compare blame() with it after each way a child's counts change.
// The family's attribution labels must be named provider and site.

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

/** Compares family.blame() of every (provider, site) with the recount; `rest` the other labels. Returns what was seen. */
function expectRecount(t, family, providers, sites, rest = {}, note = '') {
  const seen = { provider: 0, site: 0, null: 0 }
  for (const provider of providers) {
    for (const site of sites) {
      const expected = recount(family, provider, site)
      seen[expected === null ? 'null' : expected.label]++
      t.deepEqual(family.blame({ provider, site, ...rest }), expected, `${note}: (${provider}, ${site})`)
    }
  }
  return seen
}

module.exports = { recount, expectRecount }
