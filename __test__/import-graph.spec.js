// Issue 32: the package's own modules require each other one way only. Every
// require() of a relative path in index.js, bin/ and lib/ (lazy ones inside
// functions included: they are arrows too) is an edge, and so is every relative
// import of the hand-written .d.ts files; the graph has no cycle, no file under
// lib/ imports the package root, and every relative path names its file (.js).
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
