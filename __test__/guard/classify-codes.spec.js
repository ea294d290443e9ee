// Where the guard reads a provider's code (issue 44): a SolveError of the package's
// own client by its `code` alone — an ERR_BAD_RESPONSE whose message quotes a 502
// page naming ERROR_KEY_DOES_NOT_EXIST or ERROR_NO_SLOT_AVAILABLE is one failure,
// not excluded nor capacity —, and a code carried only as an Error's `name`
// (rucaptcha-2captcha 2.2.1: `e = new Error(data.error_text); e.name = data.request`).
const test = require('ava')
const { ErrorBudgetTracker, SolveError, createSolver } = require('../..')
const { catchWarnings } = require('../helpers/warnings.js')
const { startMockCaptchaAI } = require('../helpers/mock-captchaai')

const manual = () => new ErrorBudgetTracker({ clock: 'manual' })
const NOTHING = { successes: 0, failures: 0, excluded: 0, capacity: 0 }
const TASK = { method: 'turnstile', sitekey: 'k', pageurl: 'https://example.com/' }

// A proxy's error page in front of the service, quoting a code the way such pages do.
const badGateway = (code) => (res) =>
  res.writeHead(502, { 'content-type': 'text/html' }).end(`<html><body><h1>502 Bad Gateway</h1><p>upstream said ${code}</p></body></html>`)

for (const code of ['ERROR_KEY_DOES_NOT_EXIST', 'ERROR_NO_SLOT_AVAILABLE']) {
  test.serial(`createSolver: a 502 page quoting ${code} is ERR_BAD_RESPONSE, one failure, no back-off`, async (t) => {
    const mock = await startMockCaptchaAI({ raw: { 'in.php': badGateway(code) } })
    t.teardown(() => mock.close())
    const tracker = manual()
    const solver = createSolver({ apiKey: 'test-key', tracker, baseUrl: mock.url, pollIntervalMs: 1 })
    const error = await t.throwsAsync(solver.solve(TASK))
    t.is(error.code, 'ERR_BAD_RESPONSE')
    t.true(error.message.includes(code), 'the message quotes the page (what the classifier used to read)')
    t.deepEqual(tracker.recorded, { ...NOTHING, failures: 1 })
    // No back-off holds the next solve: it is sent (and fails the same way).
    await t.throwsAsync(solver.solve(TASK), { code: 'ERR_BAD_RESPONSE' })
    t.deepEqual(tracker.recorded, { ...NOTHING, failures: 2 })
    t.is(mock.requests.length, 2)
  })
}

test('a SolveError is read by its code: ERR_NETWORK or ERR_BAD_RESPONSE naming a code in its message is a failure', async (t) => {
  const tracker = manual()
  for (const [code, message] of [
    ['ERR_BAD_RESPONSE', 'CaptchaAI submit answer is not the protocol\'s JSON (HTTP 502): "ERROR_ZERO_BALANCE"'],
    ['ERR_NETWORK', 'CaptchaAI submit request failed: proxy said ERROR_IP_BANNED'],
  ]) {
    const error = new SolveError(code, message, { stage: 'submit' })
    await t.throwsAsync(tracker.guard(() => Promise.reject(error), { provider: 'captchaai' }))
  }
  t.deepEqual(tracker.recorded, { ...NOTHING, failures: 2 })
  // Nothing held: an IP ban or a capacity answer would have held the next attempt.
  t.is(await tracker.guard(async () => 'token', { provider: 'captchaai' }), 'token')
})

test("a SolveError's provider code still classifies: ERROR_NO_SLOT_AVAILABLE is capacity, ERROR_KEY_DOES_NOT_EXIST excluded", async (t) => {
  const tracker = manual()
  const reject = (code) =>
    tracker.guard(() => Promise.reject(new SolveError(code, `CaptchaAI in.php answered ${code}`, { stage: 'submit' })), { provider: 'captchaai' })
  await t.throwsAsync(reject('ERROR_KEY_DOES_NOT_EXIST'))
  await t.throwsAsync(reject('ERROR_NO_SLOT_AVAILABLE'))
  t.deepEqual(tracker.recorded, { ...NOTHING, excluded: 1, capacity: 1 })
})

// rucaptcha-2captcha's throwErrorOfBadStatus(), as version 2.2.1 writes it.
function rucaptchaError(request, errorText) {
  const e = new Error(errorText)
  e.name = request
  return e
}

test('a code only in the name (rucaptcha-2captcha): read, classified by the profile', async (t) => {
  const twoCaptcha = manual()
  const captchaAi = manual()
  const funds = "You don't have funds on your account."
  for (const tracker of [twoCaptcha, captchaAi]) {
    const provider = tracker === twoCaptcha ? '2captcha' : 'captchaai'
    tracker.advanceTo(0)
    await t.throwsAsync(tracker.guard(() => Promise.reject(rucaptchaError('ERROR_WRONG_USER_KEY', 'The key is malformed.')), { provider }))
    await t.throwsAsync(tracker.guard(() => Promise.reject(rucaptchaError('ERROR_CAPTCHA_UNSOLVABLE', 'Unable to solve.')), { provider }))
    await t.throwsAsync(tracker.guard(() => Promise.reject(rucaptchaError('ERROR_ZERO_BALANCE', funds)), { provider }))
  }
  // 2Captcha: a wrong key and no funds are the account's (excluded); CaptchaAI's
  // ERROR_ZERO_BALANCE is "no free threads" (capacity). Unsolvable is a failure at both.
  t.deepEqual(twoCaptcha.recorded, { ...NOTHING, failures: 1, excluded: 2 })
  t.deepEqual(captchaAi.recorded, { ...NOTHING, failures: 1, excluded: 1, capacity: 1 })
  // 2Captcha's ERROR_ZERO_BALANCE holds the next attempt 60 s.
  await t.throwsAsync(
    twoCaptcha.guard(async () => 'token', { provider: '2captcha' }),
    { code: 'ERR_PROVIDER_BACKOFF' },
  )
})

test.serial("a class's name is no code: Error, TypeError, AbortError, TimeoutError, APIError… are failures, with no warning", async (t) => {
  const warnings = catchWarnings(
    t,
    (w) => w.name === 'BudgetGuardWarning',
    (w) => w.message,
  )
  const tracker = manual()
  const names = ['Error', 'TypeError', 'RangeError', 'AbortError', 'TimeoutError', 'SolveError', 'APIError', 'FetchError', 'HTTPError']
  for (const name of names) {
    // The message names no code either: the name is all there is to read.
    await t.throwsAsync(tracker.guard(() => Promise.reject(rucaptchaError(name, 'the request failed')), { provider: '2captcha' }))
  }
  t.deepEqual(tracker.recorded, { ...NOTHING, failures: names.length })
  await new Promise((resolve) => setImmediate(resolve))
  t.deepEqual(warnings, [])
})

test.serial('a code-shaped name the profile does not list: a failure, with the one warning naming it', async (t) => {
  const warnings = catchWarnings(
    t,
    (w) => w.name === 'BudgetGuardWarning',
    (w) => w.message,
  )
  const tracker = manual()
  await t.throwsAsync(tracker.guard(() => Promise.reject(rucaptchaError('ERROR_SOMETHING_NEW', 'prose')), { provider: '2captcha' }))
  t.deepEqual(tracker.recorded, { ...NOTHING, failures: 1 })
  await new Promise((resolve) => setImmediate(resolve))
  t.deepEqual(warnings, ['guard: 2captcha answered ERROR_SOMETHING_NEW, which its profile does not list; counted as a failure'])
})
