// Listeners run asynchronously: wait for the event loop to deliver what is queued.
const settle = (ms = 20) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Resolves once everything already queued for this thread's listeners has been
 * delivered into `calls`, with no timer: a threadsafe function delivers its
 * queue (up to 1000 calls a turn) in the poll phase of the event loop, before
 * the setImmediate callbacks of that turn, so a turn in which `calls` does not
 * grow means nothing more was queued. Use it for "nothing more arrives" after
 * record() / advanceTo() on this thread; it does not depend on the machine's load.
 * @param {{ length: number }} calls
 */
async function noMoreDeliveries(calls) {
  for (;;) {
    const before = calls.length
    await new Promise((resolve) => setImmediate(resolve))
    if (calls.length === before) return calls
  }
}

// Resolves after `count` calls recorded into `calls`, or rejects after `timeoutMs`.
function waitForCalls(calls, count, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    const started = Date.now()
    const poll = () => {
      if (calls.length >= count) return resolve(calls)
      if (Date.now() - started > timeoutMs) return reject(new Error(`only ${calls.length} of ${count} calls after ${timeoutMs} ms`))
      setTimeout(poll, 5)
    }
    poll()
  })
}

module.exports = { settle, noMoreDeliveries, waitForCalls }
