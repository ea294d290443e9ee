// @2captcha/captcha-solver (the real package, HTTP intercepted) under guard(fn, { provider: '2captcha' }):
// its APIError carries the code in `err` (a prose `message`, a numeric `code`).
const test = require('ava')
const nock = require('nock')
const { Solver } = require('@2captcha/captcha-solver')
const { ErrorBudgetTracker } = require('../..')
const { offline, twoCaptchaJson, SEQUENCE, TOKEN } = require('../helpers/provider-http')

offline()
test.afterEach.always(() => nock.cleanAll())

const RECAPTCHA = { pageurl: 'https://shop.example/login', googlekey: '6Le-test-sitekey' }
const solver = new Solver('test-key', 1) // polls res.php every 1 ms

/** One guarded solve whose HTTP ends in `code`; what it settled with. */
async function attempt(tracker, code) {
  const scope = twoCaptchaJson(code)
  const settled = await tracker
    .guard(() => solver.recaptcha(RECAPTCHA), { provider: '2captcha' })
    .then(
      (value) => ({ value }),
      (error) => ({ error }),
    )
  scope.done() // every answer set up was asked for: the client really ran
  return settled
}

const manual = () => new ErrorBudgetTracker({ clock: 'manual' })

test.serial('success: one success, the token back', async (t) => {
  const tracker = manual()
  const { value } = await attempt(tracker, 'OK')
  t.is(value.data, TOKEN)
  t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
})

test.serial('ERROR_CAPTCHA_UNSOLVABLE (an APIError, prose message): one failure', async (t) => {
  const tracker = manual()
  const { error } = await attempt(tracker, 'ERROR_CAPTCHA_UNSOLVABLE')
  t.like(error, { name: 'APIError', err: 'ERROR_CAPTCHA_UNSOLVABLE', code: 1 })
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test.serial('ERROR_ZERO_BALANCE, ERROR_WRONG_USER_KEY, ERROR_DOMAIN_NOT_ALLOWED: excluded', async (t) => {
  const tracker = manual()
  for (const [i, code] of ['ERROR_ZERO_BALANCE', 'ERROR_WRONG_USER_KEY', 'ERROR_DOMAIN_NOT_ALLOWED'].entries()) {
    tracker.advanceTo(i * 60_000) // past the 60 s back-off of ERROR_ZERO_BALANCE
    t.is((await attempt(tracker, code)).error.err, code)
  }
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 3, capacity: 0 })
  t.is(tracker.total, 0)
})

test.serial('ERROR_NO_SLOT_AVAILABLE: capacity, and the next attempt waits 5 s without a request', async (t) => {
  const tracker = manual()
  await attempt(tracker, 'ERROR_NO_SLOT_AVAILABLE')
  const held = await tracker.guard(() => solver.recaptcha(RECAPTCHA), { provider: '2captcha' }).catch((e) => e)
  t.like(held, { code: 'ERR_PROVIDER_BACKOFF', retryAfterMs: 5000 }) // nock would have thrown on a request
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 1 })
})

test.serial("the issue's sequence leaves recorded as the profile says: 1 success, 1 failure, 3 excluded, 1 capacity", async (t) => {
  const tracker = manual()
  for (const [i, code] of SEQUENCE.entries()) {
    tracker.advanceTo(i * 60_000)
    await attempt(tracker, code)
  }
  t.deepEqual(tracker.recorded, { successes: 1, failures: 1, excluded: 3, capacity: 1 })
})
