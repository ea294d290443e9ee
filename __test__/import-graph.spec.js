// Issue 32: the package's own modules require each other one way only. Every
// require() of a relative path in index.js, bin/ and lib/ (lazy ones inside
// functions included: they are arrows too) is an edge, and so is every relative
// import of the hand-written .d.ts files; the graph has no cycle, no file under
// lib/ imports the package root, and every relative path names its file (.js).
// Issue 45: lib/ is a folder per concept, in the order CONTRIBUTING.md states; a
// file imports from its own folder and earlier ones only, never a later one.
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')

const PACKAGE_NAME = require('../package.json').name

/** The files under `dir` whose names end in `suffix` (.d.ts files do not end in plain .js). */
function filesEndingIn(dir, suffix) {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.posix.join(dir, entry.name)
    if (entry.isDirectory()) return filesEndingIn(file, suffix)
    return file.endsWith(suffix) ? [file] : []
  })
}

const JS_FILES = ['index.js', ...filesEndingIn('bin', '.js'), ...filesEndingIn('lib', '.js')]
const DTS_FILES = ['index.d.ts', ...filesEndingIn('lib', '.d.ts')]

/** The module specifiers of `file`: require() in JavaScript; import, export … from, import() and `declare module` in a .d.ts. */
function specifiers(file) {
  const text = fs.readFileSync(path.join(root, file), 'utf8')
  const patterns = file.endsWith('.d.ts')
    ? [/\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g, /\bdeclare module\s+['"]([^'"]+)['"]/g, /\brequire\(\s*['"]([^'"]+)['"]\s*\)/g]
    : [/\brequire\(\s*['"`]([^'"`]+)['"`]\s*\)/g]
  return patterns.flatMap((pattern) => [...text.matchAll(pattern)].map((match) => match[1]))
}

const isRelative = (spec) => spec === '.' || spec === '..' || spec.startsWith('./') || spec.startsWith('../')

/** The package file `spec` in `file` stands for (relative to the root): a .d.ts names its neighbours' declarations as .js. */
function resolve(file, spec) {
  const target = path.join(root, path.dirname(file), spec)
  if (!file.endsWith('.d.ts')) return path.relative(root, require.resolve(target)).split(path.sep).join('/')
  const candidates = spec.endsWith('.js') ? [target.replace(/\.js$/, '.d.ts')] : [`${target}.d.ts`, path.join(target, 'index.d.ts')]
  const found = candidates.find((candidate) => fs.existsSync(candidate)) ?? candidates[0]
  return path.relative(root, found).split(path.sep).join('/')
}

/** file → the package files it requires or imports (relative to the root). */
function requireGraph() {
  const graph = new Map()
  for (const file of [...JS_FILES, ...DTS_FILES]) {
    graph.set(
      file,
      specifiers(file)
        .filter(isRelative)
        .map((spec) => resolve(file, spec)),
    )
  }
  return graph
}

/** The cycles of `graph`, each as its path of files (the first repeated at the end). */
function cycles(graph) {
  const found = []
  const state = new Map() // file → 'open' while on the stack, 'done' after
  const stack = []
  const visit = (file) => {
    state.set(file, 'open')
    stack.push(file)
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...stack.slice(stack.indexOf(next)), next])
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(file, 'done')
  }
  for (const file of graph.keys()) if (!state.has(file)) visit(file)
  return found
}

/** The folders of lib/ in the order CONTRIBUTING.md states them (its line "- lib/'s folders, in import order: …"). */
function folderOrder() {
  const contributing = fs.readFileSync(path.join(root, 'CONTRIBUTING.md'), 'utf8')
  const line = contributing.split('\n').find((text) => text.startsWith("- lib/'s folders, in import order:"))
  return line === undefined ? [] : [...line.matchAll(/`([a-z-]+)\/`/g)].map((match) => match[1])
}

/** The folder of lib/ that `file` is in (null for a file outside lib/'s folders). */
const folderOf = (file) => /^lib\/([^/]+)\//.exec(file)?.[1] ?? null

/** The edges of `graph` from a folder of lib/ to a later one in `order`, or to a folder `order` does not name. */
function againstOrder(graph, order) {
  const rank = new Map(order.map((folder, index) => [folder, index]))
  const wrong = []
  for (const [file, targets] of graph) {
    const from = folderOf(file)
    if (from === null) continue
    for (const target of targets) {
      const to = folderOf(target)
      // undefined (a folder the order does not name) compares false: reported.
      if (to !== null && !(rank.get(to) <= rank.get(from))) wrong.push(`${file} → ${target}`)
    }
  }
  return wrong
}

test('the check finds a cycle where there is one', (t) => {
  const graph = new Map([
    ['a.js', ['b.js']],
    ['b.js', ['c.js']],
    ['c.js', ['a.js']],
    ['d.js', ['a.js']],
  ])
  t.deepEqual(cycles(graph), [['a.js', 'b.js', 'c.js', 'a.js']])
})

test('no import circles in index.js, bin/ and lib/, their .d.ts files included', (t) => {
  const graph = requireGraph()
  t.true(graph.get('index.js').includes('lib/tracker/tracker.js'))
  t.true(graph.get('index.d.ts').includes('native.d.ts'))
  t.deepEqual(
    cycles(graph).map((cycle) => cycle.join(' → ')),
    [],
  )
})

// The package root (index.js, index.d.ts) is built from lib/, so an arrow from
// lib/ back to it is a circle in waiting and loads the whole entry for a part.
test('no file under lib/, .js or .d.ts, imports the package root', (t) => {
  const graph = requireGraph()
  const upward = []
  for (const file of [...JS_FILES, ...DTS_FILES].filter((name) => name.startsWith('lib/'))) {
    for (const spec of specifiers(file)) {
      if (spec === PACKAGE_NAME || spec.startsWith(`${PACKAGE_NAME}/`)) upward.push(`${file} → ${spec}`)
    }
    for (const target of graph.get(file)) if (/^index\.(js|d\.ts)$/.test(target)) upward.push(`${file} → ${target}`)
  }
  t.deepEqual(upward, [])
})

test('every relative require and .d.ts import names its file: .js (or .json for package.json)', (t) => {
  const unnamed = []
  for (const file of [...JS_FILES, ...DTS_FILES]) {
    for (const spec of specifiers(file).filter(isRelative)) if (!/\.js$|\/package\.json$/.test(spec)) unnamed.push(`${file}: '${spec}'`)
  }
  t.deepEqual(unnamed, [])
})

test('the order check finds an import of a later folder, or of a folder the order does not name', (t) => {
  const graph = new Map([
    ['index.js', ['lib/b/y.js']],
    ['lib/a/x.js', ['lib/a/w.js', 'native.js']],
    ['lib/b/y.js', ['lib/a/x.js', 'lib/b/z.js']],
    ['lib/a/w.js', ['lib/b/y.js', 'lib/c/v.js']],
  ])
  t.deepEqual(againstOrder(graph, ['a', 'b']), ['lib/a/w.js → lib/b/y.js', 'lib/a/w.js → lib/c/v.js'])
  t.deepEqual(againstOrder(graph, ['b', 'a']), ['lib/b/y.js → lib/a/x.js', 'lib/a/w.js → lib/c/v.js'])
  t.deepEqual(againstOrder(graph, ['a', 'b', 'c']), ['lib/a/w.js → lib/b/y.js', 'lib/a/w.js → lib/c/v.js'])
  t.deepEqual(againstOrder(graph, ['c', 'a', 'b']), ['lib/a/w.js → lib/b/y.js'])
})

test("every folder of lib/ is in CONTRIBUTING.md's order, and imports only from itself and the folders before it", (t) => {
  const order = folderOrder()
  const folders = fs
    .readdirSync(path.join(root, 'lib'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
  t.deepEqual([...order].sort(), folders.sort())
  t.deepEqual(againstOrder(requireGraph(), order), [])
})

// lib/'s top holds what the package's entries load first, at most 10 files; the
// specs mirror lib/'s folders, with at most 15 cross-cutting ones at the top.
test("lib/'s top holds at most 10 .js files; __test__/'s folders are lib/'s (and helpers/, fixtures/, types/), at most 15 specs at its top", (t) => {
  const entries = (dir) => fs.readdirSync(path.join(root, dir), { withFileTypes: true })
  t.true(entries('lib').filter((entry) => entry.isFile() && entry.name.endsWith('.js')).length <= 10)
  const libFolders = new Set(folderOrder())
  const strays = entries('__test__')
    .filter((entry) => entry.isDirectory() && !['helpers', 'fixtures', 'types'].includes(entry.name))
    .map((entry) => entry.name)
    .filter((name) => !libFolders.has(name))
  t.deepEqual(strays, [])
  t.true(entries('__test__').filter((entry) => entry.isFile() && /\.spec\.m?js$/.test(entry.name)).length <= 15)
})

/** Each computed `require(…)` of `text` (its argument not a string literal): the argument's text, its parentheses balanced. */
function computedRequires(text) {
  const found = []
  for (const match of text.matchAll(/\brequire\(/g)) {
    let depth = 1
    let end = match.index + match[0].length
    while (depth > 0 && end < text.length) depth += { '(': 1, ')': -1 }[text[end++]] ?? 0
    const argument = text.slice(match.index + match[0].length, end - 1).trim()
    if (argument !== '' && !/^(['"`])[^'"`]*\1$/.test(argument)) found.push(argument)
  }
  return found
}

/** Whether `spec` ('pkg', 'pkg/sub', '@scope/pkg/sub') is a package's entry or a subpath its `exports` lists. */
function publicSpecifier(spec) {
  const parts = spec.split('/')
  const name = parts.slice(0, spec.startsWith('@') ? 2 : 1).join('/')
  const subpath = parts.slice(name.split('/').length).join('/')
  if (subpath === '') return true
  const manifest = JSON.parse(fs.readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8'))
  const exported = manifest.exports
  return exported !== null && typeof exported === 'object' && Object.hasOwn(exported, `./${subpath}`)
}

// A dependency's files other than its entries are its own business: one loaded by
// path breaks on its next patch release, and is a file the import graph cannot see.
test("no file of index.js, bin/ or lib/ loads a dependency's private file: a package's entry or exported subpath only, never a path found through require.resolve()", (t) => {
  t.deepEqual(computedRequires("require(path.join(dir, 'x.js')); require('a'); require(`b`)"), ["path.join(dir, 'x.js')"])
  t.false(publicSpecifier('commander/lib/suggestSimilar.js'))
  t.true(publicSpecifier('commander'))
  const private_ = []
  for (const file of JS_FILES) {
    const text = fs.readFileSync(path.join(root, file), 'utf8')
    for (const argument of computedRequires(text)) if (/require\.resolve\(|node_modules/.test(argument)) private_.push(`${file}: require(${argument})`)
    for (const spec of specifiers(file))
      if (!isRelative(spec) && !spec.startsWith('node:') && !spec.startsWith(PACKAGE_NAME) && !publicSpecifier(spec)) private_.push(`${file}: '${spec}'`)
  }
  t.deepEqual(private_, [])
})
