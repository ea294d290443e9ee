// Issue 12, items 12, 13, 15 and the native messages of 16: the class called
// the wrong way, members on the wrong receiver, config getters, odd strings.
const test = require('ava')
const { nativeOnly } = require('../helpers/binding')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { ErrorBudgetTracker } = require('../..')

const REPORT_INTO = Symbol.for('captcha-error-budget.reportInto')

function trackerWith(successes, failures) {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  tracker.recordMany(successes, failures, 1000)
  return tracker
}

const CONSTRUCT =
  'ErrorBudgetTracker is a class: create trackers with new ErrorBudgetTracker(config); calling it without new, or on an existing object (.call/.apply), is refused'

test('the class called without new is a TypeError that defines nothing on globalThis', (t) => {
  t.false(Object.hasOwn(globalThis, 'record'))
  const err = t.throws(() => ErrorBudgetTracker(), { instanceOf: TypeError, code: 'ERR_CONSTRUCT_CALL_REQUIRED' })
  t.is(err.message, CONSTRUCT)
  t.throws(() => ErrorBudgetTracker({ clock: 'manual' }), { code: 'ERR_CONSTRUCT_CALL_REQUIRED' })
  t.false(Object.hasOwn(globalThis, 'record'))
  t.deepEqual(
    Object.getOwnPropertySymbols(globalThis).filter((s) => s === REPORT_INTO),
    [],
  )
})

test('ErrorBudgetTracker.call(tracker) is a TypeError and the tracker keeps its state, record and report', (t) => {
  const tracker = trackerWith(97, 3)
  const { record } = tracker
  const fill = tracker[REPORT_INTO]
  t.throws(() => ErrorBudgetTracker.call(tracker, { clock: 'manual' }), { instanceOf: TypeError, code: 'ERR_CONSTRUCT_CALL_REQUIRED' })
  t.throws(() => Reflect.apply(ErrorBudgetTracker, tracker, []), { code: 'ERR_CONSTRUCT_CALL_REQUIRED' })
  t.is(tracker.record, record)
  t.is(tracker[REPORT_INTO], fill)
  tracker.record(false, 1000) // 4 failures of 101 — the getters and report() read the same state
  t.is(tracker.total, 101)
  t.is(tracker.failures, 4)
  t.like(tracker.report(), { total: 101, failures: 4 })
  tracker.close()
})

test('the class called on another object (.call({}), Reflect.construct with another new.target) changes nothing', (t) => {
  const target = {}
  t.throws(() => ErrorBudgetTracker.call(target), { code: 'ERR_CONSTRUCT_CALL_REQUIRED' })
  t.deepEqual(Reflect.ownKeys(target), [])
  t.throws(() => Reflect.construct(ErrorBudgetTracker, [], Object), { code: 'ERR_CONSTRUCT_CALL_REQUIRED' })
  // A subclass constructs as before.
  class Counted extends ErrorBudgetTracker {}
  const sub = new Counted({ clock: 'manual' })
  sub.record(true, 1000)
  t.is(sub.report().total, 1)
  sub.close()
})

test('restore() and shared() called on a subclass make an instance of it; detached, an ErrorBudgetTracker', (t) => {
  class Mine extends ErrorBudgetTracker {
    constructor(config) {
      super(config)
      this.made = 'by Mine'
    }
  }
  const source = new ErrorBudgetTracker({ clock: 'manual', targetRate: 0.9, windowMs: 60_000 })
  source.record(false, 1000)
  const restored = Mine.restore(source.snapshot(), { clock: 'manual', now: 1000 })
  t.true(restored instanceof Mine)
  t.is(restored.constructor, Mine)
  t.is(restored.made, 'by Mine')
  t.is(restored.report().failures, 1)
  const shared = Mine.shared('restore-subclass-spec', { clock: 'manual' })
  t.true(shared instanceof Mine)
  const { restore } = ErrorBudgetTracker
  const detached = restore(source.snapshot(), { clock: 'manual', now: 1000 })
  t.is(Object.getPrototypeOf(detached), ErrorBudgetTracker.prototype)
  t.is(Object.getPrototypeOf(ErrorBudgetTracker.restore(source.snapshot(), { clock: 'manual', now: 1000 })), ErrorBudgetTracker.prototype)
  for (const tracker of [source, restored, shared, detached]) tracker.close()
})

nativeOnly('the fast report() (reportInto) is native-only: on WASI report() is the native method itself')(
  'reportInto refuses a Float64Array over a SharedArrayBuffer and writes nothing into it',
  (t) => {
    const tracker = trackerWith(97, 3)
    const shared = new Float64Array(new SharedArrayBuffer(8 * 64)).fill(7)
    const err = t.throws(() => tracker[REPORT_INTO](shared), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_TYPE' })
    t.is(err.message, 'reportInto(buffer): buffer must be a Float64Array over an ArrayBuffer, not a SharedArrayBuffer')
    t.true(shared.every((v) => v === 7))
    // An ordinary buffer: 15 values, [2] the total, [3] the failures.
    const plain = new Float64Array(64)
    t.is(tracker[REPORT_INTO](plain), 15)
    t.deepEqual([plain[2], plain[3]], [100, 3])
    // Too small: the size needed, nothing written.
    const small = new Float64Array(4).fill(7)
    t.is(tracker[REPORT_INTO](small), 15)
    t.true(small.every((v) => v === 7))
    tracker.close()
  },
)

test('a shared name with a lone surrogate is a TypeError; distinct well-formed names are distinct trackers', (t) => {
  for (const name of ['\ud800pool', 'pool\udc00', '\ud83dpool']) {
    const err = t.throws(() => ErrorBudgetTracker.shared(name), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_VALUE' })
    t.regex(err.message, /^config\.shared must be well-formed Unicode: it has a lone surrogate \(\\ud[8-9a-f][0-9a-f]{2}\) at index \d+/)
  }
  t.throws(() => new ErrorBudgetTracker({ shared: '\udfffx' }), { code: 'ERR_INVALID_ARG_VALUE', message: /index 0/ })
  const replacement = ErrorBudgetTracker.shared('i12-\ufffdpool')
  const emoji = ErrorBudgetTracker.shared('i12-\ud83d\ude00pool') // a surrogate pair is well-formed
  replacement.record(true)
  t.is(replacement.total, 1)
  t.is(emoji.total, 0)
  replacement.close()
  emoji.close()
})

test('a persist path with a NUL byte or a lone surrogate is a TypeError naming the option; nothing is created', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'i12-native-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const nul = t.throws(() => new ErrorBudgetTracker({ persist: { path: path.join(dir, 'a\0b.json') } }), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_VALUE',
  })
  t.is(nul.message, `config.persist.path must not contain a NUL byte (a file path cannot), found at index ${dir.length + 2}`)
  const lone = t.throws(() => new ErrorBudgetTracker({ persist: { path: path.join(dir, '\ud800.json') } }), {
    code: 'ERR_INVALID_ARG_VALUE',
  })
  t.regex(lone.message, /^config\.persist\.path must be well-formed Unicode/)
  // restore() names its own option.
  const json = new ErrorBudgetTracker({ clock: 'manual' }).snapshot()
  const viaRestore = t.throws(() => ErrorBudgetTracker.restore(json, { persist: { path: 'x\0' } }), { code: 'ERR_INVALID_ARG_VALUE' })
  t.is(viaRestore.message, 'restore(json, options): options.persist.path must not contain a NUL byte (a file path cannot), found at index 1')
  t.deepEqual(fs.readdirSync(dir), [])
  // A NUL byte in a config key: the unknown key, named.
  t.throws(() => new ErrorBudgetTracker({ 'window\0Ms': 1 }), { code: 'ERR_INVALID_ARG_VALUE', message: /^unknown config key 'window\\0Ms'/ })
})

test('every getter on a wrong receiver is a TypeError naming the getter (ERR_INVALID_THIS)', (t) => {
  const proto = ErrorBudgetTracker.prototype
  const getters = Object.getOwnPropertyNames(proto).filter((k) => typeof Object.getOwnPropertyDescriptor(proto, k).get === 'function')
  t.true(getters.length >= 14, getters.join())
  for (const name of getters) {
    const { get } = Object.getOwnPropertyDescriptor(proto, name)
    const err = t.throws(() => get.call({}), { instanceOf: TypeError, code: 'ERR_INVALID_THIS' })
    t.is(err.message, `the ${name} getter needs an ErrorBudgetTracker as this, got an object that is not an ErrorBudgetTracker`)
    t.throws(() => get.call(undefined), { code: 'ERR_INVALID_THIS', message: /got undefined$/ })
  }
  // Through the prototype itself (no tracker behind it).
  t.throws(() => proto.total, { code: 'ERR_INVALID_THIS' })
})

test('an unbound report() or method says how to call it; bound, it works', (t) => {
  const tracker = trackerWith(97, 3)
  const { report, snapshot, close } = tracker
  const err = t.throws(() => report(), { instanceOf: TypeError, code: 'ERR_INVALID_THIS' })
  t.is(err.message, 'report() needs an ErrorBudgetTracker as this, got undefined: call it as tracker.report(), or bind it to the tracker')
  t.throws(() => snapshot.call(5), { code: 'ERR_INVALID_THIS', message: /^snapshot\(\) needs an ErrorBudgetTracker as this, got a number/ })
  t.throws(() => tracker[Symbol.dispose].call(null), { code: 'ERR_INVALID_THIS', message: /^close\(\) needs/ })
  t.is(report.call(tracker).total, 100)
  t.is(report.bind(tracker)().failures, 3)
  close.call(tracker)
  t.true(tracker.closed)
})

test('each config property is read once: a getter cannot pass the checks with one value and be used with another', (t) => {
  const reads = {}
  const counted = (name, ...values) => {
    let n = 0
    return {
      get() {
        reads[name] = (reads[name] ?? 0) + 1
        return values[Math.min(n++, values.length - 1)]
      },
      enumerable: true,
    }
  }
  const config = Object.defineProperties(
    {},
    {
      targetRate: counted('targetRate', 0.9, 'not a number'),
      clock: counted('clock', 'manual', 42),
      alerts: counted('alerts', [
        Object.defineProperties({ name: 'fast', severity: 'page', longWindowMs: 60000, shortWindowMs: 5000 }, { burnRate: counted('burnRate', 5, 'x') }),
      ]),
    },
  )
  const tracker = new ErrorBudgetTracker(config)
  t.deepEqual(reads, { targetRate: 1, clock: 1, alerts: 1, burnRate: 1 })
  t.is(tracker.report().sloTarget, 0.9)
  t.is(tracker.alertPolicy[0].burnRate, 5)
  tracker.advanceTo(5) // the manual clock it was given
  t.is(tracker.now, 5)
  tracker.close()
  // A string first: refused by name, though a second read would give a number.
  const late = Object.defineProperties({}, { targetRate: counted('late', 'x', 0.9) })
  const err = t.throws(() => new ErrorBudgetTracker(late), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_TYPE' })
  t.is(err.message, 'config.targetRate must be a number, got string')
})
