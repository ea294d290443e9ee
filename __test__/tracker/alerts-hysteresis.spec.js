// Opt-in status hysteresis (config.hysteresis): worse at once, better only past
// the threshold by the margin. The default (0) keeps the reference's semantics
// (__test__/tracker/reference.spec.js).
const test = require('ava')
const { ErrorBudgetTracker } = require('../..')

// Status changes up to a sentinel that must come last: the window emptied,
// then a batch of failures (healthy → exhausted) at a known instant.
async function transitions(tracker, feed) {
  const seen = []
  for (const s of ['healthy', 'warning', 'critical', 'exhausted']) tracker.on(s, (r) => seen.push([s, r.at]))
  feed(tracker)
  const sentinel = tracker.now + 2 * 3_600_000
  const done = new Promise((resolve) => tracker.on('exhausted', (r) => r.at === sentinel && resolve()))
  tracker.advanceTo(sentinel)
  tracker.recordMany(0, 1000)
  await done
  return seen.filter(([, at]) => at < sentinel - 3_600_000).map(([s]) => s)
}

// 90 %, 1 h window, everything at time 0. Remaining fraction = 1 − failures / (total × 0.1):
//   97 ok + 3 failed    100 solves, 3 / 10    → 70 %    healthy
//   + 3 failed          103, 6 / 10.3         → 41.7 %  warning
//   + 20 ok             123, 6 / 12.3         → 51.2 %  healthy   | with 0.1: < 60 %, warning
//   + 1 failed          124, 7 / 12.4         → 43.5 %  warning   |
//   + 20 ok             144, 7 / 14.4         → 51.4 %  healthy   | warning
//   + 1 failed          145, 8 / 14.5         → 44.8 %  warning   |
//   + 60 ok             205, 8 / 20.5         → 61 %    healthy   | ≥ 60 %: healthy
function hover(tracker) {
  for (const [ok, failed] of [
    [97, 3],
    [0, 3],
    [20, 0],
    [0, 1],
    [20, 0],
    [0, 1],
    [60, 0],
  ])
    tracker.recordMany(ok, failed)
}

test('a status hovering at a threshold: the plain status flips, hysteresis changes it twice', async (t) => {
  const config = { targetRate: 0.9, clock: 'manual' }
  t.deepEqual(await transitions(new ErrorBudgetTracker(config), hover), ['warning', 'healthy', 'warning', 'healthy', 'warning', 'healthy'])
  const damped = new ErrorBudgetTracker({ ...config, hysteresis: 0.1 })
  t.deepEqual(await transitions(damped, hover), ['warning', 'healthy'])
})

test('with hysteresis, report().status is the held status', (t) => {
  const tracker = new ErrorBudgetTracker({ targetRate: 0.9, clock: 'manual', hysteresis: 0.1 })
  tracker.recordMany(97, 3)
  tracker.recordMany(0, 3)
  tracker.recordMany(20, 0)
  // 51.2 % left: healthy by the thresholds alone, still warning until 60 %.
  t.like(tracker.report(), { status: 'warning', budgetRemainingPct: 51.2 })
  t.is(tracker.lastStatus, 'warning')
})

test('config.hysteresis is checked', (t) => {
  t.throws(() => new ErrorBudgetTracker({ hysteresis: '0.1' }), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_TYPE',
    message: 'config.hysteresis must be a number, got string',
  })
  for (const bad of [1, -0.1, 2]) {
    t.throws(() => new ErrorBudgetTracker({ hysteresis: bad }), {
      instanceOf: RangeError,
      code: 'ERR_OUT_OF_RANGE',
      message: `config.hysteresis must be in [0, 1), got ${bad}`,
    })
  }
  t.throws(() => new ErrorBudgetTracker({ hysteresis: Number.NaN }), { instanceOf: RangeError, message: 'config.hysteresis must be a finite number, got NaN' })
  t.notThrows(() => new ErrorBudgetTracker({ hysteresis: 0 }).close())
})

test('a shared tracker is attached with the same hysteresis or none given', (t) => {
  const a = ErrorBudgetTracker.shared('hysteresis-spec', { hysteresis: 0.05 })
  t.throws(() => ErrorBudgetTracker.shared('hysteresis-spec', { hysteresis: 0.1 }), { message: /\(hysteresis differ\)/ })
  const b = ErrorBudgetTracker.shared('hysteresis-spec')
  b.close()
  a.close()
})
