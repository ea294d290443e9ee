'use strict'
// What to tell someone whose log names its fields otherwise (`timestamp`, `success`):
// the fields seen, and the --ts-field / --ok-field options that would read them, guessed
// from each field's name and, for JSON Lines, its value on the first line.

const MAX_NAME = 100
// The most field names a message lists (a line may hold thousands).
const MAX_LISTED = 20

const TS_NAME = /^(ts|t|at|when|time|timestamp|date|datetime)$|time|date|stamp|_at$|[a-z]At$/i
const OK_NAME = /^(ok|success|succeeded|successful|solved|passed|result|outcome)$|success|solved/i
// Epoch ms from 1973 (10^11) up to the parser's limit (10^14), or an ISO 8601 date.
const tsValue = (v) => (typeof v === 'number' && v >= 1e11 && v < 1e14) || (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}/.test(v))
const okValue = (v) => typeof v === 'boolean' || v === 0 || v === 1 || ['true', 'false', '0', '1'].includes(v)

/**
 * The field of `seen` that most looks like the one `nameRule` / `valueRule` describe:
 * by value and name, else by value, else (no value given, or no value fits) by name.
 * @param {Map<string, unknown>} seen field → its value on the first line (undefined when not known)
 */
function guess(seen, nameRule, valueRule, taken) {
  // A name longer than a message quotes is never offered (a log's text may be megabytes).
  const names = [...seen.keys()].filter((name) => !taken.includes(name) && name.length <= MAX_NAME)
  const fits = (name) => seen.get(name) !== undefined && valueRule(seen.get(name))
  const anyValue = names.some((name) => seen.get(name) !== undefined)
  return (
    names.find((name) => fits(name) && nameRule.test(name)) ??
    names.find(fits) ??
    (anyValue ? names.find((name) => seen.get(name) === undefined && nameRule.test(name)) : names.find((name) => nameRule.test(name)))
  )
}

/**
 * `name them: --ts-field timestamp --ok-field success` for the `missing` fields of `fields`
 * (`{ ts, ok, type, more? }`), guessed among `seen`; null when none is guessed.
 */
function fieldHint(seen, fields, missing) {
  const taken = Object.values(fields).flat()
  const options = []
  for (const [key, flag, nameRule, valueRule] of [
    ['ts', '--ts-field', TS_NAME, tsValue],
    ['ok', '--ok-field', OK_NAME, okValue],
  ]) {
    if (!missing.includes(fields[key])) continue
    const name = guess(seen, nameRule, valueRule, [...taken, ...options.map((o) => o.name)])
    options.push({ flag, name })
  }
  if (options.every((o) => o.name === undefined)) return null
  return `name ${options.length === 1 ? 'it' : 'them'}: ${options.map((o) => `${o.flag} ${o.name ?? '<field>'}`).join(' ')}`
}

/**
 * The hint for a JSON Lines log none of whose lines replayed, from its first non-blank
 * line (`sample`: `{ line, text }`): null when that line holds both fields, or is no JSON object.
 */
function jsonLinesHint(sample, fields) {
  let object
  try {
    object = JSON.parse(sample.text)
  } catch {
    return null
  }
  if (object === null || typeof object !== 'object' || Array.isArray(object)) return null
  const seen = new Map(Object.entries(object))
  const missing = [fields.ts, fields.ok].filter((name) => !seen.has(name))
  if (missing.length === 0) return null
  const names = missing.map((name) => JSON.stringify(name)).join(' or ')
  const keys = [...seen.keys()]
  const listed = keys.length > MAX_LISTED ? `${keys.slice(0, MAX_LISTED).join(', ')}, … (${keys.length} fields)` : keys.join(', ')
  const options = missing.map((name) => (name === fields.ts ? '--ts-field' : '--ok-field'))
  const hint = fieldHint(seen, fields, missing) ?? `name ${missing.length === 1 ? 'it' : 'them'} with ${options.join(' and ')}`
  return `the lines have no field ${names} (fields of line ${sample.line}: ${listed}); ${hint}`
}

module.exports = { fieldHint, jsonLinesHint }
