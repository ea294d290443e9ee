'use strict'
// The one place where a URL or a body from elsewhere becomes text for an error,
// a warning or a log line (lib/providers/solver.js, lib/cli/gate/prometheus.js,
// lib/cli/gate/, lib/cli/): credentials never come out. A URL's
// user:password@ becomes ***@, the value of a query parameter that carries a
// secret (key, password, token, …) becomes ***, and every secret the caller
// knows (the CaptchaAI API key) is masked wherever it appears, raw or
// percent-encoded: a server that echoes the request (`Cannot GET
// /res.php?key=…`, an `error_text` quoting it) cannot leak it either.

/** What a secret is replaced with. */
const MASK = '***'
// Query parameters whose value is a credential (lower case; matched case-insensitively).
const SECRET_PARAMS = ['key', 'apikey', 'api_key', 'access_token', 'token', 'auth', 'password', 'pass', 'passwd', 'pwd', 'secret', 'sig', 'signature']
const SECRET_PARAM = new RegExp(`([?&;](?:${SECRET_PARAMS.join('|')})=)[^&;#\\s"'<>]*`, 'gi')
// scheme://user:password@ or scheme://user@, up to the authority's last @ (a password may hold one).
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^/?#\s"'<>]*@/gi

/** The forms a secret can take in a body or a URL: raw, percent-encoded, form-encoded. */
function secretForms(secrets) {
  const forms = new Set()
  for (const secret of secrets) {
    if (typeof secret !== 'string' || secret === '') continue
    forms.add(secret)
    forms.add(encodeURIComponent(secret))
    forms.add(new URLSearchParams({ s: secret }).toString().slice(2))
  }
  // Longest first, so that a form containing another is masked whole.
  return [...forms].sort((a, b) => b.length - a.length)
}

/**
 * `text` with credentials masked: URL user-info, secret query parameters, and
 * each of `secrets` wherever it appears. Anything not a string is made one first.
 * @param {unknown} text
 * @param {string[]} [secrets]
 * @returns {string}
 */
function redact(text, secrets = []) {
  let out = String(text)
  for (const form of secretForms(secrets)) out = out.split(form).join(MASK)
  return out.replace(USERINFO, `$1${MASK}@`).replace(SECRET_PARAM, `$1${MASK}`)
}

/**
 * `text` with the password of every URL in it replaced by `***`, the user kept
 * (`redis://user:***@host`): the fleet's messages, whose URLs name a Redis user
 * worth seeing and carry no secret query parameters.
 * @param {unknown} text
 * @returns {string}
 */
function maskPasswords(text) {
  return String(text).replace(/\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/]*):[^\s@/]*@/gi, `$1$2:${MASK}@`)
}

/**
 * A URL (string or URL object, valid or not) as it may be quoted: `redact` of
 * its text, so user:password@ and secret parameters are masked.
 * @param {string | URL} url
 * @param {string[]} [secrets]
 * @returns {string}
 */
function redactUrl(url, secrets = []) {
  const text = String(url instanceof URL ? url.href : url)
  // Without a scheme (`user:password@host`), the user-info starts the text.
  return redact(text.replace(/^(?![a-z][a-z0-9+.-]*:\/\/)[^/?#\s]*@/i, `${MASK}@`), secrets)
}

/**
 * The secrets a URL given on the command line carries, to mask wherever a client
 * library's error might quote them: its user-info, password, and their decoded
 * forms; found even when the URL does not parse (`user:password@host`).
 * @param {string | URL} url
 * @returns {string[]}
 */
function urlSecrets(url) {
  const text = String(url instanceof URL ? url.href : url)
  const m = /^(?:[a-z][a-z0-9+.-]*:\/\/)?([^/?#\s]*)@/i.exec(text)
  if (m === null || m[1] === '') return []
  const userinfo = m[1]
  const colon = userinfo.indexOf(':')
  const password = colon === -1 ? '' : userinfo.slice(colon + 1)
  const decode = (x) => {
    try {
      return decodeURIComponent(x)
    } catch {
      return x
    }
  }
  // A lone user-info may be a token (http://TOKEN@host): a secret too.
  return [...new Set([userinfo, decode(userinfo), password, decode(password)])].filter((x) => x !== '')
}

/**
 * A body from elsewhere, redacted, cut to `max` characters (after redaction, so
 * a secret cut in half cannot show its first half) and quoted as JSON, so that
 * control characters and line breaks cannot forge log lines.
 * @param {string} text
 * @param {string[]} [secrets]
 * @param {number} [max]
 * @returns {string}
 */
function quoteBody(text, secrets = [], max = 80) {
  const clean = redact(text, secrets)
  return JSON.stringify(clean.length > max ? `${clean.slice(0, max)}…` : clean)
}

// The built-in error classes: a copy keeps one of these as its prototype; another
// class's (undici's, a DOMException's, whose getters refuse a copy) becomes Error with its name.
const BUILT_IN_ERRORS = new Set([Error, TypeError, RangeError, SyntaxError, ReferenceError, EvalError, URIError, AggregateError].map((c) => c.prototype))
/** How deep redactError copies causes (fetch's: its TypeError, undici's or the system's error, an AggregateError's). */
const MAX_ERROR_DEPTH = 8

/**
 * A copy of an error, to keep as another's `cause`, with credentials masked as
 * `redact` does: its message and stack, every own string property (undici's
 * ERR_INVALID_URL holds the URL it was given, `?key=…`, as `input` and `base`), its
 * `cause` and an AggregateError's `errors` copied the same way; any other object it
 * holds (a socket, a request, a response) is left off, since it may quote the
 * request. A string is redacted, another primitive kept, any other object dropped
 * (undefined).
 * @param {unknown} value
 * @param {string[]} [secrets]
 * @returns {unknown}
 */
function redactError(value, secrets = [], depth = 0) {
  if (typeof value === 'string') return redact(value, secrets)
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return value
  if (Array.isArray(value)) return value.map((item) => redactError(item, secrets, depth))
  if (!(value instanceof Error) || depth >= MAX_ERROR_DEPTH) return undefined
  const copy = new Error(redact(value.message, secrets))
  const proto = Object.getPrototypeOf(value)
  if (BUILT_IN_ERRORS.has(proto)) Object.setPrototypeOf(copy, proto)
  else Object.defineProperty(copy, 'name', { value: redact(value.name, secrets), writable: true, enumerable: false, configurable: true })
  // The original's stack (where it was thrown), never this copy's own (where it was copied).
  const stack = Object.getOwnPropertyDescriptor(value, 'stack')?.value
  const shownStack = typeof stack === 'string' ? redact(stack, secrets) : `${copy.name}: ${copy.message}`
  Object.defineProperty(copy, 'stack', { value: shownStack, writable: true, enumerable: false, configurable: true })
  for (const name of Object.getOwnPropertyNames(value)) {
    if (name === 'message' || name === 'stack') continue
    const own = Object.getOwnPropertyDescriptor(value, name)
    if (!('value' in own)) continue // a getter is not called: it may throw, or build the text anew
    const kept = name === 'cause' ? redactError(own.value, secrets, depth + 1) : redactError(own.value, secrets, depth + (Array.isArray(own.value) ? 1 : 0))
    if (kept === undefined && own.value !== undefined) continue
    Object.defineProperty(copy, name, { value: kept, writable: true, enumerable: own.enumerable, configurable: true })
  }
  return copy
}

module.exports = { redact, maskPasswords, redactUrl, urlSecrets, quoteBody, redactError, MASK, SECRET_PARAMS }
