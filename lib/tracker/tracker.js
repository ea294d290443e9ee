'use strict'
// The exported ErrorBudgetTracker: the one JavaScript class, over the addon's.
//
//   native (src/tracker.rs)   the state, record(), recordMany(), on()/off(),
//                             close(), snapshot(), …; each instance gets a
//                             raw `record`, a report filler and a figure reader
//                             (src/fast_path.rs)
//   this file                 the constructor (config.fleet, counters from
//                             construction), the getters, report(), guard(),
//                             metrics(), sync(), restore() and shared(), and
//                             every native member behind a receiver check
//
// `ErrorBudgetTracker` is a constructor function rather than `class … extends`:
// a class cannot be called, and calling this one without `new` must give the
// native TypeError (ERR_CONSTRUCT_CALL_REQUIRED). It inherits the native class
// (statics and prototype), `tracker.constructor === ErrorBudgetTracker`,
// `instanceof` holds for both, and `class Mine extends ErrorBudgetTracker` works.
// A fleet tracker (config.fleet) is an ErrorBudgetTracker too: its FleetSync is
// a component (lib/fleet/), asked by report(), on(), off(), close() and sync().
// 'incident' listeners are JavaScript over the native 'alert' / 'resolve' (lib/tracker/incidents.js).

const native = require('../native/load-native.js')
const errors = require('../util/errors.js')
const { FIGURE, FIGURE_INDEX: F, NATIVE_RECORD } = require('../native/contract.js')
const { fastReport, STATUSES } = require('../native/fast-report.js')
const { makeGuard } = require('../guard/guard.js')
const counterStart = require('../prometheus/counter-start.js')
const fleet = require('../fleet/index.js')
const incidents = require('./incidents.js')
const { suggestConfigKey, didYouMean } = require('../util/suggest.js')
const guardState = require('../guard/state.js')

const Native = native.ErrorBudgetTracker
const nativeProto = Native.prototype
// The native report stays on WASI: there the native side fills a copy of the
// buffer in wasm memory, never the caller's Float64Array.
const FAST_REPORT = native.__napiBindingTarget === 'native'

/**
 * Tracks success/failure events in a rolling window against an SLO target (the
 * addon's class, with the JavaScript parts). See index.d.ts.
 * @param {object} [config]
 */
function ErrorBudgetTracker(config) {
  // Called (not constructed): the native constructor's own refusal, changing nothing.
  if (new.target === undefined) return Reflect.apply(Native, this, arguments)
  const withFleet = fleet.fleetConfig(config)
  const args = withFleet === null ? arguments : [withFleet.rest, ...Array.prototype.slice.call(arguments, 1)]
  let tracker
  try {
    tracker = Reflect.construct(Native, args, new.target)
  } catch (err) {
    throw suggestConfigKey(err)
  }
  if (withFleet !== null) fleet.linkFleet(tracker, withFleet.options)
  // Counters from construction (lib/prometheus/counter-start.js); not for a shared handle. The
  // config is not read again (a getter would run twice): an own `shared` key is enough.
  const shared = typeof config === 'object' && config !== null && Object.getOwnPropertyDescriptor(config, 'shared') !== undefined
  if (!shared) counterStart.countFromHere(tracker)
  return tracker
}
Object.setPrototypeOf(ErrorBudgetTracker, Native)
ErrorBudgetTracker.prototype = Object.create(nativeProto, {
  constructor: { value: ErrorBudgetTracker, writable: true, configurable: true },
})
Object.defineProperty(ErrorBudgetTracker, 'prototype', { writable: false })

/** The getter `name`, called on a receiver that is not a tracker: ERR_INVALID_THIS. */
function notATracker(name, receiver) {
  throw errors.invalidThis(`the ${name} getter`, receiver)
}

/**
 * Throws ERR_INVALID_THIS naming `member` unless `receiver` is a tracker: each has its own figure
 * reader (src/fast_path.rs). Without it, napi-rs's glue would say "Failed to unwrap exclusive reference".
 */
function checkThis(receiver, member) {
  if (receiver?.[FIGURE] === undefined) throw errors.invalidThis(member, receiver)
}

// --- the getters -----------------------------------------------------------------
// Each reads one figure through the tracker's own raw `figure` function (one
// bare Node-API call: src/fast_path.rs), called as a method: V8 calls a native
// function with an `undefined` receiver through a slower path. A receiver
// without one is not a tracker, and the native getter says so. Every other native getter
// (`recorded`, `alertPolicy`, …) is defined on this prototype as it is.
const getters = {
  get now() {
    return this?.[FIGURE] === undefined ? notATracker('now', this) : this[FIGURE](F.now)
  },
  get total() {
    return this?.[FIGURE] === undefined ? notATracker('total', this) : this[FIGURE](F.total)
  },
  get successes() {
    return this?.[FIGURE] === undefined ? notATracker('successes', this) : this[FIGURE](F.successes)
  },
  get failures() {
    return this?.[FIGURE] === undefined ? notATracker('failures', this) : this[FIGURE](F.failures)
  },
  get currentRate() {
    return this?.[FIGURE] === undefined ? notATracker('currentRate', this) : this[FIGURE](F.currentRate)
  },
  get budgetTotal() {
    return this?.[FIGURE] === undefined ? notATracker('budgetTotal', this) : this[FIGURE](F.budgetTotal)
  },
  get budgetRemaining() {
    return this?.[FIGURE] === undefined ? notATracker('budgetRemaining', this) : this[FIGURE](F.budgetRemaining)
  },
  get remainingFraction() {
    return this?.[FIGURE] === undefined ? notATracker('remainingFraction', this) : this[FIGURE](F.remainingFraction)
  },
  get burnRate() {
    return this?.[FIGURE] === undefined ? notATracker('burnRate', this) : this[FIGURE](F.burnRate)
  },
  get status() {
    return this?.[FIGURE] === undefined ? notATracker('status', this) : STATUSES[this[FIGURE](F.status)]
  },
  get lastStatus() {
    return this?.[FIGURE] === undefined ? notATracker('lastStatus', this) : STATUSES[this[FIGURE](F.lastStatus)]
  },
  get closed() {
    return this?.[FIGURE] === undefined ? notATracker('closed', this) : this[FIGURE](F.closed) === 1
  },
  /** The native counts by outcome, plus the guard's attempts neither counted nor failed (lib/guard/state.js). */
  get recorded() {
    if (this?.[FIGURE] === undefined) notATracker('recorded', this)
    const { excluded, capacity } = guardState.countsOf(this)
    // Every native count as it is (the core may count more outcomes), then the guard's two.
    return { ...nativeRecorded.call(this), excluded, capacity }
  },
}
const nativeRecorded = Object.getOwnPropertyDescriptor(nativeProto, 'recorded').get

// --- the methods ----------------------------------------------------------------
// The Prometheus exposition is loaded on first use: requiring the package costs the tracker only (docs/performance.md).
const lazy = {
  get metrics() {
    return require('../prometheus/metrics.js')
  },
}

const methods = {
  /**
   * The report now (built in JavaScript from one native call: lib/native/fast-report.js), with the
   * guard's `excluded`, `capacity` and `throttle` (lib/guard/state.js: zeros and null before the
   * first guard()), then `fleet` for a fleet tracker.
   */
  report() {
    checkThis(this, 'report()')
    const report = guardState.withGuardFields((FAST_REPORT && fastReport(this)) || nativeProto.report.call(this), this)
    const sync = this[fleet.FLEET]
    if (sync !== undefined) report.fleet = sync.info()
    return report
  },

  /** One solve attempt, recorded exactly once (lib/guard/guard.js). */
  guard: makeGuard(ErrorBudgetTracker),

  // (No named parameter: the same `length` as lib/prometheus/metrics.js's `metrics(options = {})`.)
  /** This tracker's Prometheus series (lib/prometheus/metrics.js, loaded on first use). */
  metrics() {
    return lazy.metrics.metrics.apply(this, arguments)
  },

  /** As the native on(), plus 'incident' listeners (lib/tracker/incidents.js) and 'fleet-error' listeners of a fleet tracker. */
  on(event, listener) {
    checkThis(this, 'on()')
    if (event === 'incident') return incidents.addIncidentListener(this, listener, nativeProto.on)
    const sync = fleet.fleetOf(this)
    if (sync === undefined || event !== 'fleet-error' || typeof listener !== 'function')
      return incidents.withIncidentEvent(nativeProto.on, this, event, listener)
    sync.errorListeners.push(listener)
    return this
  },

  /** As the native off(), plus 'incident' listeners and 'fleet-error' listeners of a fleet tracker. */
  off(event, listener) {
    checkThis(this, 'off()')
    if (event === 'incident') return incidents.removeIncidentListener(this, listener, nativeProto.off)
    const sync = fleet.fleetOf(this)
    if (sync === undefined || event !== 'fleet-error') return incidents.withIncidentEvent(nativeProto.off, this, event, listener)
    const i = sync.errorListeners.lastIndexOf(listener)
    if (i >= 0) sync.errorListeners.splice(i, 1)
    return this
  },

  /** As the native close(); a fleet tracker stops its sync first. */
  close() {
    checkThis(this, 'close()')
    fleet.fleetOf(this)?.close()
    return nativeProto.close.call(this)
  },

  /**
   * Pushes this worker's unsent counts and installs the fleet's window, now
   * (after any sync in progress). Resolves to `report().fleet`; rejects with a
   * FleetSyncError (`code` 'ERR_FLEET_SYNC') when Redis did not answer, the
   * counts staying unsent for the next sync.
   */
  sync() {
    const sync = fleet.fleetOf(this)
    if (sync === undefined) {
      return Promise.reject(errors.invalidState('sync() needs a tracker created with config.fleet'))
    }
    return sync.sync()
  },
}
if (typeof Symbol.dispose === 'symbol') methods[Symbol.dispose] = methods.close

// Like a class's members: not enumerable.
const proto = ErrorBudgetTracker.prototype
for (const [key, descriptor] of [...Object.entries(Object.getOwnPropertyDescriptors(getters)), ...Object.entries(Object.getOwnPropertyDescriptors(methods))]) {
  Object.defineProperty(proto, key, { ...descriptor, enumerable: false })
}
if (typeof Symbol.dispose === 'symbol') Object.defineProperty(proto, Symbol.dispose, { value: methods.close, writable: true, configurable: true })
// Every other native member (`recorded`, `snapshot()`, …), behind the receiver check, as the native class has it.
for (const [key, descriptor] of Object.entries(Object.getOwnPropertyDescriptors(nativeProto))) {
  if (key === 'constructor' || Object.hasOwn(proto, key)) continue
  if (typeof descriptor.get === 'function') {
    const get = descriptor.get
    const member = `the ${key} getter`
    Object.defineProperty(proto, key, {
      ...descriptor,
      get: function () {
        checkThis(this, member)
        return get.call(this)
      },
    })
  } else if (typeof descriptor.value === 'function') {
    const method = descriptor.value
    const member = `${key}()`
    const checked = {
      [key]() {
        checkThis(this, member)
        return Reflect.apply(method, this, arguments)
      },
    }[key]
    Object.defineProperty(proto, key, { ...descriptor, value: checked })
  }
}
// The constructor tells a subclass that overrides `record` from this class by this symbol (src/fast_path.rs):
// this class's `record` is the checked one.
Object.defineProperty(proto, NATIVE_RECORD, { value: proto.record, configurable: true })

// --- the statics -----------------------------------------------------------------
/** The options `restore()` takes (the config fields that may go with a snapshot: the core's table); read on first use. */
let restoreKeys = null
const restoreOptions = () =>
  (restoreKeys ??= native
    .configFields()
    .filter((f) => f.withSnapshot)
    .map((f) => f.name))

/**
 * Rebuilds a tracker from `snapshot()` JSON, aged to now: its config comes from
 * the snapshot; `options` (undefined or null for none) may set `clock`, `now`
 * (manual clock) and `persist`. A leading UTF-8 byte-order mark is ignored. A
 * corrupt, truncated, wrong-version or inconsistent snapshot throws
 * `ERR_SNAPSHOT_INVALID` and creates nothing.
 */
ErrorBudgetTracker.restore = function restore(json, options) {
  if (typeof json !== 'string') throw errors.invalidArgType(`restore(json): json must be a string, got ${errors.describe(json)}`)
  if (options != null && (typeof options !== 'object' || Array.isArray(options))) {
    throw errors.invalidArgType(`restore(json, options): options must be an object, got ${errors.describe(options)}`)
  }
  // The keys are checked here: the constructor would blame config keys the caller never wrote
  // ("config.windowMs cannot be given with config.snapshot").
  for (const key of Object.keys(options ?? {})) {
    if (!restoreOptions().includes(key)) {
      throw errors.invalidArgValue(
        `restore(json, options): options.${key} is not an option of restore (the config comes from the snapshot); known options: ${restoreOptions().join(', ')}${didYouMean(key, restoreOptions())}`,
      )
    }
  }
  // The constructor names a bad clock, now or persist the way the caller wrote it: options.<key>.
  return new (ownClass(this))({ ...options, snapshot: json, [errors.ARGUMENT_NAME]: 'restore(json, options): options' })
}

/**
 * The class a static was called on (`My.restore()` makes a `My`, as
 * `Array.from` does): `this` when it is ErrorBudgetTracker or a subclass,
 * else (the static called detached) ErrorBudgetTracker.
 */
function ownClass(receiver) {
  return receiver === ErrorBudgetTracker || (typeof receiver === 'function' && receiver.prototype instanceof ErrorBudgetTracker) ? receiver : ErrorBudgetTracker
}

/**
 * A handle on the process-wide tracker called `name`, created with `config` on
 * first use; the same name is the same window in every worker thread. Without
 * `config` (undefined or null) it attaches to the existing tracker, or creates
 * one with the defaults; with a config that differs from the existing one's it
 * throws a TypeError (ERR_INVALID_ARG_VALUE) naming the fields. The tracker lives while one of its
 * handles is open and not collected.
 */
ErrorBudgetTracker.shared = function shared(name, config) {
  if (typeof name !== 'string' || name === '') {
    throw errors.invalidArgType(`shared(name): name must be a non-empty string, got ${name === '' ? "''" : errors.describe(name)}`)
  }
  if (config != null && (typeof config !== 'object' || Array.isArray(config))) {
    throw errors.invalidArgType(`shared(name, config): config must be an object, got ${errors.describe(config)}`)
  }
  return new (ownClass(this))({ ...config, shared: name })
}

module.exports = {
  ErrorBudgetTracker,
  FleetSyncError: fleet.FleetSyncError,
  /** The core's empty snapshot of a fleet's stored config (lib/cli/gate/redis.js). */
  fleetEmptySnapshot: native.fleetEmptySnapshot,
}
