// Small gaps in what a solve accepts and shows: a token of only whitespace is no
// answer (ERR_BAD_RESPONSE, one failure, on both protocols, as an empty one is);
// the bidirectional controls (U+202A–U+202E, U+2066–U+2069), which reorder what a
// log shows, are escaped in a server's code, task id and error text like the other
// controls; a createTask task that is a revoked Proxy is refused with a code.
const test = require('ava')
const { ErrorBudgetTracker, createSolver, SolveError } = require('../..')
const { startMockCaptchaAI } = require('../helpers/mock-captchaai')
const { startCreateTaskServer, startLoopbackServer, TASK_ID } = require('../helpers/provider-http')
const { catchWarnings } = require('../helpers/warnings')
const { printable } = require('../../lib/util/errors.js')

const TURNSTILE = { method: 'turnstile', sitekey: '0x4AAAAAAAB-test', pageurl: 'https://shop.example/login' }
const TASK = { type: 'RecaptchaV2TaskProxyless', websiteURL: 'https://shop.example/login', websiteKey: '6Le-test-sitekey' }
const ONE_FAILURE = { successes: 0, failures: 1, excluded: 0, capacity: 0 }
const NOTHING = { successes: 0, failures: 0, excluded: 0, capacity: 0 }
const manual = () => new ErrorBudgetTracker({ clock: 'manual' })

for (const blank of [' ', '\t\n  ']) {
  test(`createTask: 'ready' with a token of whitespace only (${JSON.stringify(blank)}) is ERR_BAD_RESPONSE and one failure`, async (t) => {
    const server = await startCreateTaskServer()
    t.teardown(() => server.close())
    const tracker = manual()
    const solver = createSolver({ apiKey: 'test-key', provider: 'capsolver', baseUrl: server.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000 })
    server.answers([
      ['/createTask', { errorId: 0, taskId: TASK_ID }],
      ['/getTaskResult', { errorId: 0, status: 'ready', solution: { gRecaptchaResponse: blank } }],
    ])
    const err = await t.throwsAsync(solver.solve(TASK), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
    t.is(err.message, `CapSolver getTaskResult (task ${TASK_ID}) answered ready without a token (gRecaptchaResponse: ${printable(JSON.stringify(blank))})`)
    t.deepEqual(tracker.recorded, ONE_FAILURE)
  })

  test(`in.php: res.php status 1 with a request of whitespace only (${JSON.stringify(blank)}) is ERR_BAD_RESPONSE and one failure`, async (t) => {
    const mock = await startMockCaptchaAI({ pollsUntilReady: 0, answer: () => blank })
    t.teardown(() => mock.close())
    const tracker = manual()
    const solver = createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000 })
    const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
    t.is(err.message, 'CaptchaAI res.php (task 73000001) answered status 1 without an answer')
    t.deepEqual(tracker.recorded, ONE_FAILURE)
  })
}

// Each bidirectional control, and its escape as the message shows it.
const BIDI = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069']
const escaped = (c) => `\\u${c.charCodeAt(0).toString(16)}`

test('printable escapes each bidirectional control, and leaves the characters around them', (t) => {
  for (const c of BIDI) t.is(printable(`a${c}b`), `a${escaped(c)}b`)
  t.is(printable('\u2029\u2069\u206a'), '\\u2029\\u2069\u206a') // U+206A is no bidi control: kept
})

test('createTask: a code, task id and error text with bidi controls are escaped on the error and in its message', async (t) => {
  catchWarnings(t, (w) => w.name === 'BudgetGuardWarning') // the code is not in the profile: warned once, not printed
  const code = 'ERROR_\u202eKO\u2066'
  const taskId = 'id\u202b7'
  const server = await startLoopbackServer((req, res) => {
    const answer = req.url === '/createTask' ? { errorId: 0, taskId } : { errorId: 1, errorCode: code, errorDescription: 'txt\u2067' }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
  })
  t.teardown(() => server.close())
  const solver = createSolver({ apiKey: 'test-key', provider: 'anticaptcha', baseUrl: server.url, tracker: manual(), pollIntervalMs: 1, timeoutMs: 60_000 })
  const err = await t.throwsAsync(solver.solve(TASK), { instanceOf: SolveError })
  t.is(err.code, 'ERROR_\\u202eKO\\u2066')
  t.is(err.taskId, 'id\\u202b7')
  t.is(err.message, 'Anti-Captcha getTaskResult (task id\\u202b7) answered ERROR_\\u202eKO\\u2066: "txt\\u2067"')
})

for (const [protocol, provider] of [
  ['createTask', 'capsolver'],
  ['in.php', 'captchaai'],
]) {
  test(`${protocol}: a task that is a revoked Proxy is ERR_INVALID_ARG_VALUE naming task, nothing sent or recorded`, async (t) => {
    const server = await startLoopbackServer((req, res) => res.writeHead(500).end())
    t.teardown(() => server.close())
    const tracker = manual()
    const solver = createSolver({ apiKey: 'test-key', provider, baseUrl: server.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000 })
    const { proxy, revoke } = Proxy.revocable({ ...(protocol === 'in.php' ? TURNSTILE : TASK) }, {})
    revoke()
    const err = await t.throwsAsync(solver.solve(proxy), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_VALUE' })
    t.is(err.message, 'solve(task): task is a revoked Proxy, which cannot be read')
    t.deepEqual(server.requests, [])
    t.deepEqual(tracker.recorded, NOTHING)
  })
}
