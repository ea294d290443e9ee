// The providers' HTTP, answered without a network, for the specs and the docs
// examples that run the real npm clients (docs/providers.md). One attempt at a
// time: each function sets up the answers of one solve that ends in `code`
// ('OK' for a solution; ERROR_CAPTCHA_UNSOLVABLE comes from the result poll, as
// the providers answer it; every other code from the task's submission).
// - nock (HTTP interception in this process) for the clients that reach a fixed
//   host through node:http / node:https: @2captcha/captcha-solver,
//   @antiadmin/anticaptchaofficial, @zennolab_com/capmonstercloud-client,
//   puppeteer-extra-plugin-recaptcha;
// - a loopback server for code that calls fetch() (undici, which nock 13 does
//   not see): `startCreateTaskServer()`.
const http = require('node:http')
const nock = require('nock')

/** The code each protocol answers at its result stage; the others come at submission. */
const RESULT_STAGE = new Set(['ERROR_CAPTCHA_UNSOLVABLE'])
const TASK_ID = 7301
const TOKEN = `token-${TASK_ID}`

/** No request leaves the process but to loopback; call once per spec file. */
function offline() {
  nock.disableNetConnect()
  nock.enableNetConnect(/^(127\.0\.0\.1|localhost)(:\d+)?$/)
}

/** 2Captcha's in.php / res.php with json=1 (@2captcha/captcha-solver: GET, JSON). */
function twoCaptchaJson(code, origin = 'https://2captcha.com') {
  const scope = nock(origin)
  if (code !== 'OK' && !RESULT_STAGE.has(code)) return scope.get('/in.php').query(true).reply(200, { status: 0, request: code })
  scope
    .get('/in.php')
    .query(true)
    .reply(200, { status: 1, request: String(TASK_ID) })
  return scope
    .get('/res.php')
    .query(true)
    .reply(200, code === 'OK' ? { status: 1, request: TOKEN } : { status: 0, request: code })
}

/** 2Captcha's in.php / res.php in plain text (puppeteer-extra-plugin-recaptcha: POST in.php, `OK|id`). */
function twoCaptchaText(code, origin = 'https://2captcha.com') {
  const scope = nock(origin)
  if (code !== 'OK' && !RESULT_STAGE.has(code)) return scope.post('/in.php').reply(200, code)
  scope.post('/in.php').reply(200, `OK|${TASK_ID}`)
  return scope
    .get('/res.php')
    .query(true)
    .reply(200, code === 'OK' ? `OK|${TOKEN}` : code)
}

/**
 * The createTask / getTaskResult answers of one solve ending in `code`, as [path,
 * JSON] pairs; `processing` polls answer { status: 'processing' } first.
 */
function createTaskAnswers(code, processing = 0) {
  const refused = { errorId: 1, errorCode: code, errorDescription: `the service's words for ${code}` }
  if (code !== 'OK' && !RESULT_STAGE.has(code)) return [['/createTask', refused]]
  const result = code === 'OK' ? { errorId: 0, status: 'ready', solution: { gRecaptchaResponse: TOKEN } } : refused
  return [
    ['/createTask', { errorId: 0, taskId: TASK_ID }],
    ...Array.from({ length: processing }, () => ['/getTaskResult', { errorId: 0, status: 'processing' }]),
    ['/getTaskResult', result],
  ]
}

/** Anti-Captcha's or CapMonster's createTask protocol (POST, JSON), by nock. */
function createTaskApi(code, origin) {
  const scope = nock(origin)
  for (const [path, body] of createTaskAnswers(code)) scope.post(path).reply(200, body)
  return scope
}

/** The report methods of the createTask providers (a bad answer: lib/guard/profiles.js). */
const REPORT_PATHS = new Set([
  '/reportIncorrectImageCaptcha',
  '/reportIncorrectRecaptcha',
  '/reportIncorrectHcaptcha',
  '/reportIncorrectTokenCaptcha',
  '/feedbackTask',
])

/**
 * A loopback createTask / getTaskResult server (CapSolver's protocol, as a raw
 * fetch() sees it). `next(code, processing?)` sets up the next solve's answers. A
 * report of a bad answer is accepted (`{ errorId: 0, status: 'success' }`), or with
 * `reports: 'refuse'` answered ERROR_NO_SUCH_CAPCHA_ID. `answers(pairs)` sets up the
 * next answers as [path, JSON] pairs instead (a hostile or odd service). Returns
 * `{ url, requests, next, answers, close }`.
 */
async function startCreateTaskServer({ reports = 'accept' } = {}) {
  const requests = []
  let queue = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      requests.push({ path: req.url, body: body === '' ? null : JSON.parse(body) })
      const report = reports === 'accept' ? { errorId: 0, status: 'success' } : { errorId: 16, errorCode: 'ERROR_NO_SUCH_CAPCHA_ID' }
      const expected = queue.length > 0 && queue[0][0] === req.url ? queue.shift()[1] : null
      const answer = expected ?? (REPORT_PATHS.has(req.url) ? report : { errorId: 1, errorCode: 'ERROR_UNEXPECTED_REQUEST' })
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(answer))
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    next(code, processing = 0) {
      queue = createTaskAnswers(code, processing)
    },
    answers(pairs) {
      queue = [...pairs]
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  }
}

/**
 * A loopback server for a hostile or odd provider: each request is logged as
 * `{ path, body }` (the body as text), then `handler(req, res, body)` answers it
 * (or never does: `close()` drops every connection). Returns `{ url, requests, close }`.
 */
async function startLoopbackServer(handler) {
  const requests = []
  const server = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (chunk) => (body += chunk))
    req.on('end', () => {
      requests.push({ path: req.url, body })
      handler(req, res, body)
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    close() {
      server.closeAllConnections()
      return new Promise((resolve) => server.close(resolve))
    },
  }
}

/** The sequence: one solve per outcome class (the done-when of issue 33). */
const SEQUENCE = ['OK', 'ERROR_CAPTCHA_UNSOLVABLE', 'ERROR_ZERO_BALANCE', 'ERROR_NO_SLOT_AVAILABLE', 'ERROR_WRONG_USER_KEY', 'ERROR_DOMAIN_NOT_ALLOWED']

module.exports = { offline, twoCaptchaJson, twoCaptchaText, createTaskApi, startCreateTaskServer, startLoopbackServer, SEQUENCE, TASK_ID, TOKEN }
