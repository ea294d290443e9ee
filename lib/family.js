'use strict'
// BudgetFamily: many error budgets keyed by labels (per CAPTCHA type, target
// site, provider), each child a full ErrorBudgetTracker created on first use.
// The lookup is a tree of Maps, one level per label name, so that
// `family.labels(l)` costs a few Map reads and no string building.
const fs = require('node:fs')
const path = require('node:path')
const errors = require('./errors.js')
const { STATUSES } = require('./fast-report.js')
const { inFlight } = require('./guard.js')
const attribution = require('./blame.js')

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
/**
 * Label names a family's labels may not use: those its Prometheus series set (lib/metrics.js: the tracker's and the
 * throttle's `decision` and `state`), those its rules and alerts set (lib/rules.js) and the scrape's. One list for
 * `labelNames` and `slo.grouping` (`rules --grouping`, lib/rules.js), so that one accepts what the other does.
 */
const RESERVED_LABELS = Object.freeze([
  'name', 'outcome', 'window', 'status', 'alert', 'severity', 'decision', 'state', 'job', 'instance',
  'slo', 'pair', 'alertname', 'alertstate', 'objective', 'period', 'description',
])
/** The family's own options; every other key is a tracker option for each child. */
const FAMILY_KEYS = ['labelNames', 'childConfig', 'maxChildren', 'name', 'persist', 'fleet', 'shared', 'attribution']
/** Tracker options a family does not pass on to its children. */
const NOT_FOR_CHILDREN = {
  snapshot: 'use BudgetFamily.restore(json) to restore a family',
  now: 'use BudgetFamily.restore(json, { now }) to restore a family',
}
/** What childConfig(labels) may not set: the family decides these for every child. */
const FAMILY_WIDE = ['clock', 'persist', 'snapshot', 'now', 'shared', 'fleet']
/** What childConfig(labels) may not change in a fleet family: every child's buckets are the family's. */
const FLEET_WIDE = ['windowMs', 'resolutionMs']
const MAX_CHILDREN_LIMIT = 1_000_000
const DEFAULT_MAX_CHILDREN = 10_000
const EVENTS = [...STATUSES, 'alert', 'resolve', 'incident']
const SNAPSHOT_FORMAT = 'captcha-error-budget.family'
const RESTORE_OPTIONS = ['clock', 'now', 'childConfig', 'persist', 'attribution']

let Tracker // the exported (wrapped) ErrorBudgetTracker class, set by index.js

function closedError(method) {
  const err = new Error(`${method} after close(): the family is closed`)
  err.code = 'ERR_TRACKER_CLOSED'
  return err
}

function snapshotInvalid(message) {
  const err = new Error(`BudgetFamily.restore(json): ${message}`)
  err.code = 'ERR_SNAPSHOT_INVALID'
  return err
}

/**
 * The tracker's "unknown config key" error of a family's options, as the family's
 * own: its keys listed (the family's, then the tracker options it passes on to its
 * children, not those it refuses); undefined for another error.
 */
function unknownFamilyKey(err, where) {
  const match = /^unknown config key '(.*)'; known keys: (.*)$/s.exec(err?.message ?? '')
  if (match === null) return undefined
  const trackerKeys = match[2].split(', ').filter((key) => !FAMILY_KEYS.includes(key) && !Object.hasOwn(NOT_FOR_CHILDREN, key))
  const known = [...FAMILY_KEYS, ...trackerKeys]
  const mine = errors.invalidArgValue(`unknown key '${match[1]}' in ${where}: options; known keys: ${known.join(', ')}`)
  mine.cause = err
  return mine
}

function isPlainObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function showLabels(labels) {
  return JSON.stringify(labels)
}

/**
 * Many error budgets keyed by labels: one ErrorBudgetTracker per label set,
 * created on first use by `labels(l)` (the same object afterwards), bounded by
 * `maxChildren`.
 */
class BudgetFamily {
  #names
  #root = new Map()
  #find
  /** @type {Map<object, { labels: object, own: Array<[string, Function]>, dispatchers: Map<string, Function>, seq: number }>} */
  #children = new Map()
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
  #persistTimer = null
  #lock = null
  #exitHook = null
  #fleet = null
  #probe = null
  #shared = null
  /** `options.attribution` (lib/blame.js), or null. */
  #attribution = null

  /**
   * @param {object} options `labelNames`, `childConfig?`, `maxChildren?`, `name?`, `persist?`, and every
   *   ErrorBudgetTracker option (but `snapshot`, `now`, `shared`, `fleet`) for each child
   */
  constructor(options) {
    const where = 'new BudgetFamily(options)'
    if (!isPlainObject(options)) throw errors.invalidArgType(`${where}: options must be an object, got ${errors.describe(options)}`)
    const restoring = options[RESTORING]
    const { labelNames, childConfig, maxChildren = DEFAULT_MAX_CHILDREN, name = 'default', persist, fleet, shared, attribution: attributionOption, ...base } = options
    delete base[RESTORING] // (the rest copies symbol keys too)
    this.#names = checkLabelNames(labelNames, `${where}: options.labelNames`)
    this.#find = finder(this.#names, this.#root)
    this.#attribution = attribution.checkAttribution(attributionOption, this.#names, `${where}: options.attribution`)
    if (childConfig !== undefined && typeof childConfig !== 'function') {
      throw errors.invalidArgType(`${where}: options.childConfig must be a function (labels) => config, got ${errors.describe(childConfig)}`)
    }
    this.#childConfig = childConfig
    this.#maxChildren = errors.integerOption(maxChildren, `${where}: options.maxChildren`, 1, MAX_CHILDREN_LIMIT, DEFAULT_MAX_CHILDREN)
    if (typeof name !== 'string' || name === '') {
      throw errors.invalidArgType(`${where}: options.name must be a non-empty string, got ${name === '' ? "''" : errors.describe(name)}`)
    }
    this.#name = name
    for (const key of Object.keys(NOT_FOR_CHILDREN)) {
      if (base[key] !== undefined) throw errors.invalidArgValue(`${where}: options.${key} cannot be given to a family (${NOT_FOR_CHILDREN[key]})`)
    }
    this.#persist = persist === undefined ? null : checkPersist(persist, `${where}: options.persist`)
    if (shared !== undefined) {
      if (typeof shared !== 'string' || shared === '') {
        throw errors.invalidArgType(`${where}: options.shared must be a non-empty string, got ${shared === '' ? "''" : errors.describe(shared)}`)
      }
      for (const [key, value] of [['persist', persist], ['fleet', fleet]]) {
        if (value !== undefined) throw errors.invalidArgValue(`${where}: options.shared cannot be given with options.${key}`)
      }
      if (restoring) throw errors.invalidArgValue('BudgetFamily.restore(): a shared family cannot be restored (its children live in the process)')
      this.#shared = shared
    }
    let fleetOptions = null
    if (fleet !== undefined) {
      if (persist !== undefined) throw errors.invalidArgValue(`${where}: options.fleet cannot be given with options.persist: the fleet's window lives in Redis`)
      if (restoring) throw errors.invalidArgValue('BudgetFamily.restore(): a fleet family restores from Redis, not from a snapshot')
      try {
        fleetOptions = require('./fleet/options.js').checkFleet({ fleet })
      } catch (err) {
        err.message = `${where}: ${err.message.replace(/config\./g, 'options.')}`
        throw err
      }
    }
    // The children's options are checked once here, by the tracker's own checks (nothing is kept).
    try {
      new Tracker({ ...base, [errors.ARGUMENT_NAME]: `${where}: options` }).close()
    } catch (err) {
      throw unknownFamilyKey(err, where) ?? err
    }
    this.#base = Object.freeze({ ...base })
    this.#manual = base.clock === 'manual'
    // One owner per persist path, taken before the file is read (released if the constructor throws).
    if (this.#persist) this.#lock = takeLock(this.#persist.path)
    try {
      if (restoring) restoreChildren(this, restoring)
      else if (this.#persist && fs.existsSync(this.#persist.path)) {
        restoreChildren(this, readFamilySnapshot(this.#persist.path, { clock: base.clock }))
      }
    } catch (err) {
      releaseLock(this.#lock)
      this.#lock = null
      throw err
    }
    if (this.#persist) this.#startAutosave()
    if (fleetOptions) this.#startFleet(fleetOptions)
  }

  #startFleet(options) {
    const { fleetLink } = require('./load-native.js')
    const { FamilySync } = require('./fleet/family-sync.js')
    const probe = new Tracker({ ...this.#base })
    let probeLink
    try {
      probeLink = fleetLink(probe, options.bucketMs)
    } catch (err) {
      probe.close()
      throw err
    }
    this.#probe = probe
    const family = this
    const children = this.#children
    const names = this.#names
    this.#fleet = new FamilySync(
      {
        probe,
        probeLink,
        windowMs: JSON.parse(probe.snapshot()).config.windowMs,
        configJson: JSON.stringify({ labelNames: names, ...JSON.parse(probe.snapshot()).config }),
        now: () => (this.#manual ? this.#now : probe.now),
        *children() {
          for (const entry of children.values()) yield [entry.id, entry.link]
        },
        // The counts of the children that recorded since their last drain: a drain
        // costs a walk of the child's buckets, an idle child's is skipped.
        *drained() {
          for (const [child, entry] of children) {
            const { successes, failures } = child.recorded
            const { rejected } = child // a late verdict changes the buckets, not `recorded`
            if (successes === entry.drainedAt[0] && failures === entry.drainedAt[1] && rejected === entry.drainedAt[2]) continue
            entry.drainedAt = [successes, failures, rejected]
            yield [entry.id, entry.link.drain()]
          }
        },
        linkFor(id) {
          let labels
          try {
            labels = JSON.parse(id)
            family.labels(labels)
          } catch (err) {
            process.emitWarning(`fleet '${options.key}': a child another worker created is left out here: ${err.message}`, { code: 'CAPTCHA_BUDGET_FLEET' })
            return null
          }
          return children.get(family.labels(labels)).link
        },
      },
      options,
    )
    this.#fleet.start()
  }

  /**
   * Fleet families: pushes every child's unsent counts and installs the fleet's
   * buckets of every child (those another worker created included), in one
   * Redis call. Rejects with a FleetSyncError when Redis does not answer.
   */
  sync() {
    if (this.#fleet === null) {
      const err = new Error('sync() needs a family created with fleet')
      err.code = 'ERR_INVALID_STATE'
      return Promise.reject(err)
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
   * its site — or null when the evidence does not single one out (lib/blame.js).
   * Needs `options.attribution`.
   */
  blame(labels) {
    if (this.#closed) throw closedError('blame()')
    if (this.#attribution === null) {
      const err = new Error('blame() needs a family created with options.attribution: { provider, site }')
      err.code = 'ERR_INVALID_STATE'
      throw err
    }
    const copy = checkLabels(labels, this.#names, 'family.blame(labels): labels')
    return attribution.blameOf(this.children(), this.#attribution, copy)
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
    if (typeof success !== 'boolean') {
      throw errors.invalidArgType(`family.record(labels, success): success must be a boolean, got ${errors.describe(success)}`)
    }
    const before = this.#children.size
    const child = this.labels(labels)
    try {
      if (atMs === undefined) child.record(success)
      else child.record(success, atMs)
    } catch (err) {
      if (this.#children.size > before) this.#remove(child)
      throw err
    }
    if (this.#manual && atMs > this.#now) this.#now = atMs
  }

  /** Manual clock: moves every child's clock (and the family's) to `ms`; never backwards. */
  advanceTo(ms) {
    if (this.#closed) throw closedError('advanceTo()')
    if (!this.#manual) {
      const err = new Error('advanceTo() needs a family with clock: "manual"')
      err.code = 'ERR_INVALID_STATE'
      throw err
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
      for (const [child, entry] of this.#children) this.#dispatch(child, entry, event)
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
      for (const [child, entry] of this.#children) {
        const dispatcher = entry.dispatchers.get(event)
        entry.dispatchers.delete(event)
        if (dispatcher && !child.closed) Tracker.prototype.off.call(child, event, dispatcher)
      }
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
    const children = [...this.#children].map(([child, entry]) => ({ labels: entry.labels, snapshot: JSON.parse(child.snapshot()) }))
    return JSON.stringify({
      format: SNAPSHOT_FORMAT,
      version: 1,
      savedAt: this.#manual ? this.#now : Date.now(),
      labelNames: this.#names,
      name: this.#name,
      maxChildren: this.#maxChildren,
      options: this.#base,
      children,
    })
  }

  /** With `persist`: writes the family's snapshot to its file now (atomically). */
  save() {
    if (!this.#persist) {
      const err = new Error('save() needs a family created with persist')
      err.code = 'ERR_INVALID_STATE'
      throw err
    }
    writeAtomically(this.#persist.path, this.snapshot())
  }

  /**
   * The Prometheus text exposition of every child, each series labelled with
   * the family's `name` and the child's labels (lib/metrics.js).
   */
  metrics() {
    return require('./metrics.js').familyMetrics(this)
  }

  /** Closes every child (their listeners released); with `persist`, writes a final snapshot first. Idempotent. */
  close() {
    if (this.#closed) return
    if (this.#persist) {
      this.save() // throws ERR_PERSIST_WRITE and leaves the family open when it fails
      clearInterval(this.#persistTimer)
      process.removeListener('exit', this.#exitHook)
      releaseLock(this.#lock)
      this.#lock = null
    }
    this.#closed = true
    if (this.#fleet) {
      this.#fleet.close()
      this.#probe.close()
    }
    for (const child of this.#children.keys()) child.close()
    this.#children.clear()
    this.#root.clear()
    this.#listeners.clear()
  }

  [Symbol.dispose]() {
    this.close()
  }

  #startAutosave() {
    const family = this
    this.#persistTimer = setInterval(() => {
      try {
        family.save()
      } catch (err) {
        process.stderr.write(`captcha-error-budget: family autosave failed: ${err.message}\n`)
      }
    }, this.#persist.intervalMs)
    this.#persistTimer.unref()
    this.#exitHook = () => {
      try {
        family.save()
      } catch (err) {
        process.stderr.write(`captcha-error-budget: family final save failed: ${err.message}\n`)
      }
      releaseLock(family.#lock)
    }
    process.on('exit', this.#exitHook)
  }

  #create(labels) {
    if (this.#closed) throw closedError('labels()')
    const copy = checkLabels(labels, this.#names)
    // A child already there (the fast path refused an object with inherited keys, say).
    let node = this.#root
    for (const name of this.#names) {
      node = node.get(copy[name])
      if (node === undefined) break
    }
    if (node !== undefined) return node
    if (this.#configuring !== null) {
      const err = new Error(
        `family.labels(${showLabels(copy)}) inside childConfig(${showLabels(this.#configuring)}): childConfig cannot create a child ` +
          '(it runs while one is being created); nothing was created',
      )
      err.code = 'ERR_INVALID_STATE'
      throw err
    }
    if (this.#children.size >= this.#maxChildren && !this.#evictOne()) {
      const err = new RangeError(
        `family.labels(${showLabels(copy)}): the family holds maxChildren (${this.#maxChildren}) children and none can be evicted ` +
          '(each has solves in its window, a listener of its own or a guard() in flight); nothing was created',
      )
      err.code = 'ERR_OUT_OF_RANGE'
      throw err
    }
    return this.#add(copy, this.#configFor(copy))
  }

  #configFor(labels) {
    let override = {}
    if (this.#childConfig) {
      this.#configuring = labels
      try {
        override = this.#childConfig({ ...labels })
      } finally {
        this.#configuring = null
      }
      if (override == null) override = {}
      if (typeof override.then === 'function') {
        Promise.resolve(override).catch(() => {}) // its rejection is not the process's: the TypeError says what is wrong
        throw errors.invalidArgType(
          `childConfig(${showLabels(labels)}) returned a Promise (an async function?): it must return the child's config object (or undefined) synchronously`,
        )
      }
      if (!isPlainObject(override)) {
        throw errors.invalidArgType(`childConfig(${showLabels(labels)}) must return an object (or undefined), got ${errors.describe(override)}`)
      }
      for (const key of FAMILY_WIDE) {
        if (override[key] !== undefined) {
          throw errors.invalidArgValue(`childConfig(${showLabels(labels)}).${key} cannot differ per child: give it to the family`)
        }
      }
      for (const key of this.#probe === null ? [] : FLEET_WIDE) {
        if (override[key] !== undefined && override[key] !== this.#base[key]) {
          throw errors.invalidArgValue(`childConfig(${showLabels(labels)}).${key} cannot differ per child in a fleet family (every child's buckets are the family's)`)
        }
      }
    }
    const config = { ...this.#base, ...override, [errors.ARGUMENT_NAME]: `childConfig(${showLabels(labels)})` }
    // Shared: the same child in every thread whose family has this name (ErrorBudgetTracker.shared).
    if (this.#shared !== null) config.shared = `${this.#shared}\u001f${JSON.stringify(labels)}`
    return config
  }

  #add(labels, config, restoredChild) {
    const child = restoredChild ?? new Tracker(config)
    if (this.#manual && child.now < this.#now) child.advanceTo(this.#now)
    if (this.#manual && child.now > this.#now) this.#now = child.now
    const entry = { labels: Object.freeze(labels), own: [], dispatchers: new Map(), seq: nextSeq++, id: undefined, link: undefined }
    if (this.#probe !== null) {
      try {
        entry.link = require('./load-native.js').fleetLink(child, this.#fleet.bucketMs)
      } catch (err) {
        child.close()
        throw err
      }
      entry.id = JSON.stringify(labels)
      entry.drainedAt = [-1, -1]
    }
    ownListeners(child, entry)
    for (const event of this.#listeners.keys()) this.#dispatch(child, entry, event)
    let node = this.#root
    const names = this.#names
    for (let i = 0; i < names.length - 1; i++) {
      let next = node.get(labels[names[i]])
      if (next === undefined) {
        next = new Map()
        node.set(labels[names[i]], next)
      }
      node = next
    }
    node.set(labels[names[names.length - 1]], child)
    this.#children.set(child, entry)
    return child
  }

  #dispatch(child, entry, event) {
    const listeners = this.#listeners
    const dispatcher = (payload) => {
      const list = listeners.get(event)
      if (list === undefined) return
      // An incident says whose fault it is, when the family knows its provider and site labels.
      if (event === 'incident' && this.#attribution !== null && !this.#closed) payload.blame = this.blame(entry.labels)
      for (const listener of list.slice()) {
        try {
          listener(payload, entry.labels)
        } catch (err) {
          process.emitWarning(err instanceof Error ? err : String(err), { type: 'BudgetFamilyListenerError' })
        }
      }
    }
    entry.dispatchers.set(event, dispatcher)
    Tracker.prototype.on.call(child, event, dispatcher)
  }

  // The oldest child whose window is empty, that has no listener of its own and no guard() in flight.
  #evictOne() {
    for (const [child, entry] of this.#children) {
      if (entry.own.length === 0 && child.total === 0 && !inFlight.has(child)) {
        this.#remove(child)
        return true
      }
    }
    return false
  }

  #remove(child) {
    const entry = this.#children.get(child)
    this.#children.delete(child)
    const path = [this.#root]
    for (const name of this.#names.slice(0, -1)) path.push(path[path.length - 1].get(entry.labels[name]))
    const names = this.#names
    path[path.length - 1].delete(entry.labels[names[names.length - 1]])
    for (let i = path.length - 1; i > 0; i--) {
      if (path[i].size === 0) path[i - 1].delete(entry.labels[names[i - 1]])
    }
    child.close()
  }

  /** @internal restore(): adds a restored child. */
  static _addRestored(family, labels, child) {
    family.#add(labels, undefined, child)
  }

  /** @internal the child's entry (labels) for metrics. */
  static _entries(family) {
    return family.#children
  }

  /**
   * Rebuilds a family from `snapshot()` JSON: every child restored with its
   * labels. `options` may set `clock`, `now` (manual clock), `childConfig` (for
   * children created from then on) and `persist`.
   */
  static restore(json, options) {
    if (typeof json !== 'string') throw errors.invalidArgType(`BudgetFamily.restore(json): json must be a string, got ${errors.describe(json)}`)
    const opts = errors.checkOptionsObject(options ?? undefined, RESTORE_OPTIONS, 'BudgetFamily.restore(json, options): options')
    if (opts.childConfig !== undefined && typeof opts.childConfig !== 'function') {
      throw errors.invalidArgType(
        `BudgetFamily.restore(json, options): options.childConfig must be a function (labels) => config, got ${errors.describe(opts.childConfig)}`,
      )
    }
    const parsed = parseFamilySnapshot(json, opts)
    checkSnapshotContent(parsed)
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

const RESTORING = Symbol('restoring')
let nextSeq = 0

function restoreChildren(family, parsed) {
  if (JSON.stringify(parsed.labelNames) !== JSON.stringify(family.labelNames)) {
    throw snapshotInvalid(`labelNames [${parsed.labelNames}] differ from the family's [${family.labelNames}]`)
  }
  const restored = []
  const seen = new Map() // each child's labels (as JSON, in labelNames order) → its index
  try {
    for (const [i, { labels, snapshot }] of parsed.children.entries()) {
      const copy = checkLabels(labels, parsed.labelNames, `children[${i}].labels`, snapshotInvalid)
      const key = JSON.stringify(copy)
      if (seen.has(key)) throw snapshotInvalid(`children[${i}].labels ${key} are those of children[${seen.get(key)}]: each label set is one child`)
      seen.set(key, i)
      const opts = { clock: parsed.clock }
      if (parsed.now !== undefined) opts.now = parsed.now
      restored.push([copy, Tracker.restore(JSON.stringify(snapshot), opts)])
    }
    if (restored.length > family.maxChildren) throw snapshotInvalid(`${restored.length} children, over maxChildren (${family.maxChildren})`)
  } catch (err) {
    for (const [, child] of restored) child.close()
    throw err
  }
  for (const [labels, child] of restored) BudgetFamily._addRestored(family, labels, child)
}

function parseFamilySnapshot(json, opts) {
  let parsed
  try {
    parsed = JSON.parse(json.charCodeAt(0) === 0xfeff ? json.slice(1) : json)
  } catch (err) {
    throw snapshotInvalid(`not JSON (${err.message})`)
  }
  if (!isPlainObject(parsed) || parsed.format !== SNAPSHOT_FORMAT) throw snapshotInvalid(`not a family snapshot (format must be '${SNAPSHOT_FORMAT}')`)
  if (parsed.version !== 1) throw snapshotInvalid(`version ${parsed.version} is not supported (1 is)`)
  if (!Array.isArray(parsed.labelNames) || !Array.isArray(parsed.children) || !isPlainObject(parsed.options)) {
    throw snapshotInvalid('labelNames, options and children are required')
  }
  return { ...parsed, clock: opts.clock ?? parsed.options.clock, now: opts.now }
}

/**
 * What restore() takes from the snapshot itself (labelNames, name, maxChildren,
 * the children's options), checked before anything is created: a bad value is
 * the document's fault, ERR_SNAPSHOT_INVALID, not a TypeError of the caller's.
 */
function checkSnapshotContent(parsed) {
  const where = "the snapshot's"
  try {
    checkLabelNames(parsed.labelNames, `${where} labelNames`)
    errors.integerOption(parsed.maxChildren, `${where} maxChildren`, 1, MAX_CHILDREN_LIMIT, DEFAULT_MAX_CHILDREN)
    if (parsed.name !== undefined && (typeof parsed.name !== 'string' || parsed.name === '')) {
      throw errors.invalidArgType(`${where} name must be a non-empty string, got ${parsed.name === '' ? "''" : errors.describe(parsed.name)}`)
    }
    for (const key of [...FAMILY_KEYS, ...Object.keys(NOT_FOR_CHILDREN)]) {
      if (Object.hasOwn(parsed.options, key)) {
        throw errors.invalidArgValue(`${where} options.${key} cannot be there: they are the children's tracker options, and ${key} is the family's or one a family refuses`)
      }
    }
    new Tracker({ ...parsed.options, [errors.ARGUMENT_NAME]: `${where} options` }).close()
  } catch (err) {
    if (err.code === 'ERR_SNAPSHOT_INVALID') throw err
    throw Object.assign(snapshotInvalid(err.message), { cause: err })
  }
}

function readFamilySnapshot(file, opts) {
  let text
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (err) {
    throw Object.assign(new Error(`persist: cannot read ${file}: ${err.message}`), { code: 'ERR_PERSIST_READ', cause: err })
  }
  return parseFamilySnapshot(text, opts)
}

function writeAtomically(file, text) {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`)
  try {
    const fd = fs.openSync(tmp, 'w')
    try {
      fs.writeFileSync(fd, text)
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
    fs.renameSync(tmp, file)
  } catch (err) {
    try {
      fs.unlinkSync(tmp)
    } catch {}
    throw Object.assign(new Error(`persist: cannot write ${file}: ${err.message}`), { code: 'ERR_PERSIST_WRITE', cause: err })
  }
}

// The lock files (`<path>.lock`) the families of this process hold.
const lockedPaths = new Set()

function lockPathOf(file) {
  // Through symlinks, as the tracker's lock: two links to one file share one lock.
  let target
  try {
    target = fs.realpathSync(file)
  } catch {
    try {
      target = path.join(fs.realpathSync(path.dirname(path.resolve(file))), path.basename(file))
    } catch {
      target = path.resolve(file)
    }
  }
  return `${target}.lock`
}

function lockOwner(lockPath) {
  try {
    const pid = Number(fs.readFileSync(lockPath, 'utf8').trim())
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null
  } catch {
    return null
  }
}

function isRunning(pid) {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err.code !== 'ESRCH' // EPERM: it runs, as another user
  }
}

function lockedError(file, lockPath, owner) {
  const err = new Error(
    `persist: ${file}: is in use by ${owner} (lock ${lockPath}): one family owns a persist path; close() the other first, or give each family its own path`,
  )
  err.code = 'ERR_PERSIST_LOCKED'
  return err
}

/**
 * Takes `<path>.lock` (created with 'wx', holding this process's pid), or throws
 * ERR_PERSIST_LOCKED naming its owner. A lock of a pid that no longer runs is
 * taken over. Where no lock file can be made (a missing or read-only directory)
 * the path is used unlocked: reading and writing it fail on their own.
 * @returns {string | null} the lock file's path, for releaseLock()
 */
function takeLock(file) {
  const lockPath = lockPathOf(file)
  if (lockedPaths.has(lockPath)) throw lockedError(file, lockPath, 'another family of this process')
  for (let i = 0; i < 16; i++) {
    let fd
    try {
      fd = fs.openSync(lockPath, 'wx')
    } catch (err) {
      if (err.code !== 'EEXIST') return null
      const pid = lockOwner(lockPath)
      if (pid === process.pid) throw lockedError(file, lockPath, 'another tracker of this process')
      if (pid !== null && isRunning(pid)) throw lockedError(file, lockPath, `process ${pid}`)
      // Stale (its owner is gone): taken over, unless someone else did so meanwhile.
      if (lockOwner(lockPath) === pid) {
        try {
          fs.unlinkSync(lockPath)
        } catch {}
      }
      continue
    }
    try {
      fs.writeSync(fd, `${process.pid}\n`)
    } finally {
      fs.closeSync(fd)
    }
    lockedPaths.add(lockPath)
    return lockPath
  }
  throw Object.assign(new Error(`persist: cannot lock ${file}: ${lockPath} keeps being replaced`), { code: 'ERR_PERSIST_LOCKED' })
}

function releaseLock(lockPath) {
  if (lockPath === null || !lockedPaths.has(lockPath)) return
  lockedPaths.delete(lockPath)
  try {
    if (lockOwner(lockPath) === process.pid) fs.unlinkSync(lockPath)
  } catch {}
}

function checkPersist(persist, where) {
  const { path: file, intervalMs = 60_000, ...rest } = errors.checkOptionsObject(persist, ['path', 'intervalMs'], where)
  if (persist === undefined || Object.keys(rest).length) throw errors.invalidArgType(`${where} must be { path, intervalMs? }`)
  if (typeof file !== 'string' || file === '') throw errors.invalidArgType(`${where}.path must be a non-empty string, got ${errors.describe(file)}`)
  return { path: file, intervalMs: errors.integerOption(intervalMs, `${where}.intervalMs`, 1, 2 ** 31 - 1, 60_000) }
}

function checkLabelNames(labelNames, where) {
  if (!Array.isArray(labelNames)) throw errors.invalidArgType(`${where} must be an array of label names, got ${errors.describe(labelNames)}`)
  if (labelNames.length === 0) throw errors.invalidArgValue(`${where} must name at least one label`)
  const seen = new Set()
  for (const name of labelNames) {
    if (typeof name !== 'string') throw errors.invalidArgType(`${where}: each label name must be a string, got ${errors.describe(name)}`)
    if (!LABEL_NAME.test(name) || name.startsWith('__')) {
      throw errors.invalidArgValue(`${where}: '${name}' is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, no leading __)`)
    }
    if (RESERVED_LABELS.includes(name)) throw errors.invalidArgValue(`${where}: '${name}' is reserved (${RESERVED_LABELS.join(', ')})`)
    if (seen.has(name)) throw errors.invalidArgValue(`${where}: '${name}' is given twice`)
    seen.add(name)
  }
  return Object.freeze([...labelNames])
}

/** Checks that `labels` has exactly `names` as own keys with string values; returns a copy in `names` order. */
function checkLabels(labels, names, where = `family.labels(labels): labels`, fail) {
  const typeError = fail ?? errors.invalidArgType
  const valueError = fail ?? errors.invalidArgValue
  if (!isPlainObject(labels)) throw typeError(`${where} must be an object with the keys ${names.join(', ')}, got ${errors.describe(labels)}`)
  const copy = {}
  for (const name of names) {
    if (!Object.hasOwn(labels, name)) throw valueError(`${where}.${name} is missing; a family's labels are exactly: ${names.join(', ')}`)
    const value = labels[name]
    if (typeof value !== 'string') throw typeError(`${where}.${name} must be a string, got ${errors.describe(value)}`)
    copy[name] = value
  }
  for (const key in labels) {
    if (!names.includes(key)) throw valueError(`${where}.${key} is not a label of this family; its labels are exactly: ${names.join(', ')}`)
  }
  return copy
}

/**
 * The fast path of `labels(l)`: the child for `l` when it exists and `l` has
 * exactly as many keys, all its own, as there are label names, else undefined (the checked
 * path then decides). A Map read per label name, unrolled with the names as
 * constant property keys (checked identifiers: [a-zA-Z_][a-zA-Z0-9_]*), which is
 * about half the cost of a loop over the names; the loop where code generation
 * is disallowed.
 */
function finder(names, root) {
  const count = names.length
  const reads = names.map((name) => `node = node.get(l[${JSON.stringify(name)}]); if (node === undefined) return undefined;`).join(' ')
  try {
    return new Function(
      'root',
      'hasOwn',
      `return function find(l) { if (typeof l !== 'object' || l === null) return undefined; let node = root; ${reads} let n = 0; for (const k in l) { if (!hasOwn(l, k)) return undefined; n++ } return n === ${count} ? node : undefined }`,
    )(root, Object.hasOwn)
  } catch {
    return function find(l) {
      if (typeof l !== 'object' || l === null) return undefined
      let node = root
      for (let i = 0; i < count && node !== undefined; i++) node = node.get(l[names[i]])
      if (node === undefined) return undefined
      let n = 0
      for (const k in l) {
        if (!Object.hasOwn(l, k)) return undefined
        n++
      }
      return n === count ? node : undefined
    }
  }
}

function checkListenerArgs(method, event, listener) {
  if (typeof event !== 'string') throw errors.invalidArgType(`family.${method}(event, listener): event must be a string, got ${errors.describe(event)}`)
  if (!EVENTS.includes(event)) {
    throw errors.invalidArgValue(`family.${method}(event, listener): unknown event '${event}'; known events: ${EVENTS.join(', ')}`)
  }
  if (typeof listener !== 'function') {
    throw errors.invalidArgType(`family.${method}(event, listener): listener must be a function, got ${errors.describe(listener)}`)
  }
}

// A child's own on()/off() note its own listeners: a child with one is never evicted.
function ownListeners(child, entry) {
  const baseOn = child.on
  const baseOff = child.off
  const own = (name, value) => Object.defineProperty(child, name, { value, writable: true, configurable: true })
  own('on', function on(event, listener) {
    baseOn.call(this, event, listener)
    entry.own.push([event, listener])
    return this
  })
  own('off', function off(event, listener) {
    baseOff.call(this, event, listener)
    for (let i = entry.own.length - 1; i >= 0; i--) {
      if (entry.own[i][0] === event && entry.own[i][1] === listener) {
        entry.own.splice(i, 1)
        break
      }
    }
    return this
  })
}

/**
 * index.js hands over the exported tracker class (with its fleet and counter
 * wrappers) and gets the family class back.
 * @param {Function} ErrorBudgetTracker
 */
function familyClass(ErrorBudgetTracker) {
  Tracker = ErrorBudgetTracker
  return ExportedFamily
}

// The exported class: a constructor function in front of BudgetFamily (no Proxy, as
// for the tracker), so that a call without new (or .call/.apply) is a TypeError with a
// code; `new`, `extends`, `instanceof`, the statics and `constructor` are BudgetFamily's.
function ExportedFamily(options) {
  if (new.target === undefined) {
    const err = new TypeError(
      'BudgetFamily is a class: create families with new BudgetFamily(options); calling it without new, or on an existing object (.call/.apply), is refused',
    )
    err.code = 'ERR_CONSTRUCT_CALL_REQUIRED'
    throw err
  }
  return Reflect.construct(BudgetFamily, [options], new.target)
}
Object.defineProperty(ExportedFamily, 'name', { value: 'BudgetFamily' })
Object.setPrototypeOf(ExportedFamily, BudgetFamily)
ExportedFamily.prototype = BudgetFamily.prototype
Object.defineProperty(BudgetFamily.prototype, 'constructor', { value: ExportedFamily, writable: true, configurable: true })

module.exports = { familyClass, BudgetFamily: ExportedFamily, RESERVED_LABELS }
