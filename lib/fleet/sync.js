'use strict'
// One tracker's fleet sync: pushes the counts recorded here since the last
// push and installs the fleet's window, in one script call. Pushes are
// numbered per worker; a batch whose reply was lost is sent again with the
// same number until one reply comes back, and the script applies a number
// once, so nothing is counted twice. Failures never reject in the background:
// the tracker keeps its last view (stale) plus its own solves.
const crypto = require('node:crypto')
const os = require('node:os')
const { keysOf, runScript } = require('./store.js')

/** A failed sync: `code` 'ERR_FLEET_SYNC', `cause` the client's error. */
class FleetSyncError extends Error {
  constructor(key, cause) {
    super(`fleet '${key}': sync failed: ${cause?.message ?? cause}`, { cause })
    this.code = 'ERR_FLEET_SYNC'
    this.key = key
  }
}
FleetSyncError.prototype.name = 'FleetSyncError'

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
      ...pending.flat.map(String),
    ]
    let reply
    try {
      const call = runScript(options.redis, options.kind, this.keys, args)
      reply = await within(call, options.timeoutMs, () => new Error(`no reply within ${options.timeoutMs} ms`))
    } catch (cause) {
      throw this.failed(new FleetSyncError(options.key, cause))
    }
    if (this.closed) return
    this.link.apply(reply.slice(5).map(Number), Number(reply[4]) === 1)
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
          process.emitWarning(`a 'fleet-error' listener threw: ${thrown?.message ?? thrown}`, { code: 'CAPTCHA_BUDGET_FLEET' })
        }
      }
    } else if (!this.warned) {
      // Once per outage, when nobody listens: the tracker keeps working, stale.
      this.warned = true
      process.emitWarning(`${err.message}; the tracker counts locally until Redis answers`, { code: 'CAPTCHA_BUDGET_FLEET' })
    }
    return err
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

module.exports = { FleetSync, FleetSyncError }
