const test = require('ava')
const { ErrorBudgetTracker, BudgetExhaustedError } = require('../..')

// guard()'s whenExhausted: 'throttle' (the default) and 'refuse' (docs/when-the-budget-runs-out.md).
// Hand-worked at 95 %: a success earns 0.05 of the ledger, a failure costs 0.95; the
// ledger lies in [−0.5, 4.75] (10 successes below zero, 5 failures above it).

const manual = (config = {}) => new ErrorBudgetTracker({ clock: 'manual', ...config })
const ok = () => 'token'
const fail = () => {
  throw new Error('ERROR_CAPTCHA_UNSOLVABLE')
}
// 'admitted' or the retryAfterMs of the refusal.
async function attempt(tracker, fn, options) {
  try {
    await tracker.guard(fn, options)
    return 'admitted'
  } catch (err) {
    if (err instanceof BudgetExhaustedError) return err.retryAfterMs
    return 'admitted'
  }
}

test('cold start: a first failure does not stop a default guard (no refusal under 100 solves)', async (t) => {
  const tracker = manual() // the article's default config: 1 h window, no minimum
  t.is(await attempt(tracker, fail), 'admitted')
  t.is(tracker.status, 'exhausted') // the status keeps the article's semantics: 1 failure of 1
  for (let i = 1; i < 100; i++) t.is(await attempt(tracker, ok), 'admitted', `attempt ${i}`)
  t.like(tracker.report().throttle, { state: 'open', admitted: 100, refused: 0, probes: 0 })
  // 'refuse' keeps the guard of before: its minSolves is 0.
  const before = manual()
  await attempt(before, fail, { whenExhausted: 'refuse' })
  t.is(await attempt(before, ok, { whenExhausted: 'refuse' }), null)
})

test('throttled: one probe per probeIntervalMs of the tracker clock; 10 probe successes → full admission', async (t) => {
  const tracker = manual({ windowMs: 24 * 3600_000 })
  const o = { minSolves: 0 }
  t.is(await attempt(tracker, fail, o), 'admitted') // ledger −0.95 → the floor −0.5; 1 of 1: exhausted
  t.is(await attempt(tracker, ok, o), 20_000) // just exhausted, ledger < 0: throttled, first probe one interval on
  t.like(tracker.report().throttle, { state: 'throttled', since: 0, nextProbeInMs: 20_000 })
  tracker.advanceTo(19_999)
  t.is(await attempt(tracker, ok, o), 1)
  for (let k = 1; k <= 10; k++) {
    tracker.advanceTo(k * 20_000)
    t.is(await attempt(tracker, ok, o), 'admitted', `probe ${k}`) // ledger −0.5 + 0.05 k
    if (k < 10) t.is(await attempt(tracker, ok, o), 20_000, `after probe ${k}`)
  }
  // 1 failure of 11 solves: still exhausted, but the recent attempts meet the SLO.
  t.is(tracker.status, 'exhausted')
  t.like(tracker.report().throttle, { state: 'admitting', since: 200_000, probes: 10, nextProbeInMs: null })
  for (let i = 0; i < 5; i++) t.is(await attempt(tracker, ok, o), 'admitted')
  // A failure takes the ledger (0.25) below zero: throttled again, next probe 20 s on.
  tracker.advanceTo(200_500)
  t.is(await attempt(tracker, fail, o), 'admitted')
  t.is(await attempt(tracker, ok, o), 20_000)
  t.like(tracker.report().throttle, { state: 'throttled', since: 200_500, admitted: 17, refused: 12, probes: 10 })
  // A relapse doubles the floor's depth and starts from its bottom: −1, 20 successes.
  for (let k = 1; k <= 20; k++) {
    tracker.advanceTo(200_500 + k * 20_000)
    t.is(await attempt(tracker, ok, o), 'admitted', `probe ${k} after the relapse`)
    t.is(tracker.report().throttle.state, k < 20 ? 'throttled' : 'admitting', `after probe ${k}`)
  }
})

test('full admission survives the odd failure; the ledger holds at most 5 failures of credit', async (t) => {
  const tracker = manual({ windowMs: 24 * 3600_000 })
  for (let i = 0; i < 10; i++) tracker.record(false, 0) // an old burst: exhausted for a day
  tracker.advanceTo(600_000) // 10 minutes on: nothing failed in the last 5
  for (let i = 0; i < 100; i++) t.is(await attempt(tracker, ok), 'admitted') // 10 of 110: exhausted, ledger 100 × 0.05 → capped at 4.75
  t.like(tracker.report(), { status: 'exhausted', throttle: { state: 'admitting' } })
  for (let i = 0; i < 5; i++) t.is(await attempt(tracker, fail), 'admitted') // 4.75 − 5 × 0.95 ≈ 0: still admitting
  t.like(tracker.report().throttle, { state: 'admitting' })
  t.is(await attempt(tracker, fail), 'admitted') // the 6th in a row: below zero
  t.is(await attempt(tracker, ok), 20_000)
  t.like(tracker.report().throttle, { state: 'throttled', admitted: 106, refused: 1 })
})

test("once the window leaves 'exhausted', the budget governs again: 'open'", async (t) => {
  const tracker = manual({ windowMs: 60_000, resolutionMs: 1000 })
  const o = { minSolves: 0 }
  await attempt(tracker, fail, o)
  t.is(await attempt(tracker, ok, o), 20_000)
  tracker.advanceTo(60_000) // the failure left the window
  t.is(tracker.status, 'healthy')
  t.is(await attempt(tracker, ok, o), 'admitted')
  t.like(tracker.report().throttle, { state: 'open', since: 60_000 })
})

test('critical: true runs while throttled, is counted as admitted, is not a probe', async (t) => {
  const tracker = manual()
  const o = { minSolves: 0 }
  await attempt(tracker, fail, o)
  t.is(await attempt(tracker, ok, { ...o, critical: true }), 'admitted')
  t.is(await attempt(tracker, ok, o), 20_000) // the ledger (−0.45) is still below zero
  t.like(tracker.report().throttle, { state: 'throttled', admitted: 2, refused: 1, probes: 0 })
})

test('probeIntervalMs and minSolves are options; retryAfterMs is on the error and in its message', async (t) => {
  const tracker = manual()
  await attempt(tracker, fail, { minSolves: 0 })
  for (let i = 0; i < 5; i++) tracker.record(false)
  const err = await t.throwsAsync(tracker.guard(ok, { minSolves: 6, probeIntervalMs: 5000 }), { instanceOf: BudgetExhaustedError })
  t.is(err.retryAfterMs, 5000)
  t.true(err.message.includes('throttled: the next probe may run in 5000 ms'), err.message)
  t.like(err.report, { status: 'exhausted', total: 6, failures: 6, throttle: { state: 'throttled', refused: 1 } })
  // Under minSolves the window is not evidence enough: admitted.
  t.is(await attempt(tracker, ok, { minSolves: 8 }), 'admitted')
})

test("a restarted worker: the tracker's last 5 minutes stand in for the guard's own evidence", async (t) => {
  // 100 solves, the last 10 failed (burn rate over 5 min > 1): the first guard() is throttled.
  const burning = manual()
  for (let i = 0; i < 90; i++) burning.record(true, i * 1000)
  for (let i = 90; i < 100; i++) burning.record(false, i * 1000)
  t.is(burning.status, 'exhausted')
  t.is(await attempt(burning, ok), 20_000)
  // Exhausted by failures older than 5 minutes, healthy since: admitted (the recent attempts meet the SLO).
  const recovered = manual()
  for (let i = 0; i < 10; i++) recovered.record(false, i * 1000)
  for (let i = 10; i < 110; i++) recovered.record(true, 600_000 + i * 1000)
  t.is(recovered.status, 'exhausted') // 10 of 110 > 5.5
  t.is(await attempt(recovered, ok), 'admitted')
  t.like(recovered.report().throttle, { state: 'admitting' })
})

test("a guard with under 10 outcomes of its own goes by the window's last 5 minutes (a fleet's window); with 10, by its own", async (t) => {
  const fresh = manual()
  await attempt(fresh, ok) // 1 outcome of its own
  for (let i = 0; i < 94; i++) fresh.record(true) // others' solves, as a fleet's sync installs them
  for (let i = 0; i < 10; i++) fresh.record(false)
  t.is(fresh.status, 'exhausted') // 10 of 105 > 5.25; over the last 5 min: burn 10 / 5.25 = 1.9
  t.is(await attempt(fresh, ok), 20_000)
  const seasoned = manual()
  for (let i = 0; i < 10; i++) await attempt(seasoned, ok) // 10 of its own: ledger 0.5
  for (let i = 0; i < 84; i++) seasoned.record(true)
  for (let i = 0; i < 10; i++) seasoned.record(false)
  t.is(seasoned.status, 'exhausted')
  t.is(await attempt(seasoned, ok), 'admitted')
  t.like(seasoned.report().throttle, { state: 'admitting' })
})

test('report().throttle null until guard() ran; each tracker throttles alone', async (t) => {
  const a = manual()
  const b = manual()
  t.is(a.report().throttle, null)
  await attempt(a, fail, { minSolves: 0 })
  await attempt(a, ok, { minSolves: 0 })
  await attempt(b, ok, { minSolves: 0 })
  t.like(a.report().throttle, { state: 'throttled', admitted: 1, refused: 1 })
  t.deepEqual(b.report().throttle, { state: 'open', since: 0, admitted: 1, refused: 0, probes: 0, nextProbeInMs: null })
})

test("'refuse': every attempt refused while exhausted, retryAfterMs null, state 'refusing'", async (t) => {
  const tracker = manual()
  const o = { whenExhausted: 'refuse' }
  await attempt(tracker, fail, o)
  tracker.advanceTo(3_599_999)
  t.is(await attempt(tracker, ok, o), null)
  t.like(tracker.report().throttle, { state: 'refusing', admitted: 1, refused: 1 })
  tracker.advanceTo(3_600_000)
  t.is(await attempt(tracker, ok, o), 'admitted')
})

test('metrics(): admitted and refused counters and the throttle state', async (t) => {
  const tracker = manual()
  await attempt(tracker, fail, { minSolves: 0 })
  await attempt(tracker, ok, { minSolves: 0 })
  await attempt(tracker, ok, { minSolves: 0 })
  const lines = tracker.metrics({ name: 'turnstile' }).split('\n')
  const series = lines.filter((l) => /^captcha_budget_(guard_attempts_total|throttle_state)\{/.test(l))
  t.deepEqual(series, [
    'captcha_budget_guard_attempts_total{name="turnstile",decision="admitted"} 1',
    'captcha_budget_guard_attempts_total{name="turnstile",decision="refused"} 2',
    'captcha_budget_throttle_state{name="turnstile",state="open"} 0',
    'captcha_budget_throttle_state{name="turnstile",state="admitting"} 0',
    'captcha_budget_throttle_state{name="turnstile",state="throttled"} 1',
    'captcha_budget_throttle_state{name="turnstile",state="refusing"} 0',
  ])
})

test('the same run on the manual clock gives the same decisions', async (t) => {
  const run = async () => {
    const tracker = manual({ windowMs: 24 * 3600_000 })
    const decisions = []
    for (let s = 0; s < 600; s++) {
      if (s > 0) tracker.advanceTo(s * 1000)
      decisions.push(await attempt(tracker, s % 7 === 0 || (s > 100 && s < 300) ? fail : ok, { minSolves: 0 }))
    }
    return decisions
  }
  const first = await run()
  t.deepEqual(await run(), first)
  t.true(first.some((d) => d !== 'admitted')) // it did throttle
})
