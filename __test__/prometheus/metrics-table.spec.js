// docs/prometheus.md's table of series names every series `metrics()` exposes,
// with its type: a metric added to lib/prometheus/metrics.js without its row
// fails here (CONTRIBUTING.md, "Adding a metric").
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { ErrorBudgetTracker } = require('../..')

const page = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'prometheus.md'), 'utf8')

/** The rows of the page's series table as `name type`, one per series a row names. */
function tableSeries(text) {
  const rows = text.split('\n').filter((line) => line.startsWith('| `captcha_budget_'))
  return rows.flatMap((row) => {
    // `|` inside a cell is escaped (`\|`): split on the bars that are not.
    const [series, type] = row.split(/(?<!\\)\|/).slice(1, 3)
    return [...series.matchAll(/`(captcha_budget_[a-z_]+)/g)].map((m) => `${m[1]} ${type.trim()}`)
  })
}

test('every series metrics() exposes has its row, with its type, in docs/prometheus.md', (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  t.teardown(() => tracker.close())
  // Every family's TYPE line is there before anything is recorded (its samples 0, or none).
  const exposed = tracker
    .metrics()
    .split('\n')
    .filter((line) => line.startsWith('# TYPE '))
    .map((line) => line.slice('# TYPE '.length))
  t.true(exposed.length >= 15, `${exposed.length} families`)
  t.deepEqual([...tableSeries(page)].sort(), [...exposed].sort())
})

test('the table reader: one row may name several series; an escaped bar stays in its cell', (t) => {
  const text = ['| `captcha_budget_a{x="1" \\| "2"}` | counter | … |', '| `captcha_budget_b`, `captcha_budget_c` | gauge | … |', '| other | row |'].join('\n')
  t.deepEqual(tableSeries(text), ['captcha_budget_a counter', 'captcha_budget_b gauge', 'captcha_budget_c gauge'])
})
