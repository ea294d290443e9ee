// @zennolab_com/capmonstercloud-client (the real package, HTTP intercepted) under
// guard(fn, { provider: 'capmonster' }). Its Solve() resolves a CaptchaResult whose
// `error` is the code without ERROR_ ('CAPTCHA_UNSOLVABLE'), or 'Unknown' for a
// code outside its ErrorType list; the recipe throws that result.
const test = require('ava')
const nock = require('nock')
const { CapMonsterCloudClientFactory, ClientOptions, RecaptchaV2Request } = require('@zennolab_com/capmonstercloud-client')
const { ErrorBudgetTracker } = require('../..')
const { offline, createTaskApi, TOKEN } = require('../helpers/provider-http')
const { runSequence } = require('../helpers/provider-sequence')

offline()
test.afterEach.always(() => nock.cleanAll())

const ORIGIN = 'https://api.capmonster.cloud' // the client's default serviceUrl
const client = CapMonsterCloudClientFactory.Create(new ClientOptions({ clientKey: 'test-key' }))
// Poll at once and every 1 ms (its defaults for reCAPTCHA: 1 s, then every 3 s), for at most 10 s.
const FAST = { firstRequestDelay: 0, firstRequestNoCacheDelay: 0, requestsInterval: 1, timeout: 10_000 }

async function solveOrThrow() {
  const result = await client.Solve(new RecaptchaV2Request({ websiteURL: 'https://shop.example/login', websiteKey: '6Le-test-sitekey' }), FAST)
  if (result.error !== undefined) throw result // { error: 'CAPTCHA_UNSOLVABLE' }: read by the profile
  return result.solution.gRecaptchaResponse
}

async function attempt(tracker, code) {
  const scope = createTaskApi(code, ORIGIN)
  const settled = await tracker.guard(solveOrThrow, { provider: 'capmonster' }).then(
    (value) => ({ value }),
    (error) => ({ error }),
  )
  scope.done()
  return settled
}

const manual = () => new ErrorBudgetTracker({ clock: 'manual' })

test.serial('success: one success, the token back', async (t) => {
  const tracker = manual()
  t.is((await attempt(tracker, 'OK')).value, TOKEN)
  t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
})

test.serial('ERROR_CAPTCHA_UNSOLVABLE (a result with error, prefix dropped): one failure', async (t) => {
  const tracker = manual()
  t.like((await attempt(tracker, 'ERROR_CAPTCHA_UNSOLVABLE')).error, { error: 'CAPTCHA_UNSOLVABLE' })
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test.serial('ERROR_ZERO_BALANCE and ERROR_DOMAIN_NOT_ALLOWED: excluded', async (t) => {
  const tracker = manual()
  await attempt(tracker, 'ERROR_ZERO_BALANCE')
  await attempt(tracker, 'ERROR_DOMAIN_NOT_ALLOWED')
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 2, capacity: 0 })
})

test.serial('ERROR_NO_SLOT_AVAILABLE: capacity, and the next attempt waits 5 s', async (t) => {
  const tracker = manual()
  await attempt(tracker, 'ERROR_NO_SLOT_AVAILABLE')
  const held = await tracker.guard(solveOrThrow, { provider: 'capmonster' }).catch((e) => e)
  t.like(held, { code: 'ERR_PROVIDER_BACKOFF', retryAfterMs: 5000 })
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 1 })
})

// The client turns ERROR_WRONG_USER_KEY (not in its ErrorType list) into 'Unknown':
// the code is lost before the guard sees it, so it counts as a failure, warned.
test.serial("the issue's sequence: 1 success, 2 failures (one the client's 'Unknown', warned), 2 excluded, 1 capacity", async (t) => {
  const tracker = manual()
  const warnings = await runSequence(t, tracker, (code) => attempt(tracker, code))
  t.deepEqual(tracker.recorded, { successes: 1, failures: 2, excluded: 2, capacity: 1 })
  t.deepEqual(warnings, ['guard: capmonster answered Unknown, which its profile does not list; counted as a failure'])
})
