// The provider names written by hand, held to the profile table (lib/guard/profiles.js)
// that guard() and createSolver() accept: the `ProviderName` union of
// lib/types/guard.d.ts, and the lists of each protocol's providers in
// lib/types/solver.d.ts and docs/providers.md. Adding a provider to the table
// without them fails here (CONTRIBUTING.md, "Adding a provider").
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { PROVIDERS, PROVIDER_NAMES } = require('../../lib/guard/profiles.js')

const read = (file) => fs.readFileSync(path.join(__dirname, '..', '..', file), 'utf8')

/** The quoted names in `text`, in order. */
const quotedNames = (text) => [...text.matchAll(/'([^']*)'/g)].map((m) => m[1])

/**
 * The names of `export type <name> = 'a' | 'b' …` in `source` (on one line, or
 * continued on lines that start with `|`), or null when there is no such type
 * or it is anything but a union of string literals.
 */
function literalUnion(source, name) {
  const lines = source.split('\n')
  const start = lines.findIndex((line) => line.startsWith(`export type ${name} =`))
  if (start === -1) return null
  let text = lines[start].slice(`export type ${name} =`.length)
  for (let i = start + 1; i < lines.length && /^\s*\|/.test(lines[i]); i++) text += lines[i]
  const names = quotedNames(text)
  // Nothing but the literals and the bars between them: `string` or `keyof …` would accept any name.
  const rest = text.replace(/'[^']*'/g, '').replace(/[\s|;]/g, '')
  return rest === '' && names.length > 0 ? names : null
}

const namesWith = (protocol) => PROVIDER_NAMES.filter((name) => PROVIDERS[name].protocol === protocol)

test("ProviderName in lib/types/guard.d.ts is the profile table's names, in its order", (t) => {
  t.deepEqual(literalUnion(read('lib/types/guard.d.ts'), 'ProviderName'), [...PROVIDER_NAMES])
})

test('the union reader: one line or several; null for no such type or one that is not all literals', (t) => {
  t.deepEqual(literalUnion("export type P = 'a' | '2b'\n", 'P'), ['a', '2b'])
  t.deepEqual(literalUnion("/** x */\nexport type P =\n  | 'a'\n  | 'b'\n\nexport type Q = 'c'\n", 'P'), ['a', 'b'])
  t.is(literalUnion("export type Q = 'a'\n", 'P'), null)
  t.is(literalUnion("export type P = 'a' | string\n", 'P'), null)
  t.is(literalUnion('export type P = keyof typeof PROVIDERS\n', 'P'), null)
  // A name the table gained and the union lacks is a difference the first test sees.
  t.notDeepEqual(literalUnion("export type P = 'captchaai' | '2captcha'\n", 'P'), [...PROVIDER_NAMES])
})

test("CreateTaskTask's doc (lib/types/solver.d.ts) names the table's createTask providers", (t) => {
  const line = read('lib/types/solver.d.ts')
    .split('\n')
    .find((l) => l.includes('A task for the createTask providers'))
  t.truthy(line, 'the doc line of CreateTaskTask')
  t.deepEqual(quotedNames(line), namesWith('createTask'))
})

test("docs/providers.md's built-in client names each protocol's providers as the table does", (t) => {
  const page = read('docs/providers.md').replace(/\s+/g, ' ')
  const match = /`in\.php` \/ `res\.php` for (.*?) `createTask` \/ `getTaskResult` for (.*?) — /.exec(page)
  t.truthy(match, "the sentence naming each protocol's providers")
  t.deepEqual(quotedNames(match[1]), namesWith('in.php'))
  t.deepEqual(quotedNames(match[2]), namesWith('createTask'))
})
