// Types of the solver clients and failover (lib/providers/solver.js, lib/providers/create-task.js,
// lib/providers/failover.js, lib/providers/failover-family.js).
import type { ErrorBudgetTracker } from '../../native.js'
import type { BudgetFamily, FamilyLabels } from './family.js'
import type { AttemptOutcome, ProviderName, WhenExhausted } from './guard.js'
import type { Blame } from './incidents.js'

/**
 * A failed CaptchaAI call: `code` is the service's (`'ERROR_ZERO_BALANCE'`,
 * `'ERROR_CAPTCHA_UNSOLVABLE'`, …), or `'ERR_NETWORK'` (no answer; `cause` is
 * a copy of fetch's error with the API key masked), or `'ERR_BAD_RESPONSE'` (not
 * the protocol's JSON, a redirect, a ready answer without a token).
 */
export declare class SolveError extends Error {
  constructor(code: string, message: string, details?: { stage: 'submit' | 'result'; taskId?: string | null; httpStatus?: number | null; cause?: unknown })
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
export type SolveTask<M extends string = string> = { method: M } & (M extends keyof SolveTaskParams ? SolveTaskParams[M] : {}) & {
    [param: string]: string | number | boolean | undefined
  }

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
  solve<M extends string>(task: SolveTask<M>, options: { labels: Partial<FamilyLabels<L>>; critical?: boolean }): Promise<SolveResult & { provider: string }>
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
