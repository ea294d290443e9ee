'use strict'
// The addon, through native.js (the loader napi-rs generates); where it cannot
// be loaded, an error that says which platform package to install
// (lib/native/addon-missing.js).
try {
  module.exports = require('../../native.js')
} catch (err) {
  // Only a missing loader or binary (or the WASI build that NAPI_RS_FORCE_WASI=error
  // asks for); an addon that loads and then throws is reported as is.
  const loaderMissing = err?.code === 'MODULE_NOT_FOUND' && /native\.js'/.test(err.message)
  if (!loaderMissing && !/^((Cannot find|Failed to load) native binding|WASI binding not found)/.test(err?.message ?? '')) throw err
  // Loaded only when the addon is missing: its message reads the package's platform list.
  throw require('./addon-missing.js').addonMissing(err)
}
