'use strict'
// Fault attribution in a BudgetFamily whose labels name the provider and the site
// (`attribution: { provider: '<label name>', site: '<label name>' }`): is a child's
// trouble its provider's (fail over) or its site's (failing over burns the next
// provider's budget too)?
//
// The statistics, for the child of provider p and site s, on the window counts of
// every child (other labels summed over; the sums are lib/family/attribution-counts.js's),
// with 2×2 tables (suspect or not) × (failed or not):
// - the provider test: over every site but s, p's failures against the other
//   providers' (the site in question is left out, so that its own trouble cannot
//   make the provider look bad);
// - the site test: on each provider that solved for s, s's failures against that
//   provider's other sites. It finds when it finds on every such provider, and
//   there are at least two: a site fails *across* providers (one provider failing
//   on one site alone is no one's fault that the counts can tell).
// Each table is a likelihood-ratio (G) test of independence: G = 2 Σ O ln(O / E),
// with E the count expected were the failure rate the same in both rows. It finds
// when the suspect's failure rate is the higher one and G > 10.83 (χ² with one
// degree of freedom at 99.9 %: a family asked on every incident of many children
// should not blame by chance). Blame goes to the suspect whose test finds alone;
// when both find (a provider failing everywhere and a site failing on every
// provider) or neither does (too few solves, one child failing alone), the
// evidence does not single one out: null.
const { describe, invalidArgType, invalidArgValue, unknownKey } = require('../util/errors.js')

/** χ² with one degree of freedom, 99.9 %. */
const CRITICAL_G = 10.828

/**
 * `options.attribution`, checked against the family's label names.
 * @returns {Readonly<{ provider: string, site: string }> | null}
 */
function checkAttribution(attribution, labelNames, where) {
  if (attribution === undefined) return null
  if (attribution === null || typeof attribution !== 'object' || Array.isArray(attribution)) {
    throw invalidArgType(`${where} must be an object { provider, site }, got ${describe(attribution)}`)
  }
  for (const key of Object.keys(attribution)) {
    if (key !== 'provider' && key !== 'site') throw unknownKey(key, ['provider', 'site'], where)
  }
  for (const key of ['provider', 'site']) {
    const name = attribution[key]
    if (typeof name !== 'string') throw invalidArgType(`${where}.${key} must be a label name (a string), got ${describe(name)}`)
    if (!labelNames.includes(name)) {
      throw invalidArgValue(`${where}.${key} must be one of the family's labelNames (${labelNames.join(', ')}), got '${name}'`)
    }
  }
  if (attribution.provider === attribution.site) {
    throw invalidArgValue(`${where}: provider and site must be two different labels, got '${attribution.site}' for both`)
  }
  return Object.freeze({ provider: attribution.provider, site: attribution.site })
}

/** G of the 2×2 table [[aFailed, aOk], [bFailed, bOk]]. */
function gStatistic(aFailed, aOk, bFailed, bOk) {
  const n = aFailed + aOk + bFailed + bOk
  const rows = [aFailed + aOk, bFailed + bOk]
  const columns = [aFailed + bFailed, aOk + bOk]
  const cells = [
    [aFailed, aOk],
    [bFailed, bOk],
  ]
  let g = 0
  for (let i = 0; i < 2; i++) {
    for (let j = 0; j < 2; j++) {
      const observed = cells[i][j]
      if (observed > 0) g += observed * Math.log((observed * n) / (rows[i] * columns[j]))
    }
  }
  return 2 * g
}

/** Whether the suspect row fails more often than the rest, and significantly so. */
function finds(suspect, rest) {
  const suspectTotal = suspect.failed + suspect.ok
  const restTotal = rest.failed + rest.ok
  if (suspectTotal === 0 || restTotal === 0) return false
  // suspect.failed / suspectTotal > rest.failed / restTotal, without division.
  if (suspect.failed * restTotal <= rest.failed * suspectTotal) return false
  return gStatistic(suspect.failed, suspect.ok, rest.failed, rest.ok) > CRITICAL_G
}

/**
 * Who is at fault for the child of `labels` (its provider and site values):
 * `{ label, value }` (the label's name and value), or null.
 * @param {{ provider: Table, sites: Table[] }} tables the provider test, and the site test on each provider
 *   (AttributionCounts#tables), each `Table` `{ suspect, rest }` of `{ ok, failed }`
 * @param {{ provider: string, site: string }} attribution
 * @param {object} labels
 */
function blameOf(tables, attribution, labels) {
  const provider = finds(tables.provider.suspect, tables.provider.rest)
  const solvedFor = tables.sites.filter((t) => t.suspect.failed + t.suspect.ok > 0)
  const site = solvedFor.length >= 2 && solvedFor.every((t) => finds(t.suspect, t.rest))
  if (provider === site) return null
  return provider ? { label: attribution.provider, value: labels[attribution.provider] } : { label: attribution.site, value: labels[attribution.site] }
}

module.exports = { checkAttribution, blameOf, gStatistic, CRITICAL_G }
