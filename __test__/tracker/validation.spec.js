const test = require('ava')
const { inspect } = require('node:util')
const { ErrorBudgetTracker } = require('../..')

const KNOWN =
  'targetRate, windowMs, warningThreshold, criticalThreshold, minEvents, resolutionMs, hysteresis, verdictWindowMs, clock, alerts, snapshot, now, persist, shared, fleet'

const badConfigs = [
  // [config, error class, code, the whole message]
  [{ targetRate: 0 }, RangeError, 'ERR_OUT_OF_RANGE', 'config.targetRate must be in (0, 1], got 0'],
  [{ targetRate: 1.5 }, RangeError, 'ERR_OUT_OF_RANGE', 'config.targetRate must be in (0, 1], got 1.5'],
  [{ targetRate: NaN }, RangeError, 'ERR_OUT_OF_RANGE', 'config.targetRate must be a finite number, got NaN'],
  [{ targetRate: Infinity }, RangeError, 'ERR_OUT_OF_RANGE', 'config.targetRate must be a finite number, got Infinity'],
  [{ targetRate: '0.95' }, TypeError, 'ERR_INVALID_ARG_TYPE', 'config.targetRate must be a number, got string'],
  [{ warningThreshold: 1.1 }, RangeError, 'ERR_OUT_OF_RANGE', 'config.warningThreshold must be in [0, 1], got 1.1'],
  [{ criticalThreshold: -0.1 }, RangeError, 'ERR_OUT_OF_RANGE', 'config.criticalThreshold must be in [0, 1], got -0.1'],
  [{ criticalThreshold: 0.6 }, RangeError, 'ERR_OUT_OF_RANGE', 'config.criticalThreshold (0.6) must not exceed warningThreshold (0.5)'],
  [{ windowMs: 0 }, RangeError, 'ERR_OUT_OF_RANGE', 'config.windowMs must be a positive integer of milliseconds, got 0'],
  [{ windowMs: 1.5 }, RangeError, 'ERR_OUT_OF_RANGE', 'config.windowMs must be a positive integer of milliseconds, got 1.5'],
  [{ windowMs: Infinity }, RangeError, 'ERR_OUT_OF_RANGE', 'config.windowMs must be a positive integer of milliseconds, got Infinity'],
  [{ resolutionMs: 0 }, RangeError, 'ERR_OUT_OF_RANGE', 'config.resolutionMs must be a positive integer of milliseconds, got 0'],
  [{ windowMs: 1000, resolutionMs: 2000 }, RangeError, 'ERR_OUT_OF_RANGE', 'config.resolutionMs (2000) must not exceed windowMs (1000)'],
  [
    { windowMs: 86400000, resolutionMs: 1 },
    RangeError,
    'ERR_OUT_OF_RANGE',
    'config.windowMs / resolutionMs must be at most 1000000 buckets, got 86400000: raise resolutionMs',
  ],
  [{ minEvents: -1 }, RangeError, 'ERR_OUT_OF_RANGE', 'config.minEvents must be a non-negative integer, got -1'],
  [{ minEvents: 2.5 }, RangeError, 'ERR_OUT_OF_RANGE', 'config.minEvents must be a non-negative integer, got 2.5'],
  [{ clock: 'wall' }, TypeError, 'ERR_INVALID_ARG_VALUE', "config.clock must be 'monotonic' or 'manual', got 'wall'"],
  [{ clock: 1 }, TypeError, 'ERR_INVALID_ARG_TYPE', "config.clock must be 'monotonic' or 'manual', got number"],
  [{ targetRat: 0.9 }, TypeError, 'ERR_INVALID_ARG_VALUE', `unknown config key 'targetRat'; known keys: ${KNOWN}; did you mean 'targetRate'?`],
  // A key with a lone surrogate was read back under its U+FFFD spelling, found undefined and ignored.
  [{ '\uD800': 1 }, TypeError, 'ERR_INVALID_ARG_VALUE', `unknown config key '\uFFFD'; known keys: ${KNOWN}`],
  [
    { persist: { path: 'x.json', interval: 5 } },
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    "config.persist has an unknown key 'interval'; known keys: path, intervalMs; did you mean 'intervalMs'?",
  ],
  [{ persist: { path: 5 } }, TypeError, 'ERR_INVALID_ARG_TYPE', 'config.persist.path must be a string, got number'],
  // An array is never what a field wants, and is named as one.
  [{ persist: [] }, TypeError, 'ERR_INVALID_ARG_TYPE', 'config.persist must be an object, got array'],
  [{ targetRate: [0.9] }, TypeError, 'ERR_INVALID_ARG_TYPE', 'config.targetRate must be a number, got array'],
  [{ alerts: {} }, TypeError, 'ERR_INVALID_ARG_TYPE', 'config.alerts must be an array, got object'],
  [{ persist: {} }, TypeError, 'ERR_INVALID_ARG_VALUE', 'config.persist.path is required'],
  [
    { persist: { path: 'x.json', intervalMs: 0.5 } },
    RangeError,
    'ERR_OUT_OF_RANGE',
    'config.persist.intervalMs must be a positive integer of milliseconds, got 0.5',
  ],
]

for (const [config, errorClass, code, message] of badConfigs) {
  test(`new ErrorBudgetTracker(${inspect(config)}) throws ${errorClass.name} ${code}`, (t) => {
    const err = t.throws(() => new ErrorBudgetTracker(config), { instanceOf: errorClass })
    t.is(err.code, code)
    t.is(err.message, message)
  })
}

test('a config that is not an object is a TypeError', (t) => {
  const err = t.throws(() => new ErrorBudgetTracker(0.95), { instanceOf: TypeError })
  t.is(err.message, 'config must be an object, got number')
})

test('an array is not a config: new ErrorBudgetTracker([]) is refused as shared(name, []) is', (t) => {
  for (const config of [[], [{ targetRate: 0.9 }]]) {
    t.throws(() => new ErrorBudgetTracker(config), {
      instanceOf: TypeError,
      code: 'ERR_INVALID_ARG_TYPE',
      message: 'config must be an object, got array',
    })
  }
  // The value's type is named the same way for the other arguments.
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  t.throws(() => tracker.record([]), { code: 'ERR_INVALID_ARG_TYPE', message: 'record(success): success must be a boolean, got array' })
  t.is(tracker.total, 0)
})

test('zero is a value, not "use the default"', (t) => {
  const tracker = new ErrorBudgetTracker({ warningThreshold: 0, criticalThreshold: 0, minEvents: 0, clock: 'manual' })
  // 1 failure of 21 at 95 %: budget 1.05, 0.05 left (f ≈ 0.048): critical by default, healthy with thresholds 0.
  for (let i = 0; i < 20; i++) tracker.record(true, 1000)
  tracker.record(false, 1000)
  t.is(tracker.status, 'healthy')
  const defaults = new ErrorBudgetTracker({ clock: 'manual' })
  for (let i = 0; i < 20; i++) defaults.record(true, 1000)
  defaults.record(false, 1000)
  t.is(defaults.status, 'critical')
})

test('undefined config fields take their defaults', (t) => {
  const tracker = new ErrorBudgetTracker({ targetRate: undefined, clock: undefined, persist: undefined })
  tracker.record(true)
  t.is(tracker.report().sloTarget, 0.95)
  // Not "given" either: no conflict with a snapshot or a shared tracker's config.
  const restored = ErrorBudgetTracker.restore(tracker.snapshot(), { clock: 'manual', now: undefined })
  t.is(restored.total, 1)
  const name = `undefined-keys-${process.pid}`
  const first = ErrorBudgetTracker.shared(name, { targetRate: 0.99 })
  const attached = ErrorBudgetTracker.shared(name, { targetRate: undefined, persist: undefined })
  t.is(attached.report().sloTarget, 0.99)
  first.close()
  attached.close()
})

const badRecords = [
  [['yes'], 'record(success): success must be a boolean, got string'],
  [[1], 'record(success): success must be a boolean, got number'],
  [[null], 'record(success): success must be a boolean, got null'],
  [[], 'record(success): success must be a boolean, got undefined'],
  [[true, '1000'], 'record(success, atMs): atMs must be a number of epoch ms, got string'],
]
for (const [args, message] of badRecords) {
  test(`record(${args.map((a) => inspect(a)).join(', ')}) is a TypeError and records nothing`, (t) => {
    const tracker = new ErrorBudgetTracker()
    const err = t.throws(() => tracker.record(...args), { instanceOf: TypeError })
    t.is(err.code, 'ERR_INVALID_ARG_TYPE')
    t.is(err.message, message)
    t.is(tracker.total, 0)
  })
}

test('a non-finite atMs is a RangeError and records nothing', (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const err = t.throws(() => tracker.record(false, NaN), { instanceOf: RangeError })
  t.is(err.code, 'ERR_OUT_OF_RANGE')
  t.is(tracker.total, 0)
  t.is(tracker.now, 0)
})

test('on/off with an unknown status or a non-function is a TypeError', (t) => {
  const tracker = new ErrorBudgetTracker()
  const bad = t.throws(() => tracker.on('broken', () => {}), { instanceOf: TypeError })
  t.is(bad.message, "on(event, listener): event must be one of 'healthy', 'warning', 'critical', 'exhausted', 'alert', 'resolve', 'incident', got 'broken'")
  // An unknown name is a wrong value; a name that is not a string, a wrong type.
  t.is(bad.code, 'ERR_INVALID_ARG_VALUE')
  t.throws(() => tracker.on(1, () => {}), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_TYPE', message: /event must be one of .*, got number$/ })
  const notFn = t.throws(() => tracker.on('healthy', 'cb'), { instanceOf: TypeError })
  t.is(notFn.message, 'on(event, listener): listener must be a function, got string')
  t.is(notFn.code, 'ERR_INVALID_ARG_TYPE')
  t.throws(() => tracker.off('Healthy', () => {}), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_VALUE' })
  tracker.close()
})

test("the status list the JavaScript parts use is the core's, in the order of the report's status index", (t) => {
  const { STATUSES } = require('../../lib/native/fast-report')
  t.deepEqual(STATUSES, ['healthy', 'warning', 'critical', 'exhausted'])
  t.true(Object.isFrozen(STATUSES))
  // Index 3 is exhausted: a 95 % tracker with every event failing.
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  tracker.recordMany(0, 10)
  t.is(tracker.report().status, STATUSES[3])
})

test('advanceTo is for manual clocks and never goes back', (t) => {
  const real = new ErrorBudgetTracker()
  const state = t.throws(() => real.advanceTo(1))
  t.is(state.code, 'ERR_INVALID_STATE')
  const manual = new ErrorBudgetTracker({ clock: 'manual' })
  manual.advanceTo(5000)
  const back = t.throws(() => manual.advanceTo(4000), { instanceOf: RangeError })
  t.is(back.message, "advanceTo(ms): ms (4000) is earlier than the tracker's now (5000)")
  const text = t.throws(() => manual.advanceTo('6000'), { instanceOf: TypeError })
  t.is(text.message, 'advanceTo(ms): ms must be a number of epoch ms, got string')
  const missing = t.throws(() => manual.advanceTo(), { instanceOf: TypeError })
  t.is(missing.message, 'advanceTo(ms): ms must be a number of epoch ms, got undefined')
  t.is(manual.now, 5000)
})
