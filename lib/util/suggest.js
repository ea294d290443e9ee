'use strict'
// "Did you mean …?" for a misspelt key: the CLI's suggestion for a misspelt option
// (commander's, a Damerau–Levenshtein distance of at most 3), so the library and
// the CLI suggest alike. commander (a dependency, pinned) does not export it by
// name; its file is loaded by path, and __test__/suggest.spec.js holds it to
// what the CLI prints.
const path = require('node:path')

let similar = null

/**
 * The known keys closest to `word`, as "; did you mean 'targetRate'?" (or "one of
 * 'a', 'b'"), or '' when none is close.
 * @param {string} word
 * @param {readonly string[]} known
 */
function didYouMean(word, known) {
  similar ??= require(path.join(path.dirname(require.resolve('commander')), 'lib', 'suggestSimilar.js')).suggestSimilar
  // commander's text: "\n(Did you mean x?)" or "\n(Did you mean one of x, y?)".
  const match = /^\n\(Did you mean (one of )?(.*)\?\)$/.exec(similar(word, [...known]))
  if (match === null) {
    // The CLI's flags are the keys' first words (--target, --window): a key that is the
    // start of exactly one known key names it.
    const longer = word.length >= 3 ? known.filter((key) => key.toLowerCase().startsWith(word.toLowerCase())) : []
    return longer.length === 1 ? `; did you mean '${longer[0]}'?` : ''
  }
  const names = match[2].split(', ').map((name) => `'${name}'`)
  return `; did you mean ${match[1] ?? ''}${names.join(', ')}?`
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
