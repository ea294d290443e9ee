'use strict'
// npm run bench:rules -- --prometheus (or node benchmark/rules-prometheus.js):
// the rule-group evaluation time of one SLO in a real Prometheus, ours against
// the Sloth-shaped file (benchmark/sloth-shaped.js) on the same data, grouped
// (`type`, `site`) and not. DAYS (default 3) of history for TYPES × SITES
// (default 4 × 10) label sets, one sample a minute, are written as OpenMetrics
// and turned into blocks (promtool tsdb create-blocks-from openmetrics); so
// are the recorded series that the long windows sum (our 1 m pieces, this
// hour's and the hours' sums; Sloth's 5 m ratio), as if the rules had run all
// along. Prometheus then loads both rule files (1 m evaluation interval) on
// loopback, and after EVALUATIONS (default 3) evaluations of every group the
// median of prometheus_rule_group_last_duration_seconds after each (from its
// /metrics) is reported; a rule that failed its last evaluation stops the run.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const net = require('node:net')
const { spawn, execFileSync } = require('node:child_process')
const { prometheusRules } = require('..')
const { slothShaped } = require('./sloth-shaped')

const DAYS = Number(process.env.DAYS ?? 3)
const TYPES = Number(process.env.TYPES ?? 4)
const SITES = Number(process.env.SITES ?? 10)
const EVALUATIONS = Number(process.env.EVALUATIONS ?? 3)
const MINUTE = 60_000
const NAME = 't'
const SLO = { name: NAME, targetRate: 0.95, windowMs: 30 * 86_400_000 }

/** The label sets: [{ type, site }] (one, unlabelled, when not grouped: the counters still carry them). */
const labelSets = () => Array.from({ length: TYPES * SITES }, (_, i) => ({ type: `t${i % TYPES}`, site: `s${Math.floor(i / TYPES)}` }))

const labelText = (labels) =>
  Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',')

/**
 * The OpenMetrics file: per label set 10 solves a minute, 1 in 50 failing (more
 * for the first sites, so some alerts have something to hold), the counters per
 * instance; and the recorded series the rules sum over long ranges, summed as
 * the rules sum them (`by` the grouping or not).
 */
function openMetrics(file, endMs, grouping) {
  const out = fs.openSync(file, 'w')
  const sets = labelSets()
  const start = endMs - DAYS * 86_400_000
  const minutes = Math.floor((endMs - start) / MINUTE)
  const write = (s) => fs.writeSync(out, s)
  // Cumulative counts per set at minute k: successes, failures.
  const failuresAt = (i, k) => Math.floor((k * 10 * (i < 2 ? 4 : 1)) / 50)
  const solvesAt = (k) => k * 10
  write('# TYPE captcha_budget_solves counter\n')
  sets.forEach((set, i) => {
    for (const outcome of ['success', 'failure']) {
      const labels = labelText({ name: NAME, ...set, outcome, instance: 'a' })
      for (let k = 0; k <= minutes; k++) {
        const value = outcome === 'failure' ? failuresAt(i, k) : solvesAt(k) - failuresAt(i, k)
        write(`captcha_budget_solves_total{${labels}} ${value} ${(start + k * MINUTE) / 1000}\n`)
      }
    }
  })
  // The recorded history: keys are the grouping's label values ('' ungrouped).
  const groups = new Map()
  sets.forEach((set, i) => {
    const key = grouping ? labelText(set) : ''
    groups.set(key, [...(groups.get(key) ?? []), i])
  })
  const sum = (members, f) => members.reduce((a, i) => a + f(i), 0)
  // Our recorded series, as the rules write them: the pieces, this hour's so far and the hours'
  // sums (at each hour's first evaluation, the hour before). One family per name, both events.
  const kinds = [
    ['solves', () => 10],
    ['solve_failures', (i, k) => failuresAt(i, k) - failuresAt(i, k - 1)],
  ]
  const series = { 'captcha_budget:counts:increase1m': [], 'captcha_budget:counts:increase_this_hour': [], 'captcha_budget:counts:increase1h': [] }
  for (const [kind, of] of kinds) {
    for (const [key, members] of groups) {
      const labels = [`events="${kind}"`, `name="${NAME}"`, `slo="${NAME}-95-30d"`, key].filter(Boolean).join(',')
      let thisHour
      for (let k = 1; k <= minutes; k++) {
        const at = start + k * MINUTE
        const piece = sum(members, (i) => of(i, k))
        const hourStarts = at % 3_600_000 < MINUTE
        if (hourStarts && thisHour !== undefined) series['captcha_budget:counts:increase1h'].push(`{${labels}} ${thisHour} ${at / 1000}`)
        thisHour = hourStarts || thisHour === undefined ? piece : thisHour + piece
        series['captcha_budget:counts:increase1m'].push(`{${labels}} ${piece} ${at / 1000}`)
        series['captcha_budget:counts:increase_this_hour'].push(`{${labels}} ${thisHour} ${at / 1000}`)
      }
    }
  }
  for (const [name, lines] of Object.entries(series)) {
    write(`# TYPE ${name} gauge\n`)
    for (const line of lines) write(`${name}${line}\n`)
  }
  write('# TYPE slo:sli_error:ratio_rate5m gauge\n')
  for (const [key, members] of groups) {
    const labels = [`sloth_id="${NAME}-slo"`, `sloth_service="${NAME}"`, `sloth_slo="slo"`, `sloth_window="5m"`, key].filter(Boolean).join(',')
    for (let k = 5; k <= minutes; k++) {
      const ratio = sum(members, (i) => failuresAt(i, k) - failuresAt(i, k - 5)) / (50 * members.length)
      write(`slo:sli_error:ratio_rate5m{${labels}} ${ratio} ${(start + k * MINUTE) / 1000}\n`)
    }
  }
  write('# EOF\n')
  fs.closeSync(out)
}

const freePort = () =>
  new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })

/** Prometheus's own metrics (it does not scrape itself here): { group: { last_duration_seconds, iterations_total } }. */
async function groupStats(port) {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()
  const stats = {}
  for (const m of text.matchAll(/^prometheus_rule_group_(last_duration_seconds|iterations_total)\{rule_group="([^"]+)"\} (\S+)$/gm)) {
    stats[m[2]] ??= {}
    stats[m[2]][m[1]] = Number(m[3])
  }
  return stats
}

/** Every rule that failed its last evaluation ('' when none did): a failing rule is cheap and would flatter the figures. */
async function ruleErrors(port) {
  const { data } = await (await fetch(`http://127.0.0.1:${port}/api/v1/rules`)).json()
  return data.groups
    .flatMap((g) => g.rules)
    .filter((r) => r.health !== 'ok')
    .map((r) => `${r.name}: ${r.health} ${r.lastError ?? ''}`)
    .join('; ')
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

/** One Prometheus run with both files for `grouping`: { ours, sloth } median seconds per evaluation. */
async function measure(grouping) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rules-prometheus-'))
  let prom
  try {
    // The data ends a minute ago: a block reaching past now would make the head refuse every
    // sample the rules write ("out of bounds"), leaving what reads them empty. The counters stay
    // fresh (5 min lookback) for the few evaluations measured.
    const endMs = Math.floor(Date.now() / MINUTE) * MINUTE - MINUTE
    openMetrics(path.join(dir, 'data.om'), endMs, grouping)
    execFileSync('promtool', ['tsdb', 'create-blocks-from', 'openmetrics', '-q', path.join(dir, 'data.om'), path.join(dir, 'tsdb')], { stdio: 'pipe' })
    fs.rmSync(path.join(dir, 'data.om'))
    const slo = { ...SLO, grouping: grouping ? ['type', 'site'] : undefined }
    fs.writeFileSync(path.join(dir, 'ours.yml'), prometheusRules(slo))
    fs.writeFileSync(path.join(dir, 'sloth.yml'), slothShaped(slo))
    fs.writeFileSync(path.join(dir, 'prometheus.yml'), 'global:\n  evaluation_interval: 1m\nrule_files: [ours.yml, sloth.yml]\n')
    const port = await freePort()
    prom = spawn(
      'prometheus',
      [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'tsdb')}`, `--web.listen-address=127.0.0.1:${port}`],
      { stdio: 'ignore' },
    )
    // Per group (Sloth-shaped's file has three), the duration of each new evaluation.
    const seen = {}
    const last = {}
    const deadline = Date.now() + (EVALUATIONS + 3) * MINUTE
    const enough = () => Object.keys(seen).length > 1 && Object.values(seen).every((d) => d.length >= EVALUATIONS)
    while (!enough() && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5000))
      const stats = await groupStats(port).catch(() => ({}))
      for (const [group, { iterations_total: iterations = 0, last_duration_seconds: seconds = 0 }] of Object.entries(stats)) {
        seen[group] ??= []
        // Each new evaluation once, the first (cold caches) left out.
        if (iterations > (last[group] ?? 0) && iterations > 1) seen[group].push(seconds)
        last[group] = iterations
      }
    }
    const errors = await ruleErrors(port)
    if (errors) throw new Error(`a rule failed its evaluation: ${errors}`)
    // A file's evaluation: the sum of its groups' median durations.
    const total = (file) =>
      Object.entries(seen)
        .filter(([g]) => g.includes(file))
        .reduce((a, [, d]) => a + median(d), 0)
    return { ours: total('ours.yml'), sloth: total('sloth.yml'), evaluations: Math.min(...Object.values(seen).map((d) => d.length)) }
  } finally {
    prom?.kill()
    await new Promise((r) => setTimeout(r, 1000))
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

async function main() {
  const rows = []
  for (const grouping of [false, true]) {
    const { ours, sloth, evaluations } = await measure(grouping)
    rows.push([
      grouping ? 'by type, site' : 'one series',
      `${(ours * 1000).toFixed(0)} ms`,
      `${(sloth * 1000).toFixed(0)} ms`,
      `${(ours / sloth).toFixed(1)}×`,
      String(evaluations),
    ])
    console.error(`prometheus, ${rows.at(-1).join(', ')}`)
  }
  return rows
}

module.exports = { main, DAYS, TYPES, SITES }
if (require.main === module) {
  main().then((rows) => {
    console.log(`${DAYS} days of history, ${TYPES * SITES} label sets; ${execFileSync('prometheus', ['--version'], { encoding: 'utf8' }).split('\n')[0]}`)
    for (const row of rows) console.log(row.join('  '))
  })
}
