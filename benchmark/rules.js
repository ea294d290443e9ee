'use strict'
// npm run bench:rules — the Prometheus rules of one SLO against a file shaped
// as Sloth writes one SLO for the same counter (benchmark/sloth-shaped.js), in
// one run: recording rules per SLO, bytes, the longest line, and the time of
// `promtool test rules` on the same 2-day scenario at a 1 m evaluation
// interval (counters scraped every minute, a provider outage on day 2), as
// ratios. Scraped every minute, not 15 s: promtool refuses a query that loads
// over 10 000 samples, which the Sloth-shaped 3 d window would at 15 s. `--markdown` prints the tables for docs/prometheus.md, `--prometheus` adds the
// evaluation time in a real Prometheus (benchmark/rules-prometheus.js); RUNS (default
// 1) repeats each promtool run and keeps the fastest.
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { performance } = require('node:perf_hooks')
const { prometheusRules } = require('..')
const { toYaml } = require('../lib/prometheus/rules.js')
const { slothShaped } = require('./sloth-shaped')

const DAY = 86_400_000
const RUNS = Number(process.env.RUNS ?? 1)
const NAME = 't'
const SLOS = [
  ['24h', { name: NAME, targetRate: 0.95, windowMs: DAY }],
  ['7d', { name: NAME, targetRate: 0.95, windowMs: 7 * DAY }],
  ['30d', { name: NAME, targetRate: 0.95, windowMs: 30 * DAY }],
]
const GROUPING = ['type', 'site']
const SCRAPE_MS = 60_000

const shapeOf = (text) => {
  const lines = text.split('\n')
  return { records: lines.filter((l) => /^\s*- record:/.test(l)).length, bytes: Buffer.byteLength(text), longest: Math.max(...lines.map((l) => l.length)) }
}

/**
 * The scenario: 2 days of a worker at 10 solves a minute, 1 % failing, scraped
 * every minute; on day 2 an outage (every solve failing) from 30 h to 31 h.
 */
function inputSeries(grouping = []) {
  // Grouped: the same worker, labelled with one value of each grouping label.
  const extra = grouping.map((l) => `,${l}="a"`).join('')
  const ok = []
  const failed = []
  let s = 0
  let f = 0
  for (let at = 0; at <= 2 * DAY; at += SCRAPE_MS) {
    // 10 solves a minute; every 100th fails, every one in the outage.
    for (let i = 0; i < (at === 0 ? 0 : 10); i++) {
      const k = s + f
      const outage = at >= 30 * 3_600_000 && at < 31 * 3_600_000
      if (outage || k % 100 === 0) f++
      else s++
    }
    ok.push(s)
    failed.push(f)
  }
  return [
    { series: `captcha_budget_solves_total{name="${NAME}",outcome="success",instance="a"${extra}}`, values: ok.join(' ') },
    { series: `captcha_budget_solves_total{name="${NAME}",outcome="failure",instance="a"${extra}}`, values: failed.join(' ') },
  ]
}

/**
 * CPU seconds (user + system) of the waited-for children so far, from
 * /proc/self/stat on Linux (clock ticks of 1/100 s); null elsewhere. CPU time,
 * not wall time: on a machine shared with other work it still compares.
 */
function childCpuSeconds() {
  try {
    const fields = fs.readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
    return (Number(fields[13]) + Number(fields[14])) / 100
  } catch {
    return null
  }
}

/** `promtool test rules` over `rulesText` (fastest of RUNS): { cpu, wall } seconds; a page must fire in the outage. */
function promtoolSeconds(rulesText, input) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rules-bench-'))
  try {
    fs.writeFileSync(path.join(dir, 'rules.yml'), rulesText)
    // The whole 2 days are evaluated (the last test is at the end); the outage must fire an alert in both files.
    const tests = [
      { expr: 'count(ALERTS{alertstate="firing"}) > bool 0', eval_time: '30h59m', exp_samples: [{ labels: '{}', value: 1 }] },
      { expr: 'vector(1)', eval_time: '48h', exp_samples: [{ labels: '{}', value: 1 }] },
    ]
    const file = {
      rule_files: ['rules.yml'],
      evaluation_interval: '1m',
      tests: [{ interval: `${SCRAPE_MS / 1000}s`, input_series: input, promql_expr_test: tests }],
    }
    fs.writeFileSync(path.join(dir, 'test.yml'), toYaml(file) + '\n')
    let best = { cpu: Infinity, wall: Infinity }
    for (let i = 0; i < RUNS; i++) {
      const cpu = childCpuSeconds()
      const start = performance.now()
      // One core (GOMAXPROCS=1): Go's parallel garbage collection varies more from run to run than the rules' cost.
      execFileSync('promtool', ['test', 'rules', path.join(dir, 'test.yml')], {
        stdio: 'pipe',
        timeout: 3_600_000,
        env: { ...process.env, GOMAXPROCS: '1' },
      })
      const wall = (performance.now() - start) / 1000
      best = { cpu: Math.min(best.cpu, cpu === null ? wall : childCpuSeconds() - cpu), wall: Math.min(best.wall, wall) }
    }
    return best
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

async function main() {
  const markdown = process.argv.includes('--markdown')
  const rows = []
  for (const [label, slo] of SLOS) {
    for (const grouping of [undefined, GROUPING]) {
      const ours = shapeOf(prometheusRules({ ...slo, grouping }))
      const sloth = shapeOf(slothShaped({ ...slo, grouping }))
      rows.push([
        `${label}${grouping ? `, by ${grouping.join(', ')}` : ''}`,
        `${ours.records} / ${sloth.records} (${(ours.records / sloth.records).toFixed(1)}×)`,
        `${ours.bytes} / ${sloth.bytes} (${(ours.bytes / sloth.bytes).toFixed(1)}×)`,
        `${ours.longest} / ${sloth.longest}`,
      ])
    }
  }
  const times = []
  // The issue's SLO (rules --name t --target 0.95 --window 30d), and grouped by type, site
  // (one label set); PROMTOOL_SLOS=24h,7d,30d for more.
  for (const [label, plain] of SLOS.filter(([l]) => (process.env.PROMTOOL_SLOS ?? '30d').split(',').includes(l))) {
    for (const grouping of [undefined, GROUPING]) {
      const slo = { ...plain, grouping }
      const input = inputSeries(grouping)
      const ours = promtoolSeconds(prometheusRules(slo, { scrapeIntervalMs: SCRAPE_MS }), input)
      const sloth = promtoolSeconds(slothShaped(slo), input)
      times.push([
        `${label}${grouping ? `, by ${grouping.join(', ')}` : ''}`,
        `${ours.cpu.toFixed(1)} s (${ours.wall.toFixed(1)} s)`,
        `${sloth.cpu.toFixed(1)} s (${sloth.wall.toFixed(1)} s)`,
        `${(ours.cpu / sloth.cpu).toFixed(1)}×`,
      ])
      console.error(`promtool, ${times.at(-1)[0]}: ${times.at(-1).slice(1).join(', ')}`)
    }
  }
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU'
  const promtool = execFileSync('promtool', ['--version'], { encoding: 'utf8' }).split('\n')[0]
  console.log(`Node ${process.version}, ${os.platform()} ${os.arch()}, ${os.cpus().length} × ${cpu}, load ${os.loadavg()[0].toFixed(1)}; ${promtool}`)
  table(markdown, ['SLO', 'recording rules: ours / Sloth-shaped', 'bytes', 'longest line'], rows)
  table(markdown, ['SLO', 'promtool test rules, 2 days at 1 m: CPU (wall), ours', 'Sloth-shaped', 'ratio (CPU)'], times)
  // --prometheus: the rule groups' evaluation time in a real Prometheus (benchmark/rules-prometheus.js; minutes).
  if (process.argv.includes('--prometheus')) {
    const evaluation = require('./rules-prometheus')
    const rows = await evaluation.main()
    console.log(`\nPrometheus: ${evaluation.DAYS} days of history, ${evaluation.TYPES * evaluation.SITES} label sets, 1 m evaluation interval`)
    table(markdown, ['30d SLO', 'one evaluation (median): ours', 'Sloth-shaped', 'ratio', 'evaluations'], rows)
  }
}

function table(markdown, head, rows) {
  console.log('')
  if (markdown) {
    console.log(`| ${head.join(' | ')} |`)
    console.log(`|${head.map(() => '---').join('|')}|`)
    for (const row of rows) console.log(`| ${row.join(' | ')} |`)
    return
  }
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  for (const row of [head, ...rows]) console.log(row.map((c, i) => c.padEnd(widths[i])).join('  '))
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
