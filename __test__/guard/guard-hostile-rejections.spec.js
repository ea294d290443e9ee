// guard() settles whatever fn rejects with (issue 44): a value that throws when read
// — a throwing getter, a Proxy whose traps throw, a revoked Proxy — has no code, so
// it is one failure, and guard() rejects with that very value; nothing in the
// settle path (the code lookup, countsAsFailure) may leave the promise unsettled or
// let a rejection go unhandled. The same through createSolver, createFailover and a
// BudgetFamily's children and failover. Serial: each test watches the process's
// 'unhandledRejection' event while it runs.
const test = require('ava')
const { ErrorBudgetTracker, BudgetFamily, createSolver, createFailover } = require('../..')
const { catchWarnings } = require('../helpers/warnings.js')
const { startMockCaptchaAI } = require('../helpers/mock-captchaai')

const manual = () => new ErrorBudgetTracker({ clock: 'manual' })
const boom = () => {
  throw new Error('read me and die')
}
function revoked() {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy
}
function throwingGetter(field) {
  const value = new Error('has a code somewhere')
  Object.defineProperty(value, field, { get: boom })
  return value
}

// (Compared with ===: ava cannot describe a revoked Proxy in a failed t.is().)
// Every value below throws as soon as the code lookup reads it.
const HOSTILE = [
  ['an object whose err getter throws', () => throwingGetter('err')],
  ['an object whose errorCode getter throws', () => throwingGetter('errorCode')],
  ['an object whose code getter throws', () => throwingGetter('code')],
  ['an Error whose message getter throws', () => throwingGetter('message')],
  ['an object whose name getter throws', () => throwingGetter('name')],
  ['a Proxy whose get trap throws', () => new Proxy({}, { get: boom })],
  ['a Proxy whose getPrototypeOf trap throws', () => new Proxy({}, { getPrototypeOf: boom })],
  ['a revoked Proxy', revoked],
  // The getter throws a value that cannot be read either.
  ['an object whose err getter throws a revoked Proxy', () => Object.defineProperty({}, 'err', { get: revokedThrow })],
]
function revokedThrow() {
  throw revoked()
}

/**
 * How `promise` stands after the current turn of the event loop: fn rejects at
 * once, so guard() settles in microtasks, long before a setImmediate callback.
 */
async function afterATurn(promise) {
  let state = { settled: false }
  promise.then(
    (value) => (state = { settled: true, resolved: value }),
    (error) => (state = { settled: true, rejected: error }),
  )
  await new Promise((resolve) => setImmediate(resolve))
  return state
}

/** The unhandled rejections of this process while the test runs. */
function watchUnhandled(t) {
  const seen = []
  const listener = (reason) => seen.push(reason)
  process.on('unhandledRejection', listener)
  t.teardown(() => process.off('unhandledRejection', listener))
  return seen
}

for (const [what, make] of HOSTILE) {
  for (const provider of [undefined, 'captchaai']) {
    test.serial(`guard() rejects with ${what} and records one failure (provider ${provider ?? 'none'})`, async (t) => {
      const unhandled = watchUnhandled(t)
      const tracker = manual()
      const value = make()
      const state = await afterATurn(tracker.guard(() => Promise.reject(value), { provider, timeoutMs: 60_000 }))
      t.true(state.settled, 'guard() settled')
      t.true(state.rejected === value, 'rejected with the value itself')
      t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
      t.is(unhandled.length, 0)
    })
  }
}

test.serial('a synchronous throw of a revoked Proxy: the same one failure, the same value', async (t) => {
  const unhandled = watchUnhandled(t)
  const tracker = manual()
  const value = revoked()
  const state = await afterATurn(
    tracker.guard(() => {
      throw value
    }),
  )
  t.true(state.rejected === value, 'rejected with the value itself')
  t.is(tracker.recorded.failures, 1)
  t.is(unhandled.length, 0)
})

for (const [how, countsAsFailure, warning] of [
  [
    'answering',
    revoked,
    "guard: countsAsFailure must return a boolean or one of 'success', 'failure', 'excluded', 'capacity', got an unreadable value; the rejection counts as a failure",
  ],
  ['throwing', revokedThrow, 'guard: countsAsFailure threw (an unprintable object); the rejection counts as a failure'],
]) {
  test.serial(`countsAsFailure ${how} a revoked Proxy: a failure with a warning, guard() still rejects with the error`, async (t) => {
    const unhandled = watchUnhandled(t)
    const warnings = catchWarnings(
      t,
      (w) => w.name === 'BudgetGuardWarning',
      (w) => w.message,
    )
    const tracker = manual()
    const error = new Error('unsolvable')
    const state = await afterATurn(tracker.guard(() => Promise.reject(error), { countsAsFailure }))
    t.is(state.rejected, error)
    t.is(tracker.recorded.failures, 1)
    await new Promise((resolve) => setImmediate(resolve)) // process.emitWarning delivers on the next tick
    t.deepEqual(warnings, [warning])
    t.is(unhandled.length, 0)
  })
}

test.serial('createSolver: a countsAsFailure answering a revoked Proxy still settles the solve, one failure', async (t) => {
  const unhandled = watchUnhandled(t)
  catchWarnings(t, (w) => w.name === 'BudgetGuardWarning')
  const mock = await startMockCaptchaAI({ outcome: 'unsolvable', pollsUntilReady: 0 })
  t.teardown(() => mock.close())
  const tracker = manual()
  const solver = createSolver({ apiKey: 'test-key', tracker, baseUrl: mock.url, pollIntervalMs: 1, countsAsFailure: revoked })
  const error = await t.throwsAsync(solver.solve({ method: 'turnstile', sitekey: 'k', pageurl: 'https://example.com/' }))
  t.is(error.code, 'ERROR_CAPTCHA_UNSOLVABLE')
  t.is(tracker.recorded.failures, 1)
  t.is(unhandled.length, 0)
})

test.serial('createFailover: a solver rejecting with a revoked Proxy → the failover rejects with that value, one failure', async (t) => {
  const unhandled = watchUnhandled(t)
  const tracker = manual()
  const next = manual()
  const value = revoked()
  const hostile = { provider: 'captchaai', solve: () => tracker.guard(() => Promise.reject(value), { provider: 'captchaai' }) }
  const untouched = { provider: 'captchaai', solve: () => next.guard(async () => 'token') }
  const state = await afterATurn(createFailover([hostile, untouched]).solve({}))
  t.true(state.rejected === value, 'rejected with the value itself')
  t.is(tracker.recorded.failures, 1)
  t.is(next.total, 0, 'a failure is final: not sent to the next solver')
  t.is(unhandled.length, 0)
})

test.serial('createFailover: a solver rejecting with a Proxy whose getPrototypeOf throws → the failover rejects with that value', async (t) => {
  const unhandled = watchUnhandled(t)
  const value = new Proxy({}, { getPrototypeOf: boom, get: boom })
  const state = await afterATurn(createFailover([{ provider: 'captchaai', solve: () => Promise.reject(value) }]).solve({}))
  t.true(state.rejected === value, 'rejected with the value itself')
  t.is(unhandled.length, 0)
})

test.serial("a family: a child's guard() and the family's failover reject with the value, the child records one failure each", async (t) => {
  const unhandled = watchUnhandled(t)
  const family = new BudgetFamily({ labelNames: ['provider', 'site'], attribution: { provider: 'provider', site: 'site' }, clock: 'manual' })
  const value = revoked()
  const child = family.labels({ provider: 'a', site: 's' })
  t.true((await afterATurn(child.guard(() => Promise.reject(value)))).rejected === value, 'rejected with the value itself')
  t.is(child.recorded.failures, 1)
  const failover = createFailover(family, { providers: { a: (tracker) => ({ solve: () => tracker.guard(() => Promise.reject(value)) }) } })
  const state = await afterATurn(failover.solve({}, { labels: { site: 's' } }))
  t.true(state.rejected === value, 'rejected with the value itself')
  t.is(child.recorded.failures, 2)
  t.is(unhandled.length, 0)
})

test.serial("a tracker whose record() throws (a subclass's bug): guard() still settles with fn's outcome, with a warning", async (t) => {
  const unhandled = watchUnhandled(t)
  const warnings = catchWarnings(
    t,
    (w) => w.name === 'BudgetGuardWarning',
    (w) => w.message,
  )
  class Broken extends ErrorBudgetTracker {
    record() {
      throw new Error('disk full')
    }
  }
  const tracker = new Broken({ clock: 'manual' })
  t.deepEqual(await afterATurn(tracker.guard(async () => 'token')), { settled: true, resolved: 'token' })
  const error = new Error('unsolvable')
  t.deepEqual(await afterATurn(tracker.guard(() => Promise.reject(error))), { settled: true, rejected: error })
  await new Promise((resolve) => setImmediate(resolve))
  t.deepEqual(warnings, [
    'guard: recording the attempt failed (disk full); its outcome reaches the caller unrecorded',
    'guard: recording the attempt failed (disk full); its outcome reaches the caller unrecorded',
  ])
  t.is(unhandled.length, 0)
})
