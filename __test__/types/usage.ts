// Compiled by `tsc -p __test__/types` (see types.spec.js): correct use must
// type-check and every misuse below must be an error.
import {
  ErrorBudgetTracker,
  type AlertEvent,
  type BudgetReport,
  type BudgetStatus,
  type TrackerConfig,
} from 'captcha-error-budget'

const seen: unknown[] = []
const config: TrackerConfig = { targetRate: 0.95, windowMs: 3_600_000, minEvents: 100, clock: 'manual' }
const tracker = new ErrorBudgetTracker(config)
tracker.record(true)
tracker.record(false, Date.now())
const status: BudgetStatus = tracker.status
const report: BudgetReport = tracker.report()
const pct: number = report.budgetRemainingPct
const chained: ErrorBudgetTracker = tracker
  .on('exhausted', (r: BudgetReport) => seen.push(r.status, r.burnRate))
  .off('warning', (r) => seen.push(r.total))
tracker.on('alert', (e: AlertEvent) => seen.push(e.name, e.severity, e.burnRateShort, e.report.status))
tracker.on('resolve', (e) => seen.push(e.at))
const paged: TrackerConfig = {
  alerts: [{ name: 'fast', severity: 'page', longWindowMs: 3_600_000, shortWindowMs: 300_000, burnRate: 14.4 }],
}
const exhaustsIn: number | null = tracker.report().exhaustsInMs
const burn: number = tracker.burnRateOver(60_000)
void [paged, exhaustsIn, burn, tracker.alertPolicy[0]?.longWindowMs]
tracker[Symbol.dispose]()
void [status, pct, chained]

// @ts-expect-error: not a status
tracker.on('broken', () => {})
// @ts-expect-error: record takes a boolean
tracker.record('yes')
// @ts-expect-error: a string where a number belongs
tracker.record(true, '2024-01-01')
// @ts-expect-error: a string where a number belongs
new ErrorBudgetTracker({ windowMs: '1h' })
// @ts-expect-error: unknown config key
new ErrorBudgetTracker({ targetRat: 0.9 })
// @ts-expect-error: no such clock
new ErrorBudgetTracker({ clock: 'wall' })
// @ts-expect-error: listeners receive a report, not a number
tracker.on('healthy', (r: number) => r)
// @ts-expect-error: alert listeners receive an AlertEvent, not a report
tracker.on('alert', (r: BudgetReport) => r)
// @ts-expect-error: no such severity
new ErrorBudgetTracker({ alerts: [{ name: 'a', severity: 'sms', longWindowMs: 2, shortWindowMs: 1, burnRate: 2 }] })
const restored: ErrorBudgetTracker = ErrorBudgetTracker.restore(tracker.snapshot(), { clock: 'manual', now: 5 })
void restored
// @ts-expect-error: restore takes the snapshot JSON string
ErrorBudgetTracker.restore({ version: 1 })
