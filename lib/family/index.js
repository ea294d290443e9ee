'use strict'
// BudgetFamily: many error budgets keyed by labels (per CAPTCHA type, target
// site, provider), each child a full ErrorBudgetTracker created on first use.
//
//   index.js        this class: the family's state and its public members
//   options.js      the family's options and their checks
//   label-tree.js   the children by their labels (a tree of Maps), label checks
//   children.js     a new child's config, creation refusals
//   eviction.js     which child makes room in a full family
//   attribution-counts.js  the window counts by provider and site, for blame()
//   listeners.js    the family's listeners fanned out to every child
//   persist.js      `persist`: atomic writes, autosave, the lock file
//   snapshot.js     snapshot() and restore()
// A fleet family's sync is lib/fleet/'s (startFamilyFleet), as a fleet tracker's is.
const errors = require('../util/errors.js')
const { ErrorBudgetTracker: Tracker } = require('../tracker/tracker.js')
const { CHILD_SERIES } = require('../prometheus/series-source.js')
const { checkFamilyOptions, closedError, isPlainObject, RESTORING } = require('./options.js')
const { LabelTree, checkLabels } = require('./label-tree.js')
const { childConfigOf, createdInChildConfig, familyFull } = require('./children.js')
const { Eviction } = require('./eviction.js')
const { AttributionCounts } = require('./attribution-counts.js')
const { checkListenerArgs, dispatch, undispatch, ownListeners } = require('./listeners.js')
const { writeAtomically, startAutosave, takeLock, releaseLock } = require('./persist.js')
const { familySnapshot, restoreChildren, readRestoreArgs, readFamilySnapshot } = require('./snapshot.js')
const { startFamilyFleet } = require('../fleet/index.js')
const attribution = require('../providers/blame.js')

let nextSeq = 0

/**
 * Many error budgets keyed by labels: one ErrorBudgetTracker per label set,
 * created on first use by `labels(l)` (the same object afterwards), bounded by
 * `maxChildren`.
 */
class BudgetFamily {
  #names
  #tree
  #find
  /** @type {Map<object, { labels: object, own: Array<[string, Function]>, dispatchers: Map<string, Function>, seq: number }>} */
  #children = new Map()
  #eviction = new Eviction()
  #base
  #childConfig
  /** The labels childConfig is being called for, while it runs (it may not create children). */
  #configuring = null
  #maxChildren
  #name
  #manual
  #now = 0
  #listeners = new Map()
  #closed = false
  #persist = null
  #stopAutosave = null
  #lock = null
  /** A fleet family's FamilySync (lib/fleet/family-sync.js), or null. */
  #fleet = null
  #shared = null
  /** `options.attribution` (lib/providers/blame.js), or null. */
  #attribution = null
  /** With attribution: the children's counts by provider and site (attribution-counts.js), else null. */
  #counts = null
  /** An incident's blame (the family knows its provider and site labels), or undefined. */
  #blameOf = (labels) => (this.#attribution !== null && !this.#closed ? this.blame(labels) : undefined)

  /**
   * @param {object} options `labelNames`, `childConfig?`, `maxChildren?`, `name?`, `persist?`, and every
   *   ErrorBudgetTracker option (but `snapshot`, `now`, `shared`, `fleet`) for each child
   */
  constructor(options) {
    const where = 'new BudgetFamily(options)'
    if (!isPlainObject(options)) throw errors.invalidArgType(`${where}: options must be an object, got ${errors.describe(options)}`)
    const checked = checkFamilyOptions(options, where)
    this.#names = checked.names
    this.#tree = new LabelTree(this.#names)
    this.#find = this.#tree.find
    this.#childConfig = checked.childConfig
    this.#maxChildren = checked.maxChildren
    this.#name = checked.name
    this.#persist = checked.persist
    this.#shared = checked.shared
    this.#attribution = checked.attribution
    if (this.#attribution !== null) this.#counts = new AttributionCounts(this.#attribution)
    this.#base = checked.base
    this.#manual = checked.base.clock === 'manual'
    // One owner per persist path, taken before the file is read (released if the constructor throws).
    if (this.#persist) this.#lock = takeLock(this.#persist.path)
    try {
      let parsed = checked.restoring
      if (!parsed && this.#persist) parsed = readFamilySnapshot(this.#persist.path, { clock: checked.base.clock })
      if (parsed) {
        for (const [labels, child] of restoreChildren(parsed, this.#names, this.#maxChildren)) this.#add(labels, undefined, child)
      }
    } catch (err) {
      releaseLock(this.#lock)
      this.#lock = null
      throw err
    }
    if (this.#persist) this.#stopAutosave = startAutosave(() => this.save(), this.#persist.intervalMs, this.#lock)
    if (checked.fleet) {
      this.#fleet = startFamilyFleet(checked.fleetShape, checked.fleet, {
        labelNames: this.#names,
        manualNow: this.#manual ? () => this.#now : null,
        create: (labels) => this.labels(labels),
      })
    }
  }

  /**
   * Fleet families: pushes every child's unsent counts and installs the fleet's
   * buckets of every child (those another worker created included), in one
   * Redis call. Rejects with a FleetSyncError when Redis does not answer.
   */
  sync() {
    if (this.#fleet === null) {
      return Promise.reject(errors.invalidState('sync() needs a family created with fleet'))
    }
    return this.#fleet.sync()
  }

  /** Fleet families: `{ key, worker, workers, bucketMs, syncedAt, stale, staleSince, lastError }`; otherwise undefined. */
  get fleet() {
    return this.#fleet === null ? undefined : this.#fleet.info()
  }

  /** The label names, in the order given. */
  get labelNames() {
    return [...this.#names]
  }

  /** `options.attribution` (`{ provider, site }` label names), or null. */
  get attribution() {
    return this.#attribution
  }

  /**
   * Who is at fault for the child of `labels` — `{ label, value }`: its provider or
   * its site — or null when the evidence does not single one out (lib/providers/blame.js).
   * Needs `options.attribution`.
   */
  blame(labels) {
    if (this.#closed) throw closedError('blame()')
    if (this.#attribution === null) {
      throw errors.invalidState('blame() needs a family created with options.attribution: { provider, site }')
    }
    const copy = checkLabels(labels, this.#names, 'family.blame(labels): labels')
    const tables = this.#counts.tables(copy[this.#attribution.provider], copy[this.#attribution.site])
    return attribution.blameOf(tables, this.#attribution, copy)
  }

  /** The `name` label of the family's Prometheus series. */
  get name() {
    return this.#name
  }

  /** How many children the family holds now. */
  get size() {
    return this.#children.size
  }

  /** The bound on `size`. */
  get maxChildren() {
    return this.#maxChildren
  }

  /** True after `close()`. */
  get closed() {
    return this.#closed
  }

  /** Manual clock: the family's time (the latest `advanceTo()` or `record()` time), epoch ms. Otherwise `Date.now()`. */
  get now() {
    return this.#manual ? this.#now : Date.now()
  }

  /**
   * The child for `labels` (exactly the family's `labelNames`, string values),
   * created on first use, the same object afterwards.
   * @param {Record<string, string>} labels
   */
  labels(labels) {
    return this.#find(labels) ?? this.#create(labels)
  }

  /**
   * `family.labels(labels).record(success, atMs)`. A bad `success` or `atMs`
   * creates no child.
   */
  record(labels, success, atMs) {
    if (this.#closed) throw closedError('record()')
    // record(true) as on a tracker: the labels were forgotten, not the outcome.
    if (typeof labels === 'boolean' && success === undefined) {
      const example = this.#names.map((name) => `${name}: …`).join(', ')
      throw errors.invalidArgType(
        `family.record(labels, success): the labels are missing (got only ${labels}); a family records per label set: family.record({ ${example} }, ${labels})`,
      )
    }
    if (typeof success !== 'boolean') {
      throw errors.invalidArgType(`family.record(labels, success): success must be a boolean, got ${errors.describe(success)}`)
    }
    // Checked before a child is looked up: on a full family, creating it may evict another.
    if (atMs !== undefined) {
      const where = 'family.record(labels, success, atMs): atMs'
      if (typeof atMs !== 'number') throw errors.invalidArgType(`${where} must be a number of epoch ms, got ${errors.describe(atMs)}`)
      if (!Number.isFinite(atMs)) throw errors.outOfRange(`${where} must be a finite number of epoch ms, got ${atMs}`)
      // The child's own bound, checked here too: the new child's eviction runs before its record.
      if (Math.abs(atMs) > Number.MAX_SAFE_INTEGER)
        throw errors.outOfRange(`${where} must be a finite number of epoch ms from -(2^53 - 1) to 2^53 - 1, got ${atMs}`)
    }
    let child = this.#find(labels)
    const created = child === undefined
    if (created) child = this.#create(labels, atMs)
    try {
      if (atMs === undefined) child.record(success)
      else child.record(success, atMs)
    } catch (err) {
      if (created) this.#remove(child)
      throw err
    }
    if (this.#manual && atMs > this.#now) this.#now = atMs
  }

  /** Manual clock: moves every child's clock (and the family's) to `ms`; never backwards. */
  advanceTo(ms) {
    if (this.#closed) throw closedError('advanceTo()')
    if (!this.#manual) {
      throw errors.invalidState('advanceTo() needs a family with clock: "manual"')
    }
    if (typeof ms !== 'number') throw errors.invalidArgType(`advanceTo(ms): ms must be a number, got ${errors.describe(ms)}`)
    if (!Number.isFinite(ms) || ms < this.#now) {
      throw errors.outOfRange(`advanceTo(ms): ms must be a finite number ≥ the family's time ${this.#now}, got ${ms}`)
    }
    for (const child of this.#children.keys()) if (child.now < ms) child.advanceTo(ms)
    this.#now = ms
  }

  /**
   * Calls `listener(payload, labels)` for `event` (a status, `'alert'` or
   * `'resolve'`) of every child, present and future.
   */
  on(event, listener) {
    if (this.#closed) throw closedError('on()')
    if (event === 'fleet-error' && this.#fleet !== null && typeof listener === 'function') {
      this.#fleet.errorListeners.push(listener)
      return this
    }
    checkListenerArgs('on', event, listener)
    let list = this.#listeners.get(event)
    if (list === undefined) {
      list = []
      this.#listeners.set(event, list)
      for (const [child, entry] of this.#children) dispatch(this.#listeners, child, entry, event, this.#blameOf)
    }
    list.push(listener)
    return this
  }

  /** Removes the most recent registration of `listener` for `event`. */
  off(event, listener) {
    if (event === 'fleet-error' && this.#fleet !== null) {
      const i = this.#fleet.errorListeners.lastIndexOf(listener)
      if (i >= 0) this.#fleet.errorListeners.splice(i, 1)
      return this
    }
    checkListenerArgs('off', event, listener)
    const list = this.#listeners.get(event)
    if (list === undefined) return this
    const i = list.lastIndexOf(listener)
    if (i >= 0) list.splice(i, 1)
    if (list.length === 0) {
      this.#listeners.delete(event)
      undispatch(this.#children, event)
    }
    return this
  }

  /**
   * Every child's report with its labels, `[{ labels, ...report }]`, worst
   * first: least budget left, then highest burn rate, then first created.
   */
  report() {
    const rows = []
    for (const [child, entry] of this.#children) {
      rows.push({ row: { labels: { ...entry.labels }, ...child.report() }, left: child.remainingFraction, burn: child.burnRate, seq: entry.seq })
    }
    rows.sort((a, b) => a.left - b.left || b.burn - a.burn || a.seq - b.seq)
    return rows.map((r) => r.row)
  }

  /** Every child with its labels, in creation order: `[{ labels, tracker }]`. */
  children() {
    return [...this.#children].map(([tracker, entry]) => ({ labels: { ...entry.labels }, tracker }))
  }

  /**
   * The family as JSON: its options (not `childConfig`, a function) and every
   * child's `snapshot()` with its labels. `BudgetFamily.restore()` reads it.
   */
  snapshot() {
    return familySnapshot({
      now: () => (this.#manual ? this.#now : Date.now()),
      names: this.#names,
      name: this.#name,
      maxChildren: this.#maxChildren,
      base: this.#base,
      children: this.#children,
    })
  }

  /** With `persist`: writes the family's snapshot to its file now (atomically). */
  save() {
    if (!this.#persist) {
      throw errors.invalidState('save() needs a family created with persist')
    }
    writeAtomically(this.#persist.path, this.snapshot())
  }

  /**
   * The Prometheus text exposition of every child, each series labelled with
   * the family's `name` and the child's labels (lib/prometheus/metrics.js); `options.labels`
   * adds constant labels, as registerMetrics(family, registry, { labels }) does.
   */
  metrics(options) {
    // Loaded on first use, as by the tracker and index.js: requiring the package costs no Prometheus code.
    return require('../prometheus/metrics.js').familyMetrics(this, options)
  }

  /** The children lib/prometheus/metrics.js reads (lib/prometheus/series-source.js): child → entry with its `labels`. */
  [CHILD_SERIES]() {
    return this.#children
  }

  /** Closes every child (their listeners released); with `persist`, writes a final snapshot first. Idempotent. */
  close() {
    if (this.#closed) return
    if (this.#persist) {
      this.save() // throws ERR_PERSIST_WRITE and leaves the family open when it fails
      this.#stopAutosave()
      releaseLock(this.#lock)
      this.#lock = null
    }
    this.#closed = true
    this.#fleet?.close()
    this.#counts?.clear()
    for (const child of this.#children.keys()) child.close()
    this.#children.clear()
    this.#eviction.clear()
    this.#tree.clear()
    // The family's listeners are kept: a closed child still delivers the events its
    // records caused before close() (as a tracker does), through them.
  }

  [Symbol.dispose]() {
    this.close()
  }

  /** `atMs`: the time of the record that creates it, if any (a manual-clock family judges evictions at it when later). */
  #create(labels, atMs) {
    if (this.#closed) throw closedError('labels()')
    const copy = checkLabels(labels, this.#names)
    // A child already there (the fast path refused an object with inherited keys, say).
    const existing = this.#tree.get(copy)
    if (existing !== undefined) return existing
    if (this.#configuring !== null) throw createdInChildConfig(copy, this.#configuring)
    if (this.#children.size >= this.#maxChildren) {
      // A manual-clock child is judged at the family's time, not its own (it may have been idle for hours),
      // and that is the time of the record being made when it is later (a replay's next solve).
      const now = this.#manual ? Math.max(this.#now, atMs === undefined ? -Infinity : Math.floor(atMs)) : Date.now()
      const settle = (child) => {
        if (this.#manual && !child.closed && child.now < now) child.advanceTo(now)
      }
      const evicted = this.#eviction.pick(now, settle)
      if (evicted === undefined) throw familyFull(copy, this.#maxChildren)
      this.#remove(evicted)
    }
    return this.#add(copy, this.#configFor(copy))
  }

  #configFor(labels) {
    let override
    if (this.#childConfig) {
      this.#configuring = labels
      try {
        override = this.#childConfig({ ...labels })
      } finally {
        this.#configuring = null
      }
    }
    return childConfigOf(labels, override, { base: this.#base, fleet: this.#fleet !== null, shared: this.#shared })
  }

  #add(labels, config, restoredChild) {
    const child = restoredChild ?? new Tracker(config)
    if (this.#manual && child.now < this.#now) child.advanceTo(this.#now)
    if (this.#manual && child.now > this.#now) this.#now = child.now
    const entry = { labels: Object.freeze(labels), own: [], dispatchers: new Map(), seq: nextSeq++ }
    this.#fleet?.join(child, entry.labels)
    ownListeners(child, entry, () => this.#eviction.ownListenersGone(child, entry))
    for (const event of this.#listeners.keys()) dispatch(this.#listeners, child, entry, event, this.#blameOf)
    this.#tree.set(labels, child)
    this.#children.set(child, entry)
    this.#eviction.add(child, entry)
    this.#counts?.add(child, entry.labels)
    return child
  }

  #remove(child) {
    const entry = this.#children.get(child)
    this.#children.delete(child)
    this.#eviction.remove(child, entry)
    this.#counts?.remove(child)
    this.#tree.delete(entry.labels)
    this.#fleet?.leave(child)
    child.close()
  }

  /**
   * Rebuilds a family from `snapshot()` JSON: every child restored with its
   * labels. `options` may set `clock`, `now` (manual clock), `childConfig` (for
   * children created from then on) and `persist`.
   */
  static restore(json, options) {
    const { parsed, opts } = readRestoreArgs(json, options)
    // `My.restore()` makes a `My` (a subclass's constructor runs); detached, a BudgetFamily.
    const Family = typeof this === 'function' && (this === BudgetFamily || this.prototype instanceof BudgetFamily) ? this : BudgetFamily
    return new Family({
      labelNames: parsed.labelNames,
      name: parsed.name,
      maxChildren: parsed.maxChildren,
      ...parsed.options,
      ...(opts.clock === undefined ? {} : { clock: opts.clock }),
      ...(opts.childConfig === undefined ? {} : { childConfig: opts.childConfig }),
      ...(opts.persist === undefined ? {} : { persist: opts.persist }),
      ...(opts.attribution === undefined ? {} : { attribution: opts.attribution }),
      [RESTORING]: parsed,
    })
  }
}

// The exported class: a constructor function in front of BudgetFamily (no Proxy, as
// for the tracker), so that a call without new (or .call/.apply) is a TypeError with a
// code; `new`, `extends`, `instanceof`, the statics and `constructor` are BudgetFamily's.
function ExportedFamily(options) {
  if (new.target === undefined) {
    throw errors.constructCallRequired(
      'BudgetFamily is a class: create families with new BudgetFamily(options); calling it without new, or on an existing object (.call/.apply), is refused',
    )
  }
  return Reflect.construct(BudgetFamily, [options], new.target)
}
Object.defineProperty(ExportedFamily, 'name', { value: 'BudgetFamily' })
Object.setPrototypeOf(ExportedFamily, BudgetFamily)
ExportedFamily.prototype = BudgetFamily.prototype
Object.defineProperty(BudgetFamily.prototype, 'constructor', { value: ExportedFamily, writable: true, configurable: true })

module.exports = { BudgetFamily: ExportedFamily }
