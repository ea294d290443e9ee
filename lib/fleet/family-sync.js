'use strict'
// A BudgetFamily's fleet sync: the counts of every child recorded here since the
// last push go to Redis, and the fleet's buckets of every child come back, in
// one script call (family-store.js) per sync, however many children there are.
// Numbered pushes, retries and failure handling are those of the
// single-tracker sync (sync.js): a batch whose reply was lost goes again under
// its number, the script applies a number once, and a failed sync leaves every
// child with its last fleet view plus its own solves.
const crypto = require('node:crypto')
const os = require('node:os')
const { FleetSyncError, syncError, MAX_COUNT } = require('./sync.js')
const { excerpt } = require('./store.js')
const { FIRST, familyKeysOf, runFamilyScript } = require('./family-store.js')

/** A child's labels (its id: JSON in labelNames order) as people read them: type=x,site=y. */
function labelText(id) {
  try {
    return Object.entries(JSON.parse(id))
      .map(([name, value]) => `${name}=${value}`)
      .join(',')
  } catch {
    return excerpt(id)
  }
}

/** A child's count that is no whole number from 0 to 2^53 − 1: a FleetSyncError naming its bucket and child. */
function corrupt(key, cause, side, index, id, value) {
  const what = side === 's' ? 'successes' : 'failures'
  return new FleetSyncError(
    key,
    cause,
    `Redis holds ${excerpt(value)} for bucket ${index}'s ${what} of the child ${labelText(id)}: not a whole number from 0 to 2^53 − 1 (${MAX_COUNT}); the key is corrupt`,
  )
}

/** The store's refusals (family-store.js) as FleetSyncErrors: the clock and the SLO as sync.js words them. */
function familyError(key, cause, maxSkewMs) {
  const text = typeof cause?.message === 'string' ? cause.message : ''
  const m = /\bFLEETCORRUPT ([sf])(-?\d+)\/([0-9a-f]*) ([0-9a-f]*)/.exec(text)
  if (m) return corrupt(key, cause, m[1], m[2], Buffer.from(m[3], 'hex').toString(), Buffer.from(m[4], 'hex').toString())
  const err = syncError(key, cause, maxSkewMs)
  if (/\bFLEETSLO /.test(text)) err.message = err.message.replace("this tracker's is", "this family's is")
  return err
}

/** The reply's buckets by child, each count checked (the script checks them too). */
function replyChildren(key, reply) {
  const byChild = new Map()
  for (let i = 5; i < reply.length; i += 4) {
    const id = String(reply[i])
    const index = Number(reply[i + 1])
    if (!Number.isSafeInteger(index)) throw new FleetSyncError(key, null, `Redis returned a bucket index ${excerpt(reply[i + 1])} for the child ${labelText(id)}; the key is corrupt`)
    let flat = byChild.get(id)
    if (flat === undefined) byChild.set(id, (flat = []))
    flat.push(index)
    for (const [side, at] of [['s', i + 2], ['f', i + 3]]) {
      const text = String(reply[at])
      const n = Number(text)
      if (!/^\d+$/.test(text) || !(n <= MAX_COUNT)) throw corrupt(key, null, side, String(reply[i + 1]), id, text)
      flat.push(n)
    }
  }
  return byChild
}

function within(promise, ms, timeoutError) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(timeoutError()), ms)
    timer.unref()
  })
  promise.catch(() => {})
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

class FamilySync {
  /**
   * @param {object} hooks `{ probe, probeLink, windowMs, configJson, now(), children(): Iterable<[child id, FleetLink]>, drained(): Iterable<[child id, drained counts]>, linkFor(child id): FleetLink | null }`
   * @param {ReturnType<import('./options.js').checkFleet>} options
   */
  constructor(hooks, options) {
    this.hooks = hooks
    this.options = options
    this.bucketMs = hooks.probeLink.bucketMs
    this.ttlMs = hooks.windowMs + 2 * this.bucketMs
    this.windowMs = hooks.windowMs
    /** What every worker of the key must share (store.js's SLO JSON): refused by the store otherwise. */
    this.sloJson = JSON.stringify({ targetRate: JSON.parse(hooks.configJson).targetRate, windowMs: hooks.windowMs, bucketMs: this.bucketMs })
    // As sync.js: a tenth of the window, from 1 s to 60 s, unless given.
    this.maxSkewMs = options.maxSkewMs ?? Math.min(60_000, Math.max(1000, Math.floor(hooks.windowMs / 10)))
    this.keys = familyKeysOf(options.key)
    this.worker = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`
    this.seq = 0
    this.epoch = ''
    this.version = 0
    /** The drained batch not acknowledged yet: { seq, args }. */
    this.pending = null
    this.chain = Promise.resolve()
    this.inFlight = false
    this.closed = false
    this.syncedAt = null
    this.staleSince = hooks.now()
    this.lastError = null
    this.workers = 0
    this.warned = false
    this.errorListeners = []
    this.timer = null
    /** Redis calls made (the bench counts them per sync). */
    this.calls = 0
  }

  start() {
    if (this.options.syncMs === 0) return
    this.timer = setInterval(() => this.background(), this.options.syncMs)
    this.timer.unref()
    setImmediate(() => this.background()).unref()
  }

  background() {
    if (this.closed || this.inFlight) return
    this.sync().catch(() => {})
  }

  sync() {
    const run = this.chain.then(() => this.round())
    this.chain = run.catch(() => {})
    return run
  }

  async round() {
    if (this.closed) throw new FleetSyncError(this.options.key, new Error('the family is closed'))
    this.inFlight = true
    try {
      if (this.pending !== null) await this.exchange()
      const quads = []
      for (const [id, flat] of this.hooks.drained()) {
        for (let i = 0; i < flat.length; i += 3) quads.push(id, String(flat[i]), String(flat[i + 1]), String(flat[i + 2]))
      }
      this.pending = { seq: ++this.seq, quads }
      await this.exchange()
      return this.info()
    } finally {
      this.inFlight = false
    }
  }

  async exchange() {
    const { options, pending, hooks } = this
    const now = hooks.now()
    const probe = hooks.probe
    if (probe.now < now) probe.advanceTo(now)
    const args = [
      this.worker,
      String(pending.seq),
      String(this.bucketMs),
      String(hooks.probeLink.oldestBucket),
      String(this.ttlMs),
      String(now),
      String(Math.max(3 * options.syncMs, 3 * options.timeoutMs)),
      hooks.configJson,
      this.epoch,
      String(this.version),
      this.sloJson,
      String(this.windowMs),
      String(this.maxSkewMs),
      ...pending.quads,
    ]
    if (args.length !== FIRST - 1 + pending.quads.length) throw new Error('fleet: the family script arguments and family-store.js FIRST disagree')
    let reply
    let byChild
    try {
      this.calls++
      reply = await within(runFamilyScript(options.redis, options.kind, this.keys, args), options.timeoutMs, () => new Error(`no reply within ${options.timeoutMs} ms`))
      // The buckets of each child, as its link takes them.
      byChild = replyChildren(options.key, reply)
    } catch (cause) {
      throw this.failed(cause instanceof FleetSyncError ? cause : familyError(options.key, cause, this.maxSkewMs))
    }
    if (this.closed) return
    const complete = Number(reply[4]) === 1
    try {
      const known = new Set()
      for (const [id, link] of hooks.children()) {
        known.add(id)
        const flat = byChild.get(id)
        if (flat !== undefined) link.apply(flat, complete)
        else if (complete) link.apply([], true)
      }
      // Children another worker created: every bucket of theirs is in the reply (each
      // was changed after the version this worker saw), so they arrive whole.
      for (const [id, flat] of byChild) {
        if (known.has(id)) continue
        const link = hooks.linkFor(id)
        if (link !== null) link.apply(flat, true)
      }
    } catch (cause) {
      // Counts a window cannot hold exactly (the native check): a refusal, not a RangeError.
      throw this.failed(new FleetSyncError(options.key, cause, `${cause?.message ?? cause}; the key is corrupt`))
    }
    this.epoch = String(reply[2])
    this.version = Number(reply[3])
    this.pending = null
    this.workers = Number(reply[1])
    this.syncedAt = now
    this.staleSince = null
    this.lastError = null
    this.warned = false
  }

  failed(err) {
    if (this.staleSince === null) this.staleSince = this.hooks.now()
    this.lastError = err
    if (this.errorListeners.length > 0) {
      for (const listener of [...this.errorListeners]) {
        try {
          listener(err)
        } catch (thrown) {
          process.emitWarning(`a 'fleet-error' listener threw: ${thrown?.message ?? thrown}`, { code: 'CAPTCHA_BUDGET_FLEET' })
        }
      }
    } else if (!this.warned) {
      this.warned = true
      process.emitWarning(`${err.message}; the family counts locally until Redis answers`, { code: 'CAPTCHA_BUDGET_FLEET' })
    }
    return err
  }

  /** What `family.fleet` shows. */
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

module.exports = { FamilySync }
