'use strict'
// Command-line values of `captcha-budget replay`, checked: per-type settings
// (`--target turnstile=0.97`), field names; the values it shares with `rules`
// (targets, counts, durations, alerts) are read by lib/cli/values.js. Every
// problem is a UsageError, which the command turns into exit code 2.
const { UsageError } = require('../../util/errors.js')

/** A tracker's settings when the command line gives none (also shown by --help). */
const DEFAULTS = Object.freeze({ targetRate: 0.95, windowMs: 86_400_000, minEvents: 100 })

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

module.exports = { DEFAULTS, perName, checkFields }
