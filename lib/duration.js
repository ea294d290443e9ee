'use strict'
// Durations on the command line: the syntax of Prometheus (`30d`, `24h`, `90m`,
// `1h30m`, `500ms`), shared by `captcha-budget rules` and `replay`.

const DURATION = /^(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/
const UNIT_MS = [604_800_000, 86_400_000, 3_600_000, 60_000, 1000, 1]

/**
 * A duration such as `30d`, `24h`, `90m`, `1h30m` or `500ms` (units w, d, h, m,
 * s, ms), in ms. Zero, other forms and non-strings are a RangeError
 * (`ERR_OUT_OF_RANGE`) whose message starts with `what`.
 * @param {string} text
 * @param {string} what
 * @returns {number}
 */
function parseDuration(text, what) {
  const m = typeof text === 'string' && text !== '' ? DURATION.exec(text) : null
  const ms = m ? m.slice(1).reduce((sum, n, i) => sum + (n ? Number(n) * UNIT_MS[i] : 0), 0) : 0
  if (!m || !(ms > 0) || !Number.isSafeInteger(ms)) {
    const message = `${what} must be a duration like 30d, 24h, 90m or 1h30m (units w, d, h, m, s, ms), got '${text}'`
    throw Object.assign(new RangeError(message), { code: 'ERR_OUT_OF_RANGE' })
  }
  return ms
}

module.exports = { parseDuration }
