'use strict'
// The package entry: the native addon (native.js, the loader napi-rs generates)
// plus the parts written in JavaScript. Each export is assigned on its own line
// so that Node's CommonJS-to-ESM detection sees it (`import { … } from`).
const native = require('./native.js')
const errors = require('./lib/errors.js')
const solver = require('./lib/solver.js')

// tracker.guard(fn, options): one solve attempt, recorded exactly once (lib/guard.js).
require('./lib/guard.js').installGuard(native.ErrorBudgetTracker)

exports.ErrorBudgetTracker = native.ErrorBudgetTracker
exports.BudgetExhaustedError = errors.BudgetExhaustedError
exports.GuardTimeoutError = errors.GuardTimeoutError
exports.SolveError = errors.SolveError
exports.createSolver = solver.createSolver
exports.defaultCountsAsFailure = solver.defaultCountsAsFailure
exports.CALLER_ERROR_CODES = solver.CALLER_ERROR_CODES
