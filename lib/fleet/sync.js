'use strict'
// One tracker's fleet sync: pushes the counts recorded here since the last
// push and installs the fleet's window, in one script call. Pushes are
// numbered per worker; a batch whose reply was lost is sent again with the
// same number until one reply comes back, and the script applies a number
// once, so nothing is counted twice. Failures never reject in the background:
// the tracker keeps its last view (stale) plus its own solves.
const { FleetLoop } = require('./loop.js')
const { approxDuration, humanDuration } = require('../util/duration.js')
const { FIRST, keysOf, runScript, excerpt } = require('./store.js')
const { FleetSyncError, FLEET_WARNING, thrownText } = require('../util/errors.js')
const { sloOf } = require('./link.js')

/** A duration of `ms` (either sign) for the clock messages: "about 2h". */
const about = (ms) => `about ${approxDuration(Math.abs(ms))}`

/** An SLO JSON (store.js) as people read it. */
function sloText(json) {
  let slo
  try {
    slo = JSON.parse(json)
  } catch {
    return json
  }
  const parts = []
  if (slo.targetRate !== undefined) parts.push(`targetRate ${slo.targetRate}`)
  if (slo.windowMs !== undefined) parts.push(`windowMs ${slo.windowMs} (${humanDuration(slo.windowMs)})`)
  if (slo.bucketMs !== undefined) parts.push(`bucketMs ${slo.bucketMs}`)
  // A family's key: its label names too (family-store.js).
  if (slo.labelNames !== undefined) parts.push(`labelNames ${Array.isArray(slo.labelNames) ? slo.labelNames.join(', ') : 'none'}`)
  return parts.join(', ')
}

const MAX_COUNT = Number.MAX_SAFE_INTEGER

/** The store's refusals (store.js: an error reply whose first word says which) as FleetSyncErrors; others as the client's error. */
function syncError(key, cause, maxSkewMs) {
  const text = typeof cause?.message === 'string' ? cause.message : ''
  let m
  if ((m = /\bFLEETCLOCK (-?\d+) (\d+)/.exec(text))) {
    const skewMs = Number(m[1])
    const side = skewMs < 0 ? 'behind' : 'ahead of'
    return new FleetSyncError(
      key,
      cause,
      `this worker's clock is ${skewMs} ms (${about(skewMs)}) ${side} the Redis server's (TIME); config.fleet.maxSkewMs allows ${m[2]} ms: nothing was counted, the counts stay unsent until the clock is right (NTP)`,
      { skewMs },
    )
  }
  if ((m = /\bFLEETBEHIND (-?\d+) (-?\d+) (-?\d+)/.exec(text))) {
    const skewMs = Number(m[3])
    return new FleetSyncError(
      key,
      cause,
      `this worker's clock is behind the fleet's: its bucket ${m[1]} is older than the oldest the store keeps (${m[2]}), ${about(skewMs)} behind the Redis server's (TIME; config.fleet.maxSkewMs allows ${maxSkewMs} ms): nothing was counted, the counts stay unsent`,
      { skewMs },
    )
  }
  if ((m = /\bFLEETSLO (\S+) (\S+)/.exec(text))) {
    return new FleetSyncError(
      key,
      cause,
      `the fleet's SLO is ${sloText(m[1])}; this tracker's is ${sloText(m[2])}: a worker with another SLO cannot share its key`,
    )
  }
  if ((m = /\bFLEETCORRUPT ([sf])(-?\d+) ([0-9a-f]*)/.exec(text))) return corrupt(key, cause, m[1], m[2], Buffer.from(m[3], 'hex').toString())
  return new FleetSyncError(key, cause)
}

/** A bucket's count that is no whole number from 0 to 2^53 − 1. */
function corrupt(key, cause, side, index, value) {
  const what = side === 's' ? 'successes' : 'failures'
  return new FleetSyncError(
    key,
    cause,
    `Redis holds ${excerpt(value)} for bucket ${index}'s ${what} (field ${side}${index}): not a whole number from 0 to 2^53 − 1 (${MAX_COUNT}); the key is corrupt`,
  )
}

/** The reply's buckets as numbers, each count checked (the script checks them too: this is the last line before the native window). */
function replyBuckets(key, reply) {
  const flat = []
  for (let i = FIRST_REPLY; i < reply.length; i += 3) {
    const index = Number(reply[i])
    if (!Number.isSafeInteger(index)) throw new FleetSyncError(key, null, `Redis returned a bucket index ${thrownText(reply[i])}; the key is corrupt`)
    flat.push(index)
    for (const [side, at] of [
      ['s', i + 1],
      ['f', i + 2],
    ]) {
      const text = String(reply[at])
      const n = Number(text)
      if (!/^\d+$/.test(text) || !(n <= MAX_COUNT)) throw corrupt(key, null, side, String(reply[i]), text)
      flat.push(n)
    }
  }
  return flat
}

/** Where the buckets start in the script's reply (store.js). */
const FIRST_REPLY = 6

class FleetSync extends FleetLoop {
  /**
   * @param {object} tracker the native tracker
   * @param {object} link its native FleetLink
   * @param {ReturnType<import('./options.js').checkFleet>} options
   */
  constructor(tracker, link, options) {
    const { config, ...slo } = sloOf(link)
    super(options, { ...slo, configJson: JSON.stringify(config) }, { owner: 'tracker', startedAt: tracker.now, FleetSyncError })
    this.tracker = tracker
    this.link = link
    this.keys = keysOf(options.key)
    /** `tracker.recorded` at the last drain: what was recorded since is unsent too. */
    this.recordedAtDrain = tracker.recorded
  }

  now() {
    return this.tracker.now
  }

  oldestBucket() {
    return this.link.oldestBucket
  }

  /** The counts recorded since the last drain, as (bucket, successes, failures) triples. */
  drain() {
    const recorded = this.tracker.recorded
    const flat = this.link.drain()
    let successes = 0
    let failures = 0
    for (let i = 0; i < flat.length; i += 3) {
      successes += flat[i + 1]
      failures += flat[i + 2]
    }
    this.recordedAtDrain = recorded
    return { args: flat.map(String), successes, failures }
  }

  call(args) {
    return runScript(this.options.redis, this.options.kind, this.keys, args)
  }

  parse(reply) {
    return replyBuckets(this.options.key, reply)
  }

  refusal(cause) {
    return syncError(this.options.key, cause, this.maxSkewMs)
  }

  install(reply, flat) {
    if (reply[5] !== '' && reply[5] != null) this.repaired(String(reply[5]))
    this.link.apply(flat, Number(reply[4]) === 1)
  }

  notify(listener, err) {
    listener.call(this.tracker, err)
  }

  /** The store found some of the key's three keys missing (an eviction) and repaired them: said loudly, once per repair. */
  repaired(missing) {
    const { key } = this.options
    const lost = missing.split(' ').some((k) => k.endsWith(':buckets'))
    const what = lost ? 'the counts it held are lost; every worker re-reads the window, and batches still count once' : 'rebuilt from the others, nothing lost'
    process.emitWarning(
      `fleet '${key}': ${missing.split(' ').join(' and ')} was missing while the other keys were not (evicted?): ${what}. A fleet needs maxmemory-policy noeviction (see docs/fleet.md)`,
      { code: FLEET_WARNING },
    )
  }

  /** What `report().fleet` shows: the loop's figures and what is not sent yet. */
  info() {
    const { lastError, ...common } = super.info()
    const recorded = this.tracker.recorded
    const pending = this.pending ?? { successes: 0, failures: 0 }
    return {
      ...common,
      unsent: {
        successes: pending.successes + recorded.successes - this.recordedAtDrain.successes,
        failures: pending.failures + recorded.failures - this.recordedAtDrain.failures,
      },
      lastError,
    }
  }
}

FleetSync.prototype.FIRST = FIRST

module.exports = { FleetSync, syncError, MAX_COUNT }
