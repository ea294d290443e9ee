// Issue 44 item 8: the API key appears nowhere in what a solve's rejection holds
// — its message, code, own properties (the task id), or its cause chain (fetch's
// error: Node's ERR_INVALID_URL holds the URL it was given as `base`, the poll URL
// with ?key=…) — on every path of both protocols: no answer, a body cut short, a
// timeout, an answer that is not the protocol, an HTTP error page, a redirect, the
// service's error codes, a task id that echoes the key, an empty answer; nor does a
// report of a bad answer that fails (it is counted, never thrown). Each rejection is
// printed as console.error would, and deeper: util.inspect with depth Infinity and
// the hidden properties.
const test = require('ava')
const { inspect } = require('node:util')
const { ErrorBudgetTracker, createSolver, SolveError } = require('../..')
const { refusedUrl } = require('../helpers/mock-captchaai')
const { startLoopbackServer } = require('../helpers/provider-http')
const { catchWarnings } = require('../helpers/warnings')
const { redactError } = require('../../lib/util/redact.js')

const SECRET = 'S3cr/et+Key-0123456789abcdef'
// Its whole forms (raw, percent- and form-encoded), and its first 8 characters: half a key is a leak too.
const FORMS = [SECRET, encodeURIComponent(SECRET), new URLSearchParams({ k: SECRET }).toString().slice(2), SECRET.slice(0, 8)]
const leaks = (text) => FORMS.filter((form) => text.includes(form))
const shown = (err) => `${err.message}\n${err.code}\n${err.stack}\n${inspect(err, { depth: Infinity })}\n${inspect(err, { depth: Infinity, showHidden: true })}`

const TURNSTILE = { method: 'turnstile', sitekey: '0x4AAAAAAAB-test', pageurl: 'https://shop.example/login' }
const TASK = { type: 'RecaptchaV2TaskProxyless', websiteURL: 'https://shop.example/login', websiteKey: '6Le-test-sitekey' }
const PROTOCOLS = {
  'in.php': { provider: 'captchaai', task: TURNSTILE },
  createTask: { provider: 'capsolver', task: TASK },
}

const send = (res, status, body, headers = {}) => res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body)
const json = (res, body) => send(res, 200, JSON.stringify(body))
// An answer that starts, holds the key, then breaks off: the socket destroyed mid-body.
const cutShort = (res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': 1000 })
  res.write(`{"status":1,"request":"${SECRET}`)
  setImmediate(() => res.destroy())
}
const submitStage = (req) => req.url.startsWith('/in.php') || req.url === '/createTask'
const answerOf = (protocol) =>
  protocol === 'in.php' ? { status: 1, request: 'token-101' } : { errorId: 0, status: 'ready', solution: { gRecaptchaResponse: 'token-101' } }
// The key a request carried: in.php's form body, createTask's clientKey.
const keyOf = ({ body }) => (body.startsWith('{') ? JSON.parse(body).clientKey : new URLSearchParams(body).get('key'))

// [what, the answer to each request (req, res, body); hostile wherever it can be]
const hostile = [
  ['a body cut short, holding the key (ERR_NETWORK)', (req, res) => cutShort(res)],
  ['not JSON, echoing the request', (req, res, body) => send(res, 200, `not json: ${req.url} ${body} ${SECRET}`)],
  ['an HTTP 502 page echoing the request', (req, res, body) => send(res, 502, `<pre>bad gateway ${req.url} ${body}</pre>`, { 'content-type': 'text/html' })],
  [
    'a redirect whose Location holds the key',
    (req, res) =>
      send(res, 307, '', { location: `http://elsewhere.example${req.url}${req.url.includes('?') ? '&' : '?'}key=${SECRET}&c=${encodeURIComponent(SECRET)}` }),
  ],
  [
    "the poll redirected to a malformed Location (followed, undici's ERR_INVALID_URL held the poll URL)",
    (req, res) =>
      submitStage(req) ? json(res, { status: 1, request: '101', errorId: 0, taskId: 101 }) : send(res, 302, '', { location: 'http://[malformed' }),
  ],
  ['an error code that is the key', (req, res) => json(res, { status: 0, request: SECRET, errorId: 1, errorCode: SECRET })],
  [
    'an error text quoting the key',
    (req, res) =>
      json(res, {
        status: 0,
        request: 'ERROR_CAPTCHA_UNSOLVABLE',
        error_text: `bad key ${SECRET}`,
        errorId: 1,
        errorCode: 'ERROR_CAPTCHA_UNSOLVABLE',
        errorDescription: `bad key ${SECRET}`,
      }),
  ],
  [
    'a task id that is the key, then an error code',
    (req, res) =>
      submitStage(req)
        ? json(res, { status: 1, request: SECRET, errorId: 0, taskId: SECRET })
        : json(res, { status: 0, request: 'ERROR_CAPTCHA_UNSOLVABLE', errorId: 1, errorCode: 'ERROR_CAPTCHA_UNSOLVABLE' }),
  ],
  [
    'a task id that is the key, then an empty answer',
    (req, res) => (submitStage(req) ? json(res, { status: 1, request: SECRET }) : json(res, { status: 1, request: '' })),
    'in.php',
  ],
  [
    'a task id that is the key, then a ready answer without a token',
    (req, res) => (submitStage(req) ? json(res, { errorId: 0, taskId: SECRET }) : json(res, { errorId: 0, status: 'ready', solution: { token: '' } })),
    'createTask',
  ],
]

async function solverOn(t, protocol, baseUrl, options = {}) {
  const tracker = new ErrorBudgetTracker({ clock: 'manual', alerts: [] })
  t.teardown(() => tracker.close())
  const { provider } = PROTOCOLS[protocol]
  return { tracker, solver: createSolver({ apiKey: SECRET, provider, baseUrl, tracker, pollIntervalMs: 1, timeoutMs: 60_000, ...options }) }
}

for (const protocol of Object.keys(PROTOCOLS)) {
  for (const [what, answer, only] of hostile) {
    if (only !== undefined && only !== protocol) continue
    test(`${protocol}: ${what}: the key is nowhere in the rejection`, async (t) => {
      // A code the profile does not list (the key, masked) is warned about once: caught, not printed.
      catchWarnings(t, (w) => w.name === 'BudgetGuardWarning')
      const server = await startLoopbackServer(answer)
      t.teardown(() => server.close())
      const { tracker, solver } = await solverOn(t, protocol, server.url)
      const err = await t.throwsAsync(solver.solve(PROTOCOLS[protocol].task), { instanceOf: SolveError })
      t.is(keyOf(server.requests[0]), SECRET, 'the server did get the key')
      t.deepEqual(leaks(shown(err)), [], shown(err))
      t.is(tracker.recorded.successes, 0)
    })
  }

  test(`${protocol}: connection refused (ERR_NETWORK, fetch's error as cause): the key is nowhere`, async (t) => {
    const { solver } = await solverOn(t, protocol, await refusedUrl())
    const err = await t.throwsAsync(solver.solve(PROTOCOLS[protocol].task), { instanceOf: SolveError, code: 'ERR_NETWORK' })
    t.is(err.cause.cause.code, 'ECONNREFUSED', "fetch's error kept, as a copy")
    t.deepEqual(leaks(shown(err)), [], shown(err))
  })

  test(`${protocol}: a timeout (the guard's GuardTimeoutError): the key is nowhere`, async (t) => {
    const server = await startLoopbackServer(() => {}) // never answers
    t.teardown(() => server.close())
    const { solver } = await solverOn(t, protocol, server.url, { timeoutMs: 50 })
    const err = await t.throwsAsync(solver.solve(PROTOCOLS[protocol].task), { code: 'ETIMEDOUT' })
    t.deepEqual(leaks(shown(err)), [], shown(err))
  })

  // Serial: it replaces globalThis.fetch for a while (ava runs the serial tests first, one at a time).
  test.serial(`${protocol}: fetch's error quoting the request URL and body (Node's ERR_INVALID_URL, base): a redacted copy as cause`, async (t) => {
    const server = await startLoopbackServer((req, res) => json(res, { status: 1, request: '101', errorId: 0, taskId: 101 }))
    t.teardown(() => server.close())
    const { solver } = await solverOn(t, protocol, server.url)
    // The second request (res.php's poll, with ?key=; getTaskResult, clientKey in its body) fails as
    // undici failed on a malformed Location: new URL(location, the request's URL) threw, holding that URL.
    // Only this test's requests are touched.
    const realFetch = globalThis.fetch
    let calls = 0
    globalThis.fetch = (url, init) => {
      if (!String(url).startsWith(server.url) || ++calls === 1) return realFetch(url, init)
      let invalidUrl
      try {
        new URL('http://[malformed', url)
      } catch (error) {
        invalidUrl = error
      }
      t.is(invalidUrl.code, 'ERR_INVALID_URL')
      invalidUrl.sent = String(init.body ?? '') // a string property quoting the request: redacted
      invalidUrl.request = { url: String(url), body: init.body } // an object: left off the copy
      invalidUrl.cause = new AggregateError([new Error(`while sending ${init.body ?? url}`)], `to ${url}`)
      return Promise.reject(new TypeError('fetch failed', { cause: invalidUrl }))
    }
    let err
    try {
      err = await t.throwsAsync(solver.solve(PROTOCOLS[protocol].task), { instanceOf: SolveError, code: 'ERR_NETWORK' })
    } finally {
      globalThis.fetch = realFetch
    }
    t.is(err.message, `${protocol === 'in.php' ? 'CaptchaAI result' : 'CapSolver getTaskResult'} request failed: ERR_INVALID_URL`)
    t.like(err.cause, { name: 'TypeError', message: 'fetch failed' })
    t.like(err.cause.cause, { code: 'ERR_INVALID_URL', input: 'http://[malformed' })
    if (protocol === 'in.php') t.is(err.cause.cause.base, `${server.url}/res.php?key=***&action=get&id=101&json=1`)
    t.is(err.cause.cause.request, undefined)
    t.true(err.cause.cause.cause instanceof AggregateError)
    t.deepEqual(leaks(shown(err)), [], shown(err))
  })

  test(`${protocol}: a report of a bad answer that fails (an echo, a redirect, a reset) is counted, never thrown`, async (t) => {
    const reports = ['echo', 'redirect', 'reset']
    const server = await startLoopbackServer((req, res, body) => {
      const isReport = req.url.includes('action=reportbad') || req.url.startsWith('/feedbackTask')
      if (!isReport) return submitStage(req) ? json(res, { status: 1, request: '101', errorId: 0, taskId: 101 }) : json(res, answerOf(protocol))
      const how = reports.shift()
      if (how === 'echo') return send(res, 500, `refused ${req.url} ${body}`)
      if (how === 'redirect') return send(res, 307, '', { location: `http://elsewhere.example/?key=${SECRET}` })
      res.destroy()
    })
    t.teardown(() => server.close())
    // CapSolver reports every task type to feedbackTask; 3 reports of 9 solves stay within the 35 % share.
    const { solver } = await solverOn(t, protocol, server.url, { reportBad: true })
    const results = []
    for (let i = 0; i < 9; i++) results.push(await solver.solve(PROTOCOLS[protocol].task))
    for (const result of results.slice(0, 3)) t.true(result.reject('incorrect'))
    await solver.reportsSettled()
    t.deepEqual(solver.reports, { reported: 0, skipped: 0, failed: 3 })
    t.deepEqual(leaks(inspect(solver, { depth: Infinity, showHidden: true })), [])
  })
}

test('redactError: a copy of the chain, strings masked, other objects left off, the original untouched', (t) => {
  const socket = { remote: `127.0.0.1 ${SECRET}` }
  const inner = Object.assign(new RangeError(`inner ${SECRET}`), { code: 'E_INNER', port: 443, socket })
  const outer = new TypeError(`outer key=${SECRET}&x=1`, { cause: new AggregateError([inner, `text ${SECRET}`, socket], 'many') })
  const copy = redactError(outer, [SECRET])
  t.not(copy, outer)
  t.true(copy instanceof TypeError)
  t.is(copy.message, 'outer key=***&x=1')
  t.true(copy.stack.startsWith('TypeError: outer key=***&x=1\n'), copy.stack)
  t.true(copy.cause instanceof AggregateError)
  const [innerCopy, text, dropped] = copy.cause.errors
  t.like(innerCopy, { name: 'RangeError', message: 'inner ***', code: 'E_INNER', port: 443, socket: undefined })
  t.false(Object.hasOwn(innerCopy, 'socket'))
  t.is(text, 'text ***')
  t.is(dropped, undefined)
  t.deepEqual(leaks(inspect(copy, { depth: Infinity, showHidden: true })), [])
  t.is(outer.message, `outer key=${SECRET}&x=1`, 'the original is not changed')
  // A cycle ends at the depth bound, and a class of another library keeps its name.
  class UndiciLikeError extends Error {
    constructor(message) {
      super(message)
      this.name = 'UndiciLikeError'
      this.cause = this
    }
  }
  const looped = redactError(new UndiciLikeError(`loop ${SECRET}`), [SECRET])
  t.like(looped, { name: 'UndiciLikeError', message: 'loop ***' })
  const printed = inspect(looped, { depth: Infinity })
  t.true(printed.includes('[UndiciLikeError]: loop ***'), printed)
  t.is(printed.match(/cause:/g).length, 7, 'the copy of the loop ends at 8 errors: the error and 7 causes')
})

test("a one-letter key masks the server's words only, never the client's own ('createTask' keeps its k)", async (t) => {
  const server = await startLoopbackServer((req, res) => json(res, { errorId: 1, errorCode: 'ERROR_NO_SLOT_AVAILABLE', errorDescription: 'back in a second' }))
  t.teardown(() => server.close())
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const solver = createSolver({ apiKey: 'k', provider: 'capmonster', baseUrl: server.url, tracker, pollIntervalMs: 1 })
  const err = await t.throwsAsync(solver.solve(TASK), { instanceOf: SolveError, code: 'ERROR_NO_SLOT_AVAILABLE' })
  t.is(err.message, 'CapMonster Cloud createTask answered ERROR_NO_SLOT_AVAILABLE: "bac*** in a second"')
})
