// The sequence of provider answers (SEQUENCE of provider-http.js) run
// through one provider's client under guard(), as the client specs do, with the
// process warnings it provoked caught (the guard names each unlisted code once).
const { settle } = require('./deliveries')
const { SEQUENCE } = require('./provider-http')
const { catchWarnings } = require('./warnings')

/**
 * One attempt per code of SEQUENCE, a minute apart on the tracker's manual clock,
 * in order; resolves with the messages of every process warning emitted meanwhile,
 * once they are delivered.
 * @param {import('ava').ExecutionContext} t
 * @param {{ advanceTo(ms: number): void }} tracker
 * @param {(code: string) => Promise<unknown>} attempt one solve that ends in `code`
 */
async function runSequence(t, tracker, attempt) {
  const warnings = catchWarnings(
    t,
    () => true,
    (w) => w.message,
  )
  for (const [i, code] of SEQUENCE.entries()) {
    tracker.advanceTo(i * 60_000)
    await attempt(code)
  }
  await settle()
  return [...warnings]
}

module.exports = { runSequence }
