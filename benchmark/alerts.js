'use strict'
// npm run bench:alerts — the alert scenario suite (benchmark/alerts-scenarios.js)
// replayed through the default policy and the plain SRE Workbook policy, side by
// side, SEEDS seeds each. Every figure is simulated time or counts on the manual
// clock: the same on any machine. `--markdown` prints the table for the docs.
const { SCENARIOS, run } = require('./alerts-scenarios')

const SEEDS = Number(process.env.SEEDS ?? 5)
const POLICIES = ['default', 'workbook']

function duration(ms) {
  if (ms === null) return '—'
  if (ms >= 3_600_000) return `${(ms / 3_600_000).toFixed(1)} h`
  if (ms >= 60_000) return `${(ms / 60_000).toFixed(1)} min`
  return `${Math.round(ms / 1000)} s`
}

/** min – max of `xs` formatted by `f`, and how many runs had none (`label`). */
function range(xs, f, label = 'never') {
  const seen = xs.filter((x) => x !== null)
  const never = xs.length - seen.length
  if (seen.length === 0) return label
  const [lo, hi] = [f(Math.min(...seen)), f(Math.max(...seen))]
  return (lo === hi ? lo : `${lo} – ${hi}`) + (never ? ` (${never} ${label})` : '')
}

async function main() {
  const markdown = process.argv.includes('--markdown')
  const rows = []
  for (const scenario of SCENARIOS) {
    for (const policy of POLICIES) {
      const runs = []
      for (let seed = 1; seed <= SEEDS; seed++) runs.push(await run(scenario, seed, policy))
      if (scenario.kind === 'incident') {
        const left = runs.map((r) => (r.budgetAtFirstPage === null ? null : (100 * r.budgetAtFirstPage) / r.budgetAtStart))
        rows.push([
          scenario.name,
          policy,
          range(
            runs.map((r) => r.firstPageMs),
            duration,
          ),
          range(left, (x) => (x === null ? '—' : `${Math.round(x)} %`)),
          `${range(
            runs.map((r) => r.pageEvents),
            String,
          )} (${range(
            runs.map((r) => r.maxPerPair),
            String,
          )})`,
          '',
          runs.every((r) => r.firstPageMs === null)
            ? '—'
            : range(
                runs.map((r) => r.resetMs),
                duration,
                'still firing',
              ),
          duration(runs[0].resetGoalMs),
          `${range(
            runs.map((r) => r.maxPagesPerIncident),
            String,
          )} (${range(
            runs.map((r) => r.incidentCount),
            String,
          )})`,
        ])
      } else {
        const weeks = runs.reduce((n, r) => n + r.weeks, 0)
        const pages = runs.reduce((n, r) => n + r.falsePages, 0)
        rows.push([
          scenario.name,
          policy,
          '',
          '',
          '',
          (pages / weeks).toFixed(2),
          '',
          '',
          `${range(
            runs.map((r) => r.maxPagesPerIncident),
            String,
          )} (${range(
            runs.map((r) => r.incidentCount),
            String,
          )})`,
        ])
      }
    }
  }
  const head = [
    'scenario',
    'policy',
    'first page after',
    "budget left at it (of the start's)",
    'page events (most for one pair)',
    'false pages / week',
    'pages resolved after the end',
    'reset goal',
    'pages per incident (incidents)',
  ]
  if (markdown) {
    console.log(`| ${head.join(' | ')} |`)
    console.log(`|${head.map(() => '---').join('|')}|`)
    for (const row of rows) console.log(`| ${row.join(' | ')} |`)
  } else {
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
    const line = (cells) => cells.map((c, i) => c.padEnd(widths[i])).join('  ')
    console.log(line(head))
    for (const row of rows) console.log(line(row))
  }
  console.log(`\n${SEEDS} seeds per scenario; ranges are min – max over the seeds; simulated time (manual clock).`)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
