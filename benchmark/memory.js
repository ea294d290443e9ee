'use strict'
// npm run bench:memory — a 24 h window fed 1000 events per second for 24 h of
// manual-clock time (86.4 M events, one record() call each) must grow the
// process RSS by at most 16 MiB: memory is the buckets, never the events.
// For contrast, the reference tracker's heap per event is measured on 1 M
// events and extrapolated (86.4 M of them would need gigabytes).
//
// Run with --expose-gc (the npm script does).

const { ErrorBudgetTracker } = require('../index.js')
const { ReferenceTracker } = require('./reference-tracker.js')

if (typeof gc !== 'function') throw new Error('run with node --expose-gc (npm run bench:memory)')

const MiB = 1024 * 1024
const DAY_MS = 86_400_000
const PER_SECOND = 1000
const LIMIT_MIB = 16

function settle() {
  for (let i = 0; i < 3; i++) gc()
  return process.memoryUsage()
}

function addon() {
  const before = settle()
  const tracker = new ErrorBudgetTracker({ targetRate: 0.95, windowMs: DAY_MS, clock: 'manual' })
  const record = tracker.record
  const started = process.hrtime.bigint()
  let peakRss = 0
  // Event j of second s is stamped s × 1000 + j ms: 1000 a second, spread over it.
  for (let s = 0; s < DAY_MS / 1000; s++) {
    const base = s * 1000
    for (let j = 0; j < PER_SECOND; j++) record(j % 50 !== 0, base + j)
    if (s % 3600 === 0) peakRss = Math.max(peakRss, process.memoryUsage.rss())
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const after = settle()
  const report = tracker.report()
  const events = (DAY_MS / 1000) * PER_SECOND
  const grown = (after.rss - before.rss) / MiB
  const buckets = Math.ceil(DAY_MS / Math.max(1, Math.floor(DAY_MS / 43200)))
  console.log(`addon: ${events.toLocaleString('en')} record() calls over 24 h of manual-clock time in ${seconds.toFixed(1)} s`)
  console.log(`  events in the window at the end: ${report.total.toLocaleString('en')} (failures ${report.failures.toLocaleString('en')}), status ${report.status}`)
  console.log(`  window: ${buckets.toLocaleString('en')} buckets × 16 bytes (a success and a failure counter, u64 each) = ${((buckets * 16) / 1024).toFixed(0)} KiB`)
  console.log(`  RSS ${(before.rss / MiB).toFixed(1)} MiB → ${(after.rss / MiB).toFixed(1)} MiB (peak sampled ${(Math.max(peakRss, after.rss) / MiB).toFixed(1)} MiB): grew ${grown.toFixed(1)} MiB`)
  console.log(`  JS heap used ${(before.heapUsed / MiB).toFixed(1)} → ${(after.heapUsed / MiB).toFixed(1)} MiB`)
  console.log(`  target: RSS growth ≤ ${LIMIT_MIB} MiB — ${grown <= LIMIT_MIB ? 'met' : 'NOT met'}`)
  return { events, tracker }
}

function reference(events) {
  const sample = 1_000_000
  const before = settle()
  let now = 0
  const tracker = new ReferenceTracker({ targetRate: 0.95, windowMs: DAY_MS }, () => now++)
  // Its record() scans the window every time, so fill the array directly:
  // the memory is the point here, not the time.
  for (let i = 0; i < sample; i++) tracker.events.push({ t: now++, success: i % 50 !== 0 })
  const after = settle()
  const perEvent = (after.heapUsed - before.heapUsed) / sample
  console.log(`reference JS tracker: ${sample.toLocaleString('en')} events in its window take ${((after.heapUsed - before.heapUsed) / MiB).toFixed(1)} MiB of heap`)
  console.log(`  ≈ ${perEvent.toFixed(0)} bytes per event → ${events.toLocaleString('en')} events ≈ ${((perEvent * events) / 1024 ** 3).toFixed(1)} GiB`)
  return tracker.events.length
}

const { events } = addon()
reference(events)
