'use strict'
// What a rejected solve attempt was: one of the four outcomes (lib/guard/outcomes.js),
// from the caller's classifier, else the provider's profile (lib/guard/profiles.js),
// else 'failure'. Kept apart from lib/guard/guard.js: the guard asks one question,
// classify(), and records what it answers.

const { SolveError, describe, thrownText } = require('../util/errors.js')
const { meaning } = require('./profiles.js')

/** The outcomes of an attempt, as a classifier may name them. */
const OUTCOMES = Object.freeze(['success', 'failure', 'excluded', 'capacity'])

// A provider's code inside a client's prose ('2captcha error: ERROR_…', an
// APIError's message): the first code-looking word.
// (At most 64 characters: a code is a short word; a server's longer text is not one.)
const CODE_IN_TEXT = /\b(ERROR: 100[1-5]|ERROR_[A-Z0-9_]{1,58}|MAX_USER_TURN|IP_BANNED|WRONG_CAPTCHA_ID)\b/
// A string `code` that is a provider's code (Node's own, such as ECONNRESET, are no provider's).
const PROVIDER_CODE = new RegExp(`^${CODE_IN_TEXT.source.replaceAll('\\b', '')}$`)
// A field that holds nothing but a code: Anti-Captcha's thrown string, a createTask
// answer's errorCode, CapMonster's client's `error` (its code without ERROR_, or 'Unknown').
const WHOLE_CODE = /^(?:ERROR: 100[1-5]|[A-Za-z][A-Za-z0-9_]{0,63})$/
// A client's prose is one short line ('Error: 2captcha error: ERROR_WRONG_USER_KEY',
// 47 characters). A longer text, several lines or markup is a body from elsewhere
// (a proxy's 502 page, which @2captcha/captcha-solver puts whole in `err` and
// `message`): a code it names is not the service's answer.
const MAX_PROSE = 120
const NOT_PROSE = /[\r\n<>]/

// A code as an Error's `name` (rucaptcha-2captcha's `e.name = data.request`, its
// message the service's prose): upper case, as every provider writes its codes, so
// a class's name (Error, TypeError, AbortError, TimeoutError, SolveError, APIError)
// is never taken for one.
const NAME_CODE = /^(?:ERROR: 100[1-5]|[A-Z][A-Z0-9_]{1,63})$/

/**
 * `value[key]`, or undefined when reading it throws (a throwing getter, a Proxy's
 * trap, a revoked Proxy): a rejection that cannot be read has no code, and reading
 * it must not throw inside guard()'s settle path (the attempt would never settle).
 */
function readField(value, key) {
  try {
    return value[key]
  } catch {
    return undefined
  }
}

/** `value instanceof Class`, false when the check throws (a revoked Proxy, a throwing getPrototypeOf trap). */
function isInstance(value, Class) {
  try {
    return value instanceof Class
  } catch {
    return false
  }
}

/** `text` when it is a code alone (trimmed), else null. */
function wholeCode(text) {
  const trimmed = text.trim()
  return WHOLE_CODE.test(trimmed) ? trimmed : null
}

/** The code in a client's short prose, else null (no code, or a body rather than prose). */
function codeInProse(text) {
  const trimmed = text.trim()
  if (trimmed.length > MAX_PROSE || NOT_PROSE.test(trimmed)) return null
  const match = CODE_IN_TEXT.exec(trimmed)
  return match === null ? null : match[1]
}

// How each field of a rejection holds a code: `err` and `errorCode` the code alone, a
// string `code` only a provider's code, `error` (and a bare string) the code alone or a
// client's short prose, `message` prose.
const FIELDS = [
  ['err', wholeCode],
  ['errorCode', wholeCode],
  ['code', (text) => (PROVIDER_CODE.test(text.trim()) ? text.trim() : null)],
  ['error', (text) => wholeCode(text) ?? codeInProse(text)],
]

/**
 * The provider's error code a client's rejection carries, or null: a bare
 * string (Anti-Captcha's client), the built-in client's SolveError (its `code`
 * alone), an Error with `err` (2Captcha's APIError, whose `code` is a number),
 * `errorCode` (the createTask protocol's field) or a string `code` holding an
 * ERROR_… code (Node's own codes such as ECONNRESET are no provider's), an object
 * with `error` (puppeteer-extra-plugin-recaptcha's result, CapMonster's
 * CaptchaResult), an upper-case `name` (rucaptcha-2captcha's), else a code in
 * the message. A value that cannot be read (a throwing getter, a revoked Proxy) has none.
 * @param {unknown} rejection
 * @returns {string | null}
 */
function codeOf(rejection) {
  if (typeof rejection === 'string') return wholeCode(rejection) ?? codeInProse(rejection)
  if (rejection === null || typeof rejection !== 'object') return null
  // The package's own client: its `code` is the provider's answer or one of the
  // package's ERR_… codes (no provider's). Its message may quote a server's body — a
  // 502 page naming ERROR_KEY_DOES_NOT_EXIST — which is not the provider's answer.
  if (isInstance(rejection, SolveError)) {
    const code = readField(rejection, 'code')
    return typeof code === 'string' && !code.startsWith('ERR_') && WHOLE_CODE.test(code) ? code : null
  }
  for (const [field, read] of FIELDS) {
    const value = readField(rejection, field)
    if (typeof value === 'string') {
      const code = read(value)
      if (code !== null) return code
    }
  }
  const name = readField(rejection, 'name')
  if (typeof name === 'string' && NAME_CODE.test(name)) return name
  const message = readField(rejection, 'message')
  return typeof message === 'string' ? codeInProse(message) : null
}

/** The profile's row of `code`, also when a client dropped its ERROR_ prefix (CapMonster's). */
function rowOf(provider, code) {
  return meaning(provider, code) ?? (code.startsWith('ERROR') ? null : meaning(provider, `ERROR_${code}`))
}

// Codes already warned about, per provider: one process warning per code. Bounded:
// a server answering ever new codes must not grow it (or the warnings) without end.
const warned = new Set()
const MAX_WARNED = 256

/**
 * The outcome of a rejection at `provider` (undefined: no profile): the
 * profile's row, `{ outcome, backoffMs, code }`. A code the profile does not
 * list, or no code at all, is a failure — an unknown answer must not hide an
 * outage —, with one process warning per unlisted code naming it.
 */
function byProfile(provider, rejection) {
  const code = codeOf(rejection)
  if (provider === undefined || code === null) return { outcome: 'failure', backoffMs: 0, code }
  const row = rowOf(provider, code)
  if (row !== null) return { outcome: row.outcome, backoffMs: row.backoffMs, code }
  const key = `${provider}\u0000${code}`
  if (!warned.has(key) && warned.size < MAX_WARNED) {
    warned.add(key)
    process.emitWarning(`guard: ${provider} answered ${code}, which its profile does not list; counted as a failure`, 'BudgetGuardWarning')
  }
  return { outcome: 'failure', backoffMs: 0, code }
}

/**
 * The outcome of a rejection: the classifier's verdict when there is one
 * (true: 'failure'; false: 'excluded'; or one of OUTCOMES by name), else the
 * provider's profile. A classifier that throws or answers anything else counts
 * the rejection as a failure, with a process warning: a broken classifier must
 * not hide an outage. The profile's back-off applies whatever the verdict.
 * @returns {{ outcome: string, backoffMs: number, code: string | null }}
 */
function classify(classifier, provider, rejection) {
  const profile = byProfile(provider, rejection)
  if (classifier === undefined) return profile
  let verdict
  try {
    verdict = classifier(rejection)
  } catch (classifierError) {
    process.emitWarning(`guard: countsAsFailure threw (${thrownText(classifierError)}); the rejection counts as a failure`, 'BudgetGuardWarning')
    return { ...profile, outcome: 'failure' }
  }
  if (verdict === true) return { ...profile, outcome: 'failure' }
  if (verdict === false) return { ...profile, outcome: 'excluded' }
  if (OUTCOMES.includes(verdict)) return { ...profile, outcome: verdict }
  // describe() looks at the verdict (Array.isArray): a revoked Proxy throws there.
  let got
  try {
    got = describe(verdict)
  } catch {
    got = 'an unreadable value'
  }
  process.emitWarning(
    `guard: countsAsFailure must return a boolean or one of ${OUTCOMES.map((o) => `'${o}'`).join(', ')}, got ${got}; the rejection counts as a failure`,
    'BudgetGuardWarning',
  )
  return { ...profile, outcome: 'failure' }
}

module.exports = { OUTCOMES, codeOf, classify, isInstance }
