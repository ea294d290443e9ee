'use strict'
// What guard() does while the budget is exhausted: throttle (the default) or refuse.
//
// The window's status says whether the budget is spent; it says nothing about
// whether the provider works *now* (for a 24 h window, an outage's failures stay
// in it for a day). So a throttling guard keeps a second, short memory: a small
// ledger of the recent guarded outcomes, in the budget's own currency. Each
// success earns (1 − target), each failure costs target: at exactly the SLO's
// rate it stands still, above it the ledger grows, below it the ledger falls.
// It is clamped between a floor (RECOVERY_PROBES successes below zero) and a
// ceiling (TOLERATED_FAILURES failures above zero), so it remembers minutes,
// not the window: O(1) per attempt, no timestamps kept.
//
// As the window becomes exhausted, a guard that has noted fewer than
// RECOVERY_PROBES outcomes of its own (a restarted worker, a fleet worker whose
// window holds the others' failures) goes by the window's last 5 minutes
// instead: a burn rate over 1 there throttles, from the ledger's floor.
// While the window is exhausted (and holds at least `minSolves` solves):
// - ledger ≥ 0 — recent attempts succeed at the SLO's rate: every attempt is
//   admitted ('admitting'), like a circuit breaker's closed state;
// - ledger < 0: one probe per `probeIntervalMs` of the tracker's clock is
//   admitted ('throttled', a half-open state that never stops probing); the
//   others are refused with the time until the next probe. RECOVERY_PROBES
//   probe successes in a row (or more, with failures in between) lift the ledger
//   back to zero: full admission again.
// A relapse (full admission, then below zero again before the ledger reached its
// ceiling) doubles the floor's depth, up to MAX_RECOVERY_PROBES: a provider that
// only looks healthy in short runs (89 % against a 96.7 % SLO passes 10 probes in
// a row one time in three) must pass 20, then 40 probes, instead of flapping.
// The ceiling reached (sustained success) or the window's budget back in
// charge resets it.
// Probes follow the attempt rate (issue 33): after a failed probe the next one
// waits for PROBE_SPACING refused attempts as well as `probeIntervalMs`, twice
// as many after each further failed probe up to MAX_PROBE_SPACING, so a site
// attempted every 10 s is no longer admitted every other time while it fails
// (1 in 31 at any rate, once failures persist). A probe success drops the count
// (the interval alone again), so a recovered provider is noticed within minutes
// even at 6 attempts a minute. The first probe after the guard starts
// throttling waits for the interval only.
// Attempts refused since the guard left 'open' count towards `minSolves` beside
// the window's solves: a window thinned out by the throttle itself (slow
// attempts: few probes in it) keeps it throttled.
// Once the window leaves `exhausted`, its budget governs again ('open').
// Every decision reads the tracker's clock (`tracker.now`), so on a manual
// clock a run replays exactly. Each tracker object's throttle is kept in
// lib/guard/state.js, beside its outcome ledger.

const { describe, invalidArgType, invalidArgValue, integerOption } = require('../util/errors.js')
const { recentBurnRateOver } = require('../native/fast-state.js')

/** The guard's modes, the default first. */
const MODES = Object.freeze(['throttle', 'refuse'])
/** The states a throttle reports. */
const STATES = Object.freeze(['open', 'admitting', 'throttled', 'refusing'])
/** Successes (in a row) that lift the ledger from its floor to zero. */
const RECOVERY_PROBES = 10
/** The most a floor deepens to after relapses. */
const MAX_RECOVERY_PROBES = 80
/** Failures' worth of credit the ledger can hold: a burst this long is tolerated. */
const TOLERATED_FAILURES = 5

/** Refused attempts between two probes after a failed one, doubling per failed probe up to the most. */
const PROBE_SPACING = 10
const MAX_PROBE_SPACING = 30
/** How fast the estimate of the time between attempts follows the attempts (an EWMA's weight). */
const GAP_WEIGHT = 0.2

/** Sums of (1 − target) and target in doubles are off by ulps: within this of zero is zero. */
const EPSILON = 1e-9

/** The defaults of each mode. */
const DEFAULTS = Object.freeze({
  throttle: Object.freeze({ minSolves: 100, probeIntervalMs: 20_000 }),
  refuse: Object.freeze({ minSolves: 0, probeIntervalMs: 20_000 }),
})

/** setTimeout's limit, the longest probe interval. */
const MAX_INTERVAL_MS = 2 ** 31 - 1

/**
 * Checks `{ whenExhausted, minSolves, probeIntervalMs }` (each optional) of
 * guard() or createSolver() (`where` names the object) and fills in the mode's
 * defaults.
 */
function checkOptions({ whenExhausted = MODES[0], minSolves, probeIntervalMs }, where) {
  if (!MODES.includes(whenExhausted)) {
    const quoted = MODES.map((m) => `'${m}'`).join(', ')
    if (typeof whenExhausted !== 'string') {
      throw invalidArgType(`${where}.whenExhausted must be one of ${quoted}, got ${describe(whenExhausted)}`)
    }
    throw invalidArgValue(`${where}.whenExhausted must be one of ${quoted}, got '${whenExhausted}'`)
  }
  const defaults = DEFAULTS[whenExhausted]
  return {
    whenExhausted,
    minSolves: integerOption(minSolves, `${where}.minSolves`, 0, Number.MAX_SAFE_INTEGER, defaults.minSolves),
    probeIntervalMs: integerOption(probeIntervalMs, `${where}.probeIntervalMs`, 1, MAX_INTERVAL_MS, defaults.probeIntervalMs),
  }
}

/**
 * The throttle of one tracker: its recent-evidence ledger, its state, and the
 * admitted / refused counters. Pure: every input (time, status, window size)
 * is passed in, so the guard and the replay share it.
 */
class Throttle {
  /** @param {number} targetRate the tracker's SLO target, in (0, 1] */
  constructor(targetRate) {
    this.gain = 1 - targetRate
    this.cost = targetRate
    // With a target of 1 no success can make up for a failure: only probes, until the window recovers.
    this.depth = RECOVERY_PROBES
    this.floor = this.floorFor(this.depth)
    this.ceiling = TOLERATED_FAILURES * this.cost
    this.ledger = 0
    this.state = 'open'
    /** Tracker time the current state began; null until the first decision. */
    this.since = null
    this.nextProbeAt = 0
    this.admitted = 0
    this.refused = 0
    this.probes = 0
    /** Outcomes noted, counted up to RECOVERY_PROBES (enough of its own evidence). */
    this.noted = 0
    /** Refused attempts the next probe waits for (0: the interval alone), and those refused since the last probe. */
    this.spacing = 0
    this.refusedSinceProbe = 0
    /** The time between attempts, an EWMA (null until two decisions): when the next probe may come. */
    this.meanGapMs = null
    this.lastDecisionAt = null
    /** Attempts refused since the state was last 'open': they count towards `minSolves`. */
    this.refusedSinceOpen = 0
  }

  floorFor(depth) {
    return this.gain > 0 ? -depth * this.gain : -this.cost
  }

  deepen(depth) {
    this.depth = depth
    this.floor = this.floorFor(depth)
    if (this.ledger < this.floor) this.ledger = this.floor
  }

  moveTo(state, now) {
    if (this.state !== state) {
      this.state = state
      this.since = now
    } else if (this.since === null) {
      this.since = now
    }
  }

  /**
   * Whether to run one attempt at `now`. `exhausted`: the window's status;
   * `total`: the solves in the window; `options`: `{ whenExhausted, minSolves,
   * probeIntervalMs, critical }`; `recentBurnRate()`: the window's burn rate over
   * its last minutes, asked only as the window becomes exhausted. Returns `{ admit: true }` or `{ admit: false,
   * retryAfterMs }` (null when no time can be given: 'refuse').
   */
  decide(now, exhausted, total, { whenExhausted, minSolves, probeIntervalMs, critical }, recentBurnRate) {
    if (this.lastDecisionAt !== null && now >= this.lastDecisionAt) {
      const gap = now - this.lastDecisionAt
      this.meanGapMs = this.meanGapMs === null ? gap : this.meanGapMs + GAP_WEIGHT * (gap - this.meanGapMs)
    }
    this.lastDecisionAt = now
    // The attempts refused since the guard left 'open' count towards `minSolves`:
    // they would be solves in the window had they run, and a window thinned out
    // by the throttle itself (slow attempts, few probes) is no reason to stop.
    if (!exhausted || total + this.refusedSinceOpen < minSolves) {
      if (this.state !== 'open') this.deepen(RECOVERY_PROBES)
      this.moveTo('open', now)
      this.refusedSinceOpen = 0
      return this.admit()
    }
    if (whenExhausted === 'refuse') {
      this.moveTo('refusing', now)
      return critical ? this.admit() : this.refuse(null)
    }
    if (this.state === 'open' || this.state === 'refusing') {
      // Just exhausted: the recent evidence decides — the guard's own, or with too
      // little of it the window's last minutes; the first probe one interval on.
      const recentOk = this.noted >= RECOVERY_PROBES ? this.ledger >= -EPSILON : !(recentBurnRate() > 1)
      if (recentOk) this.moveTo('admitting', now)
      else {
        this.ledger = Math.min(this.ledger, this.floor)
        this.throttle(now, probeIntervalMs)
      }
    }
    if (this.state === 'admitting' || critical) return this.admit()
    if (now >= this.nextProbeAt && this.refusedSinceProbe >= this.spacing) {
      this.nextProbeAt = now + probeIntervalMs
      this.refusedSinceProbe = 0
      this.probes++
      return this.admit()
    }
    this.refusedSinceProbe++
    // The later of the interval's end and the refusals still to come at the recent attempt rate.
    const attemptsLeft = Math.max(0, this.spacing - this.refusedSinceProbe)
    return this.refuse(Math.max(this.nextProbeAt - now, Math.round(attemptsLeft * (this.meanGapMs ?? 0))))
  }

  throttle(now, probeIntervalMs) {
    this.moveTo('throttled', now)
    this.nextProbeAt = now + probeIntervalMs
    this.spacing = 0
    this.refusedSinceProbe = 0
  }

  admit() {
    this.admitted++
    return ADMIT
  }

  refuse(retryAfterMs) {
    this.refused++
    this.refusedSinceOpen++
    return { admit: false, retryAfterMs }
  }

  /**
   * One recorded outcome of an admitted attempt, at `now`. Moves between
   * 'admitting' and 'throttled' as the ledger crosses zero.
   */
  note(ok, now, probeIntervalMs) {
    if (this.noted < RECOVERY_PROBES) this.noted++
    // A probe's outcome sets how many refusals the next one waits for.
    if (this.state === 'throttled') this.spacing = ok ? 0 : Math.min(MAX_PROBE_SPACING, Math.max(PROBE_SPACING, 2 * this.spacing))
    this.shift(ok ? this.gain : -this.cost, now, probeIntervalMs)
  }

  /**
   * A noted success the site rejected later (`attempt.reject()`): its gain
   * taken back and a failure's cost paid, as if it had been noted a failure
   * (within the ledger's clamping).
   */
  noteRejected(now, probeIntervalMs) {
    this.shift(-(this.gain + this.cost), now, probeIntervalMs)
  }

  shift(delta, now, probeIntervalMs) {
    const next = this.ledger + delta
    // (The sum is rounded to the floor's or ceiling's value at the ends.)
    this.ledger = Math.min(this.ceiling, Math.max(this.floor, next))
    if (this.ledger >= this.ceiling && this.depth !== RECOVERY_PROBES) this.deepen(RECOVERY_PROBES)
    if (this.state === 'admitting' && this.ledger < -EPSILON) {
      // A relapse: the deeper floor, from its bottom (20 probe successes, then 40, …).
      this.deepen(Math.min(2 * this.depth, MAX_RECOVERY_PROBES))
      this.ledger = this.floor
      this.throttle(now, probeIntervalMs)
    } else if (this.state === 'throttled' && this.ledger >= -EPSILON) this.moveTo('admitting', now)
  }

  /** What `report().throttle` shows. */
  info(now) {
    return {
      state: this.state,
      since: this.since,
      admitted: this.admitted,
      refused: this.refused,
      probes: this.probes,
      nextProbeInMs: this.state === 'throttled' ? Math.max(0, this.nextProbeAt - now) : null,
    }
  }
}

const ADMIT = Object.freeze({ admit: true, retryAfterMs: null })

/** The window's recent past a guard looks at as the window becomes exhausted. */
const RECENT_MS = 5 * 60_000

/** The burn rate over the tracker's last 5 minutes (all of a shorter window): guard() reads it in its one call (lib/guard/guard.js). */
function recentBurnRate(tracker) {
  return recentBurnRateOver(tracker, RECENT_MS)
}

module.exports = {
  Throttle,
  checkOptions,
  recentBurnRate,
  RECENT_MS,
  MODES,
  STATES,
  DEFAULTS,
  RECOVERY_PROBES,
  MAX_RECOVERY_PROBES,
  TOLERATED_FAILURES,
  PROBE_SPACING,
  MAX_PROBE_SPACING,
}
