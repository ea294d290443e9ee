'use strict'
// The package entry: the native addon (native.js, the loader napi-rs generates)
// plus the parts written in JavaScript. Each export is assigned on its own line
// so that Node's CommonJS-to-ESM detection sees it (`import { … } from`).
const native = require('./lib/load-native.js')
const errors = require('./lib/errors.js')

// A clear TypeError (ERR_INVALID_THIS) for native members called on anything but a tracker (lib/receiver.js).
require('./lib/receiver.js').installReceiverChecks(native.ErrorBudgetTracker)
// tracker.guard(fn, options): one solve attempt, recorded exactly once (lib/guard.js).
require('./lib/guard.js').installGuard(native.ErrorBudgetTracker)
// tracker.report() built in JavaScript from the native figures (lib/fast-report.js).
// Not on the WASI build: there the native side fills a copy of the buffer in
// wasm memory, never the caller's Float64Array, so the native report stays.
if (native.__napiBindingTarget === 'native') {
  require('./lib/fast-report.js').installFastReport(native.ErrorBudgetTracker)
}

// What not every user calls is required on first use, so that requiring the package
// costs the addon and the tracker's own JavaScript only (docs/performance.md): the
// CaptchaAI client, the Prometheus exposition, and the rules, which load `yaml`.
// The exports below are small functions that forward to these modules (with their
// arguments as given), so that neither require() nor an ESM import loads them.
const lazy = {
  get solver() {
    return require('./lib/solver.js')
  },
  get metrics() {
    return require('./lib/metrics.js')
  },
  get rules() {
    return require('./lib/rules.js')
  },
}

// The constants are exported as getters of this object: Node's CommonJS-to-ESM
// detection recognises a getter that returns one property of an identifier. An ESM
// import reads every export, which loads lib/solver.js and lib/metrics.js, not `yaml`.
const constants = {
  get CALLER_ERROR_CODES() {
    return lazy.solver.CALLER_ERROR_CODES
  },
  get METRICS_CONTENT_TYPE() {
    return lazy.metrics.METRICS_CONTENT_TYPE
  },
}

// tracker.metrics(options): this tracker's Prometheus series (lib/metrics.js),
// a method like the native ones (not enumerable).
Object.defineProperty(native.ErrorBudgetTracker.prototype, 'metrics', {
  // (No named parameter: the same `length` as lib/metrics.js's `metrics(options = {})`.)
  value: function metrics() {
    return lazy.metrics.metrics.apply(this, arguments)
  },
  writable: true,
  configurable: true,
})

// new ErrorBudgetTracker({ fleet }): one budget for the whole fleet through Redis (lib/fleet/).
const fleet = require('./lib/fleet/index.js')
// Constructed through a Proxy that notes the lifetime counts a tracker is
// restored with: its Prometheus counters count from there (lib/counter-start.js).
const counterStart = require('./lib/counter-start.js')
exports.ErrorBudgetTracker = counterStart.countingFromConstruction(fleet.withFleet(native.ErrorBudgetTracker, native.fleetLink))

/** The options `restore()` takes; the config itself comes from the snapshot. */
const RESTORE_OPTIONS = ['clock', 'now', 'persist']

/**
 * Rebuilds a tracker from `snapshot()` JSON, aged to now: its config comes from
 * the snapshot; `options` (undefined or null for none) may set `clock`, `now`
 * (manual clock) and `persist`. A leading UTF-8 byte-order mark is ignored. A
 * corrupt, truncated, wrong-version or inconsistent snapshot throws
 * `ERR_SNAPSHOT_INVALID` and creates nothing.
 */
native.ErrorBudgetTracker.restore = function restore(json, options) {
  if (typeof json !== 'string') throw errors.invalidArgType(`restore(json): json must be a string, got ${errors.describe(json)}`)
  if (options != null && (typeof options !== 'object' || Array.isArray(options))) {
    throw errors.invalidArgType(`restore(json, options): options must be an object, got ${errors.describe(options)}`)
  }
  // The keys are checked here: the constructor would blame config keys the caller never wrote
  // ("config.windowMs cannot be given with config.snapshot").
  for (const key of Object.keys(options ?? {})) {
    if (!RESTORE_OPTIONS.includes(key)) {
      throw errors.invalidArgValue(
        `restore(json, options): options.${key} is not an option of restore (the config comes from the snapshot); known options: ${RESTORE_OPTIONS.join(', ')}`,
      )
    }
  }
  // The constructor names a bad clock, now or persist the way the caller wrote it: options.<key>.
  const tracker = new native.ErrorBudgetTracker({ ...options, snapshot: json, [errors.ARGUMENT_NAME]: 'restore(json, options): options' })
  counterStart.countFromHere(tracker)
  return tracker
}

/**
 * A handle on the process-wide tracker called `name`, created with `config` on
 * first use; the same name is the same window in every worker thread. Without
 * `config` (undefined or null) it attaches to the existing tracker, or creates
 * one with the defaults; with a config that differs from the existing one's it
 * throws a TypeError (ERR_INVALID_ARG_VALUE) naming the fields. The tracker lives while one of its
 * handles is open and not collected.
 */
native.ErrorBudgetTracker.shared = function shared(name, config) {
  if (typeof name !== 'string' || name === '') {
    throw errors.invalidArgType(`shared(name): name must be a non-empty string, got ${name === '' ? "''" : errors.describe(name)}`)
  }
  if (config != null && (typeof config !== 'object' || Array.isArray(config))) {
    throw errors.invalidArgType(`shared(name, config): config must be an object, got ${errors.describe(config)}`)
  }
  return new exports.ErrorBudgetTracker({ ...config, shared: name })
}

exports.BudgetExhaustedError = errors.BudgetExhaustedError
exports.FleetSyncError = fleet.FleetSyncError
exports.GuardTimeoutError = errors.GuardTimeoutError
exports.SolveError = errors.SolveError
// Also `captcha-error-budget/solver` (lib/solver.js).
exports.createSolver = function createSolver(options) {
  return lazy.solver.createSolver.apply(this, arguments)
}
exports.defaultCountsAsFailure = function defaultCountsAsFailure(error) {
  return lazy.solver.defaultCountsAsFailure.apply(this, arguments)
}
exports.createFailover = function createFailover(solvers) {
  return lazy.solver.createFailover.apply(this, arguments)
}
Object.defineProperty(exports, 'CALLER_ERROR_CODES', {
  enumerable: true,
  get: function () {
    return constants.CALLER_ERROR_CODES
  },
})
// Also `captcha-error-budget/prometheus` (lib/prometheus.js).
exports.renderMetrics = function renderMetrics(sources) {
  return lazy.metrics.renderMetrics.apply(this, arguments)
}
exports.registerMetrics = function registerMetrics(tracker, registry) {
  return lazy.metrics.registerMetrics.apply(this, arguments)
}
Object.defineProperty(exports, 'METRICS_CONTENT_TYPE', {
  enumerable: true,
  get: function () {
    return constants.METRICS_CONTENT_TYPE
  },
})
exports.prometheusRules = function prometheusRules(slo, options) {
  return lazy.rules.prometheusRules.apply(this, arguments)
}
// Many budgets keyed by labels, each child an ErrorBudgetTracker (lib/family.js).
exports.BudgetFamily = require('./lib/family.js').familyClass(exports.ErrorBudgetTracker)
