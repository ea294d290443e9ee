// Types of `tracker.guard()` (lib/guard/guard.js, lib/guard/throttle.js, lib/util/errors.js): its
// options and attempt, the throttle's state, and the errors it rejects with.
import type { BudgetReport } from '../../native.js'

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
