// `captcha-budget dashboard` (lib/prometheus/dashboard.js): the JSON type-checks against
// Grafana's published dashboard schema (@grafana/schema's Dashboard, with
// tsc: excess or mistyped fields fail), and every PromQL query in it — panels
// and variables — names only series that the rules (lib/prometheus/rules.js) record, that
// the workers expose (lib/prometheus/metrics.js) or that Prometheus makes (ALERTS).
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { parser } = require('@prometheus-io/lezer-promql')
const { ErrorBudgetTracker } = require('../..')
const { ruleGroups } = require('../../lib/prometheus/rules.js')
const { grafanaDashboard } = require('../../lib/prometheus/dashboard.js')
const { tempDir, cli } = require('../fixtures/prometheus-tools')

const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc')

/** `tsc --noEmit` on a file that assigns `json` to @grafana/schema's Dashboard. */
async function typeCheck(t, json) {
  // Inside the repo, so that @grafana/schema resolves from node_modules.
  const dir = fs.mkdtempSync(path.join(__dirname, '..', '..', 'node_modules', '.dashboard-check-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  fs.writeFileSync(path.join(dir, 'check.ts'), `import type { Dashboard } from '@grafana/schema'\nconst dashboard: Dashboard = ${json}\nvoid dashboard\n`)
  fs.writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', types: [], skipLibCheck: true },
      files: ['check.ts'],
    }),
  )
  return new Promise((resolve) => {
    execFile(process.execPath, [tsc, '-p', dir], (error, stdout) => resolve({ code: error ? error.code : 0, stdout }))
  })
}

/** The metric names a PromQL expression selects (lezer-promql's parse tree); throws on a syntax error. */
function metricNames(expr) {
  // Grafana's variables, as Grafana would substitute them.
  const promql = expr.replace(/\$__(range|rate_interval)/g, '5m').replace(/\$(\w+)/g, 'x')
  const tree = parser.parse(promql)
  const names = []
  tree.iterate({
    enter(node) {
      if (node.type.isError) throw new Error(`not PromQL: ${expr} (at ${node.from})`)
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') names.push(promql.slice(node.from, node.to))
    },
  })
  return names
}

/** Every series a fleet can have: the rules' recordings (any SLO), the exposition's families, ALERTS. */
function producedSeries() {
  const records = ruleGroups([
    { name: 'turnstile', targetRate: 0.95, windowMs: 30 * 86_400_000 },
    { name: 'turnstile', targetRate: 0.99, windowMs: 86_400_000 },
  ]).groups.flatMap((g) => g.rules.filter((r) => r.record).map((r) => r.record))
  const tracker = new ErrorBudgetTracker({ targetRate: 0.95, windowMs: 3_600_000, clock: 'manual' })
  const families = [...tracker.metrics().matchAll(/^# TYPE (\S+)/gm)].map((m) => m[1])
  tracker.close()
  return new Set([...records, ...families, 'ALERTS'])
}

test('the dashboard type-checks as @grafana/schema Dashboard; a misspelt field does not', async (t) => {
  const json = JSON.stringify(grafanaDashboard(), null, 2)
  const good = await typeCheck(t, json)
  t.is(good.code, 0, good.stdout)
  // The check is real: a field the schema does not have, or a string for a number, fails.
  const bad = await typeCheck(t, json.replace('"schemaVersion": 39', '"schemaVersion": "39"').replace('"gridPos"', '"gridPosition"'))
  t.not(bad.code, 0)
  t.regex(bad.stdout, /Type 'string' is not assignable to type 'number'/)
  t.regex(bad.stdout, /'"gridPosition"' does not exist in type 'Panel/)
})

test('every query names only series the rules, the exposition or Prometheus produce', (t) => {
  const dashboard = grafanaDashboard()
  const produced = producedSeries()
  const queries = [
    ...dashboard.panels.flatMap((p) => p.targets.map((target) => target.expr)),
    // label_values(<selector>, label): the selector is PromQL.
    ...dashboard.templating.list.filter((v) => v.type === 'query').map((v) => /^label_values\((.*), \w+\)$/.exec(v.query.query)[1]),
  ]
  t.is(queries.length, 17)
  const used = new Set(queries.flatMap(metricNames))
  t.deepEqual(
    [...used].filter((name) => !produced.has(name)),
    [],
  )
  // What the issue asks of it, per SLO: budget left, burn over the alert windows,
  // time per status, firing alerts, solves per type.
  for (const name of [
    'captcha_budget:error_budget_remaining:ratio',
    'captcha_budget:burn_rate:ratio',
    'captcha_budget_status',
    'ALERTS',
    'captcha_budget_solves_total',
  ]) {
    t.true(used.has(name), name)
  }
  // The checker is real: a series nobody produces is caught.
  t.deepEqual(
    metricNames('captcha_budget:burn_rate:ratio_rate1h{slo="$slo"} / captcha_budget_remaining_ratio').filter((n) => !produced.has(n)),
    ['captcha_budget:burn_rate:ratio_rate1h'],
  )
  t.throws(() => metricNames('sum(rate(x[5m])'), { message: /not PromQL/ })
})

test('the SLO is a variable; every panel query is per SLO or per type', (t) => {
  const dashboard = grafanaDashboard({ slo: 'turnstile-95-30d' })
  t.deepEqual(
    dashboard.templating.list.map((v) => v.name),
    ['datasource', 'slo', 'source'],
  )
  t.deepEqual(dashboard.templating.list[1].current, { text: 'turnstile-95-30d', value: 'turnstile-95-30d' })
  for (const p of dashboard.panels) {
    // The overview table (the first panel) lists every SLO and label set; the others one SLO.
    if (p.type === 'table') continue
    for (const { expr } of p.targets) t.true(/slo="\$slo"|name="\$source"|by \(name, outcome\)/.test(expr), expr)
  }
  // Panels do not overlap on the 24-column grid.
  const cells = new Set()
  for (const { gridPos: g } of dashboard.panels) {
    t.true(g.x + g.w <= 24)
    for (let x = g.x; x < g.x + g.w; x++)
      for (let y = g.y; y < g.y + g.h; y++) {
        t.false(cells.has(`${x},${y}`), `overlap at ${x},${y}`)
        cells.add(`${x},${y}`)
      }
  }
})

test('the overview table comes first: every SLO and label set, sorted by budget left, worst first', (t) => {
  const [overview, ...rest] = grafanaDashboard().panels
  t.is(overview.type, 'table')
  t.deepEqual(overview.gridPos, { x: 0, y: 0, w: 24, h: 8 })
  t.deepEqual(
    overview.targets.map((q) => [q.expr, q.instant, q.format]),
    [
      ['sort(captcha_budget:error_budget_remaining:ratio)', true, 'table'],
      ['captcha_budget:period_burn_rate:ratio', true, 'table'],
      ['captcha_budget:current_burn_rate:ratio', true, 'table'],
    ],
  )
  t.deepEqual(overview.options.sortBy, [{ displayName: 'Budget left', desc: false }])
  t.is(overview.transformations[1].options.renameByName['Value #A'], 'Budget left')
  t.true(rest.every((p) => p.gridPos.y >= 8))
})

test('captcha-budget dashboard writes the same JSON (stdout, -o); bad options exit 2', async (t) => {
  const out = await cli(['dashboard', '--slo', 'turnstile-95-30d', '--title', 'CAPTCHA'])
  t.is(out.code, 0, out.stderr)
  t.deepEqual(JSON.parse(out.stdout), grafanaDashboard({ slo: 'turnstile-95-30d', title: 'CAPTCHA' }))
  const file = path.join(tempDir(t), 'dashboard.json')
  const written = await cli(['dashboard', '-o', file])
  t.is(written.code, 0, written.stderr)
  t.is(written.stdout, '')
  t.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), grafanaDashboard())
  const empty = await cli(['dashboard', '--uid', ''])
  t.is(empty.code, 2)
  t.is(empty.stderr, 'captcha-budget dashboard: --uid must be a non-empty string, got string\n')
})

test("dashboard: --uid must be Grafana's (at most 40 of A-Za-z0-9_-); --slo is refused with template syntax as rules refuses it; exit 2, nothing written", async (t) => {
  for (const uid of ['a'.repeat(41), 'has space', 'dots.x', 'é']) {
    t.throws(() => grafanaDashboard({ uid }), {
      instanceOf: TypeError,
      code: 'ERR_INVALID_ARG_VALUE',
      message: /^grafanaDashboard\(options\): options\.uid must be at most 40 characters of A-Z, a-z, 0-9, '_' and '-' \(Grafana's uid\), got /,
    })
  }
  t.is(grafanaDashboard({ uid: 'a'.repeat(40) }).uid, 'a'.repeat(40))
  t.is(grafanaDashboard({ uid: 'A-z_09' }).uid, 'A-z_09')
  for (const slo of ['{{x}}', 'a}}', 'x\u0007']) {
    t.throws(() => grafanaDashboard({ slo }), { code: 'ERR_INVALID_ARG_VALUE', message: /^grafanaDashboard\(options\): options\.slo holds / })
  }
  const file = path.join(tempDir(t), 'dashboard.json')
  const long = await cli(['dashboard', '--uid', 'a'.repeat(41), '-o', file])
  t.is(long.code, 2)
  t.is(long.stdout, '')
  t.is(long.stderr, `captcha-budget dashboard: --uid must be at most 40 characters of A-Z, a-z, 0-9, '_' and '-' (Grafana's uid), got "${'a'.repeat(41)}"\n`)
  const template = await cli(['dashboard', '--slo', '{{x}}', '-o', file])
  t.is(template.code, 2)
  t.regex(template.stderr, /^captcha-budget dashboard: --slo holds '\{\{' or '\}\}': Prometheus would expand it as a Go template/)
  t.false(fs.existsSync(file))
})

test('grafanaDashboard refuses unknown options', (t) => {
  t.throws(() => grafanaDashboard({ titel: 'x' }), {
    code: 'ERR_INVALID_ARG_VALUE',
    message: "unknown key 'titel' in grafanaDashboard(options): options; known keys: title, uid, slo; did you mean 'title'?",
  })
})
