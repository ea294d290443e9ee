'use strict'
// The one home of the JavaScript parts' errors: every error class (guard, solver,
// failover, fleet, SLO specs, the CLI's) and one helper per code for the plain ones
// (the argument errors carry the same `code`s the native addon uses:
// ERR_INVALID_ARG_TYPE, ERR_INVALID_ARG_VALUE, ERR_OUT_OF_RANGE). Every code the
// JavaScript sets is set in this file; __test__/error-table.spec.js reads it here.
const { inspect } = require('node:util')
const { didYouMean } = require('./suggest.js')
const { maskPasswords } = require('./redact.js')

/** `n` and the word that agrees with it (`one` for 1, else `many`): "1 failure", "0 failures". */
const counted = (n, one, many) => `${n} ${n === 1 ? one : many}`

/**
 * Thrown (as a rejection) by `tracker.guard()` when the budget is exhausted and
 * the attempt is not admitted (throttled, or refused): the guarded function was
 * not called and nothing was recorded.
 */
class BudgetExhaustedError extends Error {
  /**
   * @param {import('../../index').BudgetReport} report the report at the moment of the refusal
   * @param {number | null} [retryAfterMs] when the next attempt may be admitted, ms from now (null: not known)
   */
  constructor(report, retryAfterMs = null) {
    const when = retryAfterMs === null ? '' : `; throttled: the next probe may run in ${retryAfterMs} ms`
    super(
      `error budget exhausted: ${counted(report.failures, 'failure', 'failures')} of ${counted(report.total, 'solve', 'solves')} in the window ` +
        `(SLO ${report.sloTarget})${when}; not calling fn — pass { critical: true } to run it anyway`,
    )
    /** Always `'EBUDGET_EXHAUSTED'`. */
    this.code = 'EBUDGET_EXHAUSTED'
    /** The tracker's report when the call was refused. */
    this.report = report
    /**
     * When an attempt may next be admitted, ms on the tracker's clock from the
     * refusal: the next probe of a throttling guard; null under `'refuse'`
     * (only failures leaving the window end it: at the latest one window on).
     */
    this.retryAfterMs = retryAfterMs
  }
}
BudgetExhaustedError.prototype.name = 'BudgetExhaustedError'

/**
 * Thrown (as a rejection) by `tracker.guard()` while a provider's published
 * back-off runs (after ERROR_NO_SLOT_AVAILABLE, ERROR_ZERO_BALANCE, …: its
 * profile, lib/guard/profiles.js): the guarded function was not called and nothing
 * was recorded. Sending anyway would get the account banned.
 */
class ProviderBackoffError extends Error {
  /**
   * @param {string} provider the profile's name
   * @param {string} providerCode the code that started the back-off
   * @param {number} retryAfterMs when the back-off ends, ms on the tracker's clock from the refusal
   */
  constructor(provider, providerCode, retryAfterMs) {
    super(`${provider} answered ${providerCode}: its published back-off holds attempts for ${retryAfterMs} ms more; not calling fn`)
    /** Always `'ERR_PROVIDER_BACKOFF'`. */
    this.code = 'ERR_PROVIDER_BACKOFF'
    /** The provider whose back-off runs. */
    this.provider = provider
    /** The provider's code that started it. */
    this.providerCode = providerCode
    /** When the next attempt may run, ms on the tracker's clock from the refusal. */
    this.retryAfterMs = retryAfterMs
  }
}
ProviderBackoffError.prototype.name = 'ProviderBackoffError'

/**
 * The rejection of `tracker.guard()` when `timeoutMs` passed before the guarded
 * function settled. It is also the `reason` of the AbortSignal given to that function.
 */
class GuardTimeoutError extends Error {
  /** @param {number} timeoutMs the deadline that passed */
  constructor(timeoutMs) {
    super(`guarded call timed out after ${timeoutMs} ms`)
    /** Always `'ETIMEDOUT'`. */
    this.code = 'ETIMEDOUT'
    /** The deadline that passed, ms. */
    this.timeoutMs = timeoutMs
  }
}
GuardTimeoutError.prototype.name = 'GuardTimeoutError'

/**
 * A failed CaptchaAI call. `code` is the service's own code (`ERROR_ZERO_BALANCE`,
 * `ERROR_CAPTCHA_UNSOLVABLE`, …) when the service answered one, `'ERR_NETWORK'`
 * when no answer came (connection refused, reset, DNS; `cause` holds fetch's
 * error), `'ERR_BAD_RESPONSE'` when the answer is not the protocol's JSON.
 */
class SolveError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   * @param {{ stage: 'submit' | 'result', taskId?: string | null, httpStatus?: number | null, cause?: unknown }} [details]
   */
  constructor(code, message, { stage, taskId = null, httpStatus = null, cause } = {}) {
    super(message, cause === undefined ? undefined : { cause })
    this.code = code
    /** `'submit'` (in.php) or `'result'` (res.php). */
    this.stage = stage
    /** The service's task id, once in.php gave one; else null. */
    this.taskId = taskId
    /** The HTTP status of the answer, null when there was none. */
    this.httpStatus = httpStatus
  }
}
SolveError.prototype.name = 'SolveError'
/** The `code` of a SolveError when no answer came (connection refused, reset, DNS). */
SolveError.NETWORK = 'ERR_NETWORK'
/** The `code` of a SolveError when the answer is not the protocol's. */
SolveError.BAD_RESPONSE = 'ERR_BAD_RESPONSE'

/**
 * The rejection of a family's failover when the site, not a provider, is blamed
 * (`family.blame()`: it fails on every provider).
 */
class FaultError extends Error {
  /**
   * @param {string} message
   * @param {{ label: string, value: string }} blame
   */
  constructor(message, blame) {
    super(message)
    /** `'ESITE_FAULT'`: the site is blamed. */
    this.code = 'ESITE_FAULT'
    /** What `family.blame()` said. */
    this.blame = blame
  }
}
Object.defineProperty(FaultError.prototype, 'name', { value: 'FaultError', writable: true, configurable: true })

/**
 * A failed fleet sync: `code` 'ERR_FLEET_SYNC', `cause` the client's error (or the
 * store's refusal); `skewMs` (this clock minus the server's) when the clock
 * was refused. The message never shows a URL's password.
 */
class FleetSyncError extends Error {
  constructor(key, cause, reason = thrownText(cause), extra = {}) {
    super(maskPasswords(`fleet '${key}': sync failed: ${reason}`), { cause })
    this.code = 'ERR_FLEET_SYNC'
    this.key = key
    Object.assign(this, extra)
  }
}
FleetSyncError.prototype.name = 'FleetSyncError'

/** The code of the process warnings a fleet emits when a sync fails or a listener throws (docs/fleet.md). */
const FLEET_WARNING = 'CAPTCHA_BUDGET_FLEET'

/** An SLO document that cannot be read (lib/slo/): an ERR_INVALID_ARG_VALUE naming the file and the field. */
class SpecError extends Error {
  constructor(message) {
    super(message)
    this.name = 'SpecError'
    this.code = 'ERR_INVALID_ARG_VALUE'
  }
}

/** A bad command line: the CLI prints the message and exits 2 (never thrown to a library caller). */
class UsageError extends Error {
  constructor(message) {
    super(message)
    this.name = 'UsageError'
    this.code = 'ERR_USAGE'
  }
}

/** A bad line of a replayed log under --strict: the CLI prints it and exits 2 (never thrown to a library caller). */
class BadLineError extends Error {
  constructor({ line, message }) {
    super(`line ${line}: ${message}`)
    this.name = 'BadLineError'
    this.code = 'ERR_BAD_LINE'
    this.line = line
  }
}

/**
 * The registered symbol under which the package's own callers of the tracker's
 * constructor say what their caller calls the config (`'restore(json, options): options'`):
 * the native errors name each field inside it (src/args.rs `argument_name`).
 */
const ARGUMENT_NAME = Symbol.for('captcha-error-budget.argumentName')

/** The type named in an argument error, as the native addon names it ('null', 'array', typeof). */
function describe(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  return typeof value
}

/**
 * A tracker member (`report()`, `the total getter`) called on `receiver`, which is
 * not a tracker: a TypeError with code ERR_INVALID_THIS naming the member and, for
 * a method, how to call it.
 */
function invalidThis(member, receiver) {
  const not = 'that is not an ErrorBudgetTracker'
  let got
  if (receiver === undefined || receiver === null) got = String(receiver)
  else if (typeof receiver === 'object') got = `an object ${not}`
  else if (typeof receiver === 'function') got = `a function ${not}`
  else got = `a ${typeof receiver}`
  const how = member.endsWith('()') ? `: call it as tracker.${member.slice(0, -2)}(), or bind it to the tracker` : ''
  const message = `${member} needs an ErrorBudgetTracker as this, got ${got}${how}`
  return coded(new TypeError(message), 'ERR_INVALID_THIS')
}

/**
 * A thrown value as text for a warning or a message, whatever it is: an Error's
 * message, a string as is, anything else as util.inspect shows it (a Symbol, a
 * null-prototype object, an object whose toString throws). Never throws: a value
 * that cannot be looked at (a revoked Proxy, a throwing message getter) is named
 * by its type.
 * @param {unknown} value
 * @returns {string}
 */
function thrownText(value) {
  try {
    if (typeof value === 'string') return value
    if (value instanceof Error) {
      const message = value.message
      if (typeof message === 'string') return message
    }
    return inspect(value, { depth: 2, breakLength: Infinity })
  } catch {
    return `an unprintable ${value === null ? 'null' : typeof value}`
  }
}

/**
 * `text` safe to print in a message: the characters a terminal or a log would act
 * on (C0 and C1 controls, DEL, U+2028/U+2029, U+FEFF, U+FFFE/U+FFFF, lone surrogates,
 * and the bidirectional controls U+202A–U+202E and U+2066–U+2069, which reorder what a log shows)
 * written as \uXXXX escapes, everything else as it is.
 * @param {string} text
 * @returns {string}
 */
function printable(text) {
  return String(text).replace(
    /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
}

/** `err` with its `code` (and `extra`'s properties, such as `cause`) set: how each helper below makes its error. */
function coded(err, code, extra = {}) {
  err.code = code
  return Object.assign(err, extra)
}

/** A TypeError with code ERR_INVALID_ARG_TYPE. */
const invalidArgType = (message) => coded(new TypeError(message), 'ERR_INVALID_ARG_TYPE')

/** A RangeError with code ERR_OUT_OF_RANGE. */
const outOfRange = (message) => coded(new RangeError(message), 'ERR_OUT_OF_RANGE')

/**
 * A TypeError with code ERR_INVALID_ARG_VALUE (as Node throws it): a value of the right type
 * that is not allowed — an unknown key or choice, or a combination (two sources with the same labels).
 */
const invalidArgValue = (message) => coded(new TypeError(message), 'ERR_INVALID_ARG_VALUE')

/** An Error with code ERR_INVALID_STATE: a call the object is not set up for (`sync()` without a fleet). */
const invalidState = (message) => coded(new Error(message), 'ERR_INVALID_STATE')

/** An Error with code ERR_TRACKER_CLOSED: a call on a closed tracker or family. */
const trackerClosed = (message) => coded(new Error(message), 'ERR_TRACKER_CLOSED')

/** An Error with code ERR_SNAPSHOT_INVALID: a snapshot that cannot be restored. */
const snapshotInvalid = (message) => coded(new Error(message), 'ERR_SNAPSHOT_INVALID')

/** A TypeError with code ERR_CONSTRUCT_CALL_REQUIRED: a class called without `new`. */
const constructCallRequired = (message) => coded(new TypeError(message), 'ERR_CONSTRUCT_CALL_REQUIRED')

/** An Error with code ERR_MODULE_NOT_FOUND: the addon or an optional peer dependency is not installed. */
const moduleNotFound = (message, cause) => coded(new Error(message), 'ERR_MODULE_NOT_FOUND', cause === undefined ? {} : { cause })

/**
 * The error of an unknown `key` in an options object, the one every options check
 * throws: "unknown key 'timeout' in guard options; known keys: …; did you mean
 * 'timeoutMs'?", the closest of `known` suggested as the CLI suggests a misspelt
 * option (lib/util/suggest.js). `where` names the object; `prefix` goes first (the
 * function's name), `listed` replaces the list when the message words it otherwise.
 * @param {string} key
 * @param {readonly string[]} known
 * @param {string} where
 * @param {{ prefix?: string, listed?: string }} [wording]
 */
function unknownKey(key, known, where, { prefix = '', listed = known.join(', ') } = {}) {
  return invalidArgValue(`${prefix}unknown key '${key}' in ${where}; known keys: ${listed}${didYouMean(key, known)}`)
}

/**
 * Checks that `options` is undefined or a plain object with only `known` keys;
 * returns it (or `{}`). `where` names the argument in the message.
 */
function checkOptionsObject(options, known, where) {
  if (options === undefined) return {}
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw invalidArgType(`${where} must be an object, got ${describe(options)}`)
  }
  for (const key of Object.keys(options)) {
    if (!known.includes(key)) throw unknownKey(key, known, where)
  }
  return options
}

/** Checks an optional integer option in [min, max]; returns it or `fallback` when undefined. */
function integerOption(value, name, min, max, fallback) {
  if (value === undefined) return fallback
  if (typeof value !== 'number') throw invalidArgType(`${name} must be a number, got ${describe(value)}`)
  if (!Number.isInteger(value) || value < min || value > max) {
    throw outOfRange(`${name} must be an integer in [${min}, ${max}], got ${value}`)
  }
  return value
}

module.exports = {
  ARGUMENT_NAME,
  BudgetExhaustedError,
  ProviderBackoffError,
  GuardTimeoutError,
  SolveError,
  FaultError,
  FleetSyncError,
  FLEET_WARNING,
  SpecError,
  UsageError,
  BadLineError,
  describe,
  invalidThis,
  thrownText,
  printable,
  invalidArgType,
  outOfRange,
  invalidArgValue,
  invalidState,
  trackerClosed,
  snapshotInvalid,
  constructCallRequired,
  moduleNotFound,
  unknownKey,
  checkOptionsObject,
  integerOption,
}
