'use strict'
// `captcha-budget gate --redis <url> --key <key>` (hooked in lib/cli/commands/gate.js): the deploy gate for a fleet
// budget (config.fleet). Reads the fleet's buckets and SLO config from Redis
// (read-only: the gate is no worker), rebuilds the window at the current
// time, and answers with gate's exit codes. The Redis client is the caller's
// install of ioredis or node-redis: none is bundled.
const { keysOf, excerpt } = require('../../fleet/store.js')
const { familyKeysOf } = require('../../fleet/family-store.js')
const { redact, redactUrl, urlSecrets } = require('../../util/redact.js')
const { printable } = require('../../util/errors.js')
const { ErrorBudgetTracker, fleetEmptySnapshot } = require('../../tracker/tracker.js')
const { connect } = require('./redis-client.js')
const { familyReport } = require('./redis-family.js')
const { parseLabels } = require('../../util/label-text.js')

/**
 * The fleet budget `key`'s report now, as its workers see it after a sync.
 * @returns {Promise<object>} the report (with `fleet: { key, bucketMs }`)
 */
async function fleetReport(url, key) {
  const client = await connect(url)
  let fields
  let family = 0
  try {
    fields = await client.send(['HGETALL', keysOf(key)[0]])
    // No such fleet budget: a BudgetFamily fleet of that key? (lib/fleet/family-store.js's keys)
    if (fields.length === 0) family = Number(await client.send(['HEXISTS', familyKeysOf(key)[0], 'config']))
  } finally {
    client.close()
  }
  const hash = new Map()
  for (let i = 0; i < fields.length; i += 2) hash.set(String(fields[i]), String(fields[i + 1]))
  if (!hash.has('config')) {
    const hint = family === 1 ? `; '${key}' is a BudgetFamily fleet: add --family (its worst child) or --labels type=…,site=… (one child)` : ''
    throw new Error(`no fleet budget '${key}' in Redis (no worker synced it within its window)${hint}`)
  }
  const bucketMs = Number(hash.get('width'))
  const now = Date.now()
  // The stored config is a snapshot's (the alert policy with its gates), so the
  // tracker is restored from an empty snapshot of it, which the core writes.
  const tracker = ErrorBudgetTracker.restore(fleetEmptySnapshot(hash.get('config'), now), { clock: 'manual', now })
  const windowMs = JSON.parse(hash.get('config')).windowMs
  for (const [field, value] of hash) {
    const m = /^([sf])(-?\d+)$/.exec(field)
    const at = m && Number(m[2]) * bucketMs
    // A fleet bucket counts while its start is inside the window (as on the workers).
    if (m === null) continue
    // The same range as the workers' (and snapshots'): a whole number from 0 to 2^53 − 1.
    if (!/^\d+$/.test(value) || !(Number(value) <= Number.MAX_SAFE_INTEGER)) {
      const what = m[1] === 's' ? 'successes' : 'failures'
      throw new Error(
        `Redis holds ${excerpt(value)} for bucket ${m[2]}'s ${what} (field ${field}): not a whole number from 0 to 2^53 − 1 (${Number.MAX_SAFE_INTEGER}); the key is corrupt`,
      )
    }
    if (at <= now - windowMs || Number(value) === 0) continue
    if (m[1] === 's') tracker.recordMany(Number(value), 0, Math.min(at, now))
    else tracker.recordMany(0, Number(value), Math.min(at, now))
  }
  const report = tracker.report()
  tracker.close()
  report.fleet = { key, bucketMs }
  return report
}

/**
 * gate's action with --redis / --key: the exit code, through `answer`
 * (lib/cli/commands/gate.js), or 2 on bad input.
 */
async function gateRedis(snapshot, options, { answer, EXIT }) {
  if (snapshot !== undefined) return fail('give a snapshot or --redis, not both', EXIT)
  if (typeof options.redis !== 'string' || typeof options.key !== 'string') return fail('--redis <url> and --key <key> go together', EXIT)
  let report
  try {
    // --labels: one child of a BudgetFamily fleet (redis-family.js); --family: its worst child.
    if (options.labels !== undefined || options.family) {
      report = await familyReport(options.redis, options.key, options.labels === undefined ? undefined : parseLabels(options.labels))
    } else {
      report = await fleetReport(options.redis, options.key)
    }
  } catch (err) {
    // The URL's credentials never reach the message (CI logs keep stderr).
    const secrets = urlSecrets(options.redis)
    return fail(`${redactUrl(options.redis, secrets)} ${printable(options.key)}: ${redact(err.message, secrets)}`, EXIT)
  }
  return answer(report, options)
}

function fail(message, EXIT) {
  console.error(`captcha-budget gate: ${message}`)
  return EXIT.badInput
}

module.exports = { gateRedis, fleetReport }
