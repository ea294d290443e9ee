'use strict'

// The native ErrorBudgetTracker against the plain-JS reference tracker users
// already run (`./helpers/oracle-tracker.js`, written from its description,
// sharing no code with the addon). Every comparison is exact: t.is /
// t.deepEqual (Object.is semantics, so even -0 vs 0 would fail), no tolerance.

const test = require('ava')

const { ErrorBudgetTracker } = require('../../index.js')
const { OracleTracker, STATUSES } = require('../helpers/oracle-tracker.js')
const { noMoreDeliveries, waitForCalls } = require('../helpers/deliveries.js')
const { prng } = require('../../scripts/prng.js') // mulberry32

const GETTERS = ['total', 'successes', 'failures', 'currentRate', 'budgetTotal', 'budgetRemaining', 'remainingFraction', 'burnRate', 'status']

function getters(tracker) {
  const out = {}
  for (const g of GETTERS) out[g] = tracker[g]
  return out
}

/** The report without the addon's extra fields (`dropped`, `at`). */
// The reference's fields plus the addon's `dropped` and `at`: the alert fields
// (alerts, insufficientData, exhaustsInMs) have specs of their own, and so have the
// guard's (excluded, capacity, throttle: __test__/guard/).
function budgetPart(report) {
  const { alerts, insufficientData, exhaustsInMs, excluded, capacity, throttle, ...rest } = report
  return rest
}

function withoutExtras(report) {
  const { dropped, at, ...rest } = budgetPart(report)
  return rest
}

function recordMany(tracker, successes, failures, atMs) {
  for (let i = 0; i < successes; i++) tracker.record(true, atMs)
  for (let i = 0; i < failures; i++) tracker.record(false, atMs)
}

// ---------------------------------------------------------------------------
// a) hand-computed figures
// ---------------------------------------------------------------------------

// Worked out from the formulas alone (never from the addon):
//   1 - 0.95 = 0.050000000000000044 in doubles, so 100 events allow
//   100 × 0.050000000000000044 = 5.000000000000004 failures.
const HAND_CASES = [
  {
    name: 'empty window',
    config: {},
    successes: 0,
    failures: 0,
    getters: {
      total: 0,
      successes: 0,
      failures: 0,
      currentRate: 1,
      budgetTotal: 0,
      budgetRemaining: 0,
      remainingFraction: 1,
      burnRate: 0,
      status: 'healthy',
    },
    report: {
      status: 'healthy',
      currentRate: 1,
      total: 0,
      failures: 0,
      budgetRemainingPct: 100,
      burnRate: 0,
      sloTarget: 0.95,
      successes: 0,
      budgetTotal: 0,
      budgetRemaining: 0,
    },
  },
  {
    // budget 5.000000000000004, 2.0000000000000044 left: 40 % → warning; burn 3/5.
    name: '97 successes + 3 failures at 95 %',
    config: {},
    successes: 97,
    failures: 3,
    getters: {
      total: 100,
      successes: 97,
      failures: 3,
      currentRate: 0.97,
      budgetTotal: 5.000000000000004,
      budgetRemaining: 2.0000000000000044,
      remainingFraction: 0.4000000000000005,
      burnRate: 0.5999999999999994,
      status: 'warning',
    },
    report: {
      status: 'warning',
      currentRate: 0.97,
      total: 100,
      failures: 3,
      budgetRemainingPct: 40,
      burnRate: 0.6,
      sloTarget: 0.95,
      successes: 97,
      budgetTotal: 5,
      budgetRemaining: 2,
    },
  },
  {
    // 5 failures leave a sliver of 4.44e-15 of the budget: critical, not exhausted.
    name: '95 successes + 5 failures at 95 % (floating-point sliver)',
    config: {},
    successes: 95,
    failures: 5,
    getters: {
      total: 100,
      successes: 95,
      failures: 5,
      currentRate: 0.95,
      budgetTotal: 5.000000000000004,
      budgetRemaining: 4.440892098500626e-15,
      remainingFraction: 8.881784197001244e-16,
      burnRate: 0.9999999999999991,
      status: 'critical',
    },
    report: {
      status: 'critical',
      currentRate: 0.95,
      total: 100,
      failures: 5,
      budgetRemainingPct: 0,
      burnRate: 1,
      sloTarget: 0.95,
      successes: 95,
      budgetTotal: 5,
      budgetRemaining: 0,
    },
  },
  {
    name: '94 successes + 6 failures at 95 % (exhausted)',
    config: {},
    successes: 94,
    failures: 6,
    getters: {
      total: 100,
      successes: 94,
      failures: 6,
      currentRate: 0.94,
      budgetTotal: 5.000000000000004,
      budgetRemaining: 0,
      remainingFraction: 0,
      burnRate: 1.1999999999999988,
      status: 'exhausted',
    },
    report: {
      status: 'exhausted',
      currentRate: 0.94,
      total: 100,
      failures: 6,
      budgetRemainingPct: 0,
      burnRate: 1.2,
      sloTarget: 0.95,
      successes: 94,
      budgetTotal: 5,
      budgetRemaining: 0,
    },
  },
  {
    name: 'targetRate 1, no failures: no budget but healthy',
    config: { targetRate: 1 },
    successes: 10,
    failures: 0,
    getters: {
      total: 10,
      successes: 10,
      failures: 0,
      currentRate: 1,
      budgetTotal: 0,
      budgetRemaining: 0,
      remainingFraction: 1,
      burnRate: 0,
      status: 'healthy',
    },
    report: {
      status: 'healthy',
      currentRate: 1,
      total: 10,
      failures: 0,
      budgetRemainingPct: 100,
      burnRate: 0,
      sloTarget: 1,
      successes: 10,
      budgetTotal: 0,
      budgetRemaining: 0,
    },
  },
  {
    name: 'targetRate 1, one failure: exhausted, burn rate 0',
    config: { targetRate: 1 },
    successes: 10,
    failures: 1,
    getters: {
      total: 11,
      successes: 10,
      failures: 1,
      currentRate: 0.9090909090909091,
      budgetTotal: 0,
      budgetRemaining: 0,
      remainingFraction: 0,
      burnRate: 0,
      status: 'exhausted',
    },
    report: {
      status: 'exhausted',
      currentRate: 0.9091,
      total: 11,
      failures: 1,
      budgetRemainingPct: 0,
      burnRate: 0,
      sloTarget: 1,
      successes: 10,
      budgetTotal: 0,
      budgetRemaining: 0,
    },
  },
  {
    // 3 × 0.050000000000000044 = 0.15000000000000013; 1 failure spends it all,
    // but 3 < minEvents: healthy and burn rate 0 (the fraction is still 0).
    name: 'below minEvents: healthy, burn rate 0',
    config: { minEvents: 100 },
    successes: 2,
    failures: 1,
    getters: {
      total: 3,
      successes: 2,
      failures: 1,
      currentRate: 0.6666666666666666,
      budgetTotal: 0.15000000000000013,
      budgetRemaining: 0,
      remainingFraction: 0,
      burnRate: 0,
      status: 'healthy',
    },
    report: {
      status: 'healthy',
      currentRate: 0.6667,
      total: 3,
      failures: 1,
      budgetRemainingPct: 0,
      burnRate: 0,
      sloTarget: 0.95,
      successes: 2,
      budgetTotal: 0.2,
      budgetRemaining: 0,
    },
  },
  {
    // budget 1.5, 0.5 left: a third (33.3 %) → warning; burn 1/1.5.
    name: '2 successes + 1 failure at 50 %',
    config: { targetRate: 0.5 },
    successes: 2,
    failures: 1,
    getters: {
      total: 3,
      successes: 2,
      failures: 1,
      currentRate: 0.6666666666666666,
      budgetTotal: 1.5,
      budgetRemaining: 0.5,
      remainingFraction: 0.3333333333333333,
      burnRate: 0.6666666666666666,
      status: 'warning',
    },
    report: {
      status: 'warning',
      currentRate: 0.6667,
      total: 3,
      failures: 1,
      budgetRemainingPct: 33.3,
      burnRate: 0.67,
      sloTarget: 0.5,
      successes: 2,
      budgetTotal: 1.5,
      budgetRemaining: 0.5,
    },
  },
  {
    // Rounding as Math.round does it, in the reference's order of operations:
    // currentRate 0.81875 × 10000 = 8187.5 exactly, a tie rounded up → 0.8188;
    // remainingFraction 51/80 = 0.6375, × 100 × 10 = 637.4999999999999 → 63.7
    // (× 1000 would give 637.5 → 63.8); burn 29/80 = 0.3625 → 36.25 → 0.36.
    name: '131 successes + 29 failures at 50 % (rounding order and ties)',
    config: { targetRate: 0.5 },
    successes: 131,
    failures: 29,
    getters: {
      total: 160,
      successes: 131,
      failures: 29,
      currentRate: 0.81875,
      budgetTotal: 80,
      budgetRemaining: 51,
      remainingFraction: 0.6375,
      burnRate: 0.3625,
      status: 'healthy',
    },
    report: {
      status: 'healthy',
      currentRate: 0.8188,
      total: 160,
      failures: 29,
      budgetRemainingPct: 63.7,
      burnRate: 0.36,
      sloTarget: 0.5,
      successes: 131,
      budgetTotal: 80,
      budgetRemaining: 51,
    },
  },
  {
    // burn 3/40 = 0.075, × 100 = 7.5 exactly: a tie rounded up → 0.08
    // (toFixed(2) would say 0.07).
    name: '77 successes + 3 failures at 50 % (burn-rate tie)',
    config: { targetRate: 0.5 },
    successes: 77,
    failures: 3,
    getters: {
      total: 80,
      successes: 77,
      failures: 3,
      currentRate: 0.9625,
      budgetTotal: 40,
      budgetRemaining: 37,
      remainingFraction: 0.925,
      burnRate: 0.075,
      status: 'healthy',
    },
    report: {
      status: 'healthy',
      currentRate: 0.9625,
      total: 80,
      failures: 3,
      budgetRemainingPct: 92.5,
      burnRate: 0.08,
      sloTarget: 0.5,
      successes: 77,
      budgetTotal: 40,
      budgetRemaining: 37,
    },
  },
  {
    // 1 - 0.9 = 0.09999999999999998: budget 0.29999999999999993 < 1 failure.
    name: '2 successes + 1 failure at 90 %',
    config: { targetRate: 0.9 },
    successes: 2,
    failures: 1,
    getters: {
      total: 3,
      successes: 2,
      failures: 1,
      currentRate: 0.6666666666666666,
      budgetTotal: 0.29999999999999993,
      budgetRemaining: 0,
      remainingFraction: 0,
      burnRate: 3.333333333333334,
      status: 'exhausted',
    },
    report: {
      status: 'exhausted',
      currentRate: 0.6667,
      total: 3,
      failures: 1,
      budgetRemainingPct: 0,
      burnRate: 3.33,
      sloTarget: 0.9,
      successes: 2,
      budgetTotal: 0.3,
      budgetRemaining: 0,
    },
  },
]

for (const c of HAND_CASES) {
  test(`hand-computed: ${c.name} (manual clock)`, (t) => {
    const tracker = new ErrorBudgetTracker({ ...c.config, clock: 'manual' })
    try {
      recordMany(tracker, c.successes, c.failures, 0)
      t.deepEqual(getters(tracker), c.getters)
      t.is(tracker.lastStatus, c.getters.status)
      t.deepEqual(budgetPart(tracker.report()), { ...c.report, dropped: 0, at: 0 })
      t.is(tracker.now, 0)
    } finally {
      tracker.close()
    }
    // The reference tracker agrees with the hand computation too.
    const ref = new OracleTracker(c.config, { now: () => 0 })
    recordMany(ref, c.successes, c.failures, 0)
    t.deepEqual(ref.evaluate(), c.getters)
    t.deepEqual(ref.report(), c.report)
  })

  test(`hand-computed: ${c.name} (real clock, no atMs)`, (t) => {
    const tracker = new ErrorBudgetTracker(c.config)
    try {
      recordMany(tracker, c.successes, c.failures)
      t.deepEqual(getters(tracker), c.getters)
      t.is(tracker.lastStatus, c.getters.status)
      const report = tracker.report()
      t.deepEqual(withoutExtras(report), c.report)
      t.is(report.dropped, 0)
      t.is(typeof report.at, 'number')
    } finally {
      tracker.close()
    }
  })
}

test('hand-computed: an event counts while now - t < windowMs, exactly', (t) => {
  const tracker = new ErrorBudgetTracker({ windowMs: 1000, resolutionMs: 100, clock: 'manual' })
  try {
    tracker.record(false, 500)
    tracker.record(true, 700)
    t.is(tracker.now, 700)
    t.deepEqual([tracker.total, tracker.failures, tracker.successes], [2, 1, 1])
    tracker.advanceTo(1499) // 1499 - 500 = 999 < 1000
    t.deepEqual([tracker.total, tracker.failures, tracker.successes], [2, 1, 1])
    tracker.advanceTo(1500) // 1500 - 500 = 1000: gone
    t.deepEqual([tracker.total, tracker.failures, tracker.successes], [1, 0, 1])
    tracker.advanceTo(1699)
    t.is(tracker.total, 1)
    tracker.advanceTo(1700)
    t.is(tracker.total, 0)
    t.deepEqual(getters(tracker), {
      total: 0,
      successes: 0,
      failures: 0,
      currentRate: 1,
      budgetTotal: 0,
      budgetRemaining: 0,
      remainingFraction: 1,
      burnRate: 0,
      status: 'healthy',
    })
    t.is(tracker.report().at, 1700)
  } finally {
    tracker.close()
  }
})

test('dropped: an event older than the window is not counted and increments report().dropped', (t) => {
  // windowMs 1000 → default resolution max(1, floor(1000 / 43200)) = 1 ms.
  const tracker = new ErrorBudgetTracker({ windowMs: 1000, clock: 'manual' })
  const ref = new OracleTracker({ windowMs: 1000 }, { now: () => 5000 })
  try {
    tracker.record(true, 5000)
    ref.record(true, 5000)
    t.is(tracker.report().dropped, 0)

    tracker.record(false, 4000) // 5000 - 4000 = 1000: too old
    ref.record(false, 4000)
    t.is(tracker.now, 5000)
    t.deepEqual(getters(tracker), ref.evaluate())
    t.deepEqual(getters(tracker), {
      total: 1,
      successes: 1,
      failures: 0,
      currentRate: 1,
      budgetTotal: 0.050000000000000044,
      budgetRemaining: 0.050000000000000044,
      remainingFraction: 1,
      burnRate: 0,
      status: 'healthy',
    })
    t.deepEqual(budgetPart(tracker.report()), { ...ref.report(), dropped: 1, at: 5000 })

    tracker.record(false, -20000) // far in the past, even before epoch
    ref.record(false, -20000)
    t.is(tracker.report().dropped, 2)
    t.is(tracker.total, 1)

    tracker.record(false, 4001) // 999 ms old: counted
    ref.record(false, 4001)
    t.is(tracker.failures, 1)
    t.is(tracker.report().dropped, 2)
    t.deepEqual(getters(tracker), ref.evaluate())
    t.deepEqual(budgetPart(tracker.report()), { ...ref.report(), dropped: 2, at: 5000 })
    t.is(tracker.status, 'exhausted')
    t.is(tracker.lastStatus, 'exhausted')
  } finally {
    tracker.close()
  }
})

// ---------------------------------------------------------------------------
// b) the reference's own usage: listeners on 'warning' and 'exhausted'
// ---------------------------------------------------------------------------

// waitForCalls / settle: __test__/helpers/deliveries.js (one helper for every spec).

/** 100 successes, failures one by one to exhaustion, recovery, and exhaustion again. */
function usageSequence() {
  const seq = []
  for (let i = 0; i < 100; i++) seq.push(true)
  for (let i = 0; i < 6; i++) seq.push(false)
  for (let i = 0; i < 200; i++) seq.push(true)
  for (let i = 0; i < 12; i++) seq.push(false)
  return seq
}

async function usageScenario(t, clockConfig, atFor) {
  const watched = ['warning', 'exhausted']
  const tracker = new ErrorBudgetTracker({ targetRate: 0.95, windowMs: 3600000, ...clockConfig })
  const ref = new OracleTracker({ targetRate: 0.95, windowMs: 3600000 }, { now: () => 0 })
  const got = []
  const want = []
  for (const status of watched) {
    tracker.on(status, (report) => got.push({ status, report }))
    ref.on(status, (report) => want.push({ status, report }))
  }
  try {
    const seq = usageSequence()
    seq.forEach((ok, i) => {
      tracker.record(ok, atFor(i))
      ref.record(ok, 0)
    })
    // Listeners never run inside record().
    t.is(got.length, 0)
    // Sanity-check the reference's own calls: warning at the 3rd failure
    // (103 events), exhausted at the 6th, warning again once 134 events
    // dilute the 6 failures (critical at 120 is not watched), healthy at 240
    // (not watched), warning at the 2nd new failure (308 events), exhausted
    // at the 10th (16 failures > 316 × 0.050000000000000044 = 15.8).
    t.deepEqual(
      want.map((c) => c.status),
      ['warning', 'exhausted', 'warning', 'warning', 'exhausted'],
    )
    t.deepEqual(
      want.map((c) => [c.report.total, c.report.failures]),
      [
        [103, 3],
        [106, 6],
        [134, 6],
        [308, 8],
        [316, 16],
      ],
    )
    await waitForCalls(got, want.length)
    await noMoreDeliveries(got) // nothing more arrives
    t.is(got.length, want.length)
    t.deepEqual(
      got.map((c) => ({ status: c.status, report: withoutExtras(c.report) })),
      want,
    )
    for (const c of got) {
      t.is(c.report.status, c.status)
      t.is(c.report.dropped, 0)
      t.is(typeof c.report.at, 'number')
    }
    // Status after the latest change, and the final state, match too.
    t.is(tracker.lastStatus, ref.lastStatus)
    t.deepEqual(getters(tracker), ref.evaluate())
    t.deepEqual(withoutExtras(tracker.report()), ref.report())
  } finally {
    tracker.close()
  }
  return { got, want }
}

test('listeners (real clock): warning/exhausted calls arrive in order and equal the reference', async (t) => {
  await usageScenario(t, {}, () => undefined)
})

test('listeners (manual clock): warning/exhausted calls arrive in order and equal the reference', async (t) => {
  const { got } = await usageScenario(t, { clock: 'manual' }, () => 0)
  t.deepEqual(
    got.map((c) => c.report.at),
    [0, 0, 0, 0, 0],
  )
})

test('listeners: every transition (incl. critical/healthy) in the reference order, for listeners on all statuses', async (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const ref = new OracleTracker({}, { now: () => 0 })
  const got = []
  const want = []
  let resolveDone
  const done = new Promise((r) => (resolveDone = r))
  for (const status of STATUSES) {
    tracker.on(status, (report) => {
      got.push({ status, report })
      if (got.length === want.length) resolveDone()
    })
    ref.on(status, (report) => want.push({ status, report }))
  }
  try {
    for (const ok of usageSequence()) {
      tracker.record(ok, 0)
      ref.record(ok, 0)
    }
    t.deepEqual(
      want.map((c) => c.status),
      ['warning', 'critical', 'exhausted', 'critical', 'warning', 'healthy', 'warning', 'critical', 'exhausted'],
    )
    await done
    await noMoreDeliveries(got)
    t.deepEqual(
      got.map((c) => ({ status: c.status, report: withoutExtras(c.report) })),
      want,
    )
  } finally {
    tracker.close()
  }
})

// ---------------------------------------------------------------------------
// c) randomized comparison against the reference model
// ---------------------------------------------------------------------------

function makeRandom(seed) {
  const rng = prng(seed)
  const int = (lo, hi) => lo + Math.floor(rng() * (hi - lo + 1)) // inclusive
  const pick = (list) => list[Math.floor(rng() * list.length)]
  return { rng, int, pick }
}

function randomConfig(R) {
  const { rng, int, pick } = R
  const targetRate = pick([0.5, 0.9, 0.95, 0.99, 1, 'random', 'random3'])
  const tr =
    targetRate === 'random'
      ? 1 - rng() // (0, 1]
      : targetRate === 'random3'
        ? Math.max(1, Math.round((1 - rng()) * 1000)) / 1000
        : targetRate
  const warningThreshold = pick([0.5, 0.5, 0.25, 0.75, 1, 0, rng()])
  let criticalThreshold = pick([0.1, 0.1, 0, warningThreshold, rng() * warningThreshold, rng()])
  if (criticalThreshold > warningThreshold) criticalThreshold = warningThreshold
  const minEvents = int(0, 5)
  const config = { targetRate: tr, warningThreshold, criticalThreshold, minEvents, clock: 'manual' }
  let resolution
  const shape = rng()
  if (shape < 0.75) {
    resolution = pick([1, 10, 100, 1000])
    config.resolutionMs = resolution
    config.windowMs = resolution * pick([1, 2, 3, 5, 10, 60])
  } else if (shape < 0.9) {
    // resolutionMs omitted: default max(1, floor(windowMs / 43200)).
    config.windowMs = pick([1, 7, 1000, 7200, 36000, 90000])
    resolution = Math.max(1, Math.floor(config.windowMs / 43200))
  } else {
    // Everything about time left at its defaults: 1 h window, floor(3 600 000 / 43 200) = 83 ms buckets.
    resolution = 83
  }
  return { config, resolution, windowMs: config.windowMs === undefined ? 3600000 : config.windowMs }
}

/**
 * The reference tracker driven as the addon's manual clock is: `now` is the
 * latest time seen. Adds what the plain reference leaves to its caller: the
 * `dropped` count, and the time-driven transitions at each expiry instant
 * (the reference only looks at its status on record()).
 */
class Model {
  constructor(config, windowMs) {
    this.now = 0
    this.windowMs = windowMs
    this.ref = new OracleTracker(config, { now: () => this.now })
    this.dropped = 0
    this.last = 'healthy'
    this.transitions = []
  }

  note(at) {
    const status = this.ref.evaluate(at).status
    if (status !== this.last) {
      this.last = status
      this.transitions.push({ status, report: { ...this.ref.report(at), dropped: this.dropped, at } })
    }
  }

  advanceTo(ms) {
    if (ms <= this.now) return
    const instants = [...new Set(this.ref.events.map((e) => e.t + this.windowMs).filter((x) => x > this.now && x <= ms))].sort((a, b) => a - b)
    for (const x of instants) this.note(x)
    this.now = ms
  }

  record(ok, at = this.now) {
    this.advanceTo(at)
    this.ref.events.push({ t: at, ok }) // the reference keeps even too-old events; they never count
    if (this.now - at >= this.windowMs) this.dropped++
    else this.note(this.now)
  }

  snapshot() {
    return {
      now: this.now,
      ...this.ref.evaluate(this.now),
      lastStatus: this.ref.evaluate(this.now).status,
      report: { ...this.ref.report(this.now), dropped: this.dropped, at: this.now },
    }
  }
}

function addonSnapshot(tracker) {
  return { now: tracker.now, ...getters(tracker), lastStatus: tracker.lastStatus, report: budgetPart(tracker.report()) }
}

function randomOp(R, model, resolution, windowMs, failProb) {
  const { rng, int, pick } = R
  const now = model.now
  const r = resolution
  const roll = rng()
  const ok = rng() >= failProb
  if (roll < 0.5) {
    // In order: at or after now, on a bucket start.
    const base = Math.ceil(now / r) * r
    const steps = pick([0, 0, 0, 1, 1, 2, 3, int(0, Math.ceil(windowMs / r))])
    return { kind: 'record', ok, at: base + steps * r }
  }
  if (roll < 0.65) {
    // Out of order but still inside the window: a bucket start in (now - W, now].
    const newest = Math.floor(now / r) * r
    const maxBack = Math.floor((newest - (now - windowMs) - 1) / r)
    return { kind: 'record', ok, at: newest - int(0, Math.max(0, maxBack)) * r }
  }
  if (roll < 0.7) {
    // Too old: now - at >= W.
    const edge = Math.floor((now - windowMs) / r) * r
    return { kind: 'record', ok, at: edge - int(0, 3) * r }
  }
  if (roll < 0.76) {
    // No atMs: counts at now, which is only a bucket start if now is a multiple of r.
    if (now % r === 0) return { kind: 'record', ok }
    return { kind: 'record', ok, at: Math.ceil(now / r) * r }
  }
  if (roll < 0.94) {
    const d = pick([0, 1, Math.max(0, r - 1), r, int(1, windowMs), windowMs - 1, windowMs, windowMs + 1, 2 * windowMs + int(0, windowMs), 10 * windowMs])
    return { kind: 'advanceTo', ms: now + d }
  }
  return { kind: 'read' }
}

const SEEDS = [1, 2, 3, 4, 5, 7, 11, 13, 42, 99, 123, 256, 777, 1001, 1337, 2024, 4242, 9001, 31337, 65535, 100003, 271828, 314159, 8675309, 0xdecafbad]
const OPS_PER_SEED = 400

for (const seed of SEEDS) {
  test(`randomized vs reference, seed ${seed}`, async (t) => {
    const R = makeRandom(seed)
    const { config, resolution, windowMs } = randomConfig(R)
    const model = new Model(config, windowMs)
    const tracker = new ErrorBudgetTracker(config)
    const got = []
    for (const status of STATUSES) tracker.on(status, (report) => got.push({ status, report: budgetPart(report) }))
    const baseFail = R.pick([0.02, 0.05, 0.1, 0.3, 0.5, (1 - config.targetRate) * R.pick([0.5, 1, 1.5, 3])])
    const where = (i) => `seed ${seed}, op ${i}, config ${JSON.stringify(config)}`
    try {
      if (!t.deepEqual(addonSnapshot(tracker), model.snapshot(), `${where(-1)}: fresh tracker`)) return
      let failProb = baseFail
      let checkedTransitions = 0
      for (let i = 0; i < OPS_PER_SEED; i++) {
        if (R.rng() < 0.05) failProb = R.pick([baseFail, 0, 0.02, 0.1, 0.5, 1])
        const op = randomOp(R, model, resolution, windowMs, failProb)
        if (op.kind === 'record') {
          if ('at' in op) tracker.record(op.ok, op.at)
          else tracker.record(op.ok)
          model.record(op.ok, op.at)
        } else if (op.kind === 'advanceTo') {
          tracker.advanceTo(op.ms)
          model.advanceTo(op.ms)
        }
        const expected = model.snapshot()
        if (!t.is(model.last, expected.status, `${where(i)}: model sanity`)) return
        if (!t.deepEqual(addonSnapshot(tracker), expected, `${where(i)}: after ${JSON.stringify(op)}`)) return
        // Now and then let queued listener calls run, and check them so far.
        if (R.rng() < 0.05) {
          await waitForCalls(got, model.transitions.length).catch(() => {})
          if (!t.deepEqual(got, model.transitions, `${where(i)}: listener calls so far`)) return
          checkedTransitions = got.length
        }
      }
      await waitForCalls(got, model.transitions.length).catch(() => {})
      await noMoreDeliveries(got)
      t.deepEqual(got, model.transitions, `${where(OPS_PER_SEED)}: all listener calls`)
      t.log(
        `${model.transitions.length} transitions (${checkedTransitions} checked mid-run), ` +
          `${model.ref.events.length} events, ${model.dropped} dropped, config ${JSON.stringify(config)}`,
      )
    } finally {
      tracker.close()
    }
  })
}

// One meaning per name (issue 45): the oracle these specs compare the addon to and
// the benchmark's baseline (the naive tracker the bench times) are two trackers with
// two jobs, so no class of the package, the spec helpers, the benchmarks or the
// scripts is named like another.
test('no two classes of lib/, bin/, the spec helpers and fixtures, benchmark/ and scripts/ share a name', (t) => {
  const fs = require('node:fs')
  const path = require('node:path')
  const root = path.join(__dirname, '..', '..')
  const sources = ['index.js', 'lib', 'bin', '__test__/helpers', '__test__/fixtures', 'benchmark', 'scripts'].flatMap((dir) => {
    const at = path.join(root, dir)
    if (fs.statSync(at).isFile()) return [at]
    return fs
      .readdirSync(at, { recursive: true })
      .filter((name) => /\.m?js$/.test(name) && !name.split(path.sep).includes('node_modules'))
      .map((name) => path.join(at, name))
  })
  const where = new Map()
  for (const file of sources) {
    for (const match of fs.readFileSync(file, 'utf8').matchAll(/^\s*(?:export )?class ([A-Z]\w*)/gm)) {
      where.set(match[1], [...(where.get(match[1]) ?? []), path.relative(root, file)])
    }
  }
  t.true(where.has('OracleTracker') && where.has('BaselineTracker'), 'the scan finds the two trackers')
  t.deepEqual(
    [...where].filter(([, files]) => files.length > 1),
    [],
  )
})
