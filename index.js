'use strict'
// The package entry: the native addon (native.js, the loader napi-rs generates)
// plus the parts written in JavaScript. Each export is assigned on its own line
// so that Node's CommonJS-to-ESM detection sees it (`import { … } from`).
const native = require('./native.js')

exports.ErrorBudgetTracker = native.ErrorBudgetTracker
