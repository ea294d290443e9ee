'use strict'
// Durations: read from the command line in Prometheus's syntax (`30d`, `24h`,
// `90m`, `1h30m`, `500ms`), and written three ways, each for its reader:
// Prometheus (exact, in rule names and labels), people (exact, the units a person
// uses) and prose (approximate, three significant digits).
const { outOfRange } = require('./errors.js')

const DURATION = /^(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+)s)?(?:(\d+)ms)?$/
const UNIT_MS = [604_800_000, 86_400_000, 3_600_000, 60_000, 1000, 1]
const DAY_MS = 86_400_000
// The largest duration: ms are integers, exact up to 2^53 − 1 (as config.windowMs).
const MAX_MS = Number.MAX_SAFE_INTEGER
const MAX_TEXT = '14892855w6d8h59m991ms'

/**
 * A duration such as `30d`, `24h`, `90m`, `1h30m` or `500ms` (units w, d, h, m,
 * s, ms), in ms, at most 2^53 − 1. Zero, other forms, larger durations and
 * non-strings are a RangeError (`ERR_OUT_OF_RANGE`) whose message starts with `what`.
 * @param {string} text
 * @param {string} what
 * @returns {number}
 */
function parseDuration(text, what) {
  const m = typeof text === 'string' && text !== '' ? DURATION.exec(text) : null
  const ms = m ? m.slice(1).reduce((sum, n, i) => sum + (n ? Number(n) * UNIT_MS[i] : 0), 0) : 0
  if (m && ms > MAX_MS) throw outOfRange(`${what} is too large: at most ${MAX_MS}ms (${MAX_TEXT}), got '${text}'`)
  if (!m || !(ms > 0)) {
    throw outOfRange(`${what} must be a duration like 30d, 24h, 90m or 1h30m (units w, d, h, m, s, ms), got '${text}'`)
  }
  return ms
}

/**
 * A duration as Prometheus writes it, exactly: the largest unit that divides it
 * (`30d`, `144m`, `1w`, `4980ms`). Rule names (`ratio_rate5m`), `window` labels
 * and range selectors must agree, so this is the only spelling they use.
 * @param {number} ms
 */
function promDuration(ms) {
  const units = [
    ['w', 604_800_000],
    ['d', DAY_MS],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ]
  for (const [unit, size] of units) if (ms % size === 0) return `${ms / size}${unit}`
  return `${ms}ms`
}

/**
 * A duration for people, exactly, in the units the article uses: `7d`, `24h`
 * (not `1d`), `90m`, `30s` — days only from two days up, never weeks — else
 * `1h30m5s`-style parts.
 * @param {number} ms
 */
function humanDuration(ms) {
  if (ms === 0) return '0s'
  if (ms >= 2 * DAY_MS && ms % DAY_MS === 0) return `${ms / DAY_MS}d`
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ])
    if (ms % size === 0) return `${ms / size}${unit}`
  let rest = Math.round(ms)
  const parts = []
  for (const [unit, size] of [
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
    ['ms', 1],
  ]) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`)
      rest %= size
    }
  }
  return parts.join('')
}

/** A number to three significant digits: "2.5", not "2.5000000000000004". */
const threeDigits = (x) => String(Number(x.toPrecision(3)))

/**
 * A duration for prose, approximately: three significant digits of the largest
 * unit it holds twice (`50h`, `5d`, `2.08d`).
 * @param {number} ms
 */
function approxDuration(ms) {
  const units = [
    ['d', DAY_MS],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ]
  const [unit, size] = units.find(([, size]) => ms >= 2 * size) || ['ms', 1]
  return `${threeDigits(ms / size)}${unit}`
}

module.exports = { parseDuration, promDuration, humanDuration, approxDuration, threeDigits }
