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

const range = (xs, f) => {
  if (xs.some((x) => x === null)) return `${f(xs.filter((x) => x !== null).length ? Math.min(...xs.filter((x) => x !== null)) : null)}, ${xs.filter((x) => x === null).length} never`
  const lo = Math.min(...xs)
  const hi = Math.max(...xs)
  return lo === hi ? f(lo) : `${f(lo)} – ${f(hi)}`
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
          range(runs.map((r) => r.firstPageMs), duration),
          range(left, (x) => (x === null ? '—' : `${Math.round(x)} %`)),
          range(runs.map((r) => r.pageEvents), String),
          '',
          range(runs.map((r) => r.resetMs), (ms) => (ms === null ? 'still firing' : duration(ms))),
        ])
      } else {
        const weeks = runs.reduce((n, r) => n + r.weeks, 0)
        const pages = runs.reduce((n, r) => n + r.falsePages, 0)
        rows.push([scenario.name, policy, '', '', '', (pages / weeks).toFixed(2), ''])
      }
    }
  }
  const head = ['scenario', 'policy', 'first page after', 'budget left at it (of the start\'s)', 'page events', 'false pages / week', 'reset after the end']
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
