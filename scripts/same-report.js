#!/usr/bin/env node
// The native and the WASI build give the same reports to the last digit: one
// scenario (manual clock, alert pairs firing and resolving, events leaving the
// window) runs in two processes, one forced onto WASI, and their JSON output
// must be identical. Needs the WASI package resolvable
// (node_modules/captcha-error-budget-wasm32-wasi, as .ci/platforms links it).
'use strict'

const { execFileSync } = require('node:child_process')

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
  const run = (env) =>
    execFileSync(process.execPath, ['--disable-warning=ExperimentalWarning', __filename, 'scenario'], {
      encoding: 'utf8',
      env: { ...process.env, ...env },
    })
  const [nativeTarget, native] = run({ NAPI_RS_FORCE_WASI: '' }).split('\n')
  const [wasiTarget, wasi] = run({ NAPI_RS_FORCE_WASI: 'error' }).split('\n')
  if (nativeTarget !== 'native' || wasiTarget !== 'wasm32-wasi') {
    console.error(`loaded ${nativeTarget} and ${wasiTarget}, expected native and wasm32-wasi`)
    process.exit(1)
  }
  if (native !== wasi) {
    console.error(`native and WASI differ:\nnative ${native}\nWASI   ${wasi}`)
    process.exit(1)
  }
  console.log(`native and WASI: the same ${native.length} characters of reports and snapshot`)
}
