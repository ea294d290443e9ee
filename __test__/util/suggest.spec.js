// "Did you mean …?" (lib/util/suggest.js): the library suggests a misspelt key as
// the CLI suggests a misspelt option. The CLI's suggestion is commander's, asked
// here through its public API: a command with the known keys as options, parsing
// the misspelt one.
const test = require('ava')
const { Command } = require('commander')
const { didYouMean } = require('../../lib/util/suggest.js')

/** What the CLI prints for `--word` among options `--key` for each known key, as didYouMean words it ('' for none). */
function cliSuggestion(word, known) {
  const command = new Command()
    .helpOption(false)
    .exitOverride()
    .configureOutput({ writeErr() {}, writeOut() {} })
  for (const key of known) command.option(`--${key}`)
  try {
    command.parse([`--${word}`], { from: 'user' })
  } catch (err) {
    const match = /\(Did you mean (one of )?(.*)\?\)$/.exec(err.message)
    if (match === null) return ''
    const names = match[2].split(', ').map((flag) => `'${flag.slice(2)}'`)
    return `; did you mean ${match[1] ?? ''}${names.join(', ')}?`
  }
  throw new Error(`--${word} was accepted`)
}

test('a swap of two neighbours is one edit: tagret is target, not tablet (two substitutions)', (t) => {
  t.is(didYouMean('tagret', ['tablet', 'target']), "; did you mean 'target'?")
})

test('keys at the same least distance are all named, sorted', (t) => {
  // 'windw' is one deletion from both.
  t.is(didYouMean('windw', ['windows', 'window', 'windy']), "; did you mean one of 'window', 'windy'?")
})

test('three edits away is still a suggestion, four is none (and then no key starts with the word)', (t) => {
  t.is(didYouMean('abcxyz', ['abcdef']), "; did you mean 'abcdef'?")
  t.is(didYouMean('abwxyz', ['abcdef']), '')
})

test('a key that is the start of exactly one known key names it, as the CLI flags are the first words', (t) => {
  t.is(didYouMean('probe', ['timeoutMs', 'probeIntervalMs']), "; did you mean 'probeIntervalMs'?")
  t.is(didYouMean('min', ['minSolves', 'minFailures']), '')
})

// [word, known keys]: the library's suggestion is the CLI's (no word here starts exactly one key).
const CASES = [
  ['tagret', ['tablet', 'target']],
  ['windw', ['windows', 'window', 'windy']],
  ['abcxyz', ['abcdef']],
  ['abwxyz', ['abcdef']],
  ['ab', ['ac', 'b', 'abc']],
  ['timeout', ['timeoutMs', 'critical', 'countsAsFailure', 'provider', 'whenExhausted', 'minSolves', 'probeIntervalMs']],
  ['critcal', ['timeoutMs', 'critical', 'countsAsFailure']],
  ['targetrate', ['targetRate', 'windowMs', 'bucketMs']],
  ['zzzzzzzz', ['timeoutMs', 'critical']],
  ['min', ['minSolves', 'minFailures']],
  ['abcd', ['bacd', 'abdc', 'abce', 'xyzw']],
]

for (const [word, known] of CASES) {
  test(`'${word}' among ${known.join(', ')}: the CLI's suggestion`, (t) => {
    t.is(didYouMean(word, known), cliSuggestion(word, known))
  })
}
