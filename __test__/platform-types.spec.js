// A consumer project type-checks the published declarations: TypeScript 7
// and 5.9, `strict`, `skipLibCheck: false`, `lib` es2022 only (no DOM, so the
// declarations must name the libs they need), `module` nodenext (an ESM and a
// CJS file) and bundler, with and without @types/node. The consumer installs
// the package as a user would find it: node_modules/captcha-error-budget.
// The declarations are the same files whatever build loads: on WASI it skips.
const test = require('./helpers/binding').nativeRuns('on WASI: type-checks the declarations, the same files whatever build loads')
const { execFile } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const root = path.join(__dirname, '..')
const TSC = {
  '7.0': path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'),
  5.9: path.join(root, 'node_modules', 'typescript-5', 'bin', 'tsc'),
}

// Correct use, including `using`, and misuse that must stay an error: if the
// declarations degraded to `any`, the @ts-expect-error lines would fail.
const USAGE = `
{
  using tracker = new ErrorBudgetTracker({ targetRate: 0.95, windowMs: 60_000, clock: 'manual' })
  tracker.record(true)
  const report: BudgetReport = tracker.report()
  const status: 'healthy' | 'warning' | 'critical' | 'exhausted' = report.status
  void status
  // @ts-expect-error record() takes a boolean
  tracker.record('yes')
  // @ts-expect-error no such config field
  void new ErrorBudgetTracker({ target: 0.95 })
}
`
const ESM = `import { ErrorBudgetTracker, type BudgetReport } from 'captcha-error-budget'\n${USAGE}export {}\n`
const CJS = `import pkg = require('captcha-error-budget')\nconst { ErrorBudgetTracker } = pkg\ntype BudgetReport = pkg.BudgetReport\n${USAGE}`

const MODULES = {
  nodenext: { options: { module: 'nodenext', moduleResolution: 'nodenext' }, files: { 'esm.mts': ESM, 'cjs.cts': CJS } },
  bundler: { options: { module: 'esnext', moduleResolution: 'bundler' }, files: { 'app.ts': ESM } },
}

function consumer({ module, typesNode }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-consumer-'))
  const modules = path.join(dir, 'node_modules')
  fs.mkdirSync(path.join(modules, '@types'), { recursive: true })
  fs.symlinkSync(root, path.join(modules, 'captcha-error-budget'), 'dir')
  if (typesNode) {
    fs.symlinkSync(path.join(root, 'node_modules', '@types', 'node'), path.join(modules, '@types', 'node'), 'dir')
    fs.symlinkSync(path.join(root, 'node_modules', 'undici-types'), path.join(modules, 'undici-types'), 'dir')
  }
  const { options, files } = MODULES[module]
  const compilerOptions = { strict: true, noEmit: true, skipLibCheck: false, target: 'es2022', lib: ['es2022'], ...options }
  fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: Object.keys(files) }))
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text)
  return dir
}

const tsc = (version, dir) =>
  new Promise((resolve) => {
    execFile(process.execPath, [TSC[version], '-p', dir], (error, stdout) => resolve({ code: error ? error.code : 0, stdout }))
  })

for (const version of Object.keys(TSC)) {
  for (const module of Object.keys(MODULES)) {
    for (const typesNode of [false, true]) {
      test(`TypeScript ${version}, ${module}, ${typesNode ? 'with' : 'without'} @types/node`, async (t) => {
        const dir = consumer({ module, typesNode })
        t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
        const { code, stdout } = await tsc(version, dir)
        t.is(code, 0, stdout)
      })
    }
  }
}

test('the check fails when the declarations do not name their libs', async (t) => {
  // The same consumer against a copy of the package whose native.d.ts lacks
  // the lib reference: `Symbol.dispose` is unknown under lib es2022.
  const dir = consumer({ module: 'bundler', typesNode: false })
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const pkg = path.join(dir, 'node_modules', 'captcha-error-budget')
  fs.unlinkSync(pkg)
  fs.mkdirSync(pkg)
  for (const f of ['package.json', 'index.d.ts', 'native.d.ts']) fs.copyFileSync(path.join(root, f), path.join(pkg, f))
  const dts = path.join(pkg, 'native.d.ts')
  fs.writeFileSync(dts, fs.readFileSync(dts, 'utf8').replace(/^\/\/\/ <reference lib=.*$/m, ''))
  const { code, stdout } = await tsc('7.0', dir)
  t.not(code, 0)
  t.regex(stdout, /Property 'dispose' does not exist on type 'SymbolConstructor'/)
})
