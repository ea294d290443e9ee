// Tests registered as skipped, with why in brackets after the title (a program missing,
// helpers/external.js; a behaviour the WASI build has not, helpers/binding.js): a skipped
// run still says what it left out.

/**
 * A stand-in for `test` (and `test.serial`, `test.skip`) that registers each test as
 * skipped, titled `<title> [<reason>]`.
 * @param {string} reason
 */
function skippedWith(reason) {
  // Required here: helpers/external.js also runs in child processes, where ava refuses to load.
  const test = require('ava')
  const skip = (title, ...rest) => test.skip(`${title} [${reason}]`, ...rest)
  return Object.assign(skip, { serial: skip, skip })
}

module.exports = { skippedWith }
