// Listeners run asynchronously: wait for the event loop to deliver what is queued.
const settle = (ms = 20) => new Promise((resolve) => setTimeout(resolve, ms))

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

module.exports = { settle, waitForCalls }
