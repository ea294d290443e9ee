'use strict'
// `config.fleet`: its checks. Errors name `config.fleet.<key>` and the allowed values.
const { describe, invalidArgType, invalidArgValue, outOfRange, integerOption, unknownKey } = require('../util/errors.js')
const { clientKind } = require('./store.js')

const KEYS = ['redis', 'key', 'syncMs', 'bucketMs', 'timeoutMs', 'maxSkewMs']
/** The largest `maxSkewMs`: a week (a simulation's manual clocks; production keeps the default). */
const MAX_SKEW_MS = 7 * 86_400_000
// A local file or an in-process registry entry would be restored or shared
// under a fleet that has since moved on, counting its solves twice.
const EXCLUSIVE = ['shared', 'persist', 'snapshot']

/**
 * Checks `config.fleet` (and what it cannot be combined with).
 * @returns {{ redis: object, kind: 'ioredis' | 'node-redis', key: string, syncMs: number, bucketMs: number | undefined, timeoutMs: number, maxSkewMs: number | undefined }}
 */
function checkFleet(config) {
  const fleet = config.fleet
  if (fleet === null || typeof fleet !== 'object' || Array.isArray(fleet)) {
    throw invalidArgType(`config.fleet must be an object { redis, key, syncMs? }, got ${describe(fleet)}`)
  }
  for (const key of Object.keys(fleet)) {
    if (!KEYS.includes(key)) throw unknownKey(key, KEYS, 'config.fleet')
  }
  for (const other of EXCLUSIVE) {
    if (config[other] !== undefined) throw invalidArgValue(`config.fleet cannot be given with config.${other}: the fleet's window lives in Redis`)
  }
  const kind = clientKind(fleet.redis)
  if (kind === null) {
    throw invalidArgType(`config.fleet.redis must be an ioredis client or a node-redis (v5+) client, got ${describe(fleet.redis)}`)
  }
  if (typeof fleet.key !== 'string') throw invalidArgType(`config.fleet.key must be a string, got ${describe(fleet.key)}`)
  if (fleet.key === '' || /[{}]/.test(fleet.key)) {
    throw invalidArgValue(`config.fleet.key must be a non-empty string without '{' or '}' (it becomes the keys' hash tag), got ${JSON.stringify(fleet.key)}`)
  }
  const syncMs = integerOption(fleet.syncMs, 'config.fleet.syncMs', 0, 3_600_000, 1000)
  if (syncMs > 0 && syncMs < 10) throw outOfRange(`config.fleet.syncMs must be 0 (no background sync) or an integer in [10, 3600000], got ${syncMs}`)
  const bucketMs = integerOption(fleet.bucketMs, 'config.fleet.bucketMs', 1, Number.MAX_SAFE_INTEGER, undefined)
  const timeoutMs = integerOption(fleet.timeoutMs, 'config.fleet.timeoutMs', 1, 600_000, Math.max(2 * syncMs, 2000))
  // How far this worker's clock may be from the Redis server's (`TIME`); undefined: the
  // default, known once the window is (sync.js: a tenth of the window, from 1 s to 60 s).
  const maxSkewMs = integerOption(fleet.maxSkewMs, 'config.fleet.maxSkewMs', 0, MAX_SKEW_MS, undefined)
  return { redis: fleet.redis, kind, key: fleet.key, syncMs, bucketMs, timeoutMs, maxSkewMs }
}

module.exports = { checkFleet, KEYS }
