// `npm start`: a short, deterministic story of a solve pipeline's error budget.
// A 95 % SLO over one hour, replayed on a manual clock: steady traffic, a
// 10-minute outage of the solver, then recovery as the failures leave the window.
const { ErrorBudgetTracker } = require('..')

const MINUTE = 60_000
const start = Date.UTC(2026, 0, 1, 12, 0, 0)
const clock = (ms) => new Date(ms).toISOString().slice(11, 19)

const tracker = new ErrorBudgetTracker({ targetRate: 0.95, windowMs: 60 * MINUTE, minEvents: 100, clock: 'manual' })
for (const status of ['healthy', 'warning', 'critical', 'exhausted']) {
  tracker.on(status, (r) =>
    console.log(`${clock(r.at)}  → ${status.padEnd(9)} budget left ${String(r.budgetRemainingPct).padStart(5)} %  burn ${r.burnRate}`),
  )
}

// 20 solves a minute for 90 minutes; every solve fails from minute 30 to 40,
// and 1 % fail otherwise (every 100th).
let n = 0
for (let minute = 0; minute < 90; minute++) {
  for (let i = 0; i < 20; i++) {
    const at = start + minute * MINUTE + i * 3000
    const outage = minute >= 30 && minute < 40
    tracker.record(!outage && ++n % 100 !== 0, at)
  }
}
// Then traffic stops for an hour: the window drains by itself, and once fewer
// than minEvents (100) remain the tracker stops judging and says healthy.
tracker.advanceTo(start + 150 * MINUTE)

setImmediate(() => {
  console.log('\nreport at', clock(tracker.now), tracker.report())
  tracker.close()
})
