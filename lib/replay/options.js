'use strict'
// Command-line values of `captcha-budget replay`, checked: durations, per-type
// settings (`--target turnstile=0.97`), the alert policy. Every problem is a
// UsageError, which the command turns into exit code 2.
const fs = require('node:fs')
const { parseDuration: parseAnyDuration } = require('../duration')

class UsageError extends Error {
  constructor(message) {
    super(message)
    this.name = 'UsageError'
    this.code = 'ERR_USAGE'
  }
}

/**
 * A duration as `lib/duration.js` reads it; a bad one is a UsageError.
 * @param {string} text
 * @param {string} what names the value in the error
 * @returns {number}
 */
function parseDuration(text, what) {
  try {
    return parseAnyDuration(text, what)
  } catch (err) {
    throw new UsageError(err.message)
  }
}

/**
 * A duration for people, in the unit the article uses: `7d`, `24h`, `90m`,
 * `30s` (days from two days up), else `1h30m5s`-style parts.
 * @param {number} ms
 */
function formatDuration(ms) {
  if (ms === 0) return '0s'
  if (ms >= 2 * 86_400_000 && ms % 86_400_000 === 0) return `${ms / 86_400_000}d`
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1000]]) if (ms % size === 0) return `${ms / size}${unit}`
  let rest = Math.round(ms)
  const parts = []
  for (const [unit, size] of [['h', 3_600_000], ['m', 60_000], ['s', 1000], ['ms', 1]]) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`)
      rest %= size
    }
  }
  return parts.join('')
}

/**
 * Repeated `--target` / `--window` values: `value` sets the default, `name=value`
 * one tracker's. Returns `{ fallback, byName: Map }` with parsed values.
 * @param {string[]} texts
 * @param {(value: string, what: string) => number} parse
 * @param {string} flag
 */
function perName(texts, parse, flag) {
  const out = { fallback: undefined, byName: new Map() }
  for (const text of texts) {
    const eq = text.lastIndexOf('=')
    if (eq === -1) {
      out.fallback = parse(text, flag)
    } else {
      const name = text.slice(0, eq)
      if (name === '') throw new UsageError(`${flag} '${text}': the name before '=' is empty`)
      out.byName.set(name, parse(text.slice(eq + 1), `${flag} ${name}=`))
    }
  }
  return out
}

/** A target rate in (0, 1]: `0.95`, or `95%`. */
function parseTarget(text, what) {
  const percent = text.endsWith('%')
  const number = /^\d+(\.\d+)?$|^\.\d+$/.test(percent ? text.slice(0, -1) : text) ? Number(text.replace('%', '')) : NaN
  const rate = percent ? number / 100 : number
  if (!(rate > 0 && rate <= 1)) throw new UsageError(`${what} must be a rate in (0, 1] such as 0.95 or 95%, got '${text}'`)
  return rate
}

/** A non-negative integer. */
function parseCount(text, what) {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`${what} must be a non-negative integer, got '${text}'`)
  }
  return Number(text)
}

/**
 * `--alerts`: `default`, `none`, an inline JSON array of alert pairs (the shape
 * of config.alerts), or a JSON file holding one. Returns undefined for the default.
 */
function parseAlerts(text) {
  if (text === undefined || text === 'default') return undefined
  if (text === 'none') return []
  let json = text
  if (!text.trimStart().startsWith('[')) {
    try {
      json = fs.readFileSync(text, 'utf8')
    } catch (err) {
      throw new UsageError(`--alerts: not 'default', 'none', inline JSON or a readable file: ${err.message}`)
    }
  }
  let alerts
  try {
    alerts = JSON.parse(json)
  } catch (err) {
    throw new UsageError(`--alerts: not valid JSON: ${err.message}`)
  }
  if (!Array.isArray(alerts)) throw new UsageError('--alerts: expected a JSON array of alert pairs')
  return alerts
}

/** Field names: non-empty and distinct. */
function checkFields(fields) {
  for (const [flag, name] of Object.entries(fields)) {
    if (name === '') throw new UsageError(`--${flag}-field must not be empty`)
  }
  if (new Set(Object.values(fields)).size !== 3) {
    throw new UsageError(`--ts-field, --ok-field and --type-field must differ, got ${Object.values(fields).join(', ')}`)
  }
  return fields
}

module.exports = { UsageError, parseDuration, formatDuration, perName, parseTarget, parseCount, parseAlerts, checkFields }
