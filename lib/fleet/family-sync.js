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
// own solves. Each child syncs through its own native FleetLink (link.js), as
// a fleet tracker does; the family hands this sync each child it adds or drops.
const { FleetLoop } = require('./loop.js')
const { syncError, MAX_COUNT } = require('./sync.js')
const { FleetSyncError } = require('../util/errors.js')
const { FLEET_WARNING } = require('../util/errors.js')
const { excerpt } = require('./store.js')
const { FIRST, familyKeysOf, runFamilyScript, corruptCountText } = require('./family-store.js')
const { linkTracker, sloOf } = require('./link.js')

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
   * @param {object} fleet the family's native FamilyFleet (its children's SLO, bucket width and clock)
   * @param {ReturnType<import('./options.js').checkFleet>} options
   * @param {{ labelNames: string[], manualNow: (() => number) | null, create: (labels: object) => object }} family
   *   its label names, its time on a manual clock (null: the fleet's real clock), its `labels()`
   */
  constructor(fleet, options, { labelNames, manualNow, create }) {
    const { config, ...slo } = sloOf(fleet)
    // The label names as the stored config starts with them: the store refuses a family with others.
    const configJson = JSON.stringify({ labelNames, ...config })
    super(options, { ...slo, configJson }, { owner: 'family', startedAt: manualNow === null ? fleet.now : manualNow(), FleetSyncError })
    this.fleet = fleet
    this.manualNow = manualNow
    this.create = create
    this.keys = familyKeysOf(options.key)
    this.labelNamesJson = JSON.stringify(labelNames)
    /** @type {Map<object, { id: string, link: object, drainedAt: number[] }>} each child's id (its labels as JSON) and native link */
    this.members = new Map()
  }

  /** Links a child the family just added (`labels` its checked labels); closes the child when that fails. */
  join(child, labels) {
    const link = linkTracker(child, this.bucketMs)
    this.members.set(child, { id: JSON.stringify(labels), link, drainedAt: [-1, -1, -1] })
  }

  /** Forgets a child the family dropped (evicted or closed). */
  leave(child) {
    this.members.delete(child)
  }

  close() {
    super.close()
    this.members.clear()
  }

  now() {
    return this.manualNow === null ? this.fleet.now : this.manualNow()
  }

  oldestBucket(now) {
    return this.fleet.oldestBucketAt(now)
  }

  /** The counts of every child recorded since its last drain, as (child id, bucket, successes, failures) quads. */
  drain() {
    const args = []
    for (const [child, member] of this.members) {
      // A drain costs a walk of the child's buckets: an idle child's is skipped.
      const { successes, failures } = child.recorded
      const { rejected } = child // a late verdict changes the buckets, not `recorded`
      const at = member.drainedAt
      if (successes === at[0] && failures === at[1] && rejected === at[2]) continue
      member.drainedAt = [successes, failures, rejected]
      const flat = member.link.drain()
      for (let i = 0; i < flat.length; i += 3) args.push(member.id, String(flat[i]), String(flat[i + 1]), String(flat[i + 2]))
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
      { code: FLEET_WARNING },
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
    this.repaired(reply[5])
    const complete = Number(reply[4]) === 1
    const known = new Set()
    for (const { id, link } of this.members.values()) {
      known.add(id)
      const flat = byChild.get(id)
      if (flat !== undefined) link.apply(flat, complete)
      else if (complete) link.apply([], true)
    }
    // Children another worker created: every bucket of theirs is in the reply (each
    // was changed after the version this worker saw), so they arrive whole.
    for (const [id, flat] of byChild) {
      if (known.has(id)) continue
      this.linkOf(id)?.apply(flat, true)
    }
  }

  /** The link of the child `id` names (another worker's labels as JSON), created here; undefined, with a warning, when the family refuses it. */
  linkOf(id) {
    let child
    try {
      child = this.create(JSON.parse(id))
    } catch (err) {
      process.emitWarning(`fleet '${this.options.key}': a child another worker created is left out here: ${err.message}`, { code: FLEET_WARNING })
      return undefined
    }
    return this.members.get(child)?.link
  }
}

FamilySync.prototype.FIRST = FIRST

module.exports = { FamilySync, MAX_CHUNK_COUNTS, MAX_CHUNK_BYTES }
