'use strict'
// A solver client under an error budget, for each provider of lib/guard/profiles.js:
// in.php / res.php here (CaptchaAI, 2Captcha), createTask / getTaskResult in
// lib/providers/create-task.js (Anti-Captcha, CapSolver, CapMonster), chosen by `provider`;
// its profile classifies each rejection. CaptchaAI speaks the 2captcha-compatible
// HTTP API: POST in.php (key, method, the method's parameters, json=1) answers
// {"status":1,"request":"<task id>"}; GET res.php?action=get&id=… answers
// {"status":0,"request":"CAPCHA_NOT_READY"} until {"status":1,"request":"<answer>"};
// errors are {"status":0,"request":"ERROR_…"}. Every solve is one tracker.guard()
// attempt, so it is recorded exactly once, and refused while the budget is exhausted.
const { setTimeout: sleep } = require('node:timers/promises')
const { SolveError, describe, invalidArgType, invalidArgValue, checkOptionsObject, integerOption } = require('../util/errors.js')
const { redactUrl, quoteBody } = require('../util/redact.js')
const { fetchAnswer, solveError, serverWords } = require('./provider-fetch.js')
const { PROVIDERS, PROVIDER_NAMES } = require('../guard/profiles.js')
const { createTaskClient } = require('./create-task.js')
const throttles = require('../guard/throttle.js')
const { createBadAnswerSender } = require('./bad-answer.js')
const { withReject } = require('./solve-result.js')

const SOLVER_OPTIONS = [
  'apiKey',
  'provider',
  'baseUrl',
  'tracker',
  'pollIntervalMs',
  'timeoutMs',
  'countsAsFailure',
  'whenExhausted',
  'minSolves',
  'probeIntervalMs',
  'reportBad',
]
const SOLVE_OPTIONS = ['critical']
const MAX_MS = 2 ** 31 - 1 // setTimeout's limit
// Parameters each known method cannot go without; other methods are passed through unchecked.
const REQUIRED_PARAMS = { turnstile: ['sitekey', 'pageurl'], userrecaptcha: ['googlekey', 'pageurl'], base64: ['body'] }
// Set by the client itself: a task may not override them.
const RESERVED_PARAMS = ['key', 'json']
/**
 * The most of an in.php / res.php answer read, in bytes after decompression: the
 * protocol's JSON is a status and a task id or a token (a few hundred bytes to
 * a few KiB). A longer body (an endless stream, a huge answer, a gzip bomb) is
 * cut off there, the request aborted, and the attempt fails with ERR_BAD_RESPONSE.
 */
const MAX_BODY_BYTES = 16 * 1024
// How much of error_text a message quotes.
const MAX_ERROR_TEXT = 200

/**
 * Service codes that are the caller's or the account's problem, not the solver's
 * unreliability: a wrong key, no free threads or funds, a banned IP, a malformed
 * request. They fail every call until a person fixes something, so they say
 * nothing about how reliably CAPTCHAs get solved, and burning the budget on
 * them would page for a configuration error and freeze the deploys that fix it.
 * Watch them separately (they reject every solve with their `code`).
 */
const CALLER_ERROR_CODES = Object.freeze([
  // the key and the account
  'ERROR_WRONG_USER_KEY',
  'ERROR_KEY_DOES_NOT_EXIST',
  'ERROR_ZERO_BALANCE',
  'ERROR_IP_NOT_ALLOWED',
  'ERROR_IP_BANNED',
  'IP_BANNED',
  'ERROR_TOO_MUCH_REQUESTS',
  'MAX_USER_TURN',
  // the request
  'ERROR_NO_SUCH_METHOD',
  'ERROR_BAD_PARAMETERS',
  'ERROR_PAGEURL',
  'ERROR_GOOGLEKEY',
  'ERROR_BAD_TOKEN_OR_PAGEURL',
  'ERROR_ZERO_CAPTCHA_FILESIZE',
  'ERROR_TOO_BIG_CAPTCHA_FILESIZE',
  'ERROR_WRONG_FILE_EXTENSION',
  'ERROR_IMAGE_TYPE_NOT_SUPPORTED',
  'ERROR_UPLOAD',
  'ERROR_CAPTCHAIMAGE_BLOCKED',
  'ERROR_BAD_PROXY',
  'ERROR_PROXY_CONNECTION_FAILED', // and any other ERROR_PROXY_… (defaultCountsAsFailure)
  'ERROR_WRONG_GOOGLEKEY',
  'ERROR_DOMAIN_NOT_ALLOWED',
  'ERROR_EMPTY_ACTION',
  'ERROR_TOKEN_EXPIRED',
  'ERROR_IP_ADDRES',
  // bans the client brought on itself (2Captcha's ERROR: 1001–1005)
  'ERROR: 1001',
  'ERROR: 1002',
  'ERROR: 1003',
  'ERROR: 1004',
  'ERROR: 1005',
  // Not here: ERROR_WRONG_CAPTCHA_ID / ERROR_WRONG_ID_FORMAT from res.php, since the
  // client polls only ids in.php gave it; the service losing its own task counts.
])
const callerCodes = new Set(CALLER_ERROR_CODES)

/**
 * The solver's default classifier: every rejection counts against the budget
 * except a SolveError whose code is in CALLER_ERROR_CODES. Unknown codes count:
 * a classifier that errs should err towards an alert, not a silent budget.
 * @param {unknown} error
 * @returns {boolean}
 */
function defaultCountsAsFailure(error) {
  return !(error instanceof SolveError && (callerCodes.has(error.code) || String(error.code).startsWith('ERROR_PROXY_')))
}

function checkBaseUrl(baseUrl) {
  if (typeof baseUrl !== 'string' && !(baseUrl instanceof URL)) {
    throw invalidArgType(`createSolver options.baseUrl must be a string or URL, got ${describe(baseUrl)}`)
  }
  let url
  try {
    url = new URL(String(baseUrl))
  } catch {
    throw invalidArgType(`createSolver options.baseUrl must be an absolute http(s) URL, got '${redactUrl(baseUrl)}'`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalidArgType(`createSolver options.baseUrl must be an http(s) URL, got '${redactUrl(baseUrl)}'`)
  }
  // fetch() refuses them (quoting the URL in its error), and they would show in
  // solver.baseUrl: the API key is the service's only credential.
  if (url.username !== '' || url.password !== '') {
    throw invalidArgValue(`createSolver options.baseUrl must not hold credentials (user:password@): got '${redactUrl(url)}'`)
  }
  // A trailing slash keeps a proxy's path prefix when in.php / res.php are resolved against it.
  if (!url.pathname.endsWith('/')) url.pathname += '/'
  return url
}

/** Whether `value` is a revoked Proxy: every look at one throws (Array.isArray too), without a code. */
function isRevokedProxy(value) {
  try {
    Array.isArray(value)
    return false
  } catch {
    return true
  }
}

function checkTask(task) {
  if (task === null || typeof task !== 'object' || Array.isArray(task)) {
    throw invalidArgType(`solve(task): task must be an object, got ${describe(task)}`)
  }
  if (typeof task.method !== 'string' || task.method === '') {
    throw invalidArgType(`solve(task): task.method must be a non-empty string, got ${describe(task.method)}`)
  }
  for (const name of REQUIRED_PARAMS[task.method] ?? []) {
    if (typeof task[name] !== 'string' || task[name] === '') {
      throw invalidArgType(`solve(task): task.${name} must be a non-empty string for method '${task.method}', got ${describe(task[name])}`)
    }
  }
  const params = new URLSearchParams()
  for (const [name, value] of Object.entries(task)) {
    if (RESERVED_PARAMS.includes(name)) throw invalidArgValue(`solve(task): task.${name} is set by the solver, not the task`)
    if (value === undefined) continue
    if (typeof value === 'boolean')
      params.set(name, value ? '1' : '0') // the API's flags are 0/1
    else if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) params.set(name, String(value))
    else throw invalidArgType(`solve(task): task.${name} must be a string, finite number or boolean, got ${describe(value)}`)
  }
  return params
}

// One request; the protocol's answer ({status, request}) or a SolveError
// (lib/providers/provider-fetch.js: redirects not followed, the answer bounded, every message
// redacted with the API key as a secret, since a server may echo the request).
// After the guard's deadline the signal is aborted: its reason is rethrown as is
// (the guard has already settled and ignores it).
async function call(url, init, signal, stage, taskId, apiKey, title) {
  const request = { signal, maxBytes: MAX_BODY_BYTES, apiKey, what: `${title} ${stage}`, stage, taskId }
  const { text, httpStatus } = await fetchAnswer(url, init, request)
  let body
  try {
    body = JSON.parse(text)
  } catch {
    body = undefined
  }
  const isAnswer =
    body !== null &&
    typeof body === 'object' &&
    (body.status === 0 || body.status === 1) &&
    (typeof body.request === 'string' || typeof body.request === 'number')
  if (!isAnswer) {
    const message = `${title} ${stage} answer is not the protocol's JSON (HTTP ${httpStatus}): ${quoteBody(text, [apiKey])}`
    throw solveError(apiKey, SolveError.BAD_RESPONSE, message, { stage, taskId, httpStatus })
  }
  return { body, httpStatus }
}

function serviceError({ body, httpStatus }, stage, taskId, apiKey, title) {
  // The code, task id and error_text are the server's words: redacted (they may quote
  // the request) and escaped by serverWords, error_text quoted as JSON and cut short.
  const code = String(body.request)
  const detail = typeof body.error_text === 'string' && body.error_text !== '' ? `: ${quoteBody(body.error_text, [apiKey], MAX_ERROR_TEXT)}` : ''
  const where = stage === 'submit' ? 'in.php' : `res.php (task ${serverWords(taskId, apiKey)})`
  return solveError(apiKey, code, `${title} ${where} answered ${serverWords(code, apiKey)}${detail}`, { stage, taskId, httpStatus })
}

/**
 * A solver client (the `provider`'s protocol) whose every `solve()` is one `tracker.guard()` attempt.
 * @param {{ apiKey: string, tracker: import('../../index').ErrorBudgetTracker, baseUrl?: string | URL,
 *   pollIntervalMs?: number, timeoutMs?: number, countsAsFailure?: (error: unknown) => boolean }} options
 * @returns {import('../../index').Solver}
 */
function createSolver(options) {
  if (options === undefined) throw invalidArgType('createSolver(options): options must be an object, got undefined')
  const opts = checkOptionsObject(options, SOLVER_OPTIONS, 'createSolver options')
  if (typeof opts.apiKey !== 'string') throw invalidArgType(`createSolver options.apiKey must be a non-empty string, got ${describe(opts.apiKey)}`)
  // A string of the wrong value (no key at all), not of the wrong type.
  if (opts.apiKey === '') throw invalidArgValue("createSolver options.apiKey must be a non-empty string, got ''")
  if (opts.tracker === null || typeof opts.tracker !== 'object' || typeof opts.tracker.guard !== 'function') {
    throw invalidArgType(`createSolver options.tracker must be an ErrorBudgetTracker, got ${describe(opts.tracker)}`)
  }
  if (opts.countsAsFailure !== undefined && typeof opts.countsAsFailure !== 'function') {
    throw invalidArgType(`createSolver options.countsAsFailure must be a function, got ${describe(opts.countsAsFailure)}`)
  }
  const apiKey = opts.apiKey
  const tracker = opts.tracker
  const pollIntervalMs = integerOption(opts.pollIntervalMs, 'createSolver options.pollIntervalMs', 1, MAX_MS, 5000)
  const timeoutMs = integerOption(opts.timeoutMs, 'createSolver options.timeoutMs', 1, MAX_MS, 180_000)
  // The provider's profile classifies each rejection (lib/guard/profiles.js) unless the caller's classifier does.
  const provider = opts.provider ?? 'captchaai'
  if (!PROVIDER_NAMES.includes(provider)) {
    const known = PROVIDER_NAMES.map((p) => `'${p}'`).join(', ')
    if (typeof provider !== 'string') throw invalidArgType(`createSolver options.provider must be one of ${known}, got ${describe(provider)}`)
    throw invalidArgValue(`createSolver options.provider must be one of ${known}, got '${provider}'`)
  }
  const countsAsFailure = opts.countsAsFailure
  if (opts.reportBad !== undefined && typeof opts.reportBad !== 'boolean') {
    throw invalidArgType(`createSolver options.reportBad must be a boolean, got ${describe(opts.reportBad)}`)
  }
  const reportBad = opts.reportBad === true
  const base = checkBaseUrl(opts.baseUrl ?? PROVIDERS[provider].baseUrl)
  // What the guard does while the budget is exhausted (lib/guard/throttle.js): passed to every solve.
  const whenExhausted = throttles.checkOptions(opts, 'createSolver options')
  const title = PROVIDERS[provider].title
  // Anti-Captcha, CapSolver and CapMonster speak createTask / getTaskResult (lib/providers/create-task.js).
  // Within the provider's published poll limit (2Captcha: about 20 res.php polls a
  // task): polls spaced so that the whole deadline holds no more than that.
  const maxPolls = PROVIDERS[provider].maxPolls
  const pollEveryMs = maxPolls === undefined ? pollIntervalMs : Math.max(pollIntervalMs, Math.ceil(timeoutMs / maxPolls))
  const createTask = PROVIDERS[provider].protocol === 'createTask' ? createTaskClient({ title, base, apiKey, pollIntervalMs: pollEveryMs }) : null
  // Bad answers reported to the provider (lib/providers/bad-answer.js), on the tracker's clock.
  const reports = createBadAnswerSender({ profile: PROVIDERS[provider], base, apiKey, now: () => tracker.now })
  const inUrl = new URL('in.php', base)
  const resUrl = new URL('res.php', base)

  async function run(params, signal) {
    params.set('key', apiKey)
    params.set('json', '1')
    const submitted = await call(inUrl, { method: 'POST', body: params }, signal, 'submit', null, apiKey, title)
    if (submitted.body.status !== 1) throw serviceError(submitted, 'submit', null, apiKey, title)
    const taskId = String(submitted.body.request)
    if (taskId === '') {
      throw solveError(apiKey, SolveError.BAD_RESPONSE, `${title} in.php answered status 1 without a task id`, {
        stage: 'submit',
        httpStatus: submitted.httpStatus,
      })
    }
    const poll = new URL(resUrl)
    poll.search = new URLSearchParams({ key: apiKey, action: 'get', id: taskId, json: '1' }).toString()
    for (;;) {
      await sleep(pollEveryMs, undefined, { signal })
      const result = await call(poll, { method: 'GET' }, signal, 'result', taskId, apiKey, title)
      // Status 1 with an empty answer (or whitespace alone) is no solve: recorded as a success, it would hide a service that answers nothing.
      if (result.body.status === 1 && String(result.body.request).trim() === '') {
        throw solveError(apiKey, SolveError.BAD_RESPONSE, `${title} res.php (task ${serverWords(taskId, apiKey)}) answered status 1 without an answer`, {
          stage: 'result',
          taskId,
          httpStatus: result.httpStatus,
        })
      }
      if (result.body.status === 1) return { taskId, answer: String(result.body.request) }
      if (result.body.request !== 'CAPCHA_NOT_READY') throw serviceError(result, 'result', taskId, apiKey, title)
    }
  }

  /**
   * Submits `task` and polls until the answer (a token, or an image's text).
   * Rejects with a SolveError (service code, ERR_NETWORK, ERR_BAD_RESPONSE), a
   * GuardTimeoutError after `timeoutMs`, a BudgetExhaustedError while the budget
   * is exhausted (unless `critical`), or a TypeError for a bad task (nothing sent
   * or recorded).
   */
  async function solve(task, solveOptions) {
    const { critical } = checkOptionsObject(solveOptions, SOLVE_OPTIONS, 'solve options')
    if (critical !== undefined && typeof critical !== 'boolean') {
      throw invalidArgType(`solve options.critical must be a boolean, got ${describe(critical)}`)
    }
    const guardOptions = { timeoutMs, critical, countsAsFailure, provider, ...whenExhausted }
    if (isRevokedProxy(task)) throw invalidArgValue('solve(task): task is a revoked Proxy, which cannot be read')
    let send
    if (createTask !== null) {
      const taskJson = createTask.checkTask(task)
      send = (signal) => createTask.run(taskJson, signal)
    } else {
      const params = checkTask(task)
      send = (signal) => run(params, signal)
    }
    let attempt
    const result = await tracker.guard((signal, handle) => {
      attempt = handle
      return send(signal)
    }, guardOptions)
    const solvedAt = tracker.now
    if (reportBad) reports.solved(solvedAt)
    // The site rejected the answer: the budget counts it as a failure (attempt.reject),
    // and, with reportBad, the provider is told — never awaited, never thrown.
    return withReject(result, (reason) => {
      const taken = attempt.reject(reason)
      if (taken && reportBad) reports.report(result.taskId, task, solvedAt, reason)
      return taken
    })
  }

  return Object.freeze({
    solve,
    provider,
    baseUrl: base.href,
    /** Bad answers reported to the provider so far: `{ reported, skipped, failed }`. */
    get reports() {
      return reports.counts()
    },
    /** Resolves once every report sent so far has settled (before a worker exits); never rejects. */
    reportsSettled: () => reports.settled(),
  })
}

// Solvers tried in order, each under its own budget (lib/providers/failover.js); exported here too.
const { createFailover } = require('./failover.js')

module.exports = { createSolver, defaultCountsAsFailure, CALLER_ERROR_CODES, createFailover }
