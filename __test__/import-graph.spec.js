// Issue 32: the package's own modules require each other one way only. Every
// require() of a relative path in index.js, bin/ and lib/ (lazy ones inside
// functions included: they are arrows too) is an edge; the graph has no cycle.
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')

function jsFiles(dir) {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.posix.join(dir, entry.name)
    if (entry.isDirectory()) return jsFiles(file)
    return file.endsWith('.js') ? [file] : []
  })
}

/** file → the package files it requires (relative to the root). */
function requireGraph() {
  const graph = new Map()
  for (const file of ['index.js', ...jsFiles('bin'), ...jsFiles('lib')]) {
    const text = fs.readFileSync(path.join(root, file), 'utf8')
    const targets = []
    for (const [, spec] of text.matchAll(/\brequire\(\s*'(\.{1,2}\/[^']*)'\s*\)/g)) {
      const resolved = require.resolve(path.join(root, path.dirname(file), spec))
      targets.push(path.relative(root, resolved).split(path.sep).join('/'))
    }
    graph.set(file, targets)
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

test('no import circles in index.js, bin/ and lib/', (t) => {
  const graph = requireGraph()
  t.true(graph.get('index.js').includes('lib/tracker.js'))
  t.deepEqual(
    cycles(graph).map((cycle) => cycle.join(' → ')),
    [],
  )
})
