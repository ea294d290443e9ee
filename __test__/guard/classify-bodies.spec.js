// A provider's code is read only from a field that holds one (a single code-shaped
// word) or from a client's short prose ('2captcha error: ERROR_…'), never out of a
// body: @2captcha/captcha-solver 1.3.9 rejects an in.php 502 HTML page with an
// APIError whose `err` (and `message`) is the whole page. A page naming
// ERROR_ZERO_BALANCE or ERROR_NO_SLOT_AVAILABLE is one failure, no back-off: the
// service never answered that code.
const test = require('ava')
const nock = require('nock')
const { Solver } = require('@2captcha/captcha-solver')
const { ErrorBudgetTracker } = require('../..')
const { offline } = require('../helpers/provider-http')

offline()
test.afterEach.always(() => nock.cleanAll())

const RECAPTCHA = { pageurl: 'https://shop.example/login', googlekey: '6Le-test-sitekey' }
const NOTHING = { successes: 0, failures: 0, excluded: 0, capacity: 0 }
// Each code, where it is listed, would be excluded (ERROR_ZERO_BALANCE, with a 60 s
// back-off; ERROR_KEY_DOES_NOT_EXIST) or capacity (ERROR_NO_SLOT_AVAILABLE, 5 s).
const CODES = ['ERROR_ZERO_BALANCE', 'ERROR_NO_SLOT_AVAILABLE', 'ERROR_KEY_DOES_NOT_EXIST']
// What a guarded attempt rejected with: any value, not only an Error.
const rejectionOf = (t, promise) =>
  promise.then(
    () => t.fail('resolved'),
    (rejection) => rejection,
  )
const page = (code) => `<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1><p>upstream ${code}</p></body></html>`

for (const code of CODES) {
  test.serial(`@2captcha/captcha-solver: a 502 HTML page naming ${code} is one failure, no back-off`, async (t) => {
    const tracker = new ErrorBudgetTracker({ clock: 'manual' })
    const solver = new Solver('test-key', 1)
    const scope = nock('https://2captcha.com').get('/in.php').query(true).reply(502, page(code), { 'content-type': 'text/html' })
    const error = await t.throwsAsync(tracker.guard(() => solver.recaptcha(RECAPTCHA), { provider: '2captcha' }))
    scope.done()
    t.like(error, { name: 'APIError', err: page(code) }) // the body whole, as the client holds it
    t.deepEqual(tracker.recorded, { ...NOTHING, failures: 1 })
    // Not held: the next attempt runs.
    t.is(await tracker.guard(async () => 'token', { provider: '2captcha' }), 'token')
  })
}

// The page, or a long line of text naming the code, in each field a client may use.
const bodies = (code) => [
  ['an HTML page', page(code)],
  ['a long line of text', `The upstream server answered with an error while processing the request from this client; it said ${code} and closed.`],
  ['text over several lines', `Bad gateway\n${code}`],
]
const shapes = [
  ['err', (body) => Object.assign(new Error('An Unexpected Error has occured.'), { name: 'APIError', code: 0, err: body })],
  ['errorCode', (body) => Object.assign(new Error('createTask failed'), { errorCode: body })],
  ['code', (body) => Object.assign(new Error('request failed'), { code: body })],
  ['error', (body) => ({ error: body })],
  ['message', (body) => new Error(body)],
  ['a bare string', (body) => body],
]
for (const [field, make] of shapes) {
  test(`${field}: a body naming a code is no code (one failure, no back-off); a code itself is read`, async (t) => {
    for (const code of CODES) {
      for (const [what, body] of bodies(code)) {
        const tracker = new ErrorBudgetTracker({ clock: 'manual' })
        await rejectionOf(
          t,
          tracker.guard(() => Promise.reject(make(body)), { provider: '2captcha' }),
        )
        t.deepEqual(tracker.recorded, { ...NOTHING, failures: 1 }, `${code} in ${what}`)
        t.is(await tracker.guard(async () => 'token', { provider: '2captcha' }), 'token', `${code} in ${what}: not held`)
      }
    }
    // The field holding the code alone (or, for the prose fields, a client's short message) still classifies.
    const tracker = new ErrorBudgetTracker({ clock: 'manual' })
    await rejectionOf(
      t,
      tracker.guard(() => Promise.reject(make('ERROR_NO_SLOT_AVAILABLE')), { provider: '2captcha' }),
    )
    t.deepEqual(tracker.recorded, { ...NOTHING, capacity: 1 })
  })
}

test("a client's short prose names its code: '2captcha error: …' in error, message or a bare string", async (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const prose = 'Error: 2captcha error: ERROR_WRONG_USER_KEY' // puppeteer-extra-plugin-recaptcha's error.toString()
  for (const rejection of [{ error: prose }, new Error(prose), prose]) {
    await rejectionOf(
      t,
      tracker.guard(() => Promise.reject(rejection), { provider: '2captcha' }),
    )
  }
  t.deepEqual(tracker.recorded, { ...NOTHING, excluded: 3 })
  // In err, a field that holds a code, prose is no code.
  const apiError = Object.assign(new Error('x'), { err: 'Bad gateway: ERROR_WRONG_USER_KEY' })
  await t.throwsAsync(tracker.guard(() => Promise.reject(apiError), { provider: '2captcha' }))
  t.deepEqual(tracker.recorded, { ...NOTHING, excluded: 3, failures: 1 })
})
