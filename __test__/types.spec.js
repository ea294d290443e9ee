const test = require('ava')
const { execFile } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc')
const runTsc = (args) =>
  new Promise((resolve) => {
    execFile(process.execPath, [tsc, ...args], (error, stdout) => resolve({ code: error ? error.code : 0, stdout }))
  })

test('index.d.ts accepts correct use and rejects misuse (tsc --noEmit)', async (t) => {
  const result = await runTsc(['-p', path.join(__dirname, 'types')])
  t.is(result.code, 0, result.stdout)
})

// The values index.d.ts declares are exactly those index.js exports: a TypeScript
// file maps the declared value exports (keyof typeof the module) to the names
// found at run time; a missing name or an extra one does not compile.
test('the value exports of index.d.ts are exactly those of index.js at run time', async (t) => {
  const runtime = Object.keys(require('..'))
  t.true(runtime.includes('ErrorBudgetTracker') && runtime.includes('prometheusRules'), runtime.join(', '))
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-types-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const entry = path
    .relative(dir, path.join(__dirname, '..', 'index.js'))
    .split(path.sep)
    .join('/')
  const check = (names) =>
    [
      `import type * as pkg from '${entry}'`,
      'const values: { [K in keyof typeof pkg]: true } = {',
      ...names.map((name) => `  ${name}: true,`),
      '}',
      'void values',
      '',
    ].join('\n')
  const tsconfig = {
    extends: path.join(__dirname, 'types', 'tsconfig.json'),
    files: ['check.ts'],
  }
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig))
  fs.writeFileSync(path.join(dir, 'check.ts'), check(runtime))
  const exact = await runTsc(['-p', dir])
  t.is(exact.code, 0, exact.stdout)
  // The check can fail: one name too few, one too many.
  fs.writeFileSync(path.join(dir, 'check.ts'), check(runtime.slice(1)))
  t.regex((await runTsc(['-p', dir])).stdout, /Property 'ErrorBudgetTracker' is missing/)
  fs.writeFileSync(path.join(dir, 'check.ts'), check([...runtime, '__napiBindingTarget']))
  t.regex((await runTsc(['-p', dir])).stdout, /'__napiBindingTarget' does not exist/)
})
