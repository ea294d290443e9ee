// With globalThis.fetch replaced (a mocking library, a wrapper), fetch may reject
// with anything: a value whose reading throws (a throwing getter, a Proxy's trap, a
// revoked Proxy) or a primitive. solve() still rejects with a SolveError
// ERR_NETWORK, one failure; a reason that cannot be read is "an unreadable error".
// Serial: each test replaces globalThis.fetch while it runs.
const test = require('ava')
const { ErrorBudgetTracker, createSolver, SolveError } = require('../..')

const TURNSTILE = { method: 'turnstile', sitekey: '0x4AAAAAAAB-test', pageurl: 'https://shop.example/login' }
const TASK = { type: 'RecaptchaV2TaskProxyless', websiteURL: 'https://shop.example/login', websiteKey: '6Le-test-sitekey' }
// [provider, task, how its submission is named]
const PROTOCOLS = [
  ['captchaai', TURNSTILE, 'CaptchaAI submit'],
  ['capsolver', TASK, 'CapSolver createTask'],
]

const throwingProxy = (thrown) =>
  new Proxy(
    {},
    {
      get() {
        throw thrown
      },
      getPrototypeOf() {
        throw thrown
      },
      ownKeys() {
        throw thrown
      },
    },
  )
const revoked = () => {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}
const withThrowingGetter = (base, key) =>
  Object.defineProperty(base, key, {
    get() {
      throw new Error('getter')
    },
  })

// [what fetch rejects with (made anew for each test), the reason the message names]
const rejections = [
  ['a TypeError whose cause throws a primitive when read', () => new TypeError('fetch failed', { cause: throwingProxy(1) }), 'an unreadable error'],
  ['a TypeError whose cause is a revoked Proxy', () => new TypeError('fetch failed', { cause: revoked() }), 'an unreadable error'],
  ['an Error whose cause getter throws', () => withThrowingGetter(new Error('fetch failed'), 'cause'), 'an unreadable error'],
  ['an object whose message getter throws', () => withThrowingGetter({}, 'message'), 'an unreadable error'],
  ['a Proxy that throws on every read', () => throwingProxy(new Error('trap')), 'an unreadable error'],
  ['a revoked Proxy', revoked, 'an unreadable error'],
  ['the number 1', () => 1, 'an unreadable error'],
  ['undefined', () => undefined, 'an unreadable error'],
  [
    'a message that is an object whose toString throws',
    () => ({
      message: {
        toString: () => {
          throw new Error('toString')
        },
      },
    }),
    'an unreadable error',
  ],
  ['a string', () => 'socket hang up', 'socket hang up'],
  [
    'a readable TypeError (its cause a system error)',
    () => new TypeError('fetch failed', { cause: Object.assign(new Error('connect'), { code: 'ECONNRESET' }) }),
    'ECONNRESET',
  ],
]

for (const [provider, task, what] of PROTOCOLS) {
  for (const [rejection, make, reason] of rejections) {
    test.serial(`${provider}: fetch rejecting with ${rejection} is a SolveError ERR_NETWORK, one failure`, async (t) => {
      const realFetch = globalThis.fetch
      globalThis.fetch = () => Promise.reject(make())
      t.teardown(() => (globalThis.fetch = realFetch))
      const tracker = new ErrorBudgetTracker({ clock: 'manual' })
      const solver = createSolver({ apiKey: 'test-key', provider, baseUrl: 'http://127.0.0.1:9/', tracker, pollIntervalMs: 1, timeoutMs: 60_000 })
      const err = await t.throwsAsync(solver.solve(task), { instanceOf: SolveError, code: 'ERR_NETWORK' })
      t.is(err.message, `${what} request failed: ${reason}`)
      t.like(err, { stage: 'submit', taskId: null })
      t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
    })
  }
}
