'use strict'
// The package entry: the tracker class (lib/tracker/tracker.js: the addon's class, which
// native.js loads, with the parts written in JavaScript) and the other exports.
// Each export is assigned on its own line so that Node's CommonJS-to-ESM
// detection sees it (`import { … } from`).
const { ErrorBudgetTracker, FleetSyncError } = require('./lib/tracker/tracker.js')
const errors = require('./lib/util/errors.js')

// What not every user calls is required on first use, so that requiring the package
// costs the addon and the tracker's own JavaScript only (docs/performance.md): the
// CaptchaAI client, the Prometheus exposition, and the rules, which load `yaml`.
// The exports below are small functions that forward to these modules (with their
// arguments as given), so that neither require() nor an ESM import loads them.
const lazy = {
  get solver() {
    return require('./lib/providers/solver.js')
  },
  get metrics() {
    return require('./lib/prometheus/metrics.js')
  },
  get rules() {
    return require('./lib/prometheus/rules.js')
  },
}

// The constants are exported as getters of this object: Node's CommonJS-to-ESM
// detection recognises a getter that returns one property of an identifier. An ESM
// import reads every export, which loads lib/providers/solver.js and lib/prometheus/metrics.js, not `yaml`.
const constants = {
  get CALLER_ERROR_CODES() {
    return lazy.solver.CALLER_ERROR_CODES
  },
  get METRICS_CONTENT_TYPE() {
    return lazy.metrics.METRICS_CONTENT_TYPE
  },
}

exports.ErrorBudgetTracker = ErrorBudgetTracker
exports.BudgetExhaustedError = errors.BudgetExhaustedError
exports.ProviderBackoffError = errors.ProviderBackoffError
exports.FleetSyncError = FleetSyncError
exports.GuardTimeoutError = errors.GuardTimeoutError
exports.SolveError = errors.SolveError
// Also `captcha-error-budget/solver` (lib/providers/solver.js).
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
// Also `captcha-error-budget/prometheus` (lib/prometheus/index.js).
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
// Many budgets keyed by labels, each child an ErrorBudgetTracker (lib/family/).
exports.BudgetFamily = require('./lib/family/index.js').BudgetFamily
// createFailover(family, …) refusing a site every provider fails on (lib/providers/blame.js).
exports.FaultError = errors.FaultError
