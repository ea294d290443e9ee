// ErrorBudgetTracker.restore(json, options): the options are checked by index.js
// and named as the caller wrote them (options.<key>), never as the constructor's
// config; null is "no options", as undefined (and as elsewhere in the API).
const test = require('ava')
const { ErrorBudgetTracker } = require('../..')

// A 1 h window at 95 % on the manual clock, saved at 700: 40 successes, 3 failures.
function snapshot() {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  for (let i = 0; i < 40; i++) tracker.record(true, 100)
  for (let i = 0; i < 3; i++) tracker.record(false, 200)
  tracker.advanceTo(700)
  const json = tracker.snapshot()
  tracker.close()
  return json
}

test('null options are no options, as undefined', (t) => {
  const json = snapshot()
  for (const options of [undefined, null, {}]) {
    const restored = ErrorBudgetTracker.restore(json, options)
    // The lifetime counters come back; the window, saved 700 ms after the epoch, is aged to now by the real clock.
    t.is(restored.recorded.successes, 40, String(options))
    t.is(restored.recorded.failures, 3)
    restored.close()
  }
  const manual = ErrorBudgetTracker.restore(json, { clock: 'manual' })
  t.deepEqual([manual.now, manual.total, manual.failures], [700, 43, 3])
  manual.close()
})

test('an option restore does not take is a TypeError naming options.<key>', (t) => {
  const json = snapshot()
  // A misspelt option (clok) gets the closest one suggested; a config field none.
  for (const [key, hint] of [
    ['windowMs', ''],
    ['targetRate', ''],
    ['snapshot', ''],
    ['shared', ''],
    ['clok', "; did you mean 'clock'?"],
  ]) {
    t.throws(() => ErrorBudgetTracker.restore(json, { clock: 'manual', [key]: 1 }), {
      instanceOf: TypeError,
      code: 'ERR_INVALID_ARG_VALUE',
      message: `restore(json, options): options.${key} is not an option of restore (the config comes from the snapshot); known options: clock, now, persist${hint}`,
    })
  }
  t.throws(() => ErrorBudgetTracker.restore(json, 5), { instanceOf: TypeError, message: 'restore(json, options): options must be an object, got number' })
  t.throws(() => ErrorBudgetTracker.restore(json, []), { instanceOf: TypeError, message: 'restore(json, options): options must be an object, got array' })
  t.throws(() => ErrorBudgetTracker.restore(null), { instanceOf: TypeError, message: 'restore(json): json must be a string, got null' })
})

test("bad values of restore's own options are named options.<key> too", (t) => {
  const json = snapshot()
  t.throws(() => ErrorBudgetTracker.restore(json, { clock: 'wall' }), {
    instanceOf: TypeError,
    message: "restore(json, options): options.clock must be 'monotonic' or 'manual', got 'wall'",
  })
  t.throws(() => ErrorBudgetTracker.restore(json, { now: 5 }), {
    instanceOf: TypeError,
    message: "restore(json, options): options.now needs clock: 'manual' (a real clock restores at the current time)",
  })
  t.throws(() => ErrorBudgetTracker.restore(json, { clock: 'manual', now: 699 }), {
    instanceOf: RangeError,
    code: 'ERR_OUT_OF_RANGE',
    message: "restore(json, options): options.now (699) is earlier than the snapshot's savedAt (700): restore at or after it",
  })
  t.throws(() => ErrorBudgetTracker.restore(json, { persist: {} }), {
    instanceOf: TypeError,
    message: 'restore(json, options): options.persist.path is required',
  })
  // A snapshot's own problems keep their wording and code.
  const err = t.throws(() => ErrorBudgetTracker.restore(json.replace('"version":1', '"version":9'), { clock: 'manual' }))
  t.is(err.code, 'ERR_SNAPSHOT_INVALID')
  t.false(err.message.startsWith('restore(json, options)'), err.message)
})
