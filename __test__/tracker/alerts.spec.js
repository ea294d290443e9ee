const test = require('ava')
const { ErrorBudgetTracker } = require('../..')
const { noMoreDeliveries, waitForCalls } = require('../helpers/deliveries')

// Listeners run later, on the event loop (other spec files keep it busy): wait
// until `count` of the events `pick` selects have arrived, then until everything
// queued has been delivered, so that an event too many would show too.
async function delivered(events, count, pick = () => true) {
  await waitForCalls(
    {
      get length() {
        return events.filter(pick).length
      },
    },
    count,
  )
  await noMoreDeliveries(events)
}

// The multiwindow semantics of a custom policy (no evidence gate, no
// hysteresis). All scenarios: a 24 h window at 95 % with the plain SRE Workbook
// pairs (the default policy before 0.2, see docs/alert-policy.md), 2 s buckets,
// one solve every 2 s stamped at a bucket start, on the manual clock.
//   fast-burn   page    2 min / 10 s   > 14.4
//   slow-burn   page   12 min /  1 min > 6
//   budget-leak ticket 2.4 h  / 12 min > 1
// Over n events, burn = failures / (n × 0.05): a full 2-min long window holds
// 60 events (burn = failures / 3), 12 min 360 (failures / 18), 2.4 h 4320.
const DAY = 86_400_000
const STEP = 2000

const WORKBOOK_24H = [
  { name: 'fast-burn', severity: 'page', longWindowMs: 120_000, shortWindowMs: 10_000, burnRate: 14.4, minEvents: 10 },
  { name: 'slow-burn', severity: 'page', longWindowMs: 720_000, shortWindowMs: 60_000, burnRate: 6, minEvents: 10 },
  { name: 'budget-leak', severity: 'ticket', longWindowMs: 8_640_000, shortWindowMs: 720_000, burnRate: 1, minEvents: 10 },
]

function alertTracker(config = {}) {
  const tracker = new ErrorBudgetTracker({ windowMs: DAY, clock: 'manual', alerts: WORKBOOK_24H, ...config })
  const events = []
  tracker.on('alert', (e) => events.push(['alert', e.name, e.at, e.burnRateLong, e.burnRateShort]))
  tracker.on('resolve', (e) => events.push(['resolve', e.name, e.at, e.burnRateLong, e.burnRateShort]))
  return { tracker, events }
}

test('the default policy for 1 h and 24 h windows', (t) => {
  const brief = (tracker) =>
    tracker.alertPolicy.map((r) => [
      r.name,
      r.severity,
      r.longWindowMs,
      r.shortWindowMs,
      r.burnRate,
      r.minEvents,
      r.minFailures,
      r.resolveBurnRate,
      r.warmUpMs,
      r.minBudgetShare,
    ])
  // 24 h, 2 s buckets: P/720 = 2 min, its twelfth 10 s (5 buckets);
  // P/72 = 20 min & 100 s; P/12 = 2 h & 10 min; P/4 = 6 h & 30 min. 10 solves and
  // 5 failures to fire, resolved at half the threshold, a warm-up of the long window
  // (P/4 for budget-spend, which needs only 4 solves and 4 failures, but a fifth of
  // the window's budget spent).
  t.deepEqual(brief(new ErrorBudgetTracker({ windowMs: DAY })), [
    ['fast-burn', 'page', 120_000, 10_000, 14.4, 10, 5, 7.2, 120_000, 0],
    ['budget-spend', 'page', 1_200_000, 100_000, 2, 4, 4, 1, 21_600_000, 0.2],
    ['slow-burn', 'page', 7_200_000, 600_000, 3, 10, 5, 1.5, 7_200_000, 0],
    ['budget-leak', 'ticket', 21_600_000, 1_800_000, 1.5, 10, 5, 0.75, 21_600_000, 0],
  ])
  // 1 h: 83 ms buckets. 5000 ms = 60.2 → 60 buckets = 4980 ms; 416.7 ms = 5.02 → 5 = 415 ms;
  // 50 000 = 602.4 → 602 = 49 966; 4166.7 = 50.2 → 50 = 4150; P/4 = 900 000 ms warm-up;
  // 300 000 = 3614.5 → 3614 = 299 962; 25 000 = 301.2 → 301 = 24 983;
  // 900 000 = 10 843.4 → 10 843 = 899 969; 75 000 = 903.6 → 904 = 75 032.
  t.deepEqual(brief(new ErrorBudgetTracker()), [
    ['fast-burn', 'page', 4980, 415, 14.4, 10, 5, 7.2, 4980, 0],
    ['budget-spend', 'page', 49_966, 4150, 2, 4, 4, 1, 900_000, 0.2],
    ['slow-burn', 'page', 299_962, 24_983, 3, 10, 5, 1.5, 299_962, 0],
    ['budget-leak', 'ticket', 899_969, 75_032, 1.5, 10, 5, 0.75, 899_969, 0],
  ])
  // At 90 % the largest burn is 10: the 14.4 page could never fire and is left out.
  t.deepEqual(
    new ErrorBudgetTracker({ targetRate: 0.9 }).alertPolicy.map((r) => r.name),
    ['budget-spend', 'slow-burn', 'budget-leak'],
  )
})

// Total outage. 3 h of successes (5400 events, the long windows full), then
// every solve fails from T0. After the n-th failure (at T0 + 2 s × (n − 1)):
//   fast-burn long  = n / 3 > 14.4  → n = 44 → T0 + 86 s   (short: 5 of 5 failing = 20)
//   slow-burn long  = n / 18 > 6    → n = 109 → T0 + 216 s
//   budget-leak long = n / 216 > 1  → n = 217 → T0 + 432 s
// 250 failures (the last at T0 + 498 s), then no traffic at all: each pair
// resolves when its short window is empty, i.e. the last failure's bucket
// leaves it: T0 + 498 s + 10 s, + 1 min, + 12 min.
test('a total outage pages, then every alert resolves as its short window cools, with no new events', async (t) => {
  const { tracker, events } = alertTracker()
  const T0 = 3 * 3_600_000
  for (let at = 0; at < T0; at += STEP) tracker.record(true, at)
  for (let n = 0; n < 250; n++) tracker.record(false, T0 + n * STEP)
  t.deepEqual(
    tracker.report().alerts.map((a) => a.name),
    ['fast-burn', 'slow-burn', 'budget-leak'],
  )
  tracker.advanceTo(T0 + 2 * 3_600_000)
  await delivered(events, 6)
  t.deepEqual(
    events.map(([kind, name, at]) => [kind, name, at - T0]),
    [
      ['alert', 'fast-burn', 86_000],
      ['alert', 'slow-burn', 216_000],
      ['alert', 'budget-leak', 432_000],
      ['resolve', 'fast-burn', 508_000],
      ['resolve', 'slow-burn', 558_000],
      ['resolve', 'budget-leak', 1_218_000],
    ],
  )
  // The page fires as time reaches T0 + 86 s, just before the 44th failure lands:
  // the success at T0 − 34 s leaves the 2-min window at that instant, leaving 43
  // failures in 59 events: 43 / 2.95 = 14.58 > 14.4; the 10-s window holds 4
  // failures of 4: 20.
  t.deepEqual(events[0].slice(3), [14.58, 20])
  // Resolved with an empty short window: its burn rate is 0.
  t.is(events[3][4], 0)
  t.deepEqual(tracker.report().alerts, [])
})

// A slow leak at 1.5×: failures at events 0, 13 and 26 of every 40 (7.5 %).
// With minEvents 10 per pair nothing can fire before the 10th event (t = 18 s);
// then every window's burn is ≥ 1.5 (the worst case, 3 failures in 40) and at
// most 20 / 12 = 1.67 in the pages' windows: only the ticket (> 1) fires, at 18 s.
test('a slow leak at 1.5× burn fires only the ticket', async (t) => {
  const { tracker, events } = alertTracker()
  for (let i = 0; i < 5400; i++) tracker.record(![0, 13, 26].includes(i % 40), i * STEP)
  await delivered(events, 1)
  t.deepEqual(
    events.map(([kind, name, at]) => [kind, name, at]),
    [['alert', 'budget-leak', 18_000]],
  )
  const report = tracker.report()
  t.deepEqual(
    report.alerts.map((a) => [a.name, a.severity, a.threshold]),
    [['budget-leak', 'ticket', 1]],
  )
  t.false(report.insufficientData)
  t.is(tracker.burnRateOver(720_000), 27 / (360 * (1 - 0.95))) // 27 failures in the last 360 events
})

// A 10-minute 100 % spike every hour (minutes 50–59), successes otherwise.
// In each spike the fast-burn page fires at the 44th failure (spike start + 86 s)
// and resolves at the second success after it (spike end + 2 s: 3 failures in
// the 10-s short window, burn 12 ≤ 14.4). A `for:`-style rule needing 15 minutes
// above a threshold would never fire on it.
test('a 10-minute spike every hour is caught each time', async (t) => {
  const { tracker, events } = alertTracker()
  const HOUR = 3_600_000
  for (let at = 0; at < 3 * HOUR; at += STEP) {
    const minute = Math.floor((at % HOUR) / 60_000)
    tracker.record(minute < 50, at)
  }
  await delivered(events, 5, ([, name]) => name === 'fast-burn')
  const fast = events.filter(([, name]) => name === 'fast-burn').map(([kind, , at]) => [kind, at])
  const spike = (h) => h * HOUR + 50 * 60_000
  t.deepEqual(fast, [
    ['alert', spike(0) + 86_000],
    ['resolve', spike(0) + 602_000],
    ['alert', spike(1) + 86_000],
    ['resolve', spike(1) + 602_000],
    ['alert', spike(2) + 86_000],
  ])
})

test('low volume: 3 events with 1 failure fire nothing and report insufficient data', async (t) => {
  const { tracker, events } = alertTracker()
  tracker.record(true, 0)
  tracker.record(false, STEP)
  tracker.record(true, 2 * STEP)
  await delivered(events, 0)
  t.deepEqual(events, [])
  const report = tracker.report()
  t.true(report.insufficientData)
  t.deepEqual(report.alerts, [])
  // 1 failure of 3: burn 1 / 0.15 = 6.67 over any window holding all three.
  t.is(tracker.burnRateOver(120_000), 1 / (3 * (1 - 0.95)))
})

test('minEvents in the config: below it nothing fires, status stays healthy', async (t) => {
  const { tracker, events } = alertTracker({ minEvents: 100 })
  for (let i = 0; i < 99; i++) tracker.record(false, i * STEP)
  await delivered(events, 0)
  t.deepEqual(events, [])
  t.like(tracker.report(), { status: 'healthy', burnRate: 0, insufficientData: true, exhaustsInMs: null })
  tracker.record(false, 99 * STEP)
  await delivered(events, 3)
  t.deepEqual(
    events.map(([kind, name]) => [kind, name]),
    [
      ['alert', 'fast-burn'],
      ['alert', 'slow-burn'],
      ['alert', 'budget-leak'],
    ],
  )
})

// 1 h window: 98 successes and 2 failures at time 0: budget 5, remaining 3
// (60 %), burn 0.4; nothing firing, so at the window's burn rate the 60 % left
// lasts 0.6 × 3 600 000 / 0.4 = 5 400 000 ms.
test('exhaustsInMs projects the remaining budget at the current burn rate', (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  t.is(tracker.report().exhaustsInMs, null)
  for (let i = 0; i < 98; i++) tracker.record(true, 0)
  tracker.record(false, 0)
  tracker.record(false, 0)
  t.is(tracker.report().exhaustsInMs, 5_400_000)
})

test('a custom policy: windows rounded to whole buckets, events carry the report', async (t) => {
  const tracker = new ErrorBudgetTracker({
    clock: 'manual',
    windowMs: 60_000,
    resolutionMs: 1000,
    alerts: [{ name: 'burst', severity: 'page', longWindowMs: 10_400, shortWindowMs: 2_600, burnRate: 10, minEvents: 0 }],
  })
  // A custom pair has no gate: no minimum of failures, resolved at its threshold.
  t.deepEqual(tracker.alertPolicy, [
    {
      name: 'burst',
      severity: 'page',
      longWindowMs: 10_000,
      shortWindowMs: 3000,
      burnRate: 10,
      minEvents: 0,
      minFailures: 0,
      resolveBurnRate: 10,
      warmUpMs: 0,
      minBudgetShare: 0,
    },
  ])
  const alerts = []
  tracker.on('alert', (e) => alerts.push(e))
  // 1 failure at 0: burn 1 / 0.05 = 20 over both windows → fires at once.
  tracker.record(false, 0)
  await delivered(alerts, 1)
  t.is(alerts.length, 1)
  t.like(alerts[0], { name: 'burst', severity: 'page', threshold: 10, at: 0, burnRateLong: 20, burnRateShort: 20 })
  t.like(alerts[0].report, { status: 'exhausted', failures: 1, total: 1, at: 0 })
  t.deepEqual(
    alerts[0].report.alerts.map((a) => a.name),
    ['burst'],
  )
  t.deepEqual(alerts[0].evidence, {
    longWindowMs: 10_000,
    longFailures: 1,
    longTotal: 1,
    shortWindowMs: 3000,
    shortFailures: 1,
    shortTotal: 1,
    minFailures: 0,
    resolveBurnRate: 10,
  })
  t.is(alerts[0].reason, 'burst: 1 failure in 1 solve over the last 10 s burn 20× and 1 failure in 1 solve over the last 3 s burn 20×: both above 10×')
})

const badPolicies = [
  [
    { name: 'x', severity: 'page', longWindowMs: 3_600_000, shortWindowMs: 300_000, burnRate: 20 },
    RangeError,
    'config.alerts[0].burnRate must be in (0, 20): a 95% SLO burns at most 20× (every event failing), got 20',
  ],
  [
    { name: 'x', severity: 'page', longWindowMs: 7_200_000, shortWindowMs: 300_000, burnRate: 2 },
    RangeError,
    'config.alerts[0].longWindowMs must be between one bucket (83 ms, resolutionMs) and the window (3600000 ms, windowMs), got 7200000',
  ],
  [
    { name: 'x', severity: 'page', longWindowMs: 600_000, shortWindowMs: 50, burnRate: 2 },
    RangeError,
    'config.alerts[0].shortWindowMs must be between one bucket (83 ms',
  ],
  [
    { name: 'x', severity: 'page', longWindowMs: 600_000, shortWindowMs: 600_000, burnRate: 2 },
    RangeError,
    'config.alerts[0].shortWindowMs (600000) must be shorter than longWindowMs (600000)',
  ],
  [
    { name: 'x', severity: 'sms', longWindowMs: 600_000, shortWindowMs: 60_000, burnRate: 2 },
    TypeError,
    "config.alerts[0].severity must be 'page' or 'ticket', got 'sms'",
  ],
  [
    { name: 'x', severity: 'page', longWindowMs: 600_000, shortWindowMs: 60_000, burnRate: '2' },
    TypeError,
    'config.alerts[0].burnRate must be a number, got string',
  ],
  [{ name: 'x', severity: 'page', longWindowMs: 600_000, shortWindowMs: 60_000 }, TypeError, 'config.alerts[0].burnRate is required'],
  [
    { name: 'x', severity: 'page', longWindow: 600_000, shortWindowMs: 60_000, burnRate: 2 },
    TypeError,
    "config.alerts[0] has an unknown key 'longWindow'; known keys: name, severity, longWindowMs, shortWindowMs, burnRate, minEvents",
  ],
]
for (const [rule, errorClass, message] of badPolicies) {
  test(`alert policy rejected: ${message.slice(0, 60)}`, (t) => {
    const err = t.throws(() => new ErrorBudgetTracker({ alerts: [rule] }), { instanceOf: errorClass })
    t.true(err.message.startsWith(message), err.message)
  })
}

test('config.alerts must be an array; [] means no alerts', (t) => {
  t.throws(() => new ErrorBudgetTracker({ alerts: {} }), { instanceOf: TypeError, message: 'config.alerts must be an array, got object' })
  const none = new ErrorBudgetTracker({ alerts: [], clock: 'manual' })
  t.deepEqual(none.alertPolicy, [])
  none.record(false, 0)
  t.deepEqual(none.report().alerts, [])
})

test('burnRateOver checks its argument', (t) => {
  const tracker = new ErrorBudgetTracker()
  t.throws(() => tracker.burnRateOver(0), {
    instanceOf: RangeError,
    message: 'burnRateOver(ms): ms must be an integer of milliseconds from 1 to windowMs (3600000), got 0',
  })
  t.throws(() => tracker.burnRateOver(3_600_001), { instanceOf: RangeError })
  t.throws(() => tracker.burnRateOver('1h'), { instanceOf: TypeError })
  t.throws(() => tracker.burnRateOver(1.5), { instanceOf: RangeError, message: /got 1.5$/ })
  t.is(tracker.burnRateOver(60_000), 0)
})
