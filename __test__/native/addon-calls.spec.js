// Issue 45: how many calls into the addon a guard() decision with its record, and a
// scrape, cost. Every way this package's JavaScript reaches the addon from a tracker is
// counted: the tracker's own native functions (`record` and those under the
// contract's symbols), its guard fillers (made by `guardFillers` on its first guard()
// or scrape: lib/native/fast-state.js), and every native member of the prototype except the getters
// that read through the figure function (counted there) and report() (its filler).
// This file patches the prototype: its tests run serially, in their own worker.
const test = require('ava')
const { ErrorBudgetTracker, BudgetExhaustedError } = require('../..')
const native = require('../../native.js')
const { FIGURE_INDEX } = require('../../lib/native/contract.js')
const { fillersOf } = require('../../lib/native/fast-state.js')
const { nativeOnly } = require('../helpers/binding')

const serial = nativeOnly('on WASI the getters stand in for the buffers (lib/native/fast-state.js)', test.serial)

const calls = []

// The prototype's native members, each call noted by name (a getter as `get name`);
// not `record`: each tracker has its own (a prototype `record` other than the class's
// would be taken for a subclass's override, and the tracker would get none).
const proto = ErrorBudgetTracker.prototype
for (const key of Object.getOwnPropertyNames(native.ErrorBudgetTracker.prototype)) {
  if (['constructor', 'report', 'record'].includes(key) || Object.hasOwn(FIGURE_INDEX, key)) continue
  const descriptor = Object.getOwnPropertyDescriptor(proto, key)
  if (typeof descriptor.get === 'function') {
    const get = descriptor.get
    Object.defineProperty(proto, key, {
      ...descriptor,
      get() {
        calls.push(`get ${key}`)
        return get.call(this)
      },
    })
  } else if (typeof descriptor.value === 'function') {
    const method = descriptor.value
    Object.defineProperty(proto, key, {
      ...descriptor,
      value: function () {
        calls.push(key)
        return Reflect.apply(method, this, arguments)
      },
    })
  }
}

const makeFillers = native.guardFillers
native.guardFillers = function () {
  calls.push('guardFillers')
  return Reflect.apply(makeFillers, this, arguments)
}

/** The guard fillers of `tracker`, each call noted by name (made now: one call, not counted after). */
function countFillers(tracker) {
  const bound = fillersOf(tracker)
  for (const [name, own] of Object.entries(bound)) {
    bound[name] = function () {
      calls.push(name)
      return Reflect.apply(own, this, arguments)
    }
  }
}

/** A manual-clock tracker whose own native functions and guard fillers note each call by name. */
function counted(config = {}) {
  const tracker = new ErrorBudgetTracker({ clock: 'manual', ...config })
  countFillers(tracker)
  for (const key of [...Object.getOwnPropertyNames(tracker), ...Object.getOwnPropertySymbols(tracker)]) {
    const own = tracker[key]
    const name = typeof key === 'symbol' ? key.description.replace('captcha-error-budget.', '') : key
    tracker[key] = function () {
      calls.push(name)
      return Reflect.apply(own, this, arguments)
    }
  }
  return tracker
}

/** The calls `run()` makes (awaited). */
async function callsOf(run) {
  calls.length = 0
  await run()
  return [...calls]
}

serial('a guarded success: one call to decide, one to record (the stamped record, no clock read)', async (t) => {
  const tracker = counted()
  tracker.advanceTo(5_000)
  t.deepEqual(await callsOf(() => tracker.guard(async () => 'token')), ['guardStateInto', 'recordStamped'])
  t.like(tracker.report(), { total: 1, failures: 0 })
  t.is(tracker.report().throttle.since, 5_000)
})

serial('a guarded failure: the same two calls', async (t) => {
  const tracker = counted()
  const failed = () => t.throwsAsync(tracker.guard(() => Promise.reject(new Error('ERROR_CAPTCHA_UNSOLVABLE'))))
  t.deepEqual(await callsOf(failed), ['guardStateInto', 'recordStamped'])
  t.like(tracker.report(), { total: 1, failures: 1 })
})

serial('a refused attempt: one call to decide, one for the report its error carries', async (t) => {
  const tracker = counted()
  tracker.record(false)
  const refused = () =>
    t.throwsAsync(
      tracker.guard(async () => 'token', { whenExhausted: 'refuse' }),
      { instanceOf: BudgetExhaustedError },
    )
  t.deepEqual(await callsOf(refused), ['guardStateInto', 'reportInto'])
})

serial('an attempt neither a solve nor a failure: one call to decide, one to read the clock', async (t) => {
  const tracker = counted()
  const excluded = () => t.throwsAsync(tracker.guard(() => Promise.reject(new Error('ERROR_WRONG_USER_KEY')), { countsAsFailure: () => 'excluded' }))
  t.deepEqual(await callsOf(excluded), ['guardStateInto', 'guardStateInto'])
  t.is(tracker.recorded.excluded, 1)
})

serial('a scrape with the default policy: one buffer read (the policy read once, at the first)', async (t) => {
  const tracker = counted()
  tracker.record(true)
  t.deepEqual(await callsOf(() => tracker.metrics()), ['scrapeInto', 'get alertPolicy'])
  t.deepEqual(await callsOf(() => tracker.metrics()), ['scrapeInto'])
  t.deepEqual(await callsOf(() => tracker.metrics({ name: 'again' })), ['scrapeInto'])
})

serial("a tracker's first guard() makes its fillers (one call, once); trackers that never guard nor are scraped make none", async (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  t.deepEqual(await callsOf(() => tracker.guard(async () => 'token')), ['guardFillers'])
  t.deepEqual(await callsOf(() => tracker.guard(async () => 'token')), [])
  // Its scrape uses the fillers its guard made (the policy is read at the first scrape, as always).
  t.deepEqual(await callsOf(() => tracker.metrics()), ['get alertPolicy'])
  const plain = new ErrorBudgetTracker({ clock: 'manual' })
  t.deepEqual(await callsOf(() => (plain.record(true), plain.report())), [])
  t.deepEqual(
    Object.getOwnPropertySymbols(plain).map((s) => s.description),
    ['captcha-error-budget.reportInto', 'captcha-error-budget.figure'],
  )
})
