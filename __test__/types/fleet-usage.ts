// Type-checked by types.spec.js (tsc --noEmit): config.fleet, sync(), report().fleet, 'fleet-error'.
import { ErrorBudgetTracker, FleetSyncError, type FleetInfo } from '../../index.js'

declare const redis: object
const tracker = new ErrorBudgetTracker({ targetRate: 0.95, fleet: { redis, key: 'turnstile', syncMs: 1000 } })
const info: Promise<FleetInfo> = tracker.sync()
const stale: boolean | undefined = tracker.report().fleet?.stale
let seen: string = ''
tracker.on('fleet-error', (err: FleetSyncError) => (seen = `${err.code} ${err.key}`))
tracker.on('exhausted', (report) => (seen = String(report.total)))
tracker.off('fleet-error', () => {})
void info
void seen
void stale
// @ts-expect-error key is required
new ErrorBudgetTracker({ fleet: { redis } })
// @ts-expect-error syncMs is a number
new ErrorBudgetTracker({ fleet: { redis, key: 'k', syncMs: '1s' } })
new ErrorBudgetTracker({ fleet: { redis, key: 'k', maxSkewMs: 5000 } })
tracker.on('fleet-error', (err: FleetSyncError) => (seen = String(err.skewMs ?? 0)))
// @ts-expect-error maxSkewMs is a number
new ErrorBudgetTracker({ fleet: { redis, key: 'k', maxSkewMs: '5s' } })
