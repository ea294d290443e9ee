// Types of the package entry (index.js): the native addon's, generated from the
// Rust doc comments into native.d.ts, plus those of the JavaScript parts. The
// addon's are listed one by one: the loader exports more than index.js does
// (`__napiBindingTarget`), and these types must match what index.js exports.
export { ErrorBudgetTracker } from './native'
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
} from './native'
import type { AlertEvidence, AlertSeverity, PersistConfig, TrackerConfig } from './native'

/** Options of `ErrorBudgetTracker.restore()`: the config itself comes from the snapshot. */
export interface RestoreOptions {
  /** `'monotonic'` (default: ages the snapshot to the current time) or `'manual'`. */
  clock?: 'monotonic' | 'manual'
  /** Manual clock: the time to restore at, epoch ms (default the snapshot's `savedAt`). */
  now?: number
  /** Keep saving to a file (see `TrackerConfig.persist`). */
  persist?: PersistConfig
}

declare module './native' {
  namespace ErrorBudgetTracker {
    /**
     * Rebuilds a tracker from `snapshot()` JSON, aged to now (a leading UTF-8 BOM
     * is ignored). A corrupt, truncated, wrong-version or inconsistent snapshot
     * throws `ERR_SNAPSHOT_INVALID`.
     */
    function restore<T extends abstract new (...args: any[]) => ErrorBudgetTracker>(
      this: T,
      json: string,
      options?: RestoreOptions | null,
    ): InstanceType<T>
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

// ── tracker.guard() and the CaptchaAI client (lib/guard.js, lib/solver.js) ──

import type { BudgetReport, ErrorBudgetTracker } from './native'

/**
 * The `AbortSignal` of the environment (DOM lib or @types/node), or a minimal
 * stand-in when neither is loaded, so these types need no extra lib.
 */
export type GuardSignal = typeof globalThis extends { AbortSignal: { prototype: infer S } }
  ? S
  : {
      readonly aborted: boolean
      readonly reason: unknown
      throwIfAborted(): void
      addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void
      removeEventListener(type: 'abort', listener: () => void): void
    }

/** The second argument of guard()'s fn: a late verdict on this attempt. */
export interface GuardAttempt {
  /**
   * The target site rejected this attempt's token: its recorded success becomes a
   * failure in the bucket where it was recorded. `true` if it did; `false` when the
   * attempt is not (yet) a recorded success, is older than `verdictWindowMs` or out
   * of the window, or a verdict was already given. A TypeError
   * (`ERR_INVALID_ARG_TYPE`) for a reason that is not a string.
   */
  reject(reason?: string): boolean
  /** The reason of the rejection taken (at most 200 characters), else undefined. */
  readonly reason: string | undefined
}

/** Options of `tracker.guard()`. Every field is optional. */
export interface GuardOptions {
  /**
   * Deadline in ms (an integer in [1, 2³¹ − 1]): when it passes first, the attempt
   * is one failure, the signal given to fn is aborted, the guard rejects with a
   * `GuardTimeoutError`, and fn's later settle is ignored. Default: none.
   */
  timeoutMs?: number
  /** Run fn even while the budget is exhausted (its outcome is recorded). Default false. */
  critical?: boolean
  /**
   * What a rejection of fn was: `true` or `'failure'` counts against the budget;
   * `false` or `'excluded'` is the caller's or the account's problem and
   * `'capacity'` no free worker (both in neither the solves nor the failures,
   * counted in `recorded.excluded` / `recorded.capacity`); `'success'` records a
   * success. A throw or another value counts the rejection and emits a process
   * warning. Not consulted for timeouts (always failures). Default: the
   * `provider`'s profile, else every rejection counts.
   */
  countsAsFailure?: (error: unknown) => boolean | AttemptOutcome
  /**
   * The provider fn calls (docs/providers.md): its profile classifies the
   * rejection's code (an Error's `err` / `errorCode` / `code`, a bare string, an
   * object's `error`), and its published back-off after a code such as
   * `ERROR_NO_SLOT_AVAILABLE` rejects the next attempts with a
   * `ProviderBackoffError`. An unlisted code counts as a failure, with one process
   * warning per code.
   */
  provider?: ProviderName
  /**
   * While the budget is exhausted: `'throttle'` (default) admits one probe per
   * `probeIntervalMs` while recent attempts fall short of the SLO, and every
   * attempt once they meet it; `'refuse'` refuses every attempt until the window
   * leaves `exhausted` (docs/when-the-budget-runs-out.md).
   */
  whenExhausted?: WhenExhausted
  /**
   * Never throttle or refuse while the window holds fewer solves (integer ≥ 0).
   * Default 100 under `'throttle'`, 0 under `'refuse'`.
   */
  minSolves?: number
  /** Throttled: one probe per this many ms of the tracker's clock (integer in [1, 2³¹ − 1]). Default 20 000. */
  probeIntervalMs?: number
}

/** The outcomes of a guarded attempt. */
export type AttemptOutcome = 'success' | 'failure' | 'excluded' | 'capacity'

/** The providers with a profile (docs/providers.md). */
export type ProviderName = 'captchaai' | '2captcha' | 'anticaptcha' | 'capsolver' | 'capmonster'

/** What `guard()` does while the budget is exhausted. */
export type WhenExhausted = 'throttle' | 'refuse'

/**
 * The guard's state: `open` (the budget is not exhausted, or the window holds
 * under `minSolves`: every attempt runs), `admitting` (exhausted, but recent
 * attempts meet the SLO: every attempt runs), `throttled` (probes only),
 * `refusing` (`'refuse'`: none).
 */
export type ThrottleState = 'open' | 'admitting' | 'throttled' | 'refusing'

/** `report().throttle`: the guard's state and counters on this tracker (this process, this handle). */
export interface ThrottleInfo {
  state: ThrottleState
  /** Tracker time (epoch ms) the state began. */
  since: number
  /** Attempts the guard ran (probes and `critical` ones included). */
  admitted: number
  /** Attempts it rejected with a BudgetExhaustedError. */
  refused: number
  /** Probes admitted while throttled. */
  probes: number
  /** While throttled: ms until the next probe may run; else null. */
  nextProbeInMs: number | null
}

declare module './native' {
  interface BudgetReport {
    /** Present once `guard()` (or a solver) ran on this tracker. */
    throttle?: ThrottleInfo
    /** Present once `guard()` ran: its attempts that were the caller's or the account's problem (this process, this handle). */
    excluded?: number
    /** Present once `guard()` ran: its attempts the provider turned away for capacity (this process, this handle). */
    capacity?: number
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
  }
}

/** `tracker.guard()` refused to call fn: the budget is exhausted (throttled or refused). Nothing was recorded. */
export declare class BudgetExhaustedError extends Error {
  constructor(report: BudgetReport, retryAfterMs?: number | null)
  readonly code: 'EBUDGET_EXHAUSTED'
  /** The report when the call was refused. */
  readonly report: BudgetReport
  /** Ms (tracker clock) until the next probe may run; null under `'refuse'`. */
  readonly retryAfterMs: number | null
  /** From `createFailover()`, when every solver refused: each one's refusal, in order. */
  refusals?: Array<BudgetExhaustedError | ProviderBackoffError>
}

/** `tracker.guard()` did not call fn: its provider's published back-off runs (docs/providers.md). Nothing was recorded. */
export declare class ProviderBackoffError extends Error {
  constructor(provider: ProviderName, providerCode: string, retryAfterMs: number)
  readonly code: 'ERR_PROVIDER_BACKOFF'
  readonly provider: ProviderName
  /** The provider's code that started the back-off. */
  readonly providerCode: string
  /** Ms (tracker clock) until the back-off ends. */
  readonly retryAfterMs: number
  /** From `createFailover()`, when every solver refused: each one's refusal, in order. */
  refusals?: Array<BudgetExhaustedError | ProviderBackoffError>
}

/** `tracker.guard()`'s deadline passed first; also the reason of the aborted signal. */
export declare class GuardTimeoutError extends Error {
  constructor(timeoutMs: number)
  readonly code: 'ETIMEDOUT'
  readonly timeoutMs: number
}

/**
 * A failed CaptchaAI call: `code` is the service's (`'ERROR_ZERO_BALANCE'`,
 * `'ERROR_CAPTCHA_UNSOLVABLE'`, …), or `'ERR_NETWORK'` (no answer; `cause` is
 * fetch's error), or `'ERR_BAD_RESPONSE'` (not the protocol's JSON).
 */
export declare class SolveError extends Error {
  constructor(
    code: string,
    message: string,
    details?: { stage: 'submit' | 'result'; taskId?: string | null; httpStatus?: number | null; cause?: unknown },
  )
  readonly code: string
  /** `'submit'` (in.php) or `'result'` (res.php); undefined only when built without `details` (never by the solver). */
  readonly stage: 'submit' | 'result' | undefined
  /** The task id once in.php gave one, else null. */
  readonly taskId: string | null
  /** The HTTP status of the answer; null when none came. */
  readonly httpStatus: number | null
}

/** Options of `createSolver()`. */
export interface SolverOptions {
  /** The provider's API key (CaptchaAI's by default). */
  apiKey: string
  /** Every solve is one `tracker.guard()` attempt on this tracker. */
  tracker: ErrorBudgetTracker
  /** The provider (docs/providers.md): its profile classifies rejections, its back-offs hold attempts. Default `'captchaai'`. */
  provider?: ProviderName
  /** Where in.php and res.php live (a path prefix is kept; no `user:password@`: a TypeError `ERR_INVALID_ARG_VALUE`). Default: the provider's (`https://ocr.captchaai.com`). */
  baseUrl?: string | (typeof globalThis extends { URL: { prototype: infer U } } ? U : never)
  /** Wait before each res.php poll, ms (integer ≥ 1). Default 5000. */
  pollIntervalMs?: number
  /** Deadline of a whole solve, submit and polls, ms (integer ≥ 1). Default 180 000. */
  timeoutMs?: number
  /** What each rejection was (see `GuardOptions.countsAsFailure`). Default: the provider's profile. */
  countsAsFailure?: (error: unknown) => boolean | AttemptOutcome
  /** Passed to every solve's `guard()`: see `GuardOptions`. Default `'throttle'`. */
  whenExhausted?: WhenExhausted
  /** See `GuardOptions.minSolves`. */
  minSolves?: number
  /** See `GuardOptions.probeIntervalMs`. */
  probeIntervalMs?: number
  /**
   * Report a bad answer to the provider when `result.reject()` turns a solve into a
   * failure (its endpoint: docs/providers.md), fire-and-forget: at most 35 % of the
   * last 15 minutes' solves and within the provider's age limit (others skipped),
   * counted in `solver.reports`, never awaited or thrown. Default `false`.
   */
  reportBad?: boolean
}

/** The parameters each known method requires; other methods are passed through unchecked. */
export interface SolveTaskParams {
  turnstile: { sitekey: string; pageurl: string }
  userrecaptcha: { googlekey: string; pageurl: string }
  base64: { body: string }
}

/**
 * A task for in.php: `method`, its parameters, and any other parameter of the API
 * (booleans are sent as 1 / 0). `key` and `json` are the solver's.
 */
export type SolveTask<M extends string = string> = { method: M } & (M extends keyof SolveTaskParams
  ? SolveTaskParams[M]
  : {}) & { [param: string]: string | number | boolean | undefined }

/**
 * A task for the createTask providers (`'anticaptcha'`, `'capsolver'`, `'capmonster'`):
 * the provider's task object, sent as is, with its `type`.
 */
export type CreateTaskTask = { type: string } & { [field: string]: unknown }

/**
 * A solved task: the service's task id (to report a bad answer later) and its
 * answer (a token, or an image's text). From a createTask provider also the whole
 * `solution`; `answer` is its `gRecaptchaResponse`, `token` or `text`, null when
 * it has none of them.
 */
export interface SolveResult {
  taskId: string
  answer: string | null
  solution?: { [field: string]: unknown }
  /**
   * The target site rejected this answer: the solve's recorded success becomes a
   * failure (guard's `attempt.reject()`), and with `reportBad` the provider is told.
   * `true` if the budget took it; `false` when too late (`verdictWindowMs`) or
   * already given. Not enumerable. A TypeError (`ERR_INVALID_ARG_TYPE`) for a
   * reason that is not a string.
   */
  readonly reject: (reason?: string) => boolean
}

/** What a solver's `reportBad` did so far. */
export interface BadReports {
  /** Reports the provider accepted. */
  readonly reported: number
  /** Verdicts not reported: over 35 % of the recent solves, past the provider's age limit, or a task type it takes no report for. */
  readonly skipped: number
  /** Reports sent that failed: no answer within 30 s, or the provider refused it. */
  readonly failed: number
}

/** A solver client under an error budget (`createSolver()`): the `provider`'s protocol, in.php / res.php or createTask / getTaskResult. */
export interface Solver {
  /**
   * Submits `task` (in.php's `method` and parameters, or a createTask provider's
   * task object with its `type`), polls until the answer, within the solver's
   * `timeoutMs`. Rejects with a SolveError, a GuardTimeoutError, a
   * BudgetExhaustedError (unless `critical`), a ProviderBackoffError, or a
   * TypeError for a bad task (nothing sent or recorded).
   */
  solve<M extends string>(task: SolveTask<M> | CreateTaskTask, options?: { critical?: boolean }): Promise<SolveResult>
  /** The provider whose profile it uses. */
  readonly provider: ProviderName
  /** The base URL in use, with a trailing slash. */
  readonly baseUrl: string
  /** What `reportBad` did so far (all 0 without it). */
  readonly reports: BadReports
  /** Resolves once every report sent so far has settled (before a worker exits); never rejects. */
  reportsSettled(): Promise<void>
}

/** A solver client for `provider` (CaptchaAI by default) whose every `solve()` goes through `tracker.guard()`. */
export declare function createSolver(options: SolverOptions): Solver

/** Solvers tried in order (`createFailover()`). */
export interface Failover {
  /**
   * Solves with the first solver whose budget admits the attempt; `solver` is its
   * index. Another solver is tried only after a BudgetExhaustedError, a ProviderBackoffError
   * or a capacity answer of its provider (its profile); when all refuse, rejects with
   * a copy of the refusal of soonest `retryAfterMs` (with `refusals`); when all were turned away
   * for capacity, with the last such error.
   */
  solve<M extends string>(task: SolveTask<M> | CreateTaskTask, options?: { critical?: boolean }): Promise<SolveResult & { solver: number }>
  readonly solvers: readonly Solver[]
}

/** Solvers (each with its own tracker) tried in order: a fallback when the first one's budget is exhausted. */
export declare function createFailover(solvers: readonly Solver[]): Failover
/**
 * The providers of a family with `attribution`, tried in order for one site, each
 * under its (provider, site) child's budget: a provider blamed is asked after the
 * others; a site blamed is refused (FaultError `ESITE_FAULT`), nothing sent.
 */
export declare function createFailover<L extends string>(family: BudgetFamily<L>, options: FamilyFailoverOptions<L>): FamilyFailover<L>

/** Options of `createFailover(family, options)`. */
export interface FamilyFailoverOptions<L extends string = string> {
  /** Each provider (a value of the provider label), in order of preference: makes the solver of a child's tracker, once per child. */
  providers: Record<string, (tracker: ErrorBudgetTracker, labels: FamilyLabels<L>) => Solver>
}

/** `createFailover(family, …)`. */
export interface FamilyFailover<L extends string = string> {
  /** Solves for `options.labels` (every label but the provider); `provider` is who solved it. */
  solve<M extends string>(
    task: SolveTask<M>,
    options: { labels: Partial<FamilyLabels<L>>; critical?: boolean },
  ): Promise<SolveResult & { provider: string }>
  readonly providers: readonly string[]
}

/** `createFailover(family, …)` refused a site that fails on every provider. */
export declare class FaultError extends Error {
  readonly code: 'ESITE_FAULT'
  /** What `family.blame()` said: `{ label: <the site label>, value: <the site> }`. */
  readonly blame: Blame
}

/**
 * The solver's default classifier: false for a SolveError whose code is in
 * `CALLER_ERROR_CODES`, true for everything else (unknown codes count).
 */
export declare function defaultCountsAsFailure(error: unknown): boolean

/** Service codes that are the caller's or the account's problem and do not count by default. */
export declare const CALLER_ERROR_CODES: readonly string[]

// Prometheus (lib/metrics.js, lib/rules.js).
import type { AlertRuleConfig, ErrorBudgetTracker as Tracker } from './native'

/** Labels of a tracker's Prometheus series. */
export interface MetricsOptions {
  /** The `name` label: which tracker (CAPTCHA type) the series describe. Default `'default'`. */
  name?: string
  /**
   * Constant labels on every series, e.g. `{ region: 'eu' }`: Prometheus label
   * names, not `name`, `outcome`, `window`, `status`, `alert`, `severity`, `job`, `instance`.
   */
  labels?: Record<string, string>
}

/**
 * One budget of a shared scrape (`renderMetrics`): a tracker, or a family standing
 * for its children (its own `name`, each child's labels; `labels` adds constant ones).
 */
export interface MetricsSource extends MetricsOptions {
  /** With a family, `name` is refused: the family's own is used. */
  tracker: Tracker | BudgetFamily<string>
}

/** What `registerMetrics` needs of a prom-client `Registry` (prom-client stays optional). */
export interface PromClientRegistry {
  registerMetric(metric: any): void
  removeSingleMetric(name: string): void
}

/** Labels and annotations for one severity's alerts (`alerting.page`, `alerting.ticket`). */
export interface PrometheusAlertRoute {
  /** Added to the alerts of this severity (may override `severity`). */
  labels?: Record<string, string>
  /** Added to the annotations (Prometheus templates allowed: `{{ $value }}`, `{{ $labels.slo }}`). */
  annotations?: Record<string, string>
  /** Leave this severity's pairs out. */
  disable?: boolean
}

/** Alert routing of one SLO, after Sloth's `alerting`. */
export interface PrometheusAlerting {
  /** The alert name prefix (default `CaptchaBudget`: `CaptchaBudgetFastBurn`, …). */
  name?: string
  /** Added to every alert of the SLO (e.g. `team`). */
  labels?: Record<string, string>
  /** Added to every alert of the SLO (e.g. `runbook_url`). */
  annotations?: Record<string, string>
  page?: PrometheusAlertRoute
  ticket?: PrometheusAlertRoute
}

/** The SLO of `prometheusRules()`: the tracker's config fields plus the `name` label and the SLO's identity. */
export interface PrometheusRulesOptions {
  /** The SLO's identity, the `slo` label of every series and alert. Default `<name>-<target %>-<period>`, e.g. `turnstile-95-30d`. */
  id?: string
  /** The `name` label the workers give `tracker.metrics({ name })`: the source. */
  name: string
  /** The SLO target, in (0, 1). */
  targetRate: number
  /** The SLO period in ms. */
  windowMs: number
  /** Custom alert pairs (default: the tracker's default policy for `windowMs`, with its gates and hold/resolve rule). */
  alerts?: Array<AlertRuleConfig>
  /** No alert while the period holds fewer solves. Default 0. */
  minEvents?: number
  /** No pair fires with fewer failures in its long window. Default: the policy's, as the tracker's (5 for the default pairs but 4 for `budget-spend`, 0 for custom ones). */
  minFailures?: number
  /** The workers' `resolutionMs`, if they set it: custom alert windows are rounded to it. */
  resolutionMs?: number
  /** Labels of the SLO's info series `captcha_budget:slo_info` and of every alert (e.g. `team`, `service`). */
  labels?: Record<string, string>
  /** Alert routing: labels and annotations, per severity. */
  alerting?: PrometheusAlerting
  /** A description, on the info series. */
  description?: string
  /**
   * Judge the SLO per label set (Pyrra's `grouping`; a BudgetFamily's `labelNames`,
   * e.g. `['type', 'site']`): every recording sums `by (name, type, site)`, each alert fires per set.
   */
  grouping?: string[]
}

/** An SLO of `prometheusRules()` over any PromQL SLI (Sloth's `events`) instead of the solve counter: `id` required, `name` optional. */
export interface PrometheusSliRulesOptions extends Omit<PrometheusRulesOptions, 'id' | 'name'> {
  /** The SLO's identity, the `slo` label of every series and alert. */
  id: string
  /** A source name for the info series, if there is one. */
  name?: string
  /** The error and total queries. */
  sli: PrometheusSli
}

/** An SLI in PromQL: per-second rates of errors and of all events, each with `{{.window}}` as its range. */
export interface PrometheusSli {
  /** The errors, e.g. `sum(rate(http_requests_total{code=~"5.."}[{{.window}}]))`. */
  errorQuery: string
  /** All events, e.g. `sum(rate(http_requests_total[{{.window}}]))`. */
  totalQuery: string
}

/** How `prometheusRules()` writes the rules. */
export interface PrometheusRulesFormat {
  /** The scrape interval in ms (whole seconds): no alert window is shorter than four. Default 15 000. */
  scrapeIntervalMs?: number
  /** The rule group's interval for `periodRules: 'optimised'`, in ms (whole seconds). Default 60 000. */
  evaluationIntervalMs?: number
  /** `'exact'` (default): the period from the raw counters; `'optimised'`: from recorded short-window increases. */
  periodRules?: 'exact' | 'optimised'
  /** `'rules'` (default): a rule file; `'prometheus-operator'`: a PrometheusRule object. */
  format?: 'rules' | 'prometheus-operator'
  /** `metadata.namespace` of the PrometheusRule. */
  namespace?: string
  /** `'sloth'`: also record Sloth's series and info names (`slo:sli_error:ratio_rate5m`, `sloth_slo_info`, …) for its dashboards. */
  compat?: 'sloth'
  /** The PrometheusRule's `metadata.name` (default `captcha-budget-<id>`, or `captcha-budget-slos`) and extra Kubernetes labels. */
  metadata?: { name?: string; labels?: Record<string, string> }
}

/**
 * The Prometheus text exposition (format 0.0.4) of several trackers and families in one
 * scrape, told apart by their `name` (and `labels`): each metric's HELP and TYPE once.
 */
export declare function renderMetrics(sources: Array<MetricsSource>): string

/**
 * Adds the series of `tracker.metrics()` to a prom-client registry, read at
 * each scrape through `collect()`. Returns a function that removes them.
 */
export declare function registerMetrics(
  tracker: Tracker,
  registry: PromClientRegistry,
  options?: MetricsOptions,
): () => void

/** The Content-Type of `metrics()` output. */
export declare const METRICS_CONTENT_TYPE: string

/**
 * Prometheus rules (YAML) for one SLO or several across all instances:
 * recording rules labelled with the SLO (`slo`), one multiwindow burn-rate
 * alert per pair and one for an absent source.
 */
export declare function prometheusRules(
  slo: PrometheusRulesOptions | PrometheusSliRulesOptions | Array<PrometheusRulesOptions | PrometheusSliRulesOptions>,
  options?: PrometheusRulesFormat,
): string

declare module './native' {
  interface ErrorBudgetTracker {
    /** This tracker's Prometheus series, text exposition format 0.0.4. */
    metrics(options?: MetricsOptions): string
  }
}

// ── config.fleet: one budget for the whole fleet through Redis (lib/fleet/) ──

/** Where a fleet's window lives: `config.fleet`. */
export interface FleetConfig {
  /** A connected ioredis client (Redis or Cluster) or node-redis (v5+) client; the tracker never closes it. */
  redis: object
  /** The budget's name in Redis; workers with the same key share one window. No `{` or `}`. */
  key: string
  /** Background sync period, ms: 0 (only `sync()`) or 10 to 3 600 000. Default 1000. */
  syncMs?: number
  /** Fleet bucket width, ms: a multiple of `resolutionMs` up to `windowMs`. Default: the smallest such multiple ≥ windowMs / 1440. */
  bucketMs?: number
  /** A sync without a reply within this many ms fails (and is retried, exactly once). Default max(2 × syncMs, 2000). */
  timeoutMs?: number
  /** How far this worker's clock may be from the Redis server's `TIME`, ms (0 to 604 800 000); a sync beyond is refused. Default windowMs / 10, from 1000 to 60 000. */
  maxSkewMs?: number
}

/** `report().fleet` and what `sync()` resolves to. */
export interface FleetInfo {
  /** `config.fleet.key`. */
  key: string
  /** This worker's id in Redis: host:pid:random. */
  worker: string
  /** Workers that synced within the last 3 × max(syncMs, timeoutMs), as of the last sync (this one included). */
  workers: number
  /** The fleet bucket width, ms. */
  bucketMs: number
  /** The tracker's time of the last successful sync, epoch ms; null before the first. */
  syncedAt: number | null
  /** True until the first sync and while syncs fail: the view is the last fleet window plus this worker's own solves. */
  stale: boolean
  /** Since when the view is stale (the creation time before a first sync), epoch ms; null when not stale. */
  staleSince: number | null
  /** Solves recorded here and not acknowledged by Redis yet: what this worker would lose if it died now. */
  unsent: { successes: number; failures: number }
  /** The message of the last failed sync, null after a successful one. */
  lastError: string | null
}

/** A failed fleet sync (`code` 'ERR_FLEET_SYNC'; `cause` the client's error): `sync()`'s rejection and the 'fleet-error' event. */
export declare class FleetSyncError extends Error {
  readonly code: 'ERR_FLEET_SYNC'
  /** `config.fleet.key`. */
  readonly key: string
  /** When the store refused this worker's clock: this clock minus the Redis server's, ms. */
  readonly skewMs?: number
}

/**
 * What `on('incident')` listeners receive (lib/incidents.js): the per-pair alert
 * events grouped into incidents. Called when an incident opens (the first pair
 * firing while none is open), once if it escalates from ticket to page, and once
 * when its last firing pair resolves.
 */
export interface Incident {
  /** 1, 2, … per tracker: the same for every event of one incident. */
  id: number
  /** `'open'`, `'escalated'` (ticket → page) or `'resolved'`. */
  state: 'open' | 'escalated' | 'resolved'
  /** The incident's severity: the first pair's, `'page'` once escalated. */
  severity: AlertSeverity
  /** When its first pair fired, epoch ms. */
  openedAt: number
  /** The moment of this event (the causing pair event's `at`), epoch ms. */
  at: number
  /** The pair whose alert or resolve caused this event. */
  pair: string
  /** The pairs firing after this event (empty once resolved), in firing order. */
  firing: string[]
  /** The causing pair event's evidence. */
  evidence: AlertEvidence
  /** The causing pair event's reason. */
  reason: string
  /** A family's incident, with `attribution`: whose fault it is (`family.blame()` when the listener is called). */
  blame?: Blame | null
}

/** `family.blame()`: the label (its name) and the value at fault. */
export interface Blame {
  readonly label: string
  readonly value: string
}

declare module './native' {
  interface TrackerConfig {
    /** One budget for the whole fleet through Redis; cannot be combined with `shared`, `persist` or `snapshot`. */
    fleet?: FleetConfig
  }
  interface BudgetReport {
    /** Present with `config.fleet`. */
    fleet?: FleetInfo
  }
  interface ErrorBudgetTracker {
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
}

// ── BudgetFamily: many budgets keyed by labels (lib/family/) ──

import type { BudgetEvent, BudgetListener } from './native'

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

/** `family.fleet` and what `family.sync()` resolves to. */
export interface FamilyFleetInfo {
  key: string
  /** This worker's id in Redis: host:pid:random. */
  worker: string
  /** Workers that synced within the last 3 × max(syncMs, timeoutMs), as of the last sync. */
  workers: number
  bucketMs: number
  /** The family's time of the last successful sync, epoch ms; null before the first. */
  syncedAt: number | null
  /** True until the first sync and while syncs fail. */
  stale: boolean
  staleSince: number | null
  lastError: string | null
}

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
  /** Every child's Prometheus series, labelled with the family's `name` and the child's labels. */
  metrics(): string
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

/** Adds every child of `family` (read at each scrape: children created later too) to a prom-client registry. */
export declare function registerMetrics(family: BudgetFamily, registry: PromClientRegistry, options?: { labels?: Record<string, string> }): () => void
