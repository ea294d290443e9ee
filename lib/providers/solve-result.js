'use strict'
// A solve's result carries `reject(reason?)`, the late verdict on it (lib/providers/solver.js):
// not enumerable, so that the result prints and compares as the provider's answer,
// and kept when a failover adds its own field to a copy.

/** `result` with `reject` added (not enumerable). */
function withReject(result, reject) {
  return Object.defineProperty(result, 'reject', { value: reject, enumerable: false, writable: false, configurable: true })
}

/** A copy of `result` with `extra`'s fields, keeping its `reject`, if any. */
function copyResult(result, extra) {
  const copy = { ...result, ...extra }
  return typeof result?.reject === 'function' && !Object.hasOwn(copy, 'reject') ? withReject(copy, result.reject) : copy
}

module.exports = { withReject, copyResult }
