'use strict'
// npm run bench:throttle — issue 23's table: a simulated worker (one attempt a
// second, manual clock, a fake provider; benchmark/throttle-scenarios.js) through
// guard()'s 'throttle' (the default) and 'refuse', and with no guard, side by
// side, for SEEDS seeds (1, 2, …). Every figure counts attempts on the manual
// clock: the same on any machine. `--markdown` prints the table for the docs.
const os = require('node:os')
const { SCENARIOS, MODES } = require('./throttle-scenarios')

const SEEDS = Number(process.env.SEEDS ?? 3)

function format(scenario, value) {
  if (value === null) return '—'
  if (scenario.format === 'minutes') return `${value.toFixed(1)} min`
  return scenario.format === 'share' ? `${(value * 100).toFixed(1)} %` : String(value)
}

function range(scenario, values) {
  const shown = [...new Set([Math.min(...values), Math.max(...values)].map((v) => format(scenario, v)))]
  return shown.join(' – ')
}

async function main() {
  const markdown = process.argv.includes('--markdown')
  const head = ['scenario', 'measure', 'goal', ...MODES, 'goal met']
  const rows = []
  let allMet = true
  for (const scenario of SCENARIOS) {
    const cells = []
    let met = true
    for (const mode of MODES) {
      const values = []
      for (let seed = 1; seed <= SEEDS; seed++) {
        const { value } = await scenario.run(seed, mode)
        values.push(value)
        if (mode === 'throttle' && !scenario.goal(value)) met = false
      }
      cells.push(values.includes(null) ? '—' : range(scenario, values))
    }
    allMet &&= met
    rows.push([`${scenario.name}: ${scenario.setup}`, scenario.measure, scenario.goalText, ...cells, met ? 'yes' : 'NO'])
  }
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU'
  console.log(`${SEEDS} seed(s); Node ${process.version}, ${os.platform()} ${os.arch()}, ${cpu}`)
  if (markdown) {
    console.log(`| ${head.join(' | ')} |`)
    console.log(`|${head.map(() => '---').join('|')}|`)
    for (const r of rows) console.log(`| ${r.join(' | ')} |`)
  } else {
    for (const r of rows) {
      console.log('')
      console.log(r[0])
      console.log(`  ${r[1]} — goal ${r[2]} (throttle): ${r[6] === 'yes' ? 'met' : 'NOT MET'}`)
      MODES.forEach((mode, i) => console.log(`    ${mode.padEnd(9)} ${r[3 + i]}`))
    }
  }
  if (!allMet) process.exitCode = 1
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
