#!/usr/bin/env node
// The x64 native build and the WASI (or the arm64) build give the same reports
// to the last digit: one scenario (manual clock, alert pairs firing and
// resolving, events leaving the window) runs in two processes and their JSON
// output must be identical. So must the Prometheus rules of many SLOs and of
// every example spec, and the alert intervals of policy-parity.spec.js's
// trackers: the specs that hand rules to promtool skip on WASI
// (withPromtoolRules, __test__/fixtures/prometheus-tools.js, and the parity
// spec), since promtool reads the same text and the tracker fires at the same
// instants. Needs the WASI package resolvable
// (node_modules/captcha-error-budget-wasm32-wasi, as .ci/platforms links it).
'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs')
const { execFileSync } = require('node:child_process')
const path = require('node:path')

const DAY = 86_400_000
const EXAMPLES = path.join(__dirname, '..', '__test__', 'fixtures', 'slo-examples')

/**
 * The rules of SLOs over the policy's inputs (periods, targets, scrape intervals,
 * grouping, gates, custom pairs) and of every example spec, or the error each
 * gives: one digest, and how many texts it covers.
 */
function rulesDigest() {
  const { prometheusRules } = require('..')
  const { readSpec } = require('../lib/slo/spec.js')
  const hash = crypto.createHash('sha256')
  let texts = 0
  const add = (make) => {
    let text
    try {
      text = make()
    } catch (err) {
      text = `${err.name} ${err.code}: ${err.message}`
    }
    hash.update(`${text}\0`)
    texts++
  }
  for (const windowMs of [DAY / 4, DAY, 7 * DAY, 14 * DAY, 28 * DAY, 30 * DAY, 90 * DAY]) {
    for (const targetRate of [0.9, 0.95, 0.973, 0.99, 0.999]) {
      for (const scrapeIntervalMs of [15_000, 60_000]) {
        add(() => prometheusRules({ name: 'n', targetRate, windowMs }, { scrapeIntervalMs }))
      }
      add(() => prometheusRules({ name: 'n', targetRate, windowMs, grouping: ['type', 'site'], minEvents: 20 }, { periodRules: 'optimised' }))
    }
  }
  const alerts = [{ name: 'outage', severity: 'page', longWindowMs: 3_600_000, shortWindowMs: 300_000, burnRate: 10, minEvents: 5 }]
  add(() => prometheusRules({ name: 'n', targetRate: 0.95, windowMs: DAY, alerts }, { compat: 'sloth', format: 'prometheus-operator' }))
  add(() => prometheusRules({ name: 'n', targetRate: 0.95, windowMs: 30_000 }))
  const files = (dir) =>
    fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : [path.join(dir, e.name)]))
  for (const file of files(EXAMPLES)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()) {
    add(() => prometheusRules(readSpec(fs.readFileSync(file, 'utf8'), { file: path.relative(EXAMPLES, file) }).slos))
  }
  return `${texts} rule files ${hash.digest('hex')}`
}

/** The firing intervals of policy-parity.spec.js's scenarios (tracker side): one digest. */
function parityDigest() {
  const { SCENARIOS, solvesOf, trackerIntervals } = require('./parity-scenarios.js')
  const intervals = SCENARIOS.map((scenario) => trackerIntervals(solvesOf(scenario)))
  const text = JSON.stringify(intervals, (_, v) => (v === Infinity ? 'Infinity' : v))
  return `${SCENARIOS.length} parity scenarios ${crypto.createHash('sha256').update(text).digest('hex')}`
}

if (process.argv[2] === 'scenario') {
  const { ErrorBudgetTracker } = require('..')
  const tracker = new ErrorBudgetTracker({ targetRate: 0.973, windowMs: 3_600_000, clock: 'manual' })
  const reports = []
  for (let minute = 1; minute <= 90; minute++) {
    tracker.advanceTo(minute * 60_000)
    // Irregular counts, so the rates are not round numbers.
    tracker.recordMany(37 + ((minute * 7) % 11), minute % 13 === 0 ? 9 : minute % 3)
    if (minute % 10 === 0) reports.push(tracker.report())
  }
  reports.push(JSON.parse(tracker.snapshot()))
  tracker.close()
  // The rules and parity intervals on WASI only: there the specs that hand them to promtool skip.
  const rules = process.argv[3] === 'rules' ? `${rulesDigest()}; ${parityDigest()}` : ''
  console.log(`${require('../native.js').__napiBindingTarget}\n${JSON.stringify(reports)}\n${rules}`)
} else {
  // `node scripts/same-report.js` compares with WASI; `… arm64 <arm64 node>`
  // with the linux-arm64-gnu binary run by that Node under qemu-aarch64-static.
  const [mode = 'wasi', armNode] = process.argv.slice(2)
  const run = (env, command = [process.execPath]) =>
    execFileSync(command[0], [...command.slice(1), '--disable-warning=ExperimentalWarning', __filename, 'scenario', mode === 'wasi' ? 'rules' : ''], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
    }).split('\n')
  const [nativeTarget, native, nativeRules] = run({ NAPI_RS_FORCE_WASI: '' })
  const armBinary = path.join(__dirname, '..', 'npm', 'linux-arm64-gnu', 'captcha-error-budget.linux-arm64-gnu.node')
  const [otherTarget, other, otherRules] =
    mode === 'arm64' ? run({ NAPI_RS_NATIVE_LIBRARY_PATH: armBinary }, ['qemu-aarch64-static', armNode]) : run({ NAPI_RS_FORCE_WASI: 'error' })
  const expected = mode === 'arm64' ? 'native' : 'wasm32-wasi'
  if (nativeTarget !== 'native' || otherTarget !== expected) {
    console.error(`loaded ${nativeTarget} and ${otherTarget}, expected native and ${expected}`)
    process.exit(1)
  }
  if (native !== other) {
    console.error(`native and ${mode} differ:\nnative ${native}\n${mode} ${other}`)
    process.exit(1)
  }
  if (nativeRules !== otherRules) {
    console.error(`native and ${mode} write other Prometheus rules or fire other parity alerts: native ${nativeRules}, ${mode} ${otherRules}`)
    process.exit(1)
  }
  const rules = nativeRules ? `, the same ${nativeRules.replace(/ [0-9a-f]{64}/g, '')}` : ''
  console.log(`x64 native and ${mode}: the same ${native.length} characters of reports and snapshot${rules}`)
}
