'use strict'
// Windows of 2 days and more are summed from hourly sums of the pieces, plus this hour's pieces
// so far, less those of the hour the window's far edge falls in (lib/prometheus/rules.js). In promtool,
// over two days of uneven traffic with a counter reset and an outage, every such window must
// equal the plain sum of its pieces (`sum_over_time` over the window less half a minute, as
// the shorter windows are summed) at instants spread over every minute of the hour.
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { ruleGroups, toYaml } = require('../../lib/prometheus/rules.js')
const { promtool, withPromtoolRules, tempDir, run } = require('../fixtures/prometheus-tools')

const DAY = 86_400_000
const MINUTE = 60_000
const SLO = { name: 'hours', id: 'hours', targetRate: 0.95, windowMs: 30 * DAY }
const ID = JSON.stringify(SLO.id)
// The 30 d SLO's windows of whole hours from 2 days up, written out here (its 10 h and 15 h
// are plain sums).
const BY_HOURS = { '60h': '59h59m30s', '180h': '179h59m30s', '30d': '719h59m30s' }

/** Two days a minute at a time: 0–29 solves a minute, some failing, a worker restart at 20 h, an outage from 30 h to 31 h. */
function inputSeries() {
  const ok = []
  const failed = []
  let s = 0
  let f = 0
  for (let minute = 0; minute <= 2 * 24 * 60; minute++) {
    if (minute === 20 * 60) [s, f] = [0, 0]
    const solves = (minute * 7) % 30
    const failing = minute >= 30 * 60 && minute < 31 * 60 ? solves : (minute * 13) % 4
    s += solves - failing
    f += failing
    ok.push(s)
    failed.push(f)
  }
  return [
    { series: 'captcha_budget_solves_total{name="hours",outcome="success",instance="a"}', values: ok.join(' ') },
    { series: 'captcha_budget_solves_total{name="hours",outcome="failure",instance="a"}', values: failed.join(' ') },
  ]
}

withPromtoolRules(test)('each window of 2 days and more equals the plain sum of its pieces, at every minute of the hour', async (t) => {
  t.timeout(300_000)
  const { groups } = ruleGroups(SLO)
  const counts = groups[0].rules.find((r) => r.record === 'captcha_budget:counts:increase').expr
  for (const w of Object.keys(BY_HOURS)) t.true(counts.includes(`offset ${w} or`), w)
  t.false(counts.includes('offset 15h or'))
  // The counts' recordings alone (the rest reads them), and the plain sums next to them.
  groups[0].rules = groups[0].rules.filter((r) => r.record?.startsWith('captcha_budget:counts:'))
  t.deepEqual(
    [...new Set(groups[0].rules.map((r) => r.record))],
    ['captcha_budget:counts:increase1m', 'captcha_budget:counts:increase_this_hour', 'captcha_budget:counts:increase1h', 'captcha_budget:counts:increase'],
  )
  const plain = Object.entries(BY_HOURS)
    .map(([w, range]) => `label_replace(sum_over_time(captcha_budget:counts:increase1m{slo=${ID}}[${range}]), "window", "${w}", "", "")`)
    .join('\nor ')
  groups[0].rules.push({ record: 'reference:counts', expr: plain })
  const windows = `window=~"${Object.keys(BY_HOURS).join('|')}"`
  const tests = []
  // Every 37 minutes: each minute of the hour comes round, from the first hour to the end.
  for (let at = 7 * MINUTE; at <= 2 * DAY; at += 37 * MINUTE) {
    const evalTime = `${at / MINUTE}m`
    // No window differs from its reference, and none is missing.
    tests.push({ expr: `abs(captcha_budget:counts:increase{${windows}} - reference:counts) > 0`, eval_time: evalTime, exp_samples: [] })
    tests.push({
      expr: `count(captcha_budget:counts:increase{${windows}} and reference:counts)`,
      eval_time: evalTime,
      // Solves and failures of each window: 3 × 2.
      exp_samples: [{ labels: '{}', value: 6 }],
    })
  }
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'rules.yml'), toYaml({ groups }) + '\n')
  fs.writeFileSync(
    path.join(dir, 'test.yml'),
    toYaml({ rule_files: ['rules.yml'], evaluation_interval: '1m', tests: [{ interval: '1m', input_series: inputSeries(), promql_expr_test: tests }] }) + '\n',
  )
  const result = await run(promtool, ['test', 'rules', path.join(dir, 'test.yml')], { timeout: 280_000 })
  t.is(result.code, 0, (result.stdout + result.stderr).slice(0, 6000))
})
