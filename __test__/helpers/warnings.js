'use strict'
// Process warnings a spec provokes on purpose (a throwing listener, a classifier
// bug) are the spec's to check, not the run's to print: Node's own printer would
// put "Error: listener exploded" on the stderr of a passing `npm test`. While a
// test catches warnings, those it matches reach its array and are not printed;
// every other warning is printed as before.

/** @type {Set<(w: Error) => boolean>} what the running tests catch */
const catchers = new Set()
let printers = null

/** Puts one filter in front of Node's warning printer (once per thread). */
function takeOverPrinting() {
  if (printers !== null) return
  printers = process.listeners('warning')
  for (const listener of printers) process.off('warning', listener)
  process.on('warning', (warning) => {
    for (const caught of catchers) if (caught(warning)) return
    for (const print of printers) print(warning)
  })
}

/**
 * Collects the process warnings `match` accepts until the test ends (they are not
 * printed); returns the array they go into, in emission order.
 * @param {import('ava').ExecutionContext} t
 * @param {(w: Error & { code?: string }) => boolean} [match] all warnings unless given
 * @param {(w: Error & { code?: string }) => unknown} [keep] what to keep of each (the warning itself unless given)
 */
function catchWarnings(t, match = () => true, keep = (w) => w) {
  takeOverPrinting()
  const caught = []
  const catcher = (w) => {
    if (!match(w)) return false
    caught.push(keep(w))
    return true
  }
  catchers.add(catcher)
  t.teardown(() => catchers.delete(catcher))
  return caught
}

module.exports = { catchWarnings }
