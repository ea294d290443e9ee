// The four outcomes of a guarded attempt (issue 33): success, failure, excluded
// (the caller's or the account's problem), capacity (no worker free); the
// provider profiles that classify the clients' rejections, and their back-offs
// on the tracker's clock.
const test = require('ava')
const { ErrorBudgetTracker, BudgetFamily, ProviderBackoffError, createSolver, createFailover } = require('../..')
const { settle } = require('../helpers/deliveries')
const { catchWarnings } = require('../helpers/warnings.js')
const { startMockCaptchaAI } = require('../helpers/mock-captchaai')

const manual = () => new ErrorBudgetTracker({ clock: 'manual' })
const rejectWith = (value) => () => Promise.reject(value)
// What a guard() call rejected with, whatever it is (a client may throw a bare string).
const rejectionOf = (promise) =>
  promise.then(
    () => {
      throw new Error('expected a rejection')
    },
    (error) => error,
  )

// Collects the process warnings emitted while `run` runs (a test.serial's).
async function warningsDuring(t, run) {
  // Caught, not printed: a passing run's stderr stays clean (helpers/warnings.js).
  const caught = catchWarnings(t, undefined, (w) => w.message)
  await run()
  await settle()
  return [...caught]
}

test('a classifier names the outcome: excluded and capacity stay out of the window, counted apart', async (t) => {
  const tracker = manual()
  await tracker.guard(async () => 'token')
  for (const verdict of ['failure', 'excluded', 'capacity', 'capacity', 'excluded', 'excluded']) {
    await rejectionOf(tracker.guard(rejectWith(new Error(verdict)), { countsAsFailure: () => verdict }))
  }
  t.deepEqual(tracker.recorded, { successes: 1, failures: 1, excluded: 3, capacity: 2 })
  // The window holds the success and the failure only: 1 of 2.
  t.deepEqual([tracker.total, tracker.failures], [2, 1])
  t.like(tracker.report(), { total: 2, failures: 1, excluded: 3, capacity: 2 })
})

test("a classifier's 'success' for a rejection records a success; a boolean keeps its meaning", async (t) => {
  const tracker = manual()
  await rejectionOf(tracker.guard(rejectWith(new Error('late but solved')), { countsAsFailure: () => 'success' }))
  await rejectionOf(tracker.guard(rejectWith(new Error('counts')), { countsAsFailure: () => true }))
  await rejectionOf(tracker.guard(rejectWith(new Error('does not')), { countsAsFailure: () => false }))
  t.deepEqual(tracker.recorded, { successes: 1, failures: 1, excluded: 1, capacity: 0 })
})

test('metrics(): a counter each for excluded and capacity, per family child too', async (t) => {
  const tracker = manual()
  await rejectionOf(tracker.guard(rejectWith('ERROR_NO_SLOT_AVAILABLE'), { provider: '2captcha' }))
  await rejectionOf(tracker.guard(rejectWith('ERROR_WRONG_USER_KEY'), { provider: 'anticaptcha', countsAsFailure: () => 'excluded' }))
  const lines = tracker.metrics().split('\n')
  t.true(lines.includes('captcha_budget_excluded_total{name="default"} 1'))
  t.true(lines.includes('captcha_budget_capacity_total{name="default"} 1'))

  const family = new BudgetFamily({ labelNames: ['site'], clock: 'manual', name: 'solves', alerts: [] })
  const shop = family.labels({ site: 'shop' })
  await rejectionOf(shop.guard(rejectWith('ERROR_ZERO_BALANCE'), { provider: 'captchaai' }))
  const familyLines = family.metrics().split('\n')
  t.true(familyLines.includes('captcha_budget_capacity_total{name="solves",site="shop"} 1'))
  t.true(familyLines.includes('captcha_budget_excluded_total{name="solves",site="shop"} 0'))
})

test('the same code, two providers: ERROR_ZERO_BALANCE is capacity at CaptchaAI, excluded at 2Captcha', async (t) => {
  const captchaai = manual()
  const twocaptcha = manual()
  await rejectionOf(captchaai.guard(rejectWith('ERROR_ZERO_BALANCE'), { provider: 'captchaai' }))
  await rejectionOf(twocaptcha.guard(rejectWith('ERROR_ZERO_BALANCE'), { provider: '2captcha' }))
  t.deepEqual(captchaai.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 1 })
  t.deepEqual(twocaptcha.recorded, { successes: 0, failures: 0, excluded: 1, capacity: 0 })
})

// The clients' shapes (issue 33): 2Captcha's APIError (`err`, a numeric `code`,
// prose `message`), Anti-Captcha's bare string, a createTask answer's
// `errorCode`, puppeteer-extra-plugin-recaptcha's `{ error: '2captcha error: …' }`.
const SHAPES = [
  ['an Error with err (and a numeric code)', Object.assign(new Error('Your captcha was unable to be solved'), { err: 'ERROR_CAPTCHA_UNSOLVABLE', code: 1 })],
  ['a bare string', 'ERROR_CAPTCHA_UNSOLVABLE'],
  ['an Error with errorCode', Object.assign(new Error('createTask failed'), { errorCode: 'ERROR_CAPTCHA_UNSOLVABLE' })],
  ['an Error with a string code', Object.assign(new Error('x'), { code: 'ERROR_CAPTCHA_UNSOLVABLE' })],
  ['a result object with error', { error: '2captcha error: ERROR_CAPTCHA_UNSOLVABLE' }],
]
for (const [shape, rejection] of SHAPES) {
  test(`a client's rejection as ${shape} is read by the profile`, async (t) => {
    const tracker = manual()
    await rejectionOf(tracker.guard(rejectWith(rejection), { provider: '2captcha' }))
    // The same shape with a caller's code is excluded: the code was read, not defaulted.
    const callers =
      typeof rejection === 'string'
        ? 'ERROR_WRONG_USER_KEY'
        : JSON.parse(JSON.stringify(rejection).replaceAll('ERROR_CAPTCHA_UNSOLVABLE', 'ERROR_WRONG_USER_KEY'))
    await rejectionOf(tracker.guard(rejectWith(callers), { provider: '2captcha' }))
    t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 1, capacity: 0 })
  })
}

test.serial('an unknown code counts as a failure, with one warning per code naming it', async (t) => {
  const tracker = manual()
  const warnings = await warningsDuring(t, async () => {
    await rejectionOf(tracker.guard(rejectWith('ERROR_SOMETHING_NEW'), { provider: 'capsolver' }))
    await rejectionOf(tracker.guard(rejectWith('ERROR_SOMETHING_NEW'), { provider: 'capsolver' }))
    await rejectionOf(tracker.guard(rejectWith('ERROR_ANOTHER_NEW'), { provider: 'capsolver' }))
  })
  t.deepEqual(tracker.recorded, { successes: 0, failures: 3, excluded: 0, capacity: 0 })
  t.deepEqual(warnings, [
    'guard: capsolver answered ERROR_SOMETHING_NEW, which its profile does not list; counted as a failure',
    'guard: capsolver answered ERROR_ANOTHER_NEW, which its profile does not list; counted as a failure',
  ])
})

test('a rejection with no code (a network error) is a failure, without a warning', async (t) => {
  const tracker = manual()
  await rejectionOf(tracker.guard(rejectWith(new Error('socket hang up')), { provider: '2captcha' }))
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test("capacity holds the provider's next attempts for its published back-off, on the tracker's clock", async (t) => {
  const tracker = manual()
  tracker.advanceTo(1000)
  await rejectionOf(tracker.guard(rejectWith('ERROR_NO_SLOT_AVAILABLE'), { provider: '2captcha' }))
  let called = false
  const fn = async () => {
    called = true
    return 'token'
  }
  // 2Captcha: 5 s after ERROR_NO_SLOT_AVAILABLE — critical attempts too.
  tracker.advanceTo(5999)
  const err = await t.throwsAsync(tracker.guard(fn, { provider: '2captcha', critical: true }), {
    instanceOf: ProviderBackoffError,
    code: 'ERR_PROVIDER_BACKOFF',
  })
  t.like(err, { provider: '2captcha', providerCode: 'ERROR_NO_SLOT_AVAILABLE', retryAfterMs: 1 })
  t.false(called)
  // Another provider on the same tracker is not held.
  t.is(await tracker.guard(async () => 'other', { provider: 'capmonster' }), 'other')
  tracker.advanceTo(6000)
  t.is(await tracker.guard(fn, { provider: '2captcha' }), 'token')
  t.deepEqual(tracker.recorded, { successes: 2, failures: 0, excluded: 0, capacity: 1 })
})

test("2Captcha's ERROR_ZERO_BALANCE is excluded and still holds attempts 60 s", async (t) => {
  const tracker = manual()
  await rejectionOf(tracker.guard(rejectWith({ error: '2captcha error: ERROR_ZERO_BALANCE' }), { provider: '2captcha' }))
  tracker.advanceTo(59_999)
  const err = await t.throwsAsync(
    tracker.guard(async () => 'x', { provider: '2captcha' }),
    { instanceOf: ProviderBackoffError },
  )
  t.is(err.retryAfterMs, 1)
  tracker.advanceTo(60_000)
  t.is(await tracker.guard(async () => 'x', { provider: '2captcha' }), 'x')
})

test('guard options.provider: an unknown name is an ERR_INVALID_ARG_VALUE, nothing recorded', async (t) => {
  const tracker = manual()
  const known = "'captchaai', '2captcha', 'anticaptcha', 'capsolver', 'capmonster'"
  const err = await t.throwsAsync(
    tracker.guard(async () => 1, { provider: 'deathbycaptcha' }),
    { instanceOf: TypeError, code: 'ERR_INVALID_ARG_VALUE' },
  )
  t.is(err.message, `guard options.provider must be one of ${known}, got 'deathbycaptcha'`)
  const typeErr = await t.throwsAsync(
    tracker.guard(async () => 1, { provider: 2 }),
    { instanceOf: TypeError, code: 'ERR_INVALID_ARG_TYPE' },
  )
  t.is(typeErr.message, `guard options.provider must be one of ${known}, got number`)
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 0 })
})

test("createFailover: a solver held by its provider's back-off hands the task to the next", async (t) => {
  const busy = await startMockCaptchaAI({ zeroBalance: true }) // CaptchaAI's "no free thread"
  const healthy = await startMockCaptchaAI()
  t.teardown(() => Promise.all([busy.close(), healthy.close()]))
  const first = manual()
  const second = manual()
  const options = { apiKey: 'test-key', pollIntervalMs: 1, provider: 'captchaai' }
  const failover = createFailover([
    createSolver({ ...options, baseUrl: busy.url, tracker: first }),
    createSolver({ ...options, baseUrl: healthy.url, tracker: second }),
  ])
  const task = { method: 'turnstile', sitekey: 'k', pageurl: 'https://example.com/' }
  // Turned away for capacity: the second solves it. Then the first is held (5 s): nothing sent to it.
  t.is((await failover.solve(task)).solver, 1)
  t.is((await failover.solve(task)).solver, 1)
  t.is(busy.requests.length, 1, 'nothing sent to the held provider')
  t.deepEqual(first.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 1 })
  t.deepEqual(second.recorded, { successes: 2, failures: 0, excluded: 0, capacity: 0 })
})

test.serial('a server answering ever new codes: each a failure, at most 256 warnings in the process', async (t) => {
  const tracker = manual()
  const warnings = await warningsDuring(t, async () => {
    for (let i = 0; i < 300; i++) await rejectionOf(tracker.guard(rejectWith(`ERROR_NEW_${i}`), { provider: 'capmonster', critical: true }))
  })
  t.is(tracker.recorded.failures, 300)
  t.true(warnings.length <= 256 && warnings.length > 0, `${warnings.length} warnings`)
})

test('a code longer than 64 characters is no code: a failure, the text never echoed', async (t) => {
  const tracker = manual()
  await rejectionOf(tracker.guard(rejectWith(`ERROR_${'X'.repeat(100)}`), { provider: '2captcha' }))
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test('createFailover: a provider that turns the task away for capacity hands it to the next; all turned away → the last error', async (t) => {
  const { startCreateTaskServer } = require('../helpers/provider-http')
  const busy = await startCreateTaskServer()
  const healthy = await startCreateTaskServer()
  t.teardown(() => Promise.all([busy.close(), healthy.close()]))
  const first = manual()
  const second = manual()
  const task = { type: 'RecaptchaV2TaskProxyless', websiteURL: 'https://example.com/', websiteKey: 'k' }
  const failover = createFailover([
    createSolver({ apiKey: 'k', provider: 'anticaptcha', baseUrl: busy.url, tracker: first, pollIntervalMs: 1 }),
    createSolver({ apiKey: 'k', provider: 'capmonster', baseUrl: healthy.url, tracker: second, pollIntervalMs: 1 }),
  ])
  busy.next('ERROR_NO_SLOT_AVAILABLE')
  healthy.next('OK')
  t.like(await failover.solve(task), { solver: 1, answer: 'token-7301' })
  t.deepEqual(first.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 1 })
  t.deepEqual(second.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
  // 6 s on: no hold left; both turn it away now.
  first.advanceTo(6000)
  busy.next('ERROR_NO_SLOT_AVAILABLE')
  healthy.next('ERROR_NO_SLOT_AVAILABLE')
  const err = await t.throwsAsync(failover.solve(task), { code: 'ERROR_NO_SLOT_AVAILABLE' })
  t.true(err.message.startsWith('CapMonster Cloud createTask answered'), err.message)
  t.deepEqual([first.recorded.capacity, second.recorded.capacity], [2, 1])
})
