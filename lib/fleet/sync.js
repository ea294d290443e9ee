'use strict'
// One tracker's fleet sync: pushes the counts recorded here since the last
// push and installs the fleet's window, in one script call. Pushes are
// numbered per worker; a batch whose reply was lost is sent again with the
// same number until one reply comes back, and the script applies a number
// once, so nothing is counted twice. Failures never reject in the background:
// the tracker keeps its last view (stale) plus its own solves.
const crypto = require('node:crypto')
const os = require('node:os')
const { inspect } = require('node:util')
const { approxDuration, humanDuration } = require('../duration.js')
const { FIRST, keysOf, runScript, redact, excerpt } = require('./store.js')

/**
 * A failed sync: `code` 'ERR_FLEET_SYNC', `cause` the client's error (or the
 * store's refusal); `skewMs` (this clock minus the server's) when the clock
 * was refused. The message never shows a URL's password.
 */
class FleetSyncError extends Error {
  constructor(key, cause, reason = describe(cause), extra = {}) {
    super(redact(`fleet '${key}': sync failed: ${reason}`), { cause })
    this.code = 'ERR_FLEET_SYNC'
    this.key = key
    Object.assign(this, extra)
  }
}
FleetSyncError.prototype.name = 'FleetSyncError'

/** Any thrown value, readable: an Error's message, a string as is, anything else as util.inspect shows it (Symbol(x), null prototypes). */
function describe(value) {
  if (value instanceof Error) {
    try {
      return String(value.message)
    } catch {}
  }
  if (typeof value === 'string') return value
  try {
    return inspect(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
}

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
    return new FleetSyncError(key, cause, `the fleet's SLO is ${sloText(m[1])}; this tracker's is ${sloText(m[2])}: a worker with another SLO cannot share its key`)
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
    if (!Number.isSafeInteger(index)) throw new FleetSyncError(key, null, `Redis returned a bucket index ${describe(reply[i])}; the key is corrupt`)
    flat.push(index)
    for (const [side, at] of [['s', i + 1], ['f', i + 2]]) {
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

/** Rejects with `timeoutError()` if `promise` has not settled within `ms` (real time). */
function within(promise, ms, timeoutError) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(timeoutError()), ms)
    timer.unref()
  })
  // A late rejection of the losing promise is not an unhandled one.
  promise.catch(() => {})
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** A listener's thrown value for a warning: an Error as `Name: message`, a string quoted, anything else as util.inspect shows it. */
function describeThrown(value) {
  if (value instanceof Error) return describe(value) === '' ? String(value.name) : `${value.name}: ${describe(value)}`
  if (typeof value === 'string') return inspect(value)
  return describe(value)
}

class FleetSync {
  /**
   * @param {object} tracker the native tracker
   * @param {object} link its native FleetLink
   * @param {ReturnType<import('./options.js').checkFleet>} options
   */
  constructor(tracker, link, options) {
    this.tracker = tracker
    this.link = link
    this.options = options
    // The SLO config in force, stored with the counts for `captcha-budget gate --redis`.
    const { config } = JSON.parse(tracker.snapshot())
    this.configJson = JSON.stringify(config)
    // The keys outlive the window by two buckets: a clock behind ours still reads them.
    this.ttlMs = config.windowMs + 2 * link.bucketMs
    this.windowMs = config.windowMs
    /** What every worker of the key must share: refused by the store otherwise. */
    this.sloJson = JSON.stringify({ targetRate: config.targetRate, windowMs: config.windowMs, bucketMs: link.bucketMs })
    this.maxSkewMs = options.maxSkewMs ?? Math.min(60_000, Math.max(1000, Math.floor(config.windowMs / 10)))
    this.keys = keysOf(options.key)
    this.worker = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`
    this.seq = 0
    /** The store's epoch and version as of the last apply: the next sync gets the buckets changed since. */
    this.epoch = ''
    this.version = 0
    /** The drained batch not acknowledged yet: { seq, flat, successes, failures }. */
    this.pending = null
    /** `tracker.recorded` at the last drain: what was recorded since is unsent too. */
    this.recordedAtDrain = tracker.recorded
    this.chain = Promise.resolve()
    this.inFlight = false
    this.closed = false
    this.syncedAt = null
    this.staleSince = tracker.now
    this.lastError = null
    this.workers = 0
    this.warned = false
    this.errorListeners = []
    this.timer = null
  }

  /** Starts the background sync (every syncMs; none with syncMs 0): never keeps the process alive. */
  start() {
    if (this.options.syncMs === 0) return
    this.timer = setInterval(() => this.background(), this.options.syncMs)
    this.timer.unref()
    setImmediate(() => this.background()).unref()
  }

  background() {
    // A slow round (Redis unreachable) is not queued behind: the next tick retries.
    if (this.closed || this.inFlight) return
    this.sync().catch(() => {})
  }

  /** Syncs now, after any sync in progress; resolves to `info()`, rejects with a FleetSyncError. */
  sync() {
    const run = this.chain.then(() => this.round())
    this.chain = run.catch(() => {})
    return run
  }

  async round() {
    if (this.closed) throw new FleetSyncError(this.options.key, new Error('the tracker is closed'))
    this.inFlight = true
    try {
      // A batch whose reply never came goes again first, under its own number.
      if (this.pending !== null) await this.exchange()
      const recorded = this.tracker.recorded
      const flat = this.link.drain()
      let successes = 0
      let failures = 0
      for (let i = 0; i < flat.length; i += 3) {
        successes += flat[i + 1]
        failures += flat[i + 2]
      }
      this.pending = { seq: ++this.seq, flat, successes, failures }
      this.recordedAtDrain = recorded
      await this.exchange()
      return this.info()
    } finally {
      this.inFlight = false
    }
  }

  async exchange() {
    const { options, pending } = this
    const now = this.tracker.now
    const args = [
      this.worker,
      String(pending.seq),
      String(this.link.bucketMs),
      String(this.link.oldestBucket),
      String(this.ttlMs),
      String(now),
      String(Math.max(3 * options.syncMs, 3 * options.timeoutMs)),
      this.configJson,
      this.epoch,
      String(this.version),
      this.sloJson,
      String(this.windowMs),
      String(this.maxSkewMs),
      ...pending.flat.map(String),
    ]
    if (args.length !== FIRST - 1 + pending.flat.length) throw new Error('fleet: the script arguments and store.js FIRST disagree')
    let reply
    let flat
    try {
      const call = runScript(options.redis, options.kind, this.keys, args)
      reply = await within(call, options.timeoutMs, () => new Error(`no reply within ${options.timeoutMs} ms`))
      flat = replyBuckets(options.key, reply)
    } catch (cause) {
      throw this.failed(cause instanceof FleetSyncError ? cause : syncError(options.key, cause, this.maxSkewMs))
    }
    if (this.closed) return
    if (reply[5] !== '' && reply[5] != null) this.repaired(String(reply[5]))
    try {
      this.link.apply(flat, Number(reply[4]) === 1)
    } catch (cause) {
      // Counts the window cannot hold exactly (the native check, as for snapshots): nothing installed.
      throw this.failed(new FleetSyncError(options.key, cause, `${describe(cause)}; the key is corrupt`))
    }
    this.epoch = String(reply[2])
    this.version = Number(reply[3])
    this.pending = null
    this.workers = Number(reply[1])
    this.syncedAt = this.tracker.now
    this.staleSince = null
    this.lastError = null
    this.warned = false
  }

  failed(err) {
    if (this.staleSince === null) this.staleSince = this.tracker.now
    this.lastError = err
    if (this.errorListeners.length > 0) {
      for (const listener of [...this.errorListeners]) {
        try {
          listener.call(this.tracker, err)
        } catch (thrown) {
          // Whatever it threw (a Symbol, a null-prototype object): shown, and the next listener runs.
          try {
            process.emitWarning(`fleet '${this.options.key}': a 'fleet-error' listener threw ${describeThrown(thrown)}`, { code: 'CAPTCHA_BUDGET_FLEET' })
          } catch {}
        }
      }
    } else if (!this.warned) {
      // Once per outage (or refusal), when nobody listens: the tracker keeps working, stale.
      this.warned = true
      process.emitWarning(`${err.message}; the tracker counts locally until a sync succeeds`, { code: 'CAPTCHA_BUDGET_FLEET' })
    }
    return err
  }

  /** The store found some of the key's three keys missing (an eviction) and repaired them: said loudly, once per repair. */
  repaired(missing) {
    const { key } = this.options
    const lost = missing.split(' ').some((k) => k.endsWith(':buckets'))
    const what = lost
      ? 'the counts it held are lost; every worker re-reads the window, and batches still count once'
      : 'rebuilt from the others, nothing lost'
    process.emitWarning(
      `fleet '${key}': ${missing.split(' ').join(' and ')} was missing while the other keys were not (evicted?): ${what}. A fleet needs maxmemory-policy noeviction (see docs/fleet.md)`,
      { code: 'CAPTCHA_BUDGET_FLEET' },
    )
  }

  /** What `report().fleet` shows. */
  info() {
    const recorded = this.tracker.recorded
    const pending = this.pending ?? { successes: 0, failures: 0 }
    return {
      key: this.options.key,
      worker: this.worker,
      workers: this.workers,
      bucketMs: this.link.bucketMs,
      syncedAt: this.syncedAt,
      stale: this.staleSince !== null,
      staleSince: this.staleSince,
      unsent: {
        successes: pending.successes + recorded.successes - this.recordedAtDrain.successes,
        failures: pending.failures + recorded.failures - this.recordedAtDrain.failures,
      },
      lastError: this.lastError === null ? null : this.lastError.message,
    }
  }

  close() {
    this.closed = true
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }
}

module.exports = { FleetSync, FleetSyncError, syncError, MAX_COUNT }
