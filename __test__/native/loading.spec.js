const test = require('ava')
const { execFile } = require('node:child_process')
const path = require('node:path')

const root = path.join(__dirname, '..', '..')
const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc')

// Runs a script in a fresh node (its own module cache) from the repository root, so
// that `captcha-error-budget` resolves by self-reference through package.json `exports`.
const run = (args) =>
  new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: root }, (error, stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(JSON.parse(stdout)),
    )
  })

// The modules a script has loaded, relative to the repository, from require.cache
// (an ESM import of CommonJS goes through it too).
const LOADED = `Object.keys(require.cache).map((f) => require('node:path').relative(${JSON.stringify(root)}, f))`
const lazyParts = (files) =>
  files.filter((f) => /^lib\/(providers\/solver\.js|prometheus\/(metrics|rules|index)|cli\/)|node_modules\/(yaml|commander|cli-progress|prom-client)\//.test(f))

test('require() of the package loads no solver, Prometheus, CLI or yaml code until one is used', async (t) => {
  const out = await run([
    '-e',
    `const pkg = require('captcha-error-budget')
     const before = ${LOADED}
     const rules = pkg.prometheusRules({ name: 'turnstile', targetRate: 0.95, windowMs: 86400000 })
     console.log(JSON.stringify({ before, after: ${LOADED}, rules: /^groups:$/m.test(rules), keys: Object.keys(pkg) }))`,
  ])
  t.true(out.before.includes('index.js') && out.before.includes('lib/guard/guard.js'), out.before.join(', '))
  t.deepEqual(lazyParts(out.before), [])
  // Used once, the forwarding function loads the rules (and yaml) and returns their output.
  t.true(out.after.includes('lib/prometheus/rules.js'))
  t.true(out.after.some((f) => f.startsWith('node_modules/yaml/')))
  t.true(out.rules)
  t.deepEqual(out.keys, [
    'ErrorBudgetTracker',
    'BudgetExhaustedError',
    'ProviderBackoffError',
    'FleetSyncError',
    'GuardTimeoutError',
    'SolveError',
    'createSolver',
    'defaultCountsAsFailure',
    'createFailover',
    'CALLER_ERROR_CODES',
    'renderMetrics',
    'registerMetrics',
    'METRICS_CONTENT_TYPE',
    'prometheusRules',
    'BudgetFamily',
    'FaultError',
  ])
})

test('an ESM import of the package loads no rules, CLI or yaml code (it reads the constants: solver and metrics)', async (t) => {
  const out = await run([
    '--input-type=module',
    '-e',
    `import { createRequire } from 'node:module'
     import { ErrorBudgetTracker, prometheusRules, CALLER_ERROR_CODES } from 'captcha-error-budget'
     const require = createRequire(${JSON.stringify(path.join(root, 'x.js'))})
     console.log(JSON.stringify({ loaded: ${LOADED}, named: [typeof ErrorBudgetTracker, typeof prometheusRules, CALLER_ERROR_CODES.includes('ERROR_ZERO_BALANCE')] }))`,
  ])
  t.deepEqual(out.named, ['function', 'function', true])
  t.deepEqual(lazyParts(out.loaded).sort(), ['lib/prometheus/metrics.js', 'lib/providers/solver.js'])
})

// What each subpath entry exports; the functions are the ones the main entry forwards to.
const SUBPATHS = `
  const main = require('captcha-error-budget')
  const entries = { prometheus: require('captcha-error-budget/prometheus'), solver: require('captcha-error-budget/solver') }
  const same = {
    prometheus: entries.prometheus.prometheusRules === require('./lib/prometheus/rules.js').prometheusRules &&
      entries.prometheus.renderMetrics === require('./lib/prometheus/metrics.js').renderMetrics,
    solver: entries.solver.createSolver === require('./lib/providers/solver.js').createSolver,
  }
  const slo = { name: 'turnstile', targetRate: 0.95, windowMs: 86400000 }
  const result = {
    keys: { prometheus: Object.keys(entries.prometheus).sort(), solver: Object.keys(entries.solver).sort() },
    same,
    rulesAgree: entries.prometheus.prometheusRules(slo) === main.prometheusRules(slo),
    constantsAgree: entries.prometheus.METRICS_CONTENT_TYPE === main.METRICS_CONTENT_TYPE && entries.solver.CALLER_ERROR_CODES === main.CALLER_ERROR_CODES,
    // The main entry's forwarding functions look like the functions they forward to.
    shapes: Object.entries({ ...entries.prometheus, ...entries.solver })
      .filter(([, value]) => typeof value === 'function')
      .map(([name, fn]) => [name, main[name].name === fn.name, main[name].length === fn.length]),
    method: [main.ErrorBudgetTracker.prototype.metrics.name, main.ErrorBudgetTracker.prototype.metrics.length],
  }
`
const EXPECTED_SUBPATHS = {
  keys: {
    prometheus: ['METRICS_CONTENT_TYPE', 'prometheusRules', 'registerMetrics', 'renderMetrics'],
    solver: ['CALLER_ERROR_CODES', 'createFailover', 'createSolver', 'defaultCountsAsFailure'],
  },
  same: { prometheus: true, solver: true },
  rulesAgree: true,
  constantsAgree: true,
  shapes: [
    ['renderMetrics', true, true],
    ['registerMetrics', true, true],
    ['prometheusRules', true, true],
    ['createSolver', true, true],
    ['defaultCountsAsFailure', true, true],
    ['createFailover', true, true],
  ],
  method: ['metrics', 0],
}

test('captcha-error-budget/prometheus and /solver from CommonJS', async (t) => {
  t.deepEqual(await run(['-e', `${SUBPATHS}; console.log(JSON.stringify(result))`]), EXPECTED_SUBPATHS)
})

test('captcha-error-budget/prometheus and /solver from ESM: named imports', async (t) => {
  const out = await run([
    '--input-type=module',
    '-e',
    `import { createRequire } from 'node:module'
     import { prometheusRules, renderMetrics, registerMetrics, METRICS_CONTENT_TYPE } from 'captcha-error-budget/prometheus'
     import { createSolver, defaultCountsAsFailure, CALLER_ERROR_CODES } from 'captcha-error-budget/solver'
     const require = createRequire(${JSON.stringify(path.join(root, 'x.js'))})
     ${SUBPATHS}
     result.esm = prometheusRules === entries.prometheus.prometheusRules && renderMetrics === entries.prometheus.renderMetrics &&
       registerMetrics === entries.prometheus.registerMetrics && METRICS_CONTENT_TYPE === entries.prometheus.METRICS_CONTENT_TYPE &&
       createSolver === entries.solver.createSolver && defaultCountsAsFailure === entries.solver.defaultCountsAsFailure &&
       CALLER_ERROR_CODES === entries.solver.CALLER_ERROR_CODES
     console.log(JSON.stringify(result))`,
  ])
  t.deepEqual(out, { ...EXPECTED_SUBPATHS, esm: true })
})

test('the subpath entries are typed, from CommonJS and ESM TypeScript (tsc --noEmit)', async (t) => {
  const result = await new Promise((resolve) => {
    execFile(process.execPath, [tsc, '-p', path.join(__dirname, '..', 'types', 'tsconfig.subpaths.json')], (error, stdout) =>
      resolve({ code: error ? error.code : 0, stdout }),
    )
  })
  t.is(result.code, 0, result.stdout)
})
