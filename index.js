'use strict'
// The package entry: the native addon (native.js, the loader napi-rs generates)
// plus the parts written in JavaScript. Each export is assigned on its own line
// so that Node's CommonJS-to-ESM detection sees it (`import { … } from`).
const native = require('./native.js')
const errors = require('./lib/errors.js')
const solver = require('./lib/solver.js')

// tracker.guard(fn, options): one solve attempt, recorded exactly once (lib/guard.js).
require('./lib/guard.js').installGuard(native.ErrorBudgetTracker)
// tracker.report() built in JavaScript from the native figures (lib/fast-report.js).
require('./lib/fast-report.js').installFastReport(native.ErrorBudgetTracker)

const metrics = require('./lib/metrics.js')
const rules = require('./lib/rules.js')
// tracker.metrics(options): this tracker's Prometheus series (lib/metrics.js),
// a method like the native ones (not enumerable).
Object.defineProperty(native.ErrorBudgetTracker.prototype, 'metrics', {
  value: metrics.metrics,
  writable: true,
  configurable: true,
})

exports.ErrorBudgetTracker = native.ErrorBudgetTracker

/**
 * Rebuilds a tracker from `snapshot()` JSON, aged to now: its config comes from
 * the snapshot; `options` may set `clock`, `now` (manual clock) and `persist`.
 * A corrupt, truncated, wrong-version or inconsistent snapshot throws
 * `ERR_SNAPSHOT_INVALID` and creates nothing.
 */
native.ErrorBudgetTracker.restore = function restore(json, options = {}) {
  if (typeof json !== 'string') {
    throw Object.assign(new TypeError(`restore(json): json must be a string, got ${typeof json}`), { code: 'ERR_INVALID_ARG_TYPE' })
  }
  if (options === null || typeof options !== 'object') {
    throw Object.assign(new TypeError('restore(json, options): options must be an object'), { code: 'ERR_INVALID_ARG_TYPE' })
  }
  return new native.ErrorBudgetTracker({ ...options, snapshot: json })
}

/**
 * A handle on the process-wide tracker called `name`, created with `config` on
 * first use; the same name is the same window in every worker thread. Without
 * `config` it attaches to the existing tracker (or creates one with the
 * defaults); with a config that differs from the existing one's it throws a
 * RangeError naming the fields. The tracker lives while one of its handles is
 * open and not collected.
 */
native.ErrorBudgetTracker.shared = function shared(name, config) {
  if (typeof name !== 'string' || name === '') {
    const got = typeof name === 'string' ? "''" : typeof name
    throw Object.assign(new TypeError(`shared(name): name must be a non-empty string, got ${got}`), { code: 'ERR_INVALID_ARG_TYPE' })
  }
  if (config !== undefined && (config === null || typeof config !== 'object')) {
    throw Object.assign(new TypeError('shared(name, config): config must be an object'), { code: 'ERR_INVALID_ARG_TYPE' })
  }
  return new native.ErrorBudgetTracker({ ...config, shared: name })
}

exports.BudgetExhaustedError = errors.BudgetExhaustedError
exports.GuardTimeoutError = errors.GuardTimeoutError
exports.SolveError = errors.SolveError
exports.createSolver = solver.createSolver
exports.defaultCountsAsFailure = solver.defaultCountsAsFailure
exports.CALLER_ERROR_CODES = solver.CALLER_ERROR_CODES
exports.renderMetrics = metrics.renderMetrics
exports.registerMetrics = metrics.registerMetrics
exports.METRICS_CONTENT_TYPE = metrics.METRICS_CONTENT_TYPE
exports.prometheusRules = rules.prometheusRules
