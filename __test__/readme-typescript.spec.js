// README's TypeScript example compiles as pasted into a default project: a `.ts`
// file of a package without "type": "module" is CommonJS, where top-level `await`
// is TS1309 (docs.spec.js checks every ts block as an ES module, `.mts`).
const test = require('ava')
const { execFile } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')
const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc')

/** The ```ts blocks of README.md. */
function tsBlocks() {
  const text = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1])
}

test("README's TypeScript example type-checks as a CommonJS .ts file (no top-level await)", async (t) => {
  const blocks = tsBlocks()
  t.true(blocks.length >= 1)
  // Inside the repository, so that 'captcha-error-budget' resolves by self-reference as in a project's node_modules.
  const dir = fs.mkdtempSync(path.join(root, '.docs-types-cjs-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const files = blocks.map((code, i) => {
    fs.writeFileSync(path.join(dir, `readme-${i}.ts`), code)
    return `readme-${i}.ts`
  })
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ extends: path.join(__dirname, 'types', 'tsconfig.json'), files }))
  const { code, stdout } = await new Promise((resolve) =>
    execFile(process.execPath, [tsc, '-p', dir, '--pretty', 'false'], (error, out) => resolve({ code: error ? error.code : 0, stdout: out })),
  )
  t.is(stdout, '')
  t.is(code, 0)
})
