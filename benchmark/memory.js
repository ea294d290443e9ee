'use strict'
// npm run bench:memory — a 24 h window fed 1000 events per second for 24 h of
// manual-clock time (86.4 M events, one record() call each) must grow the
// process RSS by at most 16 MiB: memory is the buckets, never the events.
// For contrast, the reference tracker's heap per event is measured on 1 M
// events and extrapolated (86.4 M of them would need gigabytes).
//
// Then (issue 22) memory follows the events: RSS growth per tracker, idle and
// after a minute-paced day and a busy day, and 10 000 trackers each fed one
// solve a minute for 24 h of manual-clock time (14.4 M record(ok, atMs) calls),
// whose RSS growth must stay ≤ 400 MiB (a dense ring each: ≈ 6.7 GB).
//
// Run with --expose-gc (the npm script does).

const { ErrorBudgetTracker } = require('../index.js')
const { BaselineTracker } = require('./baseline-tracker.js')

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
  console.log(
    `  events in the window at the end: ${report.total.toLocaleString('en')} (failures ${report.failures.toLocaleString('en')}), status ${report.status}`,
  )
  console.log(
    `  window: ${buckets.toLocaleString('en')} buckets × 16 bytes (a success and a failure counter, u64 each) = ${((buckets * 16) / 1024).toFixed(0)} KiB`,
  )
  console.log(
    `  RSS ${(before.rss / MiB).toFixed(1)} MiB → ${(after.rss / MiB).toFixed(1)} MiB (peak sampled ${(Math.max(peakRss, after.rss) / MiB).toFixed(1)} MiB): grew ${grown.toFixed(1)} MiB`,
  )
  console.log(`  JS heap used ${(before.heapUsed / MiB).toFixed(1)} → ${(after.heapUsed / MiB).toFixed(1)} MiB`)
  console.log(`  target: RSS growth ≤ ${LIMIT_MIB} MiB — ${grown <= LIMIT_MIB ? 'met' : 'NOT met'}`)
  return { events, tracker }
}

function reference(events) {
  const sample = 1_000_000
  const before = settle()
  let now = 0
  const tracker = new BaselineTracker({ targetRate: 0.95, windowMs: DAY_MS }, () => now++)
  // Its record() scans the window every time, so fill the array directly:
  // the memory is the point here, not the time.
  for (let i = 0; i < sample; i++) tracker.events.push({ t: now++, success: i % 50 !== 0 })
  const after = settle()
  const perEvent = (after.heapUsed - before.heapUsed) / sample
  console.log(
    `reference JS tracker: ${sample.toLocaleString('en')} events in its window take ${((after.heapUsed - before.heapUsed) / MiB).toFixed(1)} MiB of heap`,
  )
  console.log(`  ≈ ${perEvent.toFixed(0)} bytes per event → ${events.toLocaleString('en')} events ≈ ${((perEvent * events) / 1024 ** 3).toFixed(1)} GiB`)
  return tracker.events.length
}

/** RSS growth per tracker of `count` default 24 h trackers fed by `feed(trackers)`. */
function perTracker(count, feed) {
  const before = settle()
  const trackers = Array.from({ length: count }, () => new ErrorBudgetTracker({ targetRate: 0.95, windowMs: DAY_MS, clock: 'manual' }))
  const started = process.hrtime.bigint()
  feed(trackers)
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  const after = settle()
  const total = trackers.reduce((sum, t) => sum + t.report().total, 0)
  for (const t of trackers) t.close()
  return { bytes: (after.rss - before.rss) / count, grownMiB: (after.rss - before.rss) / MiB, total, seconds }
}

const minutely = (trackers) => {
  for (let minute = 0; minute < 1440; minute++) {
    const at = minute * 60_000
    for (const t of trackers) t.record(minute % 20 !== 0, at)
  }
}

function perTrackerRows() {
  const KiB = 1024
  const idle = perTracker(1000, () => {})
  const day = perTracker(1000, minutely)
  // 1000 solves a second: each 2 s bucket gets its 2 000 in one recordMany.
  const busy = perTracker(20, (trackers) => {
    for (let s = 0; s < DAY_MS / 2000; s++) for (const t of trackers) t.recordMany(1960, 40, s * 2000)
  })
  console.log('bytes per default 24 h tracker (RSS growth, JavaScript objects included):')
  console.log(`  idle (1 000 trackers): ${(idle.bytes / KiB).toFixed(1)} KiB — target ≤ 4 KiB native (the core's own count: cargo test)`)
  console.log(
    `  1 solve/minute for 24 h (1 000 trackers, ${day.total.toLocaleString('en')} events in their windows): ${(day.bytes / KiB).toFixed(1)} KiB — target ≤ 32 KiB native, was 686 KiB`,
  )
  console.log(
    `  1 000 solves/s for 24 h (20 trackers, ${busy.total.toLocaleString('en')} events): ${(busy.bytes / KiB).toFixed(1)} KiB — no more than the dense ring (675 KiB + the idle part)`,
  )
}

function tenThousand() {
  const count = 10_000
  const r = perTracker(count, minutely)
  console.log(
    `${count.toLocaleString('en')} trackers × 1 solve/minute for 24 h of manual-clock time (${(count * 1440).toLocaleString('en')} record() calls in ${r.seconds.toFixed(1)} s; ${r.total.toLocaleString('en')} events in their windows):`,
  )
  console.log(
    `  RSS grew ${r.grownMiB.toFixed(1)} MiB (${(r.bytes / 1024).toFixed(1)} KiB a tracker) — target ≤ 400 MiB — ${r.grownMiB <= 400 ? 'met' : 'NOT met'}`,
  )
}

// Each part in a fresh process: RSS growth is only meaningful from a clean start.
const part = process.argv[2]
if (part === 'rows') perTrackerRows()
else if (part === 'ten-thousand') tenThousand()
else {
  const { events } = addon()
  reference(events)
  const { execFileSync } = require('node:child_process')
  for (const p of ['rows', 'ten-thousand']) execFileSync(process.execPath, ['--expose-gc', __filename, p], { stdio: 'inherit' })
}
