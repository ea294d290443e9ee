// One error table: the codes the package can throw (found in its sources) are the
// codes README.md's "Errors" table and docs/errors.md name, both ways, so that
// neither a new code nor a removed one goes undocumented.
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')

/** Every file under `dir` (relative to the root) whose name ends with one of `exts`. */
function files(dir, exts) {
  const at = path.join(root, dir)
  if (fs.statSync(at).isFile()) return [at]
  return fs
    .readdirSync(at, { recursive: true })
    .map((name) => path.join(at, name))
    .filter((file) => exts.some((ext) => file.endsWith(ext)) && fs.statSync(file).isFile())
}

// Every code the JavaScript sets is set in lib/util/errors.js, the one home of its
// errors: `this.code = 'X'` in a class, `coded(new TypeError(message), 'X')` in a
// helper, `SolveError.NETWORK = 'X'` for a SolveError's own codes. In Rust, any
// "ERR_…" literal (the binding and the core only ever set codes, they never compare
// them). `err.code === 'ENOENT'` (a code read, not thrown) does not match.
const ERRORS_HOME = 'lib/util/errors.js'
const HOME_CODE = /(?:\bcode\s*=\s*|\bcoded\(new \w+\(\w+\),\s*|\bSolveError\.[A-Z_]+\s*=\s*)['"]([A-Z][A-Z0-9_]+)['"]/g
const RUST_CODE = /"(ERR_[A-Z0-9_]+)"/g
// A code set anywhere else: `.code = …`, `code: 'X'`, or one handed to a SolveError by hand.
const CODE_ELSEWHERE = /\.code\s*=(?!=)|\bcode\s*:\s*['"][A-Z]|new SolveError\(\s*['"]|\bsolveError\(\s*\w+\s*,\s*['"]/g

// Codes that are not thrown to a caller: the CLI catches these and exits 2 with the
// message.
const NOT_THROWN = ['ERR_USAGE', 'ERR_BAD_LINE']

const jsSources = () => [...files('index.js', ['.js']), ...files('lib', ['.js']), ...files('bin', ['.js'])]

function thrownCodes() {
  const codes = new Set()
  for (const m of fs.readFileSync(path.join(root, ERRORS_HOME), 'utf8').matchAll(HOME_CODE)) codes.add(m[1])
  for (const file of [...files('src', ['.rs']), ...files('crates/budget-core/src', ['.rs'])]) {
    for (const m of fs.readFileSync(file, 'utf8').matchAll(RUST_CODE)) codes.add(m[1])
  }
  for (const code of NOT_THROWN) codes.delete(code)
  return codes
}

/** The lines of `text` that set an error's code by hand. */
const codesSetIn = (text) => text.split('\n').filter((line) => line.match(CODE_ELSEWHERE) !== null)

/** The `ERR_…` / `E…` codes in backticks in `text`. */
function codesIn(text) {
  return new Set([...text.matchAll(/`(E(?:RR)?_?[A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]))
}

/** README.md's "Errors" table: its `code` column. */
function readmeTable() {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  const section = readme.split(/^## /m).find((s) => s.startsWith('Errors\n'))
  const rows = section.split('\n').filter((line) => line.startsWith('| ') && !line.startsWith('| error') && !line.startsWith('| ---'))
  return codesIn(rows.map((row) => row.split(' | ')[1]).join('\n'))
}

const sorted = (set) => [...set].sort()
const minus = (a, b) => sorted(a).filter((x) => !b.has(x))

test('the sources throw codes the scan can find (the scan itself works)', (t) => {
  const codes = thrownCodes()
  // One from each kind of place: the core, the binding, a helper, a class and a SolveError's own code in lib/util/errors.js.
  for (const code of ['ERR_OUT_OF_RANGE', 'ERR_CONSTRUCT_CALL_REQUIRED', 'ERR_TRACKER_CLOSED', 'ETIMEDOUT', 'ERR_NETWORK']) {
    t.true(codes.has(code), code)
  }
  t.false(codes.has('ENOENT'), 'a code only compared is not thrown')
})

test('every code the JavaScript sets is set in lib/util/errors.js (the check finds one set elsewhere)', (t) => {
  const setByHand = [
    "  err.code = 'ERR_X'",
    "  throw Object.assign(new Error(m), { code: 'ERR_X' })",
    "new SolveError('ERR_X', m)",
    "solveError(apiKey, 'ERR_X', m)",
  ]
  t.deepEqual(codesSetIn([...setByHand, "if (err.code === 'ENOENT') return", "{ exitCode: 2, code: 'captcha-budget.repeatedOption' }"].join('\n')), setByHand)
  const elsewhere = jsSources()
    .filter((file) => path.relative(root, file).split(path.sep).join('/') !== ERRORS_HOME)
    .flatMap((file) => codesSetIn(fs.readFileSync(file, 'utf8')).map((line) => `${path.relative(root, file)}: ${line.trim()}`))
  t.deepEqual(elsewhere, [])
})

test("README's Errors table lists every code the package throws, and no other", (t) => {
  const thrown = thrownCodes()
  const table = readmeTable()
  t.deepEqual(minus(thrown, table), [], 'thrown but not in the README table')
  t.deepEqual(minus(table, thrown), [], 'in the README table but never thrown')
})

test('docs/errors.md names every code the package throws, and no other', (t) => {
  const thrown = thrownCodes()
  const page = codesIn(fs.readFileSync(path.join(root, 'docs', 'errors.md'), 'utf8'))
  t.deepEqual(minus(thrown, page), [], 'thrown but not in docs/errors.md')
  t.deepEqual(minus(page, thrown), [], 'in docs/errors.md but never thrown')
})
