// puppeteer-extra-plugin-recaptcha (the real package, HTTP intercepted; no browser:
// getRecaptchaSolutions() is the step that calls the provider). Its provider hook
// `provider.fn` wraps the built-in 2captcha provider in guard(fn, { provider: '2captcha' }).
// The provider reports an error in its result (`{ error: 'Error: 2captcha error: …' }`),
// not as a rejection: the hook throws it, so the guard can read it.
const test = require('ava')
const nock = require('nock')
const RecaptchaPlugin = require('puppeteer-extra-plugin-recaptcha')
const twoCaptcha = require('puppeteer-extra-plugin-recaptcha/dist/provider/2captcha')
const { ErrorBudgetTracker } = require('../..')
const { offline, twoCaptchaText, SEQUENCE, TOKEN } = require('../helpers/provider-http')

offline()
test.afterEach.always(() => nock.cleanAll())

const CAPTCHAS = [{ _vendor: 'recaptcha', id: 'c1', sitekey: '6Le-test-sitekey', url: 'https://shop.example/login' }]

function guardedPlugin(tracker) {
  const fn = (captchas, token, opts) =>
    tracker.guard(
      async () => {
        const result = await twoCaptcha.getSolutions(captchas, token, opts)
        if (result.error) throw result.error // a solution with `error`: read by the profile
        return result
      },
      { provider: '2captcha' },
    )
  return RecaptchaPlugin({ provider: { id: '2captcha', token: 'test-key', fn }, throwOnError: true })
}

async function attempt(tracker, code) {
  const scope = twoCaptchaText(code)
  const settled = await guardedPlugin(tracker)
    .getRecaptchaSolutions(CAPTCHAS)
    .then(
      (value) => ({ value }),
      (error) => ({ error }),
    )
  scope.done()
  return settled
}

const manual = () => new ErrorBudgetTracker({ clock: 'manual' })

// The plugin prints a console.warn of its own for every error; not the subject here.
const quiet = () => {
  const warn = console.warn
  console.warn = () => {}
  return () => (console.warn = warn)
}

test.serial('success: one success, the solution back (the provider polls every 2 s: one poll)', async (t) => {
  const tracker = manual()
  const { value } = await attempt(tracker, 'OK')
  t.is(value.solutions[0].text, TOKEN)
  t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
})

test.serial('ERROR_CAPTCHA_UNSOLVABLE (an error in the result): one failure', async (t) => {
  const restore = quiet()
  const tracker = manual()
  const { error } = await attempt(tracker, 'ERROR_CAPTCHA_UNSOLVABLE')
  restore()
  t.like(error, { error: 'Error: 2captcha error: ERROR_CAPTCHA_UNSOLVABLE' })
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test.serial('ERROR_WRONG_USER_KEY and ERROR_DOMAIN_NOT_ALLOWED: excluded; ERROR_NO_SLOT_AVAILABLE: capacity', async (t) => {
  const restore = quiet()
  const tracker = manual()
  await attempt(tracker, 'ERROR_WRONG_USER_KEY')
  await attempt(tracker, 'ERROR_DOMAIN_NOT_ALLOWED')
  await attempt(tracker, 'ERROR_NO_SLOT_AVAILABLE')
  const held = await guardedPlugin(tracker)
    .getRecaptchaSolutions(CAPTCHAS)
    .catch((e) => e)
  restore()
  t.like(held, { code: 'ERR_PROVIDER_BACKOFF', retryAfterMs: 5000 })
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 2, capacity: 1 })
})

test.serial("the issue's sequence: 1 success, 1 failure, 3 excluded, 1 capacity", async (t) => {
  const restore = quiet()
  const tracker = manual()
  for (const [i, code] of SEQUENCE.entries()) {
    tracker.advanceTo(i * 60_000)
    await attempt(tracker, code)
  }
  restore()
  t.deepEqual(tracker.recorded, { successes: 1, failures: 1, excluded: 3, capacity: 1 })
})
