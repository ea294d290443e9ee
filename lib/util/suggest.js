'use strict'
// "Did you mean …?" for a misspelt key, chosen as the CLI chooses one for a misspelt
// option (commander's rule, which it does not export): the known keys at the least
// optimal-string-alignment distance (Damerau–Levenshtein: a swap of two neighbours
// is one edit), 3 at most, each more than 40 % alike, so that the library and the CLI
// suggest alike; __test__/util/suggest.spec.js holds the two to each other.

/** commander's bound: a key more than 3 edits away is no suggestion. */
const MAX_DISTANCE = 3
/** commander's bound: a key must share more than this share of the longer word. */
const MIN_SIMILARITY = 0.4

/**
 * The known keys closest to `word`, as "; did you mean 'targetRate'?" (or "one of
 * 'a', 'b'"), or '' when none is close.
 * @param {string} word
 * @param {readonly string[]} known
 */
function didYouMean(word, known) {
  // Loaded on the first misspelt key, not with the package: most processes never make one.
  const distance = require('damerau-levenshtein')
  let closest = []
  let best = MAX_DISTANCE
  for (const key of new Set(known)) {
    if (key.length <= 1) continue // a one-character key is no guess
    const { steps, similarity } = distance(word, key)
    if (similarity <= MIN_SIMILARITY || steps > best) continue
    if (steps < best) closest = []
    best = steps
    closest.push(key)
  }
  if (closest.length === 0) {
    // The CLI's flags are the keys' first words (--target, --window): a key that is the
    // start of exactly one known key names it.
    const longer = word.length >= 3 ? known.filter((key) => key.toLowerCase().startsWith(word.toLowerCase())) : []
    return longer.length === 1 ? `; did you mean '${longer[0]}'?` : ''
  }
  const names = closest.sort((a, b) => a.localeCompare(b)).map((name) => `'${name}'`)
  return `; did you mean ${names.length > 1 ? 'one of ' : ''}${names.join(', ')}?`
}

/**
 * `err` with a suggestion added when it is a native unknown-key error of the
 * config — "unknown config key 'x'; known keys: …", or of one of its objects,
 * "config.persist has an unknown key 'x'; known keys: …" (or "… options.persist …"
 * when a caller named the config, as restore() does) — (its stack says the
 * same); any other error as it is.
 * @param {unknown} err
 */
function suggestConfigKey(err) {
  if (!(err instanceof Error) || err.code !== 'ERR_INVALID_ARG_VALUE') return err
  // "config.persist" or, under restore(), "restore(json, options): options.persist".
  const match = /^(?:unknown config key|(?:[^;]*: )?(?:config|options)\S* has an unknown key) '(.*)'; known keys: ([^;]*)$/s.exec(err.message)
  if (match === null) return err
  const hint = didYouMean(match[1], match[2].split(', '))
  if (hint === '') return err
  const message = `${err.message}${hint}`
  if (typeof err.stack === 'string') err.stack = err.stack.replace(err.message, message)
  err.message = message
  return err
}

module.exports = { didYouMean, suggestConfigKey }
