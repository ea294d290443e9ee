// Which build the loader picked, for the few behaviours that exist only in the
// native addon (docs/platforms.md lists them). The WASI build runs the same
// suite with `NAPI_RS_FORCE_WASI=error` (.ci/platforms).
const test = require('ava')
const { skippedWith } = require('./skip.js')

/** `'native'`, or the WASI flavor the generated loader loaded. */
const bindingTarget = require('../../native.js').__napiBindingTarget

/**
 * `runner` (`test`, or e.g. `test.serial`) on a native build; on WASI,
 * `test.skip` with `tag` in brackets after the title.
 * @param {string} tag why the test does not run on WASI
 */
function nativeRuns(tag, runner = test) {
  return bindingTarget === 'native' ? runner : skippedWith(tag)
}

/**
 * `runner` on a native build; on WASI, `test.skip` with the reason in the title.
 * @param {string} reason why the behaviour cannot exist on WASI
 */
const nativeOnly = (reason, runner = test) => nativeRuns(`native only: ${reason}`, runner)

module.exports = { bindingTarget, nativeOnly, nativeRuns }
