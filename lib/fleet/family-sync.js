'use strict'
// A BudgetFamily's fleet sync: the counts of every child recorded here since the
// last push go to Redis, and the fleet's buckets of every child come back, in
// one script call (family-store.js) per sync for up to MAX_CHUNK_COUNTS counts
// (a child's bucket each), however many children there are. A larger batch
// goes in chunks, one call each, so that no call holds more arguments than a
// client can send or blocks Redis for long; the last brings the fleet's
// buckets back. Numbered pushes, retries and failure handling are those of the
// single-tracker sync (sync.js), per chunk: a chunk whose reply was lost goes
// again under its number before anything new, the script applies a number
// once, and a failed sync leaves every child with its last fleet view plus its
// own solves.
const { FleetLoop } = require('./loop.js')
const { FleetSyncError, syncError, MAX_COUNT } = require('./sync.js')
const { excerpt } = require('./store.js')
const { FIRST, familyKeysOf, runFamilyScript, corruptCountText } = require('./family-store.js')

/** The most (child, bucket) counts one script call pushes. */
const MAX_CHUNK_COUNTS = 1000
/** … and the most bytes of child ids (labels as JSON) in one, whatever their length. */
const MAX_CHUNK_BYTES = 1 << 20
/** Where the buckets start in the script's reply (family-store.js). */
const FIRST_REPLY = 7

/** A child's count that is no whole number from 0 to 2^53 − 1: a FleetSyncError naming its bucket and child. */
function corrupt(key, cause, side, index, id, value) {
  return new FleetSyncError(key, cause, corruptCountText(side, index, id, value))
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

/** The reply's buckets by child ("K\\n<child>", s, f triples), each count checked (the script checks them too). */
function replyChildren(key, reply) {
  const byChild = new Map()
  for (let i = FIRST_REPLY; i < reply.length; i += 3) {
    const member = String(reply[i])
    const cut = member.indexOf('\n')
    const id = member.slice(cut + 1)
    const index = Number(member.slice(0, cut))
    if (cut < 1 || !Number.isSafeInteger(index)) throw new FleetSyncError(key, null, `Redis returned a bucket ${excerpt(member)}; the key is corrupt`)
    let flat = byChild.get(id)
    if (flat === undefined) byChild.set(id, (flat = []))
    flat.push(index)
    for (const [side, at] of [
      ['s', i + 1],
      ['f', i + 2],
    ]) {
      const text = String(reply[at])
      const n = Number(text)
      if (!/^\d+$/.test(text) || !(n <= MAX_COUNT)) throw corrupt(key, null, side, String(index), id, text)
      flat.push(n)
    }
  }
  return byChild
}

class FamilySync extends FleetLoop {
  /**
   * @param {object} hooks `{ probe, probeLink, windowMs, configJson, now(), children(): Iterable<[child id, FleetLink]>, drained(): Iterable<[child id, drained counts]>, linkFor(child id): FleetLink | null }`
   * @param {ReturnType<import('./options.js').checkFleet>} options
   */
  constructor(hooks, options) {
    const slo = {
      targetRate: JSON.parse(hooks.configJson).targetRate,
      windowMs: hooks.windowMs,
      bucketMs: hooks.probeLink.bucketMs,
      configJson: hooks.configJson,
    }
    super(options, slo, { owner: 'family', startedAt: hooks.now(), FleetSyncError })
    this.hooks = hooks
    this.keys = familyKeysOf(options.key)
    /** The label names as the stored config starts with them: the store refuses a family with others. */
    this.labelNamesJson = JSON.stringify(JSON.parse(hooks.configJson).labelNames)
  }

  now() {
    return this.hooks.now()
  }

  /** The oldest live bucket at `now`, read off the probe tracker moved there. */
  oldestBucket(now) {
    const { probe, probeLink } = this.hooks
    if (probe.now < now) probe.advanceTo(now)
    return probeLink.oldestBucket
  }

  /** The counts of every child recorded since its last drain, as (child id, bucket, successes, failures) quads. */
  drain() {
    const args = []
    for (const [id, flat] of this.hooks.drained()) {
      for (let i = 0; i < flat.length; i += 3) args.push(id, String(flat[i]), String(flat[i + 1]), String(flat[i + 2]))
    }
    return { args }
  }

  /** The batch in chunks of at most MAX_CHUNK_COUNTS counts and MAX_CHUNK_BYTES of ids; the last brings the fleet's buckets back. */
  split({ args }) {
    const chunks = []
    let from = 0
    let bytes = 0
    for (let i = 0; i < args.length; i += 4) {
      bytes += args[i].length
      if (i > from && (i - from === 4 * MAX_CHUNK_COUNTS || bytes > MAX_CHUNK_BYTES)) {
        chunks.push(args.slice(from, i))
        from = i
        bytes = args[i].length
      }
    }
    chunks.push(args.slice(from))
    return chunks.map((chunk, n) => {
      const pushOnly = n < chunks.length - 1
      return { args: chunk, pushOnly, head: [pushOnly ? '0' : '1', this.labelNamesJson] }
    })
  }

  pushed(reply) {
    this.repaired(reply[5])
  }

  /** The store found some of the key's four keys missing (an eviction) and repaired them: said loudly, once per repair. */
  repaired(missing) {
    if (missing === '' || missing == null) return
    const keys = String(missing).split(' ')
    const what = keys.some((k) => k.endsWith(':family-buckets'))
      ? 'the counts it held are lost; every worker re-reads the window, and batches still count once'
      : 'rebuilt from the others, nothing lost'
    process.emitWarning(
      `fleet '${this.options.key}': ${keys.join(' and ')} was missing while the other keys were not (evicted?): ${what}. A fleet needs maxmemory-policy noeviction (see docs/fleet.md)`,
      { code: 'CAPTCHA_BUDGET_FLEET' },
    )
  }

  /**
   * The script call, and when its reply has more buckets than one reply holds
   * (READ_PAGE, a joining worker's first read of a large window) the calls after
   * it, each without the batch (its number is applied already) from the version
   * the last reply covers, each within timeoutMs: one reply of them all, the
   * latest count of each bucket, installed at once (loop.js).
   */
  async send(args) {
    let reply = await super.send(args)
    if (Number(reply[6]) !== 1) return reply
    const first = reply
    let complete = Number(reply[4]) === 1
    const repaired = []
    const buckets = new Map()
    for (;;) {
      if (reply[5] !== '' && reply[5] != null) repaired.push(String(reply[5]))
      for (let i = FIRST_REPLY; i + 2 < reply.length; i += 3) buckets.set(String(reply[i]), [reply[i + 1], reply[i + 2]])
      if (Number(reply[6]) !== 1) break
      const next = args.slice(0, FIRST - 1)
      next[8] = String(reply[2])
      next[9] = String(reply[3])
      reply = await super.send(next)
      // A new epoch meanwhile (the buckets hash evicted): the whole window again.
      if (Number(reply[4]) === 1) {
        buckets.clear()
        complete = true
      }
    }
    const out = [first[0], reply[1], reply[2], reply[3], complete ? 1 : 0, repaired.join(' '), 0]
    for (const [member, [s, f]] of buckets) out.push(member, s, f)
    return out
  }

  call(args) {
    return runFamilyScript(this.options.redis, this.options.kind, this.keys, args)
  }

  /** The buckets of each child, as its link takes them. */
  parse(reply) {
    return replyChildren(this.options.key, reply)
  }

  refusal(cause) {
    return familyError(this.options.key, cause, this.maxSkewMs)
  }

  install(reply, byChild) {
    const { hooks } = this
    this.repaired(reply[5])
    const complete = Number(reply[4]) === 1
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
  }
}

FamilySync.prototype.FIRST = FIRST

module.exports = { FamilySync, MAX_CHUNK_COUNTS, MAX_CHUNK_BYTES }
