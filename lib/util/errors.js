'use strict'
// The error classes of the JavaScript parts (guard, solver) and the helpers that
// build the package's argument errors: a TypeError / RangeError with the same
// `code`s the native addon uses (ERR_INVALID_ARG_TYPE, ERR_INVALID_ARG_VALUE, ERR_OUT_OF_RANGE).
const { inspect } = require('node:util')
const { didYouMean } = require('./suggest.js')

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
  const err = new TypeError(`${member} needs an ErrorBudgetTracker as this, got ${got}${how}`)
  err.code = 'ERR_INVALID_THIS'
  return err
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

/** A TypeError with code ERR_INVALID_ARG_TYPE. */
function invalidArgType(message) {
  const err = new TypeError(message)
  err.code = 'ERR_INVALID_ARG_TYPE'
  return err
}

/** A RangeError with code ERR_OUT_OF_RANGE. */
function outOfRange(message) {
  const err = new RangeError(message)
  err.code = 'ERR_OUT_OF_RANGE'
  return err
}

/**
 * A TypeError with code ERR_INVALID_ARG_VALUE (as Node throws it): a value of the right type
 * that is not allowed — an unknown key or choice, or a combination (two sources with the same labels).
 */
function invalidArgValue(message) {
  const err = new TypeError(message)
  err.code = 'ERR_INVALID_ARG_VALUE'
  return err
}

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
  describe,
  invalidThis,
  thrownText,
  printable,
  invalidArgType,
  outOfRange,
  invalidArgValue,
  unknownKey,
  checkOptionsObject,
  integerOption,
}
