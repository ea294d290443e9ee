'use strict'
// The scenarios of `npm run bench:throttle` and __test__/guard/throttle-bench.spec.js
// (issue 23's table): a simulated worker making one solve attempt a second on
// the manual clock, against a fake provider whose success probability changes
// over time, through `tracker.guard()` in each mode — 'throttle' (the default),
// 'refuse' (the all-or-nothing guard of before, with its `minSolves: 0`) — and
// with no guard at all (every attempt runs and is recorded). The provider draws
// one outcome a second from a seeded PRNG (scripts/prng.js) whether or not the
// attempt runs, so every mode meets the same provider.
const { ErrorBudgetTracker, BudgetExhaustedError } = require('..')
const { prng } = require('../scripts/prng')

const SEC = 1000
const MIN = 60 * SEC
const HOUR = 60 * MIN

/** The modes compared: the guard's two, and none. */
const MODES = ['throttle', 'refuse', 'no guard']
const GUARD_OPTIONS = {
  throttle: {}, // the defaults
  refuse: { whenExhausted: 'refuse' }, // its defaults: minSolves 0, today's behaviour
}

// A provider: [from second, success probability], in order.
function provider(phases) {
  return (s) => {
    let p = phases[0][1]
    for (const [from, prob] of phases) if (s >= from) p = prob
    return p
  }
}

const failing = () => {
  throw new Error('ERROR_CAPTCHA_UNSOLVABLE')
}
const solved = () => 'token'

/**
 * One worker on one tracker for `seconds`: calls `observe(s, { exhausted, ok,
 * admitted })` for each second's attempt (`exhausted`: the window's status just
 * before it; `ok`: the provider's outcome, whether or not it ran). The first
 * `history` seconds are recorded as they came, in every mode: the window a
 * worker that has been running for a while starts with.
 */
async function work({ tracker, seconds, history = 0, successAt, random, mode, observe }) {
  const options = GUARD_OPTIONS[mode]
  for (let s = 0; s < seconds; s++) {
    const at = s * SEC
    if (tracker.now < at) tracker.advanceTo(at)
    const exhausted = tracker.status === 'exhausted'
    const ok = random() < successAt(s)
    let admitted = true
    if (mode === 'no guard' || s < history) tracker.record(ok)
    else {
      try {
        await tracker.guard(ok ? solved : failing, options)
      } catch (err) {
        if (err instanceof BudgetExhaustedError) admitted = false
        else if (err.message !== 'ERROR_CAPTCHA_UNSOLVABLE') throw err
      }
    }
    observe(s, { exhausted, ok, admitted })
  }
}

const share = (n, of) => (of === 0 ? null : n / of)

/**
 * The rows (issue 23's five, issue 33's two): `run(seed, mode)` resolves to `{ value, detail }`, `value`
 * the row's measure (a count or a share in [0, 1]); `goal(value)` says
 * whether it meets issue 23's goal.
 */
const SCENARIOS = [
  {
    name: 'cold start',
    setup: 'default config (1 h window, 95 %, no minimum), first attempt fails, then 98 % for 1 h',
    measure: 'refusals in that hour',
    goalText: '≤ 5',
    goal: (v) => v <= 5,
    format: 'count',
    async run(seed, mode) {
      const tracker = new ErrorBudgetTracker({ clock: 'manual' })
      let refused = 0
      await work({
        tracker,
        seconds: 3600,
        successAt: provider([
          [0, 0],
          [1, 0.98],
        ]),
        random: prng(seed),
        mode,
        observe: (s, a) => {
          if (!a.admitted) refused++
        },
      })
      tracker.close()
      return { value: refused, detail: `${refused} of 3600` }
    },
  },
  {
    name: 'outage',
    setup: '24 h window at 95 %; 12 h at 99 % (the history: recorded, not guarded), 2 h at 0 %, then 99 %',
    measure: 'failed attempts admitted while exhausted, as a share of attempts in that time',
    goalText: '≤ 10 % (no guard: 100 %)',
    goal: (v) => v !== null && v <= 0.1,
    format: 'share',
    run: (seed, mode) => outage(seed, mode).then((r) => r.during),
  },
  {
    name: 'outage, after recovery',
    setup: 'the same, once the provider recovers',
    measure: 'share of attempts admitted from 5 min after recovery to 2 h after',
    goalText: '≥ 90 %',
    goal: (v) => v >= 0.9,
    format: 'share',
    run: (seed, mode) => outage(seed, mode).then((r) => r.after),
  },
  {
    name: 'sustained degradation',
    setup: '24 h window at 95 %; 12 h at 99 % (the history), then 90 % (below the SLO) for 12 h',
    measure: 'share admitted once exhausted (during the degradation)',
    goalText: '≤ 10 %',
    goal: (v) => v !== null && v <= 0.1,
    format: 'share',
    async run(seed, mode) {
      const tracker = new ErrorBudgetTracker({ clock: 'manual', targetRate: 0.95, windowMs: 24 * HOUR })
      let since = null
      let attempts = 0
      let admitted = 0
      await work({
        tracker,
        seconds: 24 * 3600,
        history: 12 * 3600,
        successAt: provider([
          [0, 0.99],
          [12 * 3600, 0.9],
        ]),
        random: prng(seed),
        mode,
        observe: (s, a) => {
          if (since === null && a.exhausted && s >= 12 * 3600) since = s
          if (since === null) return
          attempts++
          if (a.admitted) admitted++
        },
      })
      tracker.close()
      const at = since === null ? 'never exhausted' : `exhausted at ${(since / 3600).toFixed(1)} h`
      return { value: share(admitted, attempts), detail: `${admitted} of ${attempts} (${at})` }
    },
  },
  {
    name: 'family of 20 sites',
    setup:
      '20 sites, a budget each (default config: a BudgetFamily keyed by site, else 20 trackers), 99 %, 10 min of history, then 2 h 10 min guarded; one site at 0 % for 2 h from 10 min',
    measure: 'refusals on the 19 healthy sites',
    goalText: '0',
    goal: (v) => v === 0,
    format: 'count',
    async run(seed, mode) {
      const { sites, advanceTo, close, kind } = siteBudgets(20)
      const random = prng(seed)
      const healthy = provider([[0, 0.99]])
      const broken = provider([
        [0, 0.99],
        [600, 0],
        [600 + 7200, 0.99],
      ])
      const seconds = 600 + 7200 + 600
      let refusedHealthy = 0
      let refusedBroken = 0
      const options = GUARD_OPTIONS[mode]
      for (let s = 0; s < seconds; s++) {
        if (s > 0) advanceTo(s * SEC)
        for (let i = 0; i < sites.length; i++) {
          const tracker = sites[i]
          const ok = random() < (i === 0 ? broken : healthy)(s)
          if (mode === 'no guard' || s < 600) {
            tracker.record(ok)
            continue
          }
          try {
            await tracker.guard(ok ? solved : failing, options)
          } catch (err) {
            if (!(err instanceof BudgetExhaustedError)) continue
            if (i === 0) refusedBroken++
            else refusedHealthy++
          }
        }
      }
      close()
      return { value: refusedHealthy, detail: `${refusedHealthy} (the broken site: ${refusedBroken} refused; ${kind})` }
    },
  },
  {
    name: 'slow attempts',
    setup: 'the family of 20 sites, each attempted once every 10 s (6 a minute); the broken site at 0 % for 2 h',
    measure: "share of the broken site's attempts admitted while exhausted",
    goalText: '≤ 10 %',
    goal: (v) => v !== null && v <= 0.1,
    format: 'share',
    run: (seed, mode) => slowAttempts(seed, mode).then((r) => r.during),
  },
  {
    name: 'slow attempts, recovery',
    setup: 'the same, once the broken site recovers',
    measure: "minutes from recovery until the guard notices it (admits every attempt: 'admitting' or 'open')",
    goalText: '≤ 10',
    goal: (v) => v !== null && v <= 10,
    format: 'minutes',
    run: (seed, mode) => slowAttempts(seed, mode).then((r) => r.recovery),
  },
]

// Issue 33's rows: the family of 20 sites again, each site attempted once every
// `everyS` seconds (6 a minute by default: the slowest rate the goal covers); the
// broken site at 0 % for 2 h from 10 min, then 99 %. Run once per (seed, mode,
// rate) and shared by the two rows.
const slowRuns = new Map()
function slowAttempts(seed, mode, everyS = 10) {
  const key = `${seed}/${mode}/${everyS}`
  if (!slowRuns.has(key)) slowRuns.set(key, runSlowAttempts(seed, mode, everyS))
  return slowRuns.get(key)
}

async function runSlowAttempts(seed, mode, everyS) {
  const { sites, advanceTo, close } = siteBudgets(20)
  const random = prng(seed)
  const down = 600
  const up = down + 7200
  const broken = provider([
    [0, 0.99],
    [down, 0],
    [up, 0.99],
  ])
  const healthy = provider([[0, 0.99]])
  const options = GUARD_OPTIONS[mode]
  const during = { attempts: 0, admitted: 0 }
  let noticedAt = null // the first second after `up` the broken site's guard admits every attempt again
  for (let s = 0; s < up + 3600; s += everyS) {
    if (s > 0) advanceTo(s * SEC)
    for (let i = 0; i < sites.length; i++) {
      const tracker = sites[i]
      const exhausted = tracker.status === 'exhausted'
      const ok = random() < (i === 0 ? broken : healthy)(s)
      if (mode === 'no guard' || s < down) {
        tracker.record(ok)
        continue
      }
      let admitted = true
      try {
        await tracker.guard(ok ? solved : failing, options)
      } catch (err) {
        if (err instanceof BudgetExhaustedError) admitted = false
        else if (err.message !== 'ERROR_CAPTCHA_UNSOLVABLE') throw err
      }
      if (i !== 0) continue
      if (s >= down && s < up && exhausted) {
        during.attempts++
        if (admitted) during.admitted++
      }
      if (s >= up && noticedAt === null && mode === 'throttle' && ['open', 'admitting'].includes(tracker.report().throttle.state)) noticedAt = s
    }
  }
  close()
  const minutes = noticedAt === null ? null : (noticedAt - up) / 60
  return {
    during: { value: share(during.admitted, during.attempts), detail: `${during.admitted} of ${during.attempts}` },
    recovery: { value: minutes, detail: minutes === null ? 'not noticed' : `${minutes.toFixed(1)} min` },
  }
}

/**
 * `n` site budgets on one manual clock: the children of a BudgetFamily keyed by
 * `site` (issue 22) when the package has it, else `n` separate trackers.
 */
function siteBudgets(n) {
  const { BudgetFamily } = require('..')
  const names = Array.from({ length: n }, (_, i) => `site-${i}`)
  if (typeof BudgetFamily === 'function') {
    const family = new BudgetFamily({ labelNames: ['site'], clock: 'manual' })
    return {
      sites: names.map((site) => family.labels({ site })),
      advanceTo: (ms) => family.advanceTo(ms),
      close: () => family.close(),
      kind: 'a BudgetFamily',
    }
  }
  const sites = names.map(() => new ErrorBudgetTracker({ clock: 'manual' }))
  return {
    sites,
    advanceTo: (ms) => sites.forEach((tracker) => tracker.advanceTo(ms)),
    close: () => sites.forEach((tracker) => tracker.close()),
    kind: `${n} separate trackers`,
  }
}

// The outage scenario, run once per (seed, mode) and shared by its two rows.
const outages = new Map()
function outage(seed, mode) {
  const key = `${seed}/${mode}`
  if (!outages.has(key)) outages.set(key, runOutage(seed, mode))
  return outages.get(key)
}

async function runOutage(seed, mode) {
  const tracker = new ErrorBudgetTracker({ clock: 'manual', targetRate: 0.95, windowMs: 24 * HOUR })
  const down = 12 * 3600
  const up = down + 2 * 3600
  const during = { attempts: 0, failedAdmitted: 0 }
  const after = { attempts: 0, admitted: 0 }
  await work({
    tracker,
    seconds: up + 2 * 3600,
    history: down,
    successAt: provider([
      [0, 0.99],
      [down, 0],
      [up, 0.99],
    ]),
    random: prng(seed),
    mode,
    observe: (s, a) => {
      if (s >= down && s < up && a.exhausted) {
        during.attempts++
        if (a.admitted && !a.ok) during.failedAdmitted++
      }
      if (s >= up + 5 * 60 && s < up + 2 * 3600) {
        after.attempts++
        if (a.admitted) after.admitted++
      }
    },
  })
  tracker.close()
  return {
    during: { value: share(during.failedAdmitted, during.attempts), detail: `${during.failedAdmitted} of ${during.attempts}` },
    after: { value: share(after.admitted, after.attempts), detail: `${after.admitted} of ${after.attempts}` },
  }
}

module.exports = { SCENARIOS, MODES, slowAttempts }
