// Issue 44 item 7: every request to a provider carries the API key (in.php's
// form body, res.php's query, createTask's clientKey), so a redirect is never
// followed: fetch would re-send a 307's body to whatever host the Location names,
// and the solve would take that host's answer. The redirect is ERR_BAD_RESPONSE
// naming the status, one failure; a report of a bad answer that is redirected is a
// failed report. Two loopback servers on different ports are different origins:
// `elsewhere` stands for the other host and must receive nothing.
const test = require('ava')
const { ErrorBudgetTracker, createSolver, SolveError } = require('../..')
const { startMockCaptchaAI } = require('../helpers/mock-captchaai')
const { startLoopbackServer } = require('../helpers/provider-http')

const TURNSTILE = { method: 'turnstile', sitekey: '0x4AAAAAAAB-test', pageurl: 'https://shop.example/login' }
const TASK = { type: 'RecaptchaV2TaskProxyless', websiteURL: 'https://shop.example/login', websiteKey: '6Le-test-sitekey' }
const ONE_FAILURE = { successes: 0, failures: 1, excluded: 0, capacity: 0 }

const json = (res, body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))

// A loopback server answered by `handler(req, res, body)`, closed when the test ends.
async function startServer(t, handler) {
  const server = await startLoopbackServer(handler)
  t.teardown(() => server.close())
  return server
}

// The other host: it would solve anything (in.php's and createTask's answers both), with its own token.
const startElsewhere = (t) =>
  startServer(t, (req, res) => {
    if (req.url.startsWith('/in.php')) return json(res, { status: 1, request: '555' })
    if (req.url.startsWith('/res.php')) return json(res, { status: 1, request: 'token-from-elsewhere' })
    if (req.url === '/createTask') return json(res, { errorId: 0, taskId: 555 })
    json(res, { errorId: 0, status: 'ready', solution: { gRecaptchaResponse: 'token-from-elsewhere' } })
  })

const redirect = (res, status, location) => res.writeHead(status, { location }).end()

test('in.php: a 307 to another origin is not followed; ERR_BAD_RESPONSE naming it, one failure, nothing sent there', async (t) => {
  const elsewhere = await startElsewhere(t)
  const mock = await startMockCaptchaAI({ raw: { 'in.php': (res) => redirect(res, 307, `${elsewhere.url}/in.php`) } })
  t.teardown(() => mock.close())
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const solver = createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000 })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
  t.is(err.message, `CaptchaAI submit answered HTTP 307, a redirect to "${elsewhere.url}/in.php": not followed (the request carries the API key)`)
  t.like(err, { stage: 'submit', taskId: null, httpStatus: 307 })
  t.deepEqual(elsewhere.requests, [])
  t.deepEqual(tracker.recorded, ONE_FAILURE)
})

test('in.php: a 302 of a res.php poll (the key in its query) is not followed either', async (t) => {
  const elsewhere = await startElsewhere(t)
  const moved = (res, params, req) => redirect(res, 302, `${elsewhere.url}${req.url}`)
  const mock = await startMockCaptchaAI({ raw: { 'res.php': moved } })
  t.teardown(() => mock.close())
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const solver = createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000 })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
  // The Location quoted redacted: key=***.
  t.is(
    err.message,
    `CaptchaAI result answered HTTP 302, a redirect to "${elsewhere.url}/res.php?key=***&action=get&id=73000001&json=1": not followed (the request carries the API key)`,
  )
  t.like(err, { stage: 'result', taskId: '73000001', httpStatus: 302 })
  t.deepEqual(elsewhere.requests, [])
  t.deepEqual(tracker.recorded, ONE_FAILURE)
})

for (const [where, status] of [
  ['createTask', 307],
  ['getTaskResult', 308],
]) {
  test(`createTask protocol: a ${status} of ${where} to another origin is not followed; clientKey sent to baseUrl only`, async (t) => {
    const elsewhere = await startElsewhere(t)
    const origin = await startServer(t, (req, res) => {
      if (req.url === `/${where}`) return redirect(res, status, `${elsewhere.url}${req.url}`)
      json(res, { errorId: 0, taskId: 7301 }) // createTask, when getTaskResult is the one redirected
    })
    const tracker = new ErrorBudgetTracker({ clock: 'manual' })
    const solver = createSolver({ apiKey: 'test-key', provider: 'anticaptcha', baseUrl: origin.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000 })
    const err = await t.throwsAsync(solver.solve(TASK), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
    t.is(
      err.message,
      `Anti-Captcha ${where} answered HTTP ${status}, a redirect to "${elsewhere.url}/${where}": not followed (the request carries the API key)`,
    )
    t.is(err.httpStatus, status)
    t.deepEqual(elsewhere.requests, [])
    t.deepEqual(
      origin.requests.map((r) => r.path),
      where === 'createTask' ? ['/createTask'] : ['/createTask', '/getTaskResult'],
    )
    t.deepEqual(tracker.recorded, ONE_FAILURE)
  })
}

test('a redirect without a Location is named by its status alone', async (t) => {
  const origin = await startServer(t, (req, res) => res.writeHead(303).end())
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const solver = createSolver({ apiKey: 'test-key', provider: 'capsolver', baseUrl: origin.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000 })
  const err = await t.throwsAsync(solver.solve(TASK), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
  t.is(err.message, 'CapSolver createTask answered HTTP 303, a redirect: not followed (the request carries the API key)')
  t.deepEqual(tracker.recorded, ONE_FAILURE)
})

test('reportBad: a redirected report (in.php, GET with the key) is a failed report, nothing sent elsewhere', async (t) => {
  const elsewhere = await startElsewhere(t)
  const answers = (res, params, req) =>
    params.action === 'reportbad' ? redirect(res, 307, `${elsewhere.url}${req.url}`) : json(res, { status: 1, request: `token-${params.id}` })
  const mock = await startMockCaptchaAI({ raw: { 'res.php': answers } })
  t.teardown(() => mock.close())
  const tracker = new ErrorBudgetTracker({ clock: 'manual', alerts: [] })
  const solver = createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000, reportBad: true })
  const results = []
  for (let i = 0; i < 3; i++) results.push(await solver.solve(TURNSTILE))
  t.true(results[0].reject('incorrect-captcha-sol')) // 1 report of 3 solves: within the 35 % share
  await solver.reportsSettled()
  t.deepEqual(solver.reports, { reported: 0, skipped: 0, failed: 1 })
  t.is(mock.requests.filter((r) => r.params.action === 'reportbad').length, 1)
  t.deepEqual(elsewhere.requests, [])
})

test('reportBad: a redirected report (createTask, POST with clientKey) is a failed report, nothing sent elsewhere', async (t) => {
  const elsewhere = await startElsewhere(t)
  const origin = await startServer(t, (req, res) => {
    if (req.url === '/createTask') return json(res, { errorId: 0, taskId: 7301 })
    if (req.url === '/getTaskResult') return json(res, { errorId: 0, status: 'ready', solution: { gRecaptchaResponse: 'token-7301' } })
    redirect(res, 307, `${elsewhere.url}${req.url}`)
  })
  const tracker = new ErrorBudgetTracker({ clock: 'manual', alerts: [] })
  const solver = createSolver({ apiKey: 'test-key', provider: 'anticaptcha', baseUrl: origin.url, tracker, pollIntervalMs: 1, reportBad: true })
  const results = []
  for (let i = 0; i < 3; i++) results.push(await solver.solve(TASK))
  t.true(results[0].reject())
  await solver.reportsSettled()
  t.deepEqual(solver.reports, { reported: 0, skipped: 0, failed: 1 })
  t.is(origin.requests.filter((r) => r.path === '/reportIncorrectRecaptcha').length, 1)
  t.deepEqual(elsewhere.requests, [])
})
