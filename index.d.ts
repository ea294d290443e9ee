// Types of the package entry (index.js): the native addon's, generated from the
// Rust doc comments into native.d.ts, plus those of the JavaScript parts, declared
// by concept in lib/types/ (which never import this file). The addon's are listed
// one by one: the loader exports more than index.js does (`__napiBindingTarget`),
// and these types must match what index.js exports. The one `declare module` at the
// end adds the JavaScript parts' members to the generated classes and interfaces.
import type { TrackerConfig } from './native.js'
import type { FleetConfig, FleetInfo, FleetSyncError, RestoreOptions } from './lib/types/tracker.js'
import type { GuardAttempt, GuardOptions, GuardSignal, ThrottleInfo } from './lib/types/guard.js'
import type { Incident } from './lib/types/incidents.js'
import type { MetricsOptions } from './lib/types/prometheus.js'

export { ErrorBudgetTracker } from './native.js'
export type {
  AlertEvent,
  AlertEvidence,
  AlertRuleConfig,
  AlertRuleInfo,
  AlertSeverity,
  BudgetEvent,
  BudgetListener,
  BudgetReport,
  BudgetStatus,
  FiringAlertInfo,
  PersistConfig,
  RecordedCounts,
  TrackerConfig,
} from './native.js'

export { FleetSyncError } from './lib/types/tracker.js'
export type { FleetConfig, FleetInfo, RestoreOptions } from './lib/types/tracker.js'

export { BudgetExhaustedError, GuardTimeoutError, ProviderBackoffError } from './lib/types/guard.js'
export type { AttemptOutcome, GuardAttempt, GuardOptions, GuardSignal, ProviderName, ThrottleInfo, ThrottleState, WhenExhausted } from './lib/types/guard.js'

export { CALLER_ERROR_CODES, createFailover, createSolver, defaultCountsAsFailure, FaultError, SolveError } from './lib/types/solver.js'
export type {
  BadReports,
  CreateTaskTask,
  Failover,
  FamilyFailover,
  FamilyFailoverOptions,
  SolveResult,
  Solver,
  SolverOptions,
  SolveTask,
  SolveTaskParams,
} from './lib/types/solver.js'

export { METRICS_CONTENT_TYPE, prometheusRules, registerMetrics, renderMetrics } from './lib/types/prometheus.js'
export type {
  MetricsOptions,
  MetricsSource,
  PromClientRegistry,
  PrometheusAlerting,
  PrometheusAlertRoute,
  PrometheusRulesFormat,
  PrometheusRulesOptions,
  PrometheusSli,
  PrometheusSliRulesOptions,
} from './lib/types/prometheus.js'

export type { Blame, Incident } from './lib/types/incidents.js'

export { BudgetFamily } from './lib/types/family.js'
export type { BudgetFamilyConfig, FamilyChildConfig, FamilyFleetInfo, FamilyLabels, FamilyReport, FamilyRestoreOptions } from './lib/types/family.js'

declare module './native.js' {
  interface TrackerConfig {
    /** One budget for the whole fleet through Redis; cannot be combined with `shared`, `persist` or `snapshot`. */
    fleet?: FleetConfig
  }
  interface BudgetReport {
    /** In `report()` from construction (not in the reports listeners get): null until `guard()` (or a solver) first decides on this tracker. */
    throttle?: ThrottleInfo | null
    /** In `report()` from construction (0 until then): `guard()`'s attempts that were the caller's or the account's problem (this process, this handle). */
    excluded?: number
    /** In `report()` from construction (0 until then): `guard()`'s attempts the provider turned away for capacity (this process, this handle). */
    capacity?: number
    /** Present with `config.fleet`. */
    fleet?: FleetInfo
  }
  interface RecordedCounts {
    /** `guard()` attempts classified `'excluded'`: in neither the solves nor the failures (this process, this handle). */
    excluded: number
    /** `guard()` attempts classified `'capacity'`: no worker, thread or slot free (this process, this handle). */
    capacity: number
  }
  interface ErrorBudgetTracker {
    /**
     * Runs `fn(signal, attempt)` as one solve attempt and records it exactly once: resolve →
     * one success; reject (or a synchronous throw) → one failure, or what
     * `countsAsFailure` or the `provider`'s profile names (`excluded` and `capacity`
     * are counted in `recorded`, not the window); timeout → one failure. While the
     * budget is exhausted it rejects with a `BudgetExhaustedError` without calling
     * fn, unless `critical`; while the provider's back-off runs, with a
     * `ProviderBackoffError`. Bad arguments reject with a TypeError / RangeError.
     * `attempt.reject()`, once the success is recorded, turns it into a failure.
     */
    guard<T>(fn: (signal: GuardSignal, attempt: GuardAttempt) => T | PromiseLike<T>, options?: GuardOptions): Promise<T>
    /** This tracker's Prometheus series, text exposition format 0.0.4. */
    metrics(options?: MetricsOptions): string
    /**
     * Fleet trackers: pushes this worker's unsent counts and installs the fleet's
     * window, now. Rejects with a FleetSyncError when Redis does not answer (the
     * counts stay unsent), and with `ERR_INVALID_STATE` without `config.fleet`.
     */
    sync(): Promise<FleetInfo>
    /** Fleet trackers: `listener` is called with the FleetSyncError of each failed sync. */
    on(event: 'fleet-error', listener: (error: FleetSyncError) => void): this
    off(event: 'fleet-error', listener: (error: FleetSyncError) => void): this
    /** `listener` is called with an `Incident` when one opens, escalates ticket → page, or resolves (register it before the alerts it should see). */
    on(event: 'incident', listener: (incident: Incident) => void): this
    /** Removes the most recent registration of `listener` for 'incident'. */
    off(event: 'incident', listener: (incident: Incident) => void): this
  }
  namespace ErrorBudgetTracker {
    /**
     * Rebuilds a tracker from `snapshot()` JSON, aged to now (a leading UTF-8 BOM
     * is ignored). A corrupt, truncated, wrong-version or inconsistent snapshot
     * throws `ERR_SNAPSHOT_INVALID`.
     */
    function restore<T extends abstract new (...args: any[]) => ErrorBudgetTracker>(this: T, json: string, options?: RestoreOptions | null): InstanceType<T>
    /** Called detached from its class (`const r = ErrorBudgetTracker.restore`): an `ErrorBudgetTracker`. */
    function restore(json: string, options?: RestoreOptions | null): ErrorBudgetTracker
    /**
     * A handle on the process-wide tracker `name`, shared by every worker thread:
     * created with `config` on first use; without `config`, attaches. A config that
     * differs from the existing tracker's throws a TypeError (`ERR_INVALID_ARG_VALUE`) naming the fields.
     */
    function shared<T extends abstract new (...args: any[]) => ErrorBudgetTracker>(
      this: T,
      name: string,
      config?: Omit<TrackerConfig, 'shared' | 'persist' | 'snapshot' | 'now'> | null,
    ): InstanceType<T>
    /** Called detached from its class: an `ErrorBudgetTracker`. */
    function shared(name: string, config?: Omit<TrackerConfig, 'shared' | 'persist' | 'snapshot' | 'now'> | null): ErrorBudgetTracker
  }
}
