// Compiled by `tsc -p __test__/types` (see types.spec.js): correct use must
// type-check and every misuse below must be an error.
import {
  ErrorBudgetTracker,
  type AlertEvent,
  type BudgetReport,
  type BudgetStatus,
  type TrackerConfig,
  type RestoreOptions,
  type PersistConfig,
  type RecordedCounts,
} from 'captcha-error-budget'

const seen: unknown[] = []
const config: TrackerConfig = { targetRate: 0.95, windowMs: 3_600_000, minEvents: 100, clock: 'manual' }
const tracker = new ErrorBudgetTracker(config)
tracker.record(true)
tracker.record(false, Date.now())
tracker.recordMany(968, 32)
tracker.recordMany(50, 2, Date.now())
const detached: (success: boolean, atMs?: number) => void = tracker.record
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
void [status, pct, chained, detached]

// @ts-expect-error: not a status
tracker.on('broken', () => {})
// @ts-expect-error: record takes a boolean
tracker.record('yes')
// @ts-expect-error: a string where a number belongs
tracker.record(true, '2024-01-01')
// @ts-expect-error: counts are numbers
tracker.recordMany(true, 0)
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
// null is "no options", as at run time; the config comes from the snapshot.
const restoreOptions: RestoreOptions = { persist: { path: 'budget.json', intervalMs: 60_000 } satisfies PersistConfig }
void [ErrorBudgetTracker.restore(tracker.snapshot(), null), restoreOptions]
// A subclass's statics return the subclass (lib/tracker/tracker.js builds with `this`).
class CountingTracker extends ErrorBudgetTracker {
  readonly kind = 'counting'
}
const sub: CountingTracker = CountingTracker.restore(tracker.snapshot(), { clock: 'manual' })
const subShared: CountingTracker = CountingTracker.shared('counting-types', { targetRate: 0.97 })
const detachedRestore = ErrorBudgetTracker.restore
const base: ErrorBudgetTracker = detachedRestore(tracker.snapshot())
// @ts-expect-error: the base class's restore is no CountingTracker
const notSub: CountingTracker = ErrorBudgetTracker.restore(tracker.snapshot())
void [sub, subShared, base, notSub]
// @ts-expect-error: the config comes from the snapshot, not from restore's options
ErrorBudgetTracker.restore(tracker.snapshot(), { windowMs: 60_000 })
const counted: RecordedCounts = tracker.recorded
void counted
// @ts-expect-error: index.js does not re-export the napi loader's __napiBindingTarget
import { __napiBindingTarget } from 'captcha-error-budget'
void __napiBindingTarget

// ── tracker.guard() and the CaptchaAI client ──
import {
  BudgetExhaustedError,
  GuardTimeoutError,
  SolveError,
  createSolver,
  createFailover,
  defaultCountsAsFailure,
  CALLER_ERROR_CODES,
  type Failover,
  type GuardOptions,
  type Solver,
  type SolveResult,
  type ThrottleInfo,
  type ThrottleState,
  type WhenExhausted,
  type AttemptOutcome,
  type ProviderName,
  ProviderBackoffError,
} from 'captcha-error-budget'

async function guarded(): Promise<void> {
  const token: string = await tracker.guard(async (signal) => (signal.aborted ? 'aborted' : 'token'))
  const count: number = await tracker.guard(() => 42) // a synchronous value is fine too
  const options: GuardOptions = { timeoutMs: 30_000, critical: true, countsAsFailure: (e) => !(e instanceof SolveError) }
  await tracker.guard((signal) => new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve())), options)
  try {
    await tracker.guard(async () => 'x')
  } catch (err) {
    if (err instanceof BudgetExhaustedError) seen.push(err.code, err.report.budgetRemainingPct)
    if (err instanceof BudgetExhaustedError && err.retryAfterMs !== null) seen.push(err.retryAfterMs)
    if (err instanceof GuardTimeoutError) seen.push(err.timeoutMs)
  }
  const mode: WhenExhausted = 'refuse'
  await tracker.guard(async () => 1, { whenExhausted: mode, minSolves: 0, probeIntervalMs: 10_000 })
  const throttle: ThrottleInfo | null | undefined = tracker.report().throttle
  const state: ThrottleState | undefined = throttle?.state
  const next: number | null | undefined = throttle?.nextProbeInMs
  void [state, next]
  // Issue 33: four outcomes, provider profiles, back-offs.
  const outcome: AttemptOutcome = 'capacity'
  const provider: ProviderName = '2captcha'
  await tracker.guard(async () => 1, { provider, countsAsFailure: (e) => (e === 'busy' ? outcome : true) })
  const excluded: number = tracker.recorded.excluded + tracker.recorded.capacity
  const inReport: number | undefined = tracker.report().capacity
  try {
    await tracker.guard(async () => 1, { provider: 'capsolver' })
  } catch (err) {
    if (err instanceof ProviderBackoffError) seen.push(err.provider, err.providerCode, err.retryAfterMs)
  }
  const createTaskSolver: Solver = createSolver({ apiKey: 'k', tracker, provider: 'anticaptcha' })
  const solved: SolveResult = await createTaskSolver.solve({ type: 'RecaptchaV2TaskProxyless', websiteURL: 'https://a.example/', websiteKey: '6L' })
  const answer: string | null = solved.answer
  const whole: { [field: string]: unknown } | undefined = solved.solution
  void [excluded, inReport, answer, whole, createTaskSolver.provider]
  // @ts-expect-error: not a provider with a profile
  await tracker.guard(async () => 1, { provider: 'deathbycaptcha' })
  const solver: Solver = createSolver({ apiKey: 'k', tracker, baseUrl: 'http://127.0.0.1:8080', pollIntervalMs: 5000 })
  const result: SolveResult = await solver.solve({ method: 'turnstile', sitekey: '0x4', pageurl: 'https://a.example/' })
  await solver.solve({ method: 'userrecaptcha', googlekey: '6L', pageurl: 'https://a.example/', invisible: true })
  await solver.solve({ method: 'base64', body: 'iVBORw0KGgo=' }, { critical: true })
  await solver.solve({ method: 'hcaptcha', sitekey: 'x', pageurl: 'https://a.example/' }) // other methods pass through
  const mine = new SolveError('ERROR_MINE', 'built by hand, without details') // details default to {}
  const stage: 'submit' | 'result' | undefined = mine.stage
  const failover: Failover = createFailover([solver, createSolver({ apiKey: 'k2', tracker, whenExhausted: 'throttle' })])
  const which: number = (await failover.solve({ method: 'turnstile', sitekey: '0x4', pageurl: 'https://a.example/' })).solver
  void which
  const codes: readonly string[] = CALLER_ERROR_CODES
  const counts: boolean = defaultCountsAsFailure(new Error('x'))
  void [token, count, result.answer, result.taskId, codes, counts, stage]

  // @ts-expect-error: the guard returns fn's type, a string here
  const wrong: number = await tracker.guard(async () => 'token')
  // @ts-expect-error: fn must be a function
  await tracker.guard(Promise.resolve(1))
  // @ts-expect-error: timeoutMs is a number of ms
  await tracker.guard(async () => 1, { timeoutMs: '30s' })
  // @ts-expect-error: unknown option
  await tracker.guard(async () => 1, { timeout: 30 })
  // @ts-expect-error: 'stop' is not a mode
  await tracker.guard(async () => 1, { whenExhausted: 'stop' })
  // @ts-expect-error: the classifier returns a boolean
  await tracker.guard(async () => 1, { countsAsFailure: () => 'yes' })
  // @ts-expect-error: turnstile needs a pageurl
  await solver.solve({ method: 'turnstile', sitekey: '0x4' })
  // @ts-expect-error: userrecaptcha needs a googlekey, not a sitekey
  await solver.solve({ method: 'userrecaptcha', sitekey: '6L', pageurl: 'https://a.example/' })
  // @ts-expect-error: parameters are strings, numbers or booleans
  await solver.solve({ method: 'base64', body: 'x', extra: { nested: true } })
  // @ts-expect-error: a solver needs a tracker
  createSolver({ apiKey: 'k' })
  void wrong
}
void guarded

// Prometheus (lib/prometheus/metrics.js, lib/prometheus/rules.js): tracker.metrics() comes from index.js.
import { registerMetrics, renderMetrics, prometheusRules, METRICS_CONTENT_TYPE, type MetricsOptions } from 'captcha-error-budget'
const metricsOptions: MetricsOptions = { name: 'turnstile', labels: { region: 'eu' } }
const exposition: string = tracker.metrics(metricsOptions) + tracker.metrics() + renderMetrics([{ tracker, name: 'recaptcha' }])
const registry = { registerMetric(_metric: unknown) {}, removeSingleMetric(_name: string) {} }
const unregister: () => void = registerMetrics(tracker, registry, { name: 'turnstile' })
const rulesYaml: string = prometheusRules({ name: 'turnstile', targetRate: 0.95, windowMs: 30 * 86_400_000, minEvents: 100 })
const operatorYaml: string = prometheusRules(
  [{ id: 'turnstile-99', name: 'turnstile', targetRate: 0.99, windowMs: 30 * 86_400_000, alerting: { page: { labels: { severity: 'critical' } } } }],
  { format: 'prometheus-operator', periodRules: 'optimised', scrapeIntervalMs: 30_000 },
)
// @ts-expect-error: no such format
prometheusRules({ name: 'turnstile', targetRate: 0.95, windowMs: 3_600_000 }, { format: 'json' })
void [exposition, unregister, rulesYaml, operatorYaml, METRICS_CONTENT_TYPE.length]
// @ts-expect-error: label values are strings
tracker.metrics({ labels: { region: 1 } })
// @ts-expect-error: the rules need the name label
prometheusRules({ targetRate: 0.95, windowMs: 3_600_000 })
// Any PromQL SLI, with an id.
prometheusRules({ id: 'api', sli: { errorQuery: 'sum(rate(e[{{.window}}]))', totalQuery: 'sum(rate(t[{{.window}}]))' }, targetRate: 0.99, windowMs: 3_600_000 }, { compat: 'sloth' })
// @ts-expect-error: a PromQL SLI needs an id
prometheusRules({ sli: { errorQuery: 'sum(rate(e[{{.window}}]))', totalQuery: 'sum(rate(t[{{.window}}]))' }, targetRate: 0.99, windowMs: 3_600_000 })
// @ts-expect-error: a typo is not a field (at run time a TypeError listing the fields)
prometheusRules({ name: 'turnstile', targetRate: 0.95, windowMs: 3_600_000, minEvent: 100 })
// @ts-expect-error: no such option
renderMetrics([{ tracker, nom: 'x' }])
const fleet: ErrorBudgetTracker = ErrorBudgetTracker.shared('turnstile', { targetRate: 0.97 })
ErrorBudgetTracker.shared('turnstile').record(true)
ErrorBudgetTracker.shared('turnstile', null).record(true) // null: attach, as without a config
// @ts-expect-error: a shared tracker cannot persist
ErrorBudgetTracker.shared('turnstile', { persist: { path: 'x.json' } })
void fleet

// Issue 24: incidents.
import type { Incident } from 'captcha-error-budget'
const onIncident = (i: Incident) => seen.push(i.id, i.state, i.severity, i.openedAt, i.at, i.pair, i.firing.length, i.evidence.longFailures, i.reason)
tracker.on('incident', onIncident).off('incident', onIncident)
// @ts-expect-error: not a state
const badState: Incident['state'] = 'closed'
void badState
// @ts-expect-error: an incident listener gets an Incident, not a report
tracker.on('incident', (r: BudgetReport) => seen.push(r))
