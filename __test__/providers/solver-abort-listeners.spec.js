// The solvers' poll loops leave no abort listener behind on the guard's signal:
// each request's listener goes when that request ends. fetch (undici) keeps its
// listener on the signal it is given until the request is garbage-collected, so
// a long solve at a short poll interval piled them up (over 1500 in 60 s at
// pollIntervalMs: 1, and Node's MaxListenersExceededWarning). Both protocols,
// 50 "not ready" polls each, counted at every request.
const test = require('ava')
const { getEventListeners } = require('node:events')
const { ErrorBudgetTracker, createSolver } = require('../..')
const { startMockCaptchaAI } = require('../helpers/mock-captchaai.js')
const { startCreateTaskServer } = require('../helpers/provider-http.js')

const POLLS = 50

/**
 * A tracker whose guard() hands its signal to `seen.signal`, and a fetch that
 * counts the guard signal's abort listeners as each request starts (`seen.counts`).
 */
function countingListeners(t) {
  const tracker = new ErrorBudgetTracker({ alerts: [] })
  t.teardown(() => tracker.close())
  const seen = { signal: null, counts: [] }
  const guard = tracker.guard.bind(tracker)
  tracker.guard = (fn, options) =>
    guard((signal, attempt) => {
      seen.signal = signal
      return fn(signal, attempt)
    }, options)
  const realFetch = globalThis.fetch
  globalThis.fetch = (url, init) => {
    seen.counts.push(getEventListeners(seen.signal, 'abort').length)
    return realFetch(url, init)
  }
  t.teardown(() => (globalThis.fetch = realFetch))
  return { tracker, seen }
}

function expectBounded(t, seen, requests) {
  t.is(seen.counts.length, requests)
  // The one listener of the request starting (the requests before it have ended): never one per poll.
  t.true(Math.max(...seen.counts) <= 1, seen.counts.join(' '))
  t.is(getEventListeners(seen.signal, 'abort').length, 0, 'none left once the solve is done')
}

test.serial(`in.php / res.php: ${POLLS} polls leave no abort listener behind`, async (t) => {
  const mock = await startMockCaptchaAI({ pollsUntilReady: POLLS })
  t.teardown(() => mock.close())
  const { tracker, seen } = countingListeners(t)
  const solver = createSolver({ apiKey: 'test-key', tracker, baseUrl: mock.url, pollIntervalMs: 1, timeoutMs: 60_000 })
  const result = await solver.solve({ method: 'turnstile', sitekey: 'site-key', pageurl: 'https://shop.example/' })
  t.true(result.answer.startsWith('token-'))
  // The submit, 50 polls answered CAPCHA_NOT_READY, and the one that answers.
  expectBounded(t, seen, 1 + POLLS + 1)
})

test.serial(`createTask / getTaskResult: ${POLLS} polls leave no abort listener behind`, async (t) => {
  const server = await startCreateTaskServer()
  t.teardown(() => server.close())
  server.next('OK', POLLS)
  const { tracker, seen } = countingListeners(t)
  const solver = createSolver({ provider: 'capsolver', apiKey: 'test-key', tracker, baseUrl: server.url, pollIntervalMs: 1, timeoutMs: 60_000 })
  await solver.solve({ type: 'ReCaptchaV2TaskProxyLess', websiteURL: 'https://shop.example/login', websiteKey: 'site-key' })
  expectBounded(t, seen, 1 + POLLS + 1)
})
