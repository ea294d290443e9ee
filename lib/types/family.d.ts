// Types of BudgetFamily (lib/family/): many budgets keyed by labels.
import type { BudgetEvent, BudgetListener, BudgetReport, ErrorBudgetTracker, PersistConfig, TrackerConfig } from '../../native.js'
import type { Blame, Incident } from './incidents.js'
import type { FleetConfig, FleetInfo, FleetSyncError } from './tracker.js'

/** A child's labels: exactly the family's `labelNames`, string values. */
export type FamilyLabels<L extends string = string> = { readonly [K in L]: string }

/** What `childConfig(labels)` may set for one child: every tracker option but the family-wide ones. */
export type FamilyChildConfig = Omit<TrackerConfig, 'clock' | 'persist' | 'snapshot' | 'now' | 'shared' | 'fleet'>

/** The config of `new BudgetFamily()`: the family's own options plus every tracker option, for each child. */
export interface BudgetFamilyConfig<L extends string = string> extends Omit<TrackerConfig, 'persist' | 'snapshot' | 'now' | 'shared' | 'fleet'> {
  /** Prometheus-style label names, fixed per family; not `name`, `outcome`, `window`, `status`, `alert`, `severity`, `decision`, `state`, `job`, `instance`, `slo`, `pair`, `alertname`, `alertstate`, `objective`, `period`, `description` (the names `slo.grouping` refuses too). */
  labelNames: readonly L[]
  /** Per-child overrides of the tracker options, called once when a child is created; synchronous (a Promise is a TypeError), and it cannot create children itself (`ERR_INVALID_STATE`). */
  childConfig?: (labels: FamilyLabels<L>) => FamilyChildConfig | null | undefined | void
  /** The bound on the number of children, an integer in [1, 1 000 000]. Default 10 000. */
  maxChildren?: number
  /** The `name` label of the family's Prometheus series. Default `'default'`. */
  name?: string
  /** Autosave of the whole family: restored from `path` on start when it exists, written every `intervalMs` (default 60 000), on `close()` and at exit. One family owns a path (the tracker's lock on `<path>.lock`): a second family, or a tracker, on it throws `ERR_PERSIST_LOCKED`. */
  persist?: PersistConfig
  /**
   * Every child's budget shared by the fleet through Redis, one script call per
   * sync for the whole family; not with `persist`. `childConfig` cannot change
   * `windowMs` or `resolutionMs` then. As for a tracker's fleet, a sync is refused
   * (FleetSyncError) when this clock is more than `maxSkewMs` from Redis's `TIME`,
   * when the key holds another SLO (targetRate, windowMs, bucketMs), or when a
   * stored count is corrupt.
   */
  fleet?: FleetConfig
  /**
   * Worker threads: each child is the process-wide shared tracker of this name
   * and its labels (`ErrorBudgetTracker.shared`), the same window in every thread
   * whose family has this name; not with `persist` or `fleet`.
   */
  shared?: string
  /**
   * The label names of the provider and the site: `family.blame()`, `incident.blame`
   * and `createFailover(family, …)` tell a provider's fault from a site's
   * (docs/when-the-site-says-no.md). Two different names of `labelNames`.
   */
  attribution?: { provider: NoInfer<L>; site: NoInfer<L> }
}

/**
 * `family.fleet` and what `family.sync()` resolves to: a tracker's `FleetInfo`
 * without `unsent` (a family's unsent solves are its children's), the times
 * on the family's clock.
 */
export type FamilyFleetInfo = Omit<FleetInfo, 'unsent'>

/** One row of `family.report()`: a child's report with its labels. */
export type FamilyReport<L extends string = string> = BudgetReport & { labels: FamilyLabels<L> }

/** Options of `BudgetFamily.restore()`: the rest comes from the snapshot. */
export interface FamilyRestoreOptions<L extends string = string> {
  /** The children's clock (default the snapshot's). */
  clock?: 'monotonic' | 'manual'
  /** Manual clock: the time to restore every child at, epoch ms (default each child's `savedAt`). */
  now?: number
  /** Per-child overrides for the children created from then on (a function is not in a snapshot). */
  childConfig?: BudgetFamilyConfig<L>['childConfig']
  /** Keep saving the family to a file. */
  persist?: PersistConfig
  /** The provider and site labels (not in a snapshot): see `BudgetFamilyConfig`. */
  attribution?: { provider: L; site: L }
}

/**
 * Many error budgets keyed by labels: one `ErrorBudgetTracker` per label set,
 * created on first use, bounded by `maxChildren`.
 */
export declare class BudgetFamily<const L extends string = string> implements Disposable {
  constructor(config: BudgetFamilyConfig<L>)
  /**
   * The child for `labels` (exactly `labelNames`, string values of at most 1024
   * characters and no lone surrogate: else a TypeError or RangeError with a code,
   * and nothing is created), created on first use, the same object
   * afterwards. At `maxChildren` an empty child without listeners of its own and
   * without a `guard()` in flight is evicted (closed); if none can be, a RangeError `ERR_OUT_OF_RANGE`.
   */
  labels(labels: FamilyLabels<L>): ErrorBudgetTracker
  /** `labels(labels).record(success, atMs)`; bad arguments create no child. */
  record(labels: FamilyLabels<L>, success: boolean, atMs?: number): void
  /** Manual clock: moves every child to `ms` (never backwards); children created later start there. */
  advanceTo(ms: number): void
  /** Calls `listener(payload, labels)` for `event` of every child, present and future. */
  on<E extends BudgetEvent>(event: E, listener: (payload: Parameters<BudgetListener<E>>[0], labels: FamilyLabels<L>) => void): this
  /** Removes the most recent registration of `listener` for `event`. */
  off<E extends BudgetEvent>(event: E, listener: (payload: Parameters<BudgetListener<E>>[0], labels: FamilyLabels<L>) => void): this
  /** Fleet families: `listener` is called with the FleetSyncError of each failed sync. */
  on(event: 'fleet-error', listener: (error: FleetSyncError) => void): this
  off(event: 'fleet-error', listener: (error: FleetSyncError) => void): this
  /** `listener(incident, labels)` for every child's incidents, present and future children. */
  on(event: 'incident', listener: (incident: Incident, labels: FamilyLabels<L>) => void): this
  off(event: 'incident', listener: (incident: Incident, labels: FamilyLabels<L>) => void): this
  /**
   * Fleet families: pushes every child's unsent counts and installs the fleet's
   * buckets of every child (those other workers created included), in one Redis
   * call. Rejects with a FleetSyncError when Redis does not answer or refuses the
   * sync (this clock beyond `maxSkewMs`: `skewMs`; another SLO on the key; a corrupt
   * count): nothing is counted then. `ERR_INVALID_STATE` without `fleet`.
   */
  sync(): Promise<FamilyFleetInfo>
  /** Fleet families: the state of the sync; undefined otherwise. */
  readonly fleet: FamilyFleetInfo | undefined
  /** Every child's report with its labels, worst first: least budget left, then highest burn rate, then creation order. */
  report(): Array<FamilyReport<L>>
  /** Every child with its labels, in creation order. */
  children(): Array<{ labels: FamilyLabels<L>; tracker: ErrorBudgetTracker }>
  /**
   * With `attribution`: whose fault the failures of the child of `labels` are — its
   * provider's (failing on the other sites too) or its site's (failing on every
   * provider) — or null when the window's counts do not single one out
   * (likelihood-ratio tests at 99.9 %). Creates no child; `ERR_INVALID_STATE`
   * without `attribution`.
   */
  blame(labels: FamilyLabels<L>): Blame | null
  /** `attribution` as given, or null. */
  readonly attribution: { readonly provider: L; readonly site: L } | null
  /** The family as JSON: its options (not `childConfig`) and every child's snapshot with its labels. */
  snapshot(): string
  /** With `persist`: writes the family's snapshot now. */
  save(): void
  /**
   * Every child's Prometheus series, labelled with the family's `name` and the child's labels;
   * `options.labels` adds constant labels (as `registerMetrics(family, registry, { labels })`).
   */
  metrics(options?: { labels?: Record<string, string> }): string
  /** Closes every child; with `persist`, writes a final snapshot first. Idempotent. */
  close(): void
  [Symbol.dispose](): void
  /** The label names, in the order given. */
  readonly labelNames: L[]
  /** The `name` label of the family's series. */
  readonly name: string
  /** How many children the family holds. */
  readonly size: number
  readonly maxChildren: number
  readonly closed: boolean
  /** Manual clock: the family's time, epoch ms; otherwise `Date.now()`. */
  readonly now: number
  /**
   * Rebuilds a family from `snapshot()` JSON; `ERR_SNAPSHOT_INVALID` when it cannot.
   * Called on a subclass (`MyFamily.restore(json)`), an instance of it.
   */
  static restore<T extends abstract new (...args: any[]) => BudgetFamily<any>>(
    this: T,
    json: string,
    options?: FamilyRestoreOptions<InstanceType<T> extends BudgetFamily<infer L> ? L : string> | null,
  ): InstanceType<T>
  /** Called detached from its class, or with the label names spelled: a `BudgetFamily<L>`. */
  static restore<L extends string = string>(json: string, options?: FamilyRestoreOptions<L> | null): BudgetFamily<L>
}
