// Every example in README.md and docs/**/*.md runs here, so documentation cannot
// drift from the code. The rules (also in CONTRIBUTING.md):
// - ```js and ```mjs blocks are written to a file at the repository root (so that
//   `require('captcha-error-budget')` and `import … from 'captcha-error-budget'`
//   resolve by the package's self-reference through package.json `exports`, and
//   './__test__/helpers/…' resolves as it does from a clone) and run with node from
//   the root. Each must exit 0 on its own: no variable from an earlier block, no
//   network but loopback servers it starts itself, no API key, no sleeps.
// - A ```text block directly after one (nothing but blank lines between) is that
//   block's exact stdout.
// - ```ts blocks are type-checked (tsc --noEmit, each as an ES module with the
//   settings of __test__/types/tsconfig.json: no DOM or Node types, so a block
//   declares what it uses from its surroundings) and not run.
// - Every other language (sh, text, json, yaml, promql, …) is not executed; a
//   JavaScript or TypeScript block under another name (```javascript, ```node,
//   ```typescript, …) fails, since it would silently not run.
const test = require('ava')
const { nativeOnly } = require('./helpers/binding')
const { needsFor } = require('./helpers/external')
const { execFile } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const root = path.join(__dirname, '..')
const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc')

// README.md and every Markdown page under docs/, whoever added it.
const pages = [
  'README.md',
  ...(fs.existsSync(path.join(root, 'docs'))
    ? fs
        .readdirSync(path.join(root, 'docs'), { recursive: true })
        .filter((f) => f.endsWith('.md'))
        .map((f) => path.join('docs', f).split(path.sep).join('/'))
        .sort()
    : []),
]

// Fenced blocks of a Markdown page: { lang, code, line (of the opening fence), after }
// where `after` is the index of the next block if only blank lines separate them.
function blocksOf(page) {
  const lines = fs.readFileSync(path.join(root, page), 'utf8').split('\n')
  const blocks = []
  let open = null
  let lastClose = -2
  lines.forEach((text, i) => {
    if (open) {
      if (text.trim() === open.fence) {
        blocks.push({ lang: open.lang, code: open.body.join('\n'), line: open.line, adjacent: open.adjacent, nativeOnly: open.nativeOnly, needs: open.needs })
        open = null
        lastClose = i
      } else {
        open.body.push(text.slice(Math.min(open.indent, text.length - text.trimStart().length)))
      }
      return
    }
    const m = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(text)
    if (!m) return
    const between = lines.slice(lastClose + 1, i)
    const adjacent = blocks.length > 0 && lastClose >= 0 && between.every((l) => l.trim() === '')
    // Notes on the lines just before a block: `<!-- native-only: why -->` skips it on
    // the WASI build; `<!-- needs: program -->` where the program is missing (not under CI).
    const notes = [lines[i - 1], lines[i - 2]].map((l) => (l ?? '').trim())
    const note = notes.map((l) => /^<!--\s*native-only:\s*(.*?)\s*-->$/.exec(l)).find(Boolean)
    const needs = notes.map((l) => /^<!--\s*needs:\s*([\w-]+)\s*-->$/.exec(l)).find(Boolean)
    open = { fence: m[2], lang: m[3].toLowerCase(), indent: m[1].length, body: [], line: i + 1, adjacent, nativeOnly: note?.[1], needs: needs?.[1] }
  })
  if (open) throw new Error(`${page}:${open.line}: a code block is never closed`)
  return blocks
}

const RUN = new Set(['js', 'mjs'])
const MISNAMED = new Set(['javascript', 'node', 'cjs', 'jsx', 'typescript', 'tsx', 'mts', 'cts'])

const examples = []
const typed = []
for (const page of pages) {
  const blocks = blocksOf(page)
  blocks.forEach((block, i) => {
    const where = `${page}:${block.line}`
    if (MISNAMED.has(block.lang)) {
      test(`${where}: a ${block.lang} block (write js, mjs or ts so that it is checked)`, (t) => {
        t.fail(`${where}: \`\`\`${block.lang} is not run by the docs spec; use js, mjs or ts`)
      })
    } else if (RUN.has(block.lang)) {
      const next = blocks[i + 1]
      const expected = next && next.adjacent && next.lang === 'text' ? `${next.code}\n` : null
      examples.push({ where, ...block, expected })
    } else if (block.lang === 'ts') {
      typed.push({ where, ...block })
    }
  })
}

// Two examples at a time: the machine is shared, and each starts a node.
let running = 0
const waiting = []
async function limited(fn) {
  if (running >= 2) await new Promise((resolve) => waiting.push(resolve))
  running += 1
  try {
    return await fn()
  } finally {
    running -= 1
    waiting.shift()?.()
  }
}

// No real key from the environment: examples must not need one.
const env = { ...process.env }
delete env.CAPTCHAAI_KEY
delete env.CAPTCHAAI_URL
delete env.NODE_OPTIONS

for (const example of examples) {
  const kind = example.expected === null ? 'runs' : 'prints what its text block shows'
  // Skipped where its program is missing (not under CI), else on WASI if native-only.
  const runner = example.nativeOnly ? nativeOnly(example.nativeOnly) : test
  const run = example.needs ? needsFor(runner, example.needs) : runner
  run(`${example.where} (${example.lang}) ${kind}`, async (t) => {
    const file = path.join(root, `.docs-example-${process.pid}-${example.where.replace(/[^\w]+/g, '-')}.${example.lang}`)
    fs.writeFileSync(file, `${example.code}\n`)
    t.teardown(() => fs.rmSync(file, { force: true }))
    const result = await limited(
      () =>
        new Promise((resolve) => {
          // The kill is a guard against a hanging example, not a measurement.
          execFile(process.execPath, [file], { cwd: root, env, timeout: 30_000 }, (error, stdout, stderr) =>
            resolve({ code: error ? (error.code ?? error.signal) : 0, stdout, stderr }),
          )
        }),
    )
    t.is(result.code, 0, `${example.where} failed:\n${result.stderr}`)
    if (example.expected !== null) t.is(result.stdout, example.expected, `stderr:\n${result.stderr}`)
  })
}

// One tsc run for every ts block, each its own ES module (.mts: top-level await works).
let checked = null
function typeCheck() {
  checked ??= new Promise((resolve) => {
    const dir = fs.mkdtempSync(path.join(root, '.docs-types-'))
    const files = typed.map((block, i) => {
      const name = `block-${i}.mts`
      fs.writeFileSync(path.join(dir, name), `${block.code}\nexport {}\n`)
      return name
    })
    const config = { extends: path.join(__dirname, 'types', 'tsconfig.json'), files }
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(config))
    execFile(process.execPath, [tsc, '-p', dir, '--pretty', 'false'], (error, stdout) => {
      fs.rmSync(dir, { recursive: true, force: true })
      resolve({ code: error ? error.code : 0, stdout })
    })
  })
  return checked
}

typed.forEach((block, i) => {
  test(`${block.where} (ts) type-checks`, async (t) => {
    const { code, stdout } = await typeCheck()
    // tsc names each file relative to the working directory: …/block-<i>.mts(line,col): error …
    const lines = stdout.split('\n').filter((l) => /error TS\d+/.test(l))
    t.deepEqual(
      lines.filter((l) => new RegExp(`(^|[\\\\/])block-${i}\\.mts\\(`).test(l)),
      [],
      `${block.where}:\n${block.code}`,
    )
    // An error that is no block's (a broken tsconfig) fails every ts block.
    t.deepEqual(
      lines.filter((l) => !/(^|[\\/])block-\d+\.mts\(/.test(l)),
      [],
    )
    if (lines.length === 0) t.is(code, 0)
  })
})

test('the docs spec finds the blocks it is meant to run', (t) => {
  t.true(
    examples.some((e) => e.where.startsWith('README.md:')),
    'README.md has a js example',
  )
  t.true(
    examples.some((e) => e.expected !== null),
    'some example asserts its output',
  )
})

test('the block reader: a text block directly after a js block is its output; one further down is not', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-spec-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const md = ['```js', 'a', '```', '', '```text', 'A', '```', 'prose', '```mjs', 'b', '```', 'prose', '```text', 'B', '```', '']
  fs.writeFileSync(path.join(dir, 'x.md'), md.join('\n'))
  const blocks = blocksOf(path.relative(root, path.join(dir, 'x.md')))
  t.deepEqual(
    blocks.map((b) => [b.lang, b.code, b.line, b.adjacent]),
    [
      ['js', 'a', 1, false],
      ['text', 'A', 5, true],
      ['mjs', 'b', 9, false],
      ['text', 'B', 13, false],
    ],
  )
})
