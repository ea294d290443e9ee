// Issue 45: each tracker's recordStamped, guardStateInto and scrapeInto (src/fast_path.rs,
// src/fast_state.rs), called as lib/ calls them (under the contract's symbols), against
// hand-worked values on the manual clock, and lib/native/fast-state.js's readers against
// the getters (what WASI reads instead).
const test = require('ava')
const { ErrorBudgetTracker } = require('../..')
const { GUARD: G, SCRAPE: S, SCRAPE_HEAD } = require('../../lib/native/contract.js')
const { fillersOf } = require('../../lib/native/fast-state.js')
const { guardState, guardStateFromGetters, scrapeState, scrapeFromGetters } = require('../../lib/native/fast-state.js')
const { nativeOnly } = require('../helpers/binding')

// On WASI the addon fills a copy in wasm memory, not the Float64Array it is given (lib/native/fast-state.js reads the getters there).
const bufferOnly = nativeOnly('the buffers are native only; WASI reads the getters')

const manual = (config = {}) => new ErrorBudgetTracker({ clock: 'manual', ...config })
const near = (t, actual, expected, what) => t.true(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`)

test('recordStamped returns the stamp it recorded at; record(ok) still returns undefined', (t) => {
  const tracker = manual()
  tracker.advanceTo(5_000)
  t.is(tracker.record(true), undefined)
  t.is(fillersOf(tracker).recordStamped(true), 5_000) // the manual clock's reading
  t.is(fillersOf(tracker).recordStamped(false, 3_000), 3_000) // an earlier `at`: that stamp
  t.is(fillersOf(tracker).recordStamped(true, 9_000), 9_000) // a later one moves the manual clock there first
  t.is(tracker.now, 9_000)
  t.like(tracker.report(), { total: 4, failures: 1 })
})

test('recordStamped on the locked path (budget at exactly 0) stamps the clock too', (t) => {
  const tracker = manual({ targetRate: 0.5 })
  tracker.advanceTo(5_000)
  tracker.record(true)
  tracker.record(false)
  t.is(tracker.budgetRemaining, 0) // 2 × 0.5 = 1 failure allowed, 1 spent
  t.is(fillersOf(tracker).recordStamped(true), 5_000)
  t.is(tracker.total, 3)
})

test('recordStamped refuses as record does: a closed tracker, a bad outcome; nothing recorded', (t) => {
  const tracker = manual()
  t.like(
    t.throws(() => fillersOf(tracker).recordStamped('yes')),
    { name: 'TypeError' },
  )
  t.is(tracker.total, 0)
  tracker.close()
  t.like(
    t.throws(() => fillersOf(tracker).recordStamped(true)),
    { code: 'ERR_TRACKER_CLOSED' },
  )
})

bufferOnly('guardStateInto: closed, now, status, total, sloTarget and the recent burn rate while exhausted', (t) => {
  const tracker = manual()
  tracker.advanceTo(10_000)
  for (const ok of [true, true, true, false]) tracker.record(ok)
  const b = new Float64Array(6)
  t.is(fillersOf(tracker).guardStateInto(b, 300_000), 6)
  // 1 failure of 4 at 95 %: exhausted; over the last 5 minutes (all 4): 0.25 / 0.05 = 5.
  t.deepEqual([...b.slice(0, 5)], [0, 10_000, 3, 4, 0.95])
  near(t, b[G.recentBurnRate], 5, 'recentBurnRate')
  // Without recentMs it is not read.
  fillersOf(tracker).guardStateInto(b)
  t.true(Number.isNaN(b[G.recentBurnRate]))
  tracker.close()
  fillersOf(tracker).guardStateInto(b)
  t.is(b[G.closed], 1)
})

bufferOnly('guardStateInto: no recent burn rate unless exhausted; a window shorter than recentMs gives the whole window', (t) => {
  const b = new Float64Array(6)
  const healthy = manual()
  healthy.record(true)
  fillersOf(healthy).guardStateInto(b, 300_000)
  t.is(b[G.status], 0)
  t.true(Number.isNaN(b[G.recentBurnRate]))
  const short = manual({ windowMs: 60_000 })
  short.advanceTo(10_000)
  short.record(false)
  fillersOf(short).guardStateInto(b, 300_000)
  near(t, b[G.recentBurnRate], 20, 'recentBurnRate') // 1 of 1 failed: 1 / 0.05
})

test('guardStateInto: bad arguments throw with a code before anything is written; a short buffer gets nothing', (t) => {
  const tracker = manual()
  tracker.record(true)
  const b = new Float64Array(6).fill(-1)
  t.like(
    t.throws(() => fillersOf(tracker).guardStateInto(b, 1.5)),
    {
      name: 'RangeError',
      code: 'ERR_OUT_OF_RANGE',
      message: 'guardStateInto(buffer, recentMs): recentMs must be an integer of ms from 1 to 2^53 − 1, got 1.5',
    },
  )
  t.like(
    t.throws(() => fillersOf(tracker).guardStateInto(b, 0)),
    { code: 'ERR_OUT_OF_RANGE' },
  )
  t.like(
    t.throws(() => fillersOf(tracker).guardStateInto(b, '300000')),
    { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' },
  )
  t.like(
    t.throws(() => fillersOf(tracker).guardStateInto([0, 0, 0, 0, 0, 0])),
    { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' },
  )
  t.like(
    t.throws(() => fillersOf(tracker).guardStateInto(new Float64Array(new SharedArrayBuffer(48)))),
    { code: 'ERR_INVALID_ARG_TYPE' },
  )
  t.deepEqual([...b], [-1, -1, -1, -1, -1, -1])
  const short = new Float64Array(5).fill(-1)
  t.is(fillersOf(tracker).guardStateInto(short), 6)
  t.deepEqual([...short], [-1, -1, -1, -1, -1])
  t.is(tracker.total, 1)
})

bufferOnly("scrapeInto: the report's figures, the counters, each pair's firing and each window's burn rate", (t) => {
  const alerts = [
    { name: 'fast', severity: 'page', longWindowMs: 120_000, shortWindowMs: 10_000, burnRate: 2, minEvents: 0 },
    { name: 'never', severity: 'ticket', longWindowMs: 720_000, shortWindowMs: 60_000, burnRate: 10, minEvents: 0 },
  ]
  const tracker = manual({ minEvents: 0, alerts, resolutionMs: 1_000 })
  tracker.advanceTo(600_000)
  for (let i = 0; i < 90; i++) tracker.record(true)
  for (let i = 0; i < 10; i++) tracker.record(false)
  tracker.reject(600_000)
  const b = new Float64Array(64)
  // 13 values, then 2 pairs, then 4 distinct windows of 2 values.
  t.is(fillersOf(tracker).scrapeInto(b), 13 + 2 + 2 * 4)
  // 11 failures of 100 (the rejected success is one) at 95 %: exhausted, burning 0.11 / 0.05 = 2.2 in every window.
  t.deepEqual([b[S.status], b[S.total], b[S.failures], b[S.sloTarget], b[S.insufficientData], b[S.at]], [3, 100, 11, 0.95, 0, 600_000])
  t.deepEqual([b[S.recordedSuccesses], b[S.recordedFailures], b[S.rejected]], [90, 10, 1])
  t.is(b[S.remainingFraction], 0)
  near(t, b[S.burnRate], 2.2, 'burnRate')
  t.deepEqual([b[S.pairs], b[S.windows]], [2, 4])
  t.deepEqual([...b.slice(SCRAPE_HEAD, SCRAPE_HEAD + 2)], [1, 0]) // 2.2 ≥ 2 fires; 2.2 < 10 does not
  t.deepEqual(
    tracker.report().alerts.map((a) => a.name),
    ['fast'],
  )
  const windows = [10_000, 60_000, 120_000, 720_000]
  for (let j = 0; j < 4; j++) {
    t.is(b[SCRAPE_HEAD + 2 + 2 * j], windows[j])
    near(t, b[SCRAPE_HEAD + 2 + 2 * j + 1], 2.2, `burn rate over ${windows[j]} ms`)
  }
  const short = new Float64Array(22).fill(-1)
  t.is(fillersOf(tracker).scrapeInto(short), 23)
  t.true(short.every((v) => v === -1))
})

bufferOnly("lib/native/fast-state.js: the native buffers hold what the getters read, a policy too big for the thread's buffer too", (t) => {
  // 100 pairs of distinct windows: 13 + 100 + 2 × 200 values, more than the thread's 207.
  const alerts = Array.from({ length: 100 }, (_, i) => ({
    name: `p${i}`,
    severity: 'page',
    longWindowMs: 600_000 + i * 1_000,
    shortWindowMs: 60_000 + i * 1_000,
    burnRate: 1 + i / 10,
    minEvents: 0,
  }))
  for (const tracker of [manual(), manual({ windowMs: 3_600_000, alerts, resolutionMs: 1_000 })]) {
    for (let minute = 1; minute <= 20; minute++) tracker.recordMany(50, minute > 10 ? 10 : 0, minute * 60_000)
    const scraped = scrapeState(tracker)
    const length = SCRAPE_HEAD + scraped[S.pairs] + 2 * scraped[S.windows]
    t.deepEqual([...scraped.slice(0, length)], scrapeFromGetters(tracker))
    t.deepEqual([...guardState(tracker, 300_000).slice(0, 6)], guardStateFromGetters(tracker, 300_000))
  }
})
