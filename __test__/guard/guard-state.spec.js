// Issue 45: the guard's state lives in one module (lib/guard/state.js) and the
// tracker's report() and metrics() read it there; guard() defines nothing on the
// tracker, so its own properties and its report's keys are the same before and
// after the first guard().
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { ErrorBudgetTracker, BudgetExhaustedError } = require('../..')

const manual = (config = {}) => new ErrorBudgetTracker({ clock: 'manual', ...config })
const ownKeys = (tracker) => [...Object.getOwnPropertyNames(tracker), ...Object.getOwnPropertySymbols(tracker).map(String)]
const rejectWith = (code) => () => Promise.reject(new Error(code))

test("guard() leaves the tracker's own properties as they were, and report()'s keys", async (t) => {
  const tracker = manual()
  const ownBefore = ownKeys(tracker)
  const keysBefore = Object.keys(tracker.report())
  const prototypeReport = Object.getPrototypeOf(tracker).report
  await tracker.guard(async () => 'token')
  await t.throwsAsync(tracker.guard(rejectWith('ERROR_CAPTCHA_UNSOLVABLE')))
  await t.throwsAsync(tracker.guard(rejectWith('ERROR_WRONG_USER_KEY'), { countsAsFailure: () => 'excluded' }))
  t.deepEqual(ownKeys(tracker), ownBefore)
  t.false(Object.hasOwn(tracker, 'report'))
  t.is(tracker.report, prototypeReport)
  t.deepEqual(Object.keys(tracker.report()), keysBefore)
})

test("the guard's fields are in report() from construction: zeros, and no throttle until a decision", async (t) => {
  const tracker = manual()
  const report = tracker.report()
  t.is(report.excluded, 0)
  t.is(report.capacity, 0)
  t.is(report.throttle, null)
  // After the window's own fields (before a fleet tracker's `fleet`), in this order.
  t.deepEqual(Object.keys(report).slice(-3), ['excluded', 'capacity', 'throttle'])
  await tracker.guard(async () => 'token')
  // Each report gets its own object: changing one changes no other.
  const first = tracker.report()
  first.throttle.admitted = 99
  t.is(tracker.report().throttle.admitted, 1)
})

test('report() and metrics() show the same guard state: a success, a failure, an excluded attempt, a refusal', async (t) => {
  const tracker = manual()
  tracker.advanceTo(1_000)
  await tracker.guard(async () => 'token')
  await t.throwsAsync(tracker.guard(rejectWith('ERROR_CAPTCHA_UNSOLVABLE')))
  await t.throwsAsync(tracker.guard(rejectWith('ERROR_WRONG_USER_KEY'), { countsAsFailure: () => 'excluded' }))
  // 1 of 2 failed: exhausted; 'refuse' refuses without calling fn.
  await t.throwsAsync(
    tracker.guard(() => t.fail('not called'), { whenExhausted: 'refuse' }),
    { instanceOf: BudgetExhaustedError },
  )
  const report = tracker.report()
  t.like(report, { total: 2, failures: 1, excluded: 1, capacity: 0 })
  // Three admitted by the throttle in 'open', then the refusal moved it to 'refusing' at 1 000.
  t.deepEqual(report.throttle, { state: 'refusing', since: 1_000, admitted: 3, refused: 1, probes: 0, nextProbeInMs: null })
  const lines = tracker.metrics().split('\n')
  for (const line of [
    'captcha_budget_guard_attempts_total{name="default",decision="admitted"} 3',
    'captcha_budget_guard_attempts_total{name="default",decision="refused"} 1',
    'captcha_budget_throttle_state{name="default",state="open"} 0',
    'captcha_budget_throttle_state{name="default",state="refusing"} 1',
    'captcha_budget_excluded_total{name="default"} 1',
    'captcha_budget_capacity_total{name="default"} 0',
  ]) {
    t.true(lines.includes(line), line)
  }
})

test('before the first guard(), metrics() shows zero attempts and no throttle state', (t) => {
  const lines = manual().metrics().split('\n')
  t.deepEqual(
    lines.filter((l) => /^captcha_budget_(guard_attempts_total|throttle_state|excluded_total|capacity_total)\{/.test(l)).map((l) => l.split(' ')[1]),
    ['0', '0', '0', '0', '0', '0', '0', '0'],
  )
})

test('the guard state has one home: the throttle and the ledger keep no table of trackers; neither the guard nor the metrics patch a tracker', (t) => {
  const lib = path.join(__dirname, '..', '..', 'lib')
  for (const file of ['guard/throttle.js', 'guard/outcomes.js']) t.false(fs.readFileSync(path.join(lib, file), 'utf8').includes('WeakMap'), file)
  // (lib/fleet/ links a fleet tracker's sync in the constructor, before the tracker is handed out.)
  for (const file of ['guard', 'prometheus']
    .flatMap((dir) => fs.readdirSync(path.join(lib, dir)).map((f) => path.join(dir, f)))
    .filter((f) => f.endsWith('.js'))) {
    t.false(/Object\.defineProperty\(tracker\b/.test(fs.readFileSync(path.join(lib, file), 'utf8')), file)
  }
})
