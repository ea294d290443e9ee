'use strict'
// The sync loop both fleets share (sync.js for one tracker, family-sync.js for
// a BudgetFamily): pushes numbered per worker, a batch whose reply was lost
// sent again under its number before anything new, one round at a time,
// background rounds that never reject, and the 'fleet-error' listeners. A
// subclass says what a batch holds, which script takes it and how a reply is
// installed; the script's first arguments are the same for both (store.js,
// family-store.js).
const crypto = require('node:crypto')
const os = require('node:os')
const { inspect } = require('node:util')
const { thrownText, FLEET_WARNING } = require('../util/errors.js')

/** A listener's thrown value for a warning: an Error as `Name: message`, a string quoted, anything else as util.inspect shows it. */
function describeThrown(value) {
  if (value instanceof Error) return thrownText(value) === '' ? String(value.name) : `${value.name}: ${thrownText(value)}`
  if (typeof value === 'string') return inspect(value)
  return thrownText(value)
}

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

/** The default `maxSkewMs`: a tenth of the window, from 1 s to 60 s. */
const defaultMaxSkewMs = (windowMs) => Math.min(60_000, Math.max(1000, Math.floor(windowMs / 10)))

/**
 * The loop. A subclass provides `now()`, `oldestBucket()`, `drain()` (the
 * batch's script arguments after the common ones, and what else `info()`
 * needs), `call(args)` (the script call), `parse(reply)`, `install(reply,
 * parsed)`, `refusal(cause)` (the store's refusal as a FleetSyncError) and
 * `FIRST` (the script's first batch argument, 1-based); it may provide
 * `split(batch)` (the batch as chunks pushed one call each: all but the last
 * `pushOnly`, with `head`, the script's own arguments before the batch) and
 * `pushed(reply)` (a push-only chunk's reply).
 */
class FleetLoop {
  /**
   * @param {ReturnType<import('./options.js').checkFleet>} options
   * @param {{ targetRate: number, windowMs: number, bucketMs: number, configJson: string }} slo
   * @param {{ owner: string, startedAt: number, FleetSyncError: Function }} context `owner`: 'tracker' or 'family', for messages
   */
  constructor(options, { targetRate, windowMs, bucketMs, configJson }, { owner, startedAt, FleetSyncError }) {
    this.options = options
    this.owner = owner
    this.FleetSyncError = FleetSyncError
    this.bucketMs = bucketMs
    this.windowMs = windowMs
    // The SLO config in force, stored with the counts for `captcha-budget gate --redis`.
    this.configJson = configJson
    // The keys outlive the window by two buckets: a clock behind ours still reads them.
    this.ttlMs = windowMs + 2 * bucketMs
    /** What every worker of the key must share: refused by the store otherwise. */
    this.sloJson = JSON.stringify({ targetRate, windowMs, bucketMs })
    this.maxSkewMs = options.maxSkewMs ?? defaultMaxSkewMs(windowMs)
    this.worker = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`
    this.seq = 0
    /** The store's epoch and version as of the last apply: the next sync gets the buckets changed since. */
    this.epoch = ''
    this.version = 0
    /** The drained batch (or chunk of one) not acknowledged yet: `{ seq, args, ... }`. */
    this.pending = null
    /** The chunks of the batch after `pending`, each numbered already: pushed in order, after it. */
    this.later = []
    this.chain = Promise.resolve()
    this.inFlight = false
    this.closed = false
    this.syncedAt = null
    this.staleSince = startedAt
    this.lastError = null
    this.workers = 0
    this.warned = false
    this.errorListeners = []
    this.timer = null
    /** Redis calls made (the bench counts them per sync). */
    this.calls = 0
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
    if (this.closed) throw new this.FleetSyncError(this.options.key, new Error(`the ${this.owner} is closed`))
    this.inFlight = true
    try {
      // A batch (or chunks) whose reply never came goes again first, under its own number.
      while (this.pending !== null && !this.closed) await this.exchange()
      // Each chunk numbered once, here: a chunk sent again keeps its number, so the store applies it once.
      const chunks = this.split(this.drain()).map((chunk) => ({ seq: ++this.seq, ...chunk }))
      this.pending = chunks.shift()
      this.later = chunks
      // (A close() during the exchange ends the round: the chunks left are not sent.)
      while (this.pending !== null && !this.closed) await this.exchange()
      return this.info()
    } finally {
      this.inFlight = false
    }
  }

  /** The batch as the chunks to push, one script call each (one by default). */
  split(batch) {
    return [batch]
  }

  /** One script call with `args`, refused after `timeoutMs` (a subclass may read a reply in several calls, each timed). */
  send(args) {
    const { timeoutMs } = this.options
    return within(this.call(args), timeoutMs, () => new Error(`no reply within ${timeoutMs} ms`))
  }

  /** A push-only chunk's reply: nothing to install. */
  pushed(_reply) {}

  async exchange() {
    const { options, pending } = this
    const now = this.now()
    const head = pending.head ?? []
    const common = [
      this.worker,
      String(pending.seq),
      String(this.bucketMs),
      String(this.oldestBucket(now)),
      String(this.ttlMs),
      String(now),
      String(Math.max(3 * options.syncMs, 3 * options.timeoutMs)),
      this.configJson,
      this.epoch,
      String(this.version),
      this.sloJson,
      String(this.windowMs),
      String(this.maxSkewMs),
    ]
    if (common.length + head.length !== this.FIRST - 1) throw new Error(`fleet: the script arguments and the store's FIRST disagree`)
    const args = [...common, ...head, ...pending.args]
    let reply
    let parsed
    try {
      this.calls++
      reply = await this.send(args)
      if (!pending.pushOnly) parsed = this.parse(reply)
    } catch (cause) {
      throw this.failed(cause instanceof this.FleetSyncError ? cause : this.refusal(cause))
    }
    if (this.closed) return
    if (pending.pushOnly) {
      // Counted by the store; the fleet's buckets come with the last chunk (the
      // epoch and version stay those of the last install, so none is missed).
      this.pending = this.later.shift() ?? null
      this.workers = Number(reply[1])
      this.pushed(reply)
      return
    }
    try {
      this.install(reply, parsed)
    } catch (cause) {
      // Counts a window cannot hold exactly (the native check, as for snapshots): a refusal, not a RangeError.
      throw this.failed(new this.FleetSyncError(options.key, cause, `${thrownText(cause)}; the key is corrupt`))
    }
    this.epoch = String(reply[2])
    this.version = Number(reply[3])
    this.pending = this.later.shift() ?? null
    this.workers = Number(reply[1])
    this.syncedAt = this.now()
    this.staleSince = null
    this.lastError = null
    this.warned = false
  }

  /** `err` given to the 'fleet-error' listeners (or, when none listens, one warning per outage); returns it. */
  failed(err) {
    if (this.staleSince === null) this.staleSince = this.now()
    this.lastError = err
    if (this.errorListeners.length > 0) {
      for (const listener of [...this.errorListeners]) {
        try {
          this.notify(listener, err)
        } catch (thrown) {
          // Whatever it threw (a Symbol, a null-prototype object): shown, and the next listener runs.
          try {
            process.emitWarning(`fleet '${this.options.key}': a 'fleet-error' listener threw ${describeThrown(thrown)}`, { code: FLEET_WARNING })
          } catch {}
        }
      }
    } else if (!this.warned) {
      // Once per outage (or refusal), when nobody listens: the owner keeps working, stale.
      this.warned = true
      process.emitWarning(`${err.message}; the ${this.owner} counts locally until a sync succeeds`, { code: FLEET_WARNING })
    }
    return err
  }

  /** Calls one 'fleet-error' listener (a tracker's gets the tracker as `this`). */
  notify(listener, err) {
    listener(err)
  }

  /** What `fleet` / `report().fleet` shows in common. */
  info() {
    return {
      key: this.options.key,
      worker: this.worker,
      workers: this.workers,
      bucketMs: this.bucketMs,
      syncedAt: this.syncedAt,
      stale: this.staleSince !== null,
      staleSince: this.staleSince,
      lastError: this.lastError === null ? null : this.lastError.message,
    }
  }

  close() {
    this.closed = true
    if (this.timer !== null) clearInterval(this.timer)
    this.timer = null
  }
}

module.exports = { FleetLoop, defaultMaxSkewMs }
