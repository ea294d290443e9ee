'use strict'
// `captcha-budget gate --redis <url> --key <key> --labels type=turnstile,site=x`: the
// deploy gate for one child of a BudgetFamily fleet (lib/fleet/family-store.js), or, without
// --labels, for its worst child. Read-only, like the single-budget gate (redis.js,
// whose connection, redis-client.js, it uses); each child is judged by the family's stored options.
const { familyKeysOf, corruptCountText, labelText, excerpt } = require('../../fleet/family-store.js')
const { ErrorBudgetTracker } = require('../../tracker/tracker.js')
const { connect } = require('./redis-client.js')

/** The most one recordMany() takes of an outcome: a stored count above it goes in parts. */
const MAX_RECORD = 0xffff_ffff

/** Redis's values read as the gate needs them, or an Error ending "the key is corrupt" (as gate.js words it). */
const corruptKey = (why) => new Error(`${why}; the key is corrupt`)

/** The stored config (JSON, labelNames first) as { labelNames, config }. */
function storedConfig(text) {
  let parsed
  try {
    parsed = JSON.parse(text)
  } catch {
    throw corruptKey(`the stored config is not JSON (${excerpt(text)})`)
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw corruptKey(`the stored config is not an object (${excerpt(text)})`)
  const { labelNames, ...config } = parsed
  if (!Array.isArray(labelNames) || labelNames.length === 0 || !labelNames.every((n) => typeof n === 'string')) {
    throw corruptKey(`the stored config has no labelNames (a list of names): ${excerpt(text)}`)
  }
  return { labelNames, config }
}

/**
 * The report now of the child of `labels` (an object, or undefined for the worst
 * child) of family fleet `key`, with `labels` and `fleet: { key, bucketMs, children }`.
 */
async function familyReport(url, key, labels) {
  const client = await connect(url)
  let fields
  try {
    fields = await client.send(['HGETALL', familyKeysOf(key)[0]])
  } finally {
    client.close()
  }
  const hash = new Map()
  for (let i = 0; i < fields.length; i += 2) hash.set(String(fields[i]), String(fields[i + 1]))
  if (!hash.has('config')) throw new Error(`no family budget '${key}' in Redis (no worker synced it within its window)`)
  const { labelNames, config } = storedConfig(hash.get('config'))
  const width = hash.get('width')
  const bucketMs = Number(width)
  if (!/^\d+$/.test(width ?? '') || !Number.isSafeInteger(bucketMs) || bucketMs === 0)
    throw corruptKey(`Redis holds ${excerpt(width)} for the bucket width (field width)`)
  if (labels !== undefined) {
    const names = Object.keys(labels)
    if (names.length !== labelNames.length || !labelNames.every((n) => names.includes(n))) {
      throw new Error(`--labels must name exactly the family's labels: ${labelNames.join(', ')}`)
    }
  }
  const want = labels === undefined ? null : JSON.stringify(Object.fromEntries(labelNames.map((n) => [n, labels[n]])))
  const now = Date.now()
  // Each child's buckets inside the window, by child.
  const byChild = new Map()
  for (const [field, value] of hash) {
    const m = /^([sf])(-?\d+)\n(.*)$/s.exec(field)
    if (m === null) continue
    // Every count, in the window or not: the range of the workers' (family-sync.js) and snapshots'.
    if (!/^\d+$/.test(value) || !(Number(value) <= Number.MAX_SAFE_INTEGER)) throw new Error(corruptCountText(m[1], m[2], m[3], value))
    if (Number(value) === 0) continue
    const at = Number(m[2]) * bucketMs
    if (at <= now - config.windowMs || (want !== null && m[3] !== want)) continue
    let list = byChild.get(m[3])
    if (list === undefined) byChild.set(m[3], (list = []))
    list.push([m[1], Number(value), Math.min(at, now)])
  }
  if (want !== null && !byChild.has(want)) {
    // A child is in Redis while any of its buckets is (its window with no solves in it: judged empty).
    const children = new Set()
    for (const field of hash.keys()) {
      const m = /^[sf]-?\d+\n(.*)$/s.exec(field)
      if (m !== null) children.add(m[1])
    }
    if (!children.has(want)) {
      const text = labelText
      const listed = [...children].sort().slice(0, 5).map(text)
      const more = children.size > listed.length ? `, … (${children.size} in all)` : ''
      const which = children.size === 0 ? 'it has none' : `its children: ${listed.join('; ')}${more}`
      throw new Error(`the family budget '${key}' has no child ${text(want)} (no worker synced one within the window); ${which}`)
    }
    byChild.set(want, [])
  }
  // As redis.js: each child restored from an empty snapshot of the stored config
  // (a snapshot's config, its alert policy resolved), then its buckets recorded.
  const empty = JSON.stringify({
    format: 'captcha-error-budget.snapshot',
    version: 1,
    savedAt: now,
    config,
    lastStatus: 'healthy',
    dropped: 0,
    recorded: { successes: 0, failures: 0 },
    totals: { successes: 0, failures: 0 },
    buckets: [],
  })
  const rows = []
  for (const [child, list] of byChild) {
    let labelsOfChild
    try {
      labelsOfChild = JSON.parse(child)
    } catch {}
    if (labelsOfChild === null || typeof labelsOfChild !== 'object' || Array.isArray(labelsOfChild))
      throw corruptKey(`Redis holds a child ${excerpt(child)} that is no labels object (JSON)`)
    const tracker = ErrorBudgetTracker.restore(empty, { clock: 'manual', now })
    try {
      for (const [kind, count, at] of list) {
        // A fleet bucket may hold more than one recordMany() takes (up to 2^53 − 1).
        for (let left = count; left > 0; left -= MAX_RECORD) {
          const n = Math.min(left, MAX_RECORD)
          tracker.recordMany(kind === 's' ? n : 0, kind === 'f' ? n : 0, at)
        }
      }
    } catch (err) {
      tracker.close()
      // Counts each in range that add up past 2^53 − 1 in the window.
      throw corruptKey(`the counts of the child ${labelText(child)} add up past what a window holds (${err.message})`)
    }
    rows.push({ report: { labels: labelsOfChild, ...tracker.report() }, left: tracker.remainingFraction, burn: tracker.burnRate, child })
    tracker.close()
  }
  if (rows.length === 0) throw new Error(`the family budget '${key}' has no solves in its window`)
  // Worst first, as family.report(): least budget left, then highest burn rate (then by labels).
  rows.sort((a, b) => a.left - b.left || b.burn - a.burn || (a.child < b.child ? -1 : 1))
  const report = rows[0].report
  report.fleet = { key, bucketMs, children: rows.length }
  return report
}

module.exports = { familyReport }
