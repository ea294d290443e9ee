#!/usr/bin/env node
// The x64 native build and the WASI (or the arm64) build give the same reports
// to the last digit: one scenario (manual clock, alert pairs firing and
// resolving, events leaving the window) runs in two processes and their JSON
// output must be identical. Needs the WASI package resolvable
// (node_modules/captcha-error-budget-wasm32-wasi, as .ci/platforms links it).
'use strict'

const { execFileSync } = require('node:child_process')
const path = require('node:path')

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
  console.log(`${require('../native.js').__napiBindingTarget}\n${JSON.stringify(reports)}`)
} else {
  // `node scripts/same-report.js` compares with WASI; `… arm64 <arm64 node>`
  // with the linux-arm64-gnu binary run by that Node under qemu-aarch64-static.
  const [mode = 'wasi', armNode] = process.argv.slice(2)
  const run = (env, command = [process.execPath]) =>
    execFileSync(command[0], [...command.slice(1), '--disable-warning=ExperimentalWarning', __filename, 'scenario'], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
    }).split('\n')
  const [nativeTarget, native] = run({ NAPI_RS_FORCE_WASI: '' })
  const armBinary = path.join(__dirname, '..', 'npm', 'linux-arm64-gnu', 'captcha-error-budget.linux-arm64-gnu.node')
  const [otherTarget, other] =
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
  console.log(`x64 native and ${mode}: the same ${native.length} characters of reports and snapshot`)
}
