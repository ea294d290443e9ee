// Issue 44 item 13: a provider's error code, and a task id, are the server's
// words: a CR, LF or ESC in them must not reach a log raw (a forged line, a
// terminal escape). They are escaped as \uXXXX in the SolveError's `code`,
// `message` and `taskId`, both protocols (error_text was quoted already).
const test = require('ava')
const { ErrorBudgetTracker, createSolver, SolveError } = require('../..')
const { startLoopbackServer } = require('../helpers/provider-http')
const { catchWarnings } = require('../helpers/warnings')

const TURNSTILE = { method: 'turnstile', sitekey: '0x4AAAAAAAB-test', pageurl: 'https://shop.example/login' }
const TASK = { type: 'RecaptchaV2TaskProxyless', websiteURL: 'https://shop.example/login', websiteKey: '6Le-test-sitekey' }
// A code forging a log line and clearing the screen, with a C1 control and a line separator.
const HOSTILE = 'ERROR_FORGED\r\n2024-01-01 INFO all good\u001b[2J\u0085\u2028'
const ESCAPED = 'ERROR_FORGED\\u000d\\u000a2024-01-01 INFO all good\\u001b[2J\\u0085\\u2028'
// oxlint-disable-next-line no-control-regex -- control characters are what this spec looks for
const RAW = /[\r\n\u001b\u0085\u2028]/

const json = (res, body) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))

async function solverOn(t, provider, answer) {
  catchWarnings(t, (w) => w.name === 'BudgetGuardWarning') // the code is not in the profile: warned once, not printed
  const server = await startLoopbackServer(answer)
  t.teardown(() => server.close())
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  return createSolver({ apiKey: 'test-key', provider, baseUrl: server.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000 })
}

test('in.php: a code with CR, LF, ESC is escaped in code and message', async (t) => {
  const solver = await solverOn(t, 'captchaai', (req, res) => json(res, { status: 0, request: HOSTILE }))
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError })
  t.is(err.code, ESCAPED)
  t.is(err.message, `CaptchaAI in.php answered ${ESCAPED}`)
  t.true(err.stack.startsWith(`SolveError: ${err.message}\n    at `), 'one line, then the frames')
  t.false(RAW.test(err.message))
})

test('createTask: an errorCode with CR, LF, ESC is escaped in code and message', async (t) => {
  const solver = await solverOn(t, 'anticaptcha', (req, res) => json(res, { errorId: 1, errorCode: HOSTILE, errorDescription: 'line\nbreak' }))
  const err = await t.throwsAsync(solver.solve(TASK), { instanceOf: SolveError })
  t.is(err.code, ESCAPED)
  t.is(err.message, `Anti-Captcha createTask answered ${ESCAPED}: "line\\nbreak"`)
  t.true(err.stack.startsWith(`SolveError: ${err.message}\n    at `), 'one line, then the frames')
  t.false(RAW.test(err.message))
})

test('both protocols: a task id with a line break is escaped in the message and on the error', async (t) => {
  const inPhp = await solverOn(t, 'captchaai', (req, res) =>
    req.url.startsWith('/in.php') ? json(res, { status: 1, request: '12\n34' }) : json(res, { status: 0, request: 'ERROR_CAPTCHA_UNSOLVABLE' }),
  )
  const inPhpErr = await t.throwsAsync(inPhp.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERROR_CAPTCHA_UNSOLVABLE' })
  t.is(inPhpErr.message, 'CaptchaAI res.php (task 12\\u000a34) answered ERROR_CAPTCHA_UNSOLVABLE')
  t.is(inPhpErr.taskId, '12\\u000a34')
  const createTask = await solverOn(t, 'anticaptcha', (req, res) =>
    req.url === '/createTask' ? json(res, { errorId: 0, taskId: '56\r78' }) : json(res, { errorId: 12, errorCode: 'ERROR_CAPTCHA_UNSOLVABLE' }),
  )
  const createTaskErr = await t.throwsAsync(createTask.solve(TASK), { instanceOf: SolveError, code: 'ERROR_CAPTCHA_UNSOLVABLE' })
  t.is(createTaskErr.message, 'Anti-Captcha getTaskResult (task 56\\u000d78) answered ERROR_CAPTCHA_UNSOLVABLE')
  t.is(createTaskErr.taskId, '56\\u000d78')
})
