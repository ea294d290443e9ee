const test = require('ava')
const { catchWarnings } = require('../helpers/warnings')
const { performance } = require('node:perf_hooks')
const { ErrorBudgetTracker, BudgetExhaustedError, GuardTimeoutError } = require('../..')
const { settle } = require('../helpers/deliveries')

const manual = (config = {}) => new ErrorBudgetTracker({ clock: 'manual', ...config })

// A promise settled from outside, to decide when fn settles relative to the deadline.
function deferred() {
  let resolve
  let reject
  const promise = new Promise((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

// Today's all-or-nothing guard (the default is 'throttle': __test__/guard/throttle.spec.js).
const REFUSE = { whenExhausted: 'refuse' }

// Hand-worked at 95 %: 10 successes then 1 failure is 1 of 11, budget 0.55 → exhausted.
function exhaustedTracker() {
  const tracker = manual()
  for (let i = 0; i < 10; i++) tracker.record(true)
  tracker.record(false)
  return tracker
}

test('resolve → one success, and the value comes back', async (t) => {
  const tracker = manual()
  t.is(await tracker.guard(async () => 'token-1'), 'token-1')
  t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
  t.is(tracker.total, 1)
})

test('a synchronous return value is a success too', async (t) => {
  const tracker = manual()
  t.is(await tracker.guard(() => 42), 42)
  t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
})

test('reject → one failure, and the same error comes back', async (t) => {
  const tracker = manual()
  const boom = new Error('solver said no')
  const err = await t.throwsAsync(tracker.guard(async () => Promise.reject(boom)))
  t.is(err, boom)
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test('a synchronous throw counts exactly like a rejection', async (t) => {
  const tracker = manual()
  const boom = new Error('thrown before any await')
  const err = await t.throwsAsync(
    tracker.guard(() => {
      throw boom
    }),
  )
  t.is(err, boom)
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test("the article's double count is gone: 5 failed solves count 5, not 10", async (t) => {
  // 100 successes + 5 failures at 95 %: budget 5.25, 0.25 left (f = 0.048) → critical.
  // Counted twice (10 of 110: budget 5.5, 10 > 5.5) it would read exhausted.
  const tracker = manual()
  for (let i = 0; i < 100; i++) await tracker.guard(async () => 'ok')
  for (let i = 0; i < 5; i++) await t.throwsAsync(tracker.guard(async () => Promise.reject(new Error('unsolvable'))))
  t.deepEqual(tracker.recorded, { successes: 100, failures: 5, excluded: 0, capacity: 0 })
  t.is(tracker.failures, 5)
  t.is(tracker.status, 'critical')
})

test('concurrent attempts are each recorded once', async (t) => {
  const tracker = manual()
  const attempts = Array.from({ length: 20 }, (_, i) =>
    tracker.guard(async () => {
      await settle(i % 5)
      if (i % 2) throw new Error(`attempt ${i}`)
      return i
    }),
  )
  const results = await Promise.allSettled(attempts)
  t.is(results.filter((r) => r.status === 'fulfilled').length, 10)
  t.deepEqual(tracker.recorded, { successes: 10, failures: 10, excluded: 0, capacity: 0 })
})

test('fn receives an AbortSignal that is not aborted on success', async (t) => {
  const tracker = manual()
  let seen
  await tracker.guard(async (signal) => {
    seen = signal
  })
  t.true(seen instanceof AbortSignal)
  t.false(seen.aborted)
})

test('timeout → one failure, GuardTimeoutError, signal aborted with it as reason', async (t) => {
  const tracker = manual()
  let seen
  const started = performance.now()
  const err = await t.throwsAsync(
    tracker.guard(
      (signal) => {
        seen = signal
        return new Promise(() => {}) // never settles
      },
      { timeoutMs: 20 },
    ),
    { instanceOf: GuardTimeoutError, code: 'ETIMEDOUT', message: 'guarded call timed out after 20 ms' },
  )
  t.true(performance.now() - started >= 15, 'not before the deadline')
  t.is(err.timeoutMs, 20)
  t.true(seen.aborted)
  t.is(seen.reason, err)
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test('after a timeout, a late resolve is dropped: still one record', async (t) => {
  const tracker = manual()
  const late = deferred()
  await t.throwsAsync(
    tracker.guard(() => late.promise, { timeoutMs: 10 }),
    { code: 'ETIMEDOUT' },
  )
  late.resolve('token that came too late')
  await settle()
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test('after a timeout, a late rejection is dropped: not recorded, not unhandled, not classified', async (t) => {
  const tracker = manual()
  const late = deferred()
  const classified = []
  await t.throwsAsync(
    tracker.guard(() => late.promise, {
      timeoutMs: 10,
      countsAsFailure: (e) => classified.push(e) > 0,
    }),
    { code: 'ETIMEDOUT' },
  )
  late.reject(new Error('aborted'))
  await settle()
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
  t.deepEqual(classified, [], 'timeouts always count; the classifier is for rejections')
})

test('settling before the deadline clears it: no second record later', async (t) => {
  const tracker = manual()
  let seen
  t.is(
    await tracker.guard(
      async (signal) => {
        seen = signal
        return 'fast'
      },
      { timeoutMs: 15 },
    ),
    'fast',
  )
  await settle(40)
  t.false(seen.aborted)
  t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
})

test("while exhausted ('refuse'): BudgetExhaustedError with the report, fn not called, nothing recorded", async (t) => {
  const tracker = exhaustedTracker()
  let called = false
  const err = await t.throwsAsync(
    tracker.guard(async () => {
      called = true
    }, REFUSE),
    { instanceOf: BudgetExhaustedError, code: 'EBUDGET_EXHAUSTED' },
  )
  t.false(called)
  t.like(err.report, { status: 'exhausted', total: 11, failures: 1, successes: 10, sloTarget: 0.95 })
  t.deepEqual(err.report, tracker.report())
  t.true(err.message.includes('1 failure of 11 solves'), err.message)
  t.is(err.retryAfterMs, null) // 'refuse' cannot tell: only failures leaving the window end it
  t.deepEqual(tracker.recorded, { successes: 10, failures: 1, excluded: 0, capacity: 0 })
})

test('critical: true runs while exhausted and records its outcome', async (t) => {
  const tracker = exhaustedTracker()
  t.is(await tracker.guard(async () => 'must pass', { critical: true }), 'must pass')
  await t.throwsAsync(tracker.guard(async () => Promise.reject(new Error('no')), { critical: true }))
  t.deepEqual(tracker.recorded, { successes: 11, failures: 2, excluded: 0, capacity: 0 })
  // 2 of 13: budget 0.65 → still exhausted, so an ordinary call is still refused.
  t.is(tracker.status, 'exhausted')
  await t.throwsAsync(
    tracker.guard(async () => 'x', REFUSE),
    { code: 'EBUDGET_EXHAUSTED' },
  )
})

test('once the failures leave the window, the guard calls fn again', async (t) => {
  const tracker = manual({ windowMs: 60_000, resolutionMs: 1000 })
  tracker.record(true, 0)
  tracker.record(false, 0) // 1 of 2 → exhausted
  await t.throwsAsync(
    tracker.guard(async () => 'x', REFUSE),
    { code: 'EBUDGET_EXHAUSTED' },
  )
  tracker.advanceTo(60_000) // the events of t = 0 count while now − 0 < 60 000: gone
  t.is(await tracker.guard(async () => 'back'), 'back')
  t.deepEqual(tracker.recorded, { successes: 2, failures: 1, excluded: 0, capacity: 0 })
  t.is(tracker.total, 1)
})

test('countsAsFailure: false → excluded: nothing in the window, the error still comes back', async (t) => {
  const tracker = manual()
  const wrongKey = Object.assign(new Error('wrong key'), { code: 'ERROR_WRONG_USER_KEY' })
  const seen = []
  const countsAsFailure = (error) => {
    seen.push(error)
    return error.code !== 'ERROR_WRONG_USER_KEY'
  }
  const err = await t.throwsAsync(tracker.guard(async () => Promise.reject(wrongKey), { countsAsFailure }))
  t.is(err, wrongKey)
  t.deepEqual(seen, [wrongKey])
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 1, capacity: 0 })
  t.is(tracker.total, 0)
  await t.throwsAsync(tracker.guard(async () => Promise.reject(new Error('unsolvable')), { countsAsFailure }))
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 1, capacity: 0 })
})

test('countsAsFailure is not consulted on success', async (t) => {
  const tracker = manual()
  let calls = 0
  await tracker.guard(async () => 'ok', { countsAsFailure: () => ++calls > 0 })
  t.is(calls, 0)
  t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
})

// Serial: they listen to the process's warnings, which concurrent tests would share.
test.serial('a classifier that throws: the rejection counts, its error becomes a warning', async (t) => {
  const tracker = manual()
  const warnings = catchWarnings(t, undefined, (w) => [w.name, w.message])
  const boom = new Error('solver error')
  const err = await t.throwsAsync(
    tracker.guard(async () => Promise.reject(boom), {
      countsAsFailure: () => {
        throw new Error('classifier bug')
      },
    }),
  )
  await settle()
  t.is(err, boom, 'the caller gets fn’s error, not the classifier’s')
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
  t.deepEqual(warnings, [['BudgetGuardWarning', 'guard: countsAsFailure threw (classifier bug); the rejection counts as a failure']])
})

// Issue 20 item 7: values String() cannot convert used to leave guard() unsettled
// (its deadline already cleared), nothing recorded, and an unhandled rejection.
const unprintable = [
  ['a null-prototype object', () => Object.assign(Object.create(null), { why: 'np' }), "[Object: null prototype] { why: 'np' }"],
  [
    'an object whose toString throws',
    () => ({
      toString() {
        throw new Error('no')
      },
    }),
    '{ toString: [Function: toString] }',
  ],
  ['a Symbol', () => Symbol('classifier'), 'Symbol(classifier)'],
  [
    'an Error whose message getter throws',
    () =>
      Object.defineProperty(new Error(), 'message', {
        get() {
          throw new Error('no')
        },
      }),
    'an unprintable object',
  ],
  [
    'a revoked Proxy',
    () => {
      const { proxy, revoke } = Proxy.revocable({}, {})
      revoke()
      return proxy
    },
    'an unprintable object',
  ],
]
for (const [what, make, shown] of unprintable) {
  test.serial(`a classifier that throws ${what}: guard settles, one failure, a BudgetGuardWarning`, async (t) => {
    const tracker = manual()
    const warnings = catchWarnings(t, undefined, (w) => [w.name, w.message])
    const unhandled = []
    const onUnhandled = (reason) => unhandled.push(reason)
    process.on('unhandledRejection', onUnhandled)
    const boom = new Error('solver error')
    const thrown = make()
    const err = await t.throwsAsync(
      tracker.guard(async () => Promise.reject(boom), {
        timeoutMs: 60_000,
        countsAsFailure: () => {
          throw thrown
        },
      }),
    )
    await settle()
    process.off('unhandledRejection', onUnhandled)
    t.is(err, boom)
    t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
    t.deepEqual(warnings, [['BudgetGuardWarning', `guard: countsAsFailure threw (${shown}); the rejection counts as a failure`]])
    t.is(unhandled.length, 0)
  })
}

test.serial('a classifier that returns a non-boolean (a forgotten return): counts, and warns', async (t) => {
  const tracker = manual()
  const warnings = catchWarnings(t, undefined, (w) => w.message)
  await t.throwsAsync(tracker.guard(async () => Promise.reject(new Error('x')), { countsAsFailure: () => {} }))
  await settle()
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
  t.deepEqual(warnings, [
    "guard: countsAsFailure must return a boolean or one of 'success', 'failure', 'excluded', 'capacity', got undefined; the rejection counts as a failure",
  ])
})

const KNOWN = 'timeoutMs, critical, countsAsFailure, provider, whenExhausted, minSolves, probeIntervalMs'
const badCalls = [
  // [fn, options, error class, code, message]
  [undefined, undefined, TypeError, 'ERR_INVALID_ARG_TYPE', 'guard(fn, options): fn must be a function, got undefined'],
  [Promise.resolve(1), undefined, TypeError, 'ERR_INVALID_ARG_TYPE', 'guard(fn, options): fn must be a function, got object'],
  [() => 1, 5000, TypeError, 'ERR_INVALID_ARG_TYPE', 'guard options must be an object, got number'],
  [() => 1, null, TypeError, 'ERR_INVALID_ARG_TYPE', 'guard options must be an object, got null'],
  [() => 1, { timeout: 10 }, TypeError, 'ERR_INVALID_ARG_VALUE', `unknown key 'timeout' in guard options; known keys: ${KNOWN}`],
  [() => 1, { timeoutMs: '10' }, TypeError, 'ERR_INVALID_ARG_TYPE', 'guard options.timeoutMs must be a number, got string'],
  [() => 1, { timeoutMs: 0 }, RangeError, 'ERR_OUT_OF_RANGE', 'guard options.timeoutMs must be an integer in [1, 2147483647], got 0'],
  [() => 1, { timeoutMs: -5 }, RangeError, 'ERR_OUT_OF_RANGE', 'guard options.timeoutMs must be an integer in [1, 2147483647], got -5'],
  [() => 1, { timeoutMs: 1.5 }, RangeError, 'ERR_OUT_OF_RANGE', 'guard options.timeoutMs must be an integer in [1, 2147483647], got 1.5'],
  [() => 1, { timeoutMs: NaN }, RangeError, 'ERR_OUT_OF_RANGE', 'guard options.timeoutMs must be an integer in [1, 2147483647], got NaN'],
  [() => 1, { timeoutMs: 2 ** 31 }, RangeError, 'ERR_OUT_OF_RANGE', 'got 2147483648'],
  [() => 1, { critical: 'yes' }, TypeError, 'ERR_INVALID_ARG_TYPE', 'guard options.critical must be a boolean, got string'],
  [() => 1, { countsAsFailure: true }, TypeError, 'ERR_INVALID_ARG_TYPE', 'guard options.countsAsFailure must be a function, got boolean'],
  [() => 1, { whenExhausted: 'stop' }, TypeError, 'ERR_INVALID_ARG_VALUE', "guard options.whenExhausted must be one of 'throttle', 'refuse', got 'stop'"],
  [() => 1, { whenExhausted: true }, TypeError, 'ERR_INVALID_ARG_TYPE', "guard options.whenExhausted must be one of 'throttle', 'refuse', got boolean"],
  [() => 1, { minSolves: -1 }, RangeError, 'ERR_OUT_OF_RANGE', 'guard options.minSolves must be an integer in [0, 9007199254740991], got -1'],
  [() => 1, { minSolves: '100' }, TypeError, 'ERR_INVALID_ARG_TYPE', 'guard options.minSolves must be a number, got string'],
  [() => 1, { probeIntervalMs: 0 }, RangeError, 'ERR_OUT_OF_RANGE', 'guard options.probeIntervalMs must be an integer in [1, 2147483647], got 0'],
]

for (const [fn, options, errorClass, code, message] of badCalls) {
  test(`bad input rejects with ${errorClass.name}: ${message}`, async (t) => {
    const tracker = manual()
    const err = await t.throwsAsync(tracker.guard(fn, options), { instanceOf: errorClass, code })
    t.true(err.message.includes(message), err.message)
    t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 0 })
  })
}

test('bad options: fn is not called', async (t) => {
  const tracker = manual()
  let called = false
  await t.throwsAsync(
    tracker.guard(() => (called = true), { timeoutMs: 0 }),
    { code: 'ERR_OUT_OF_RANGE' },
  )
  t.false(called)
})

test('undefined options take their defaults', async (t) => {
  const tracker = manual()
  t.is(await tracker.guard(async () => 'ok', { timeoutMs: undefined, critical: undefined, countsAsFailure: undefined }), 'ok')
  t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
})

test('guard() detached from its tracker is a TypeError', async (t) => {
  const { guard } = manual()
  await t.throwsAsync(
    guard(async () => 1),
    {
      instanceOf: TypeError,
      message: 'guard() must be called on an ErrorBudgetTracker, got undefined',
    },
  )
})

test('a closed tracker: ERR_TRACKER_CLOSED, fn not called', async (t) => {
  const tracker = manual()
  tracker.close()
  let called = false
  await t.throwsAsync(
    tracker.guard(async () => {
      called = true
    }),
    { code: 'ERR_TRACKER_CLOSED', message: 'cannot call guard() on a closed ErrorBudgetTracker' },
  )
  t.false(called)
})

test('closed while fn runs: the outcome still reaches the caller, unrecorded', async (t) => {
  const tracker = manual()
  const running = deferred()
  const pending = tracker.guard(() => running.promise)
  tracker.close()
  running.resolve('solved during shutdown')
  t.is(await pending, 'solved during shutdown')
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 0 })
})

test('guard is a non-enumerable method of every tracker', (t) => {
  t.is(typeof ErrorBudgetTracker.prototype.guard, 'function')
  t.false(Object.keys(ErrorBudgetTracker.prototype).includes('guard'))
  t.false(Object.keys(manual()).includes('guard'))
})
