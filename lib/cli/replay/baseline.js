'use strict'
// Baseline and advice, after the article: "measure your baseline success rate
// for a few weeks, then set the SLO 2–3 % below it", and choose the window by
// volume (24 h for most, 6–12 h for tens of thousands of solves a day, 7 days
// for low volume). Counts successes and failures per type and UTC day.

const DAY_MS = 86_400_000
const HOUR_MS = 3_600_000
/** The recommended SLO is the baseline minus this many points (the middle of the article's 2–3). */
const MARGIN = 0.025
/** Fewer days than this and the median of daily rates means little: the whole-log rate is the baseline. */
const MIN_DAYS_FOR_MEDIAN = 3
/** The article measures the baseline over "a few weeks". */
const FEW_WEEKS_DAYS = 14

/** Window by volume: the first row whose `below` the daily volume is under. */
const WINDOW_BY_VOLUME = [
  { below: 1000, windowMs: 7 * DAY_MS, why: 'low volume (under 1,000 solves a day)' },
  { below: 10_000, windowMs: DAY_MS, why: 'most pipelines (1,000 to 10,000 solves a day)' },
  { below: 50_000, windowMs: 12 * HOUR_MS, why: 'tens of thousands of solves a day' },
  { below: Infinity, windowMs: 6 * HOUR_MS, why: '50,000 solves a day or more' },
]

/** Counts of one type: per UTC day number, `[successes, failures]`. */
class TypeCounts {
  constructor(type) {
    this.type = type
    this.days = new Map()
    // The current day's counter, kept to skip the map lookup on most events.
    this.dayStart = Infinity
    this.dayEnd = -Infinity
    this.current = null
  }

  /** Points `current` at the counter of the day holding `ms`. */
  setDay(ms) {
    const day = Math.floor(ms / DAY_MS)
    this.dayStart = day * DAY_MS
    this.dayEnd = this.dayStart + DAY_MS
    this.current = this.days.get(day)
    if (this.current === undefined) {
      this.current = [0, 0]
      this.days.set(day, this.current)
    }
  }

  /** One event: a success or a failure on the UTC day of `ms`. */
  add(ms, ok) {
    if (ms < this.dayStart || ms >= this.dayEnd) this.setDay(ms)
    this.current[ok ? 0 : 1]++
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const mid = s.length >> 1
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

/** A rate rounded to 0.1 point (0.9553 → 0.955): SLOs are stated that way. */
const roundRate = (rate) => Math.round(rate * 1000) / 1000

/**
 * The advice for one row (a type, or all of them) from its per-day counts and
 * the span of the whole log: success rates, the baseline, the recommended SLO
 * and window.
 * @param {string} name
 * @param {Map<number, [number, number]>} days
 * @param {number} spanMs time from the log's first to its last event
 */
function adviceFor(name, days, spanMs) {
  const daily = [...days.entries()]
    .sort(([a], [b]) => a - b)
    .map(([day, [ok, fail]]) => ({ day: new Date(day * DAY_MS).toISOString().slice(0, 10), solves: ok + fail, successRate: ok / (ok + fail) }))
  const solves = daily.reduce((n, d) => n + d.solves, 0)
  const successes = [...days.values()].reduce((n, [ok]) => n + ok, 0)
  const successRate = successes / solves
  const useMedian = daily.length >= MIN_DAYS_FOR_MEDIAN
  const baseline = useMedian ? median(daily.map((d) => d.successRate)) : successRate
  const slo = roundRate(baseline - MARGIN)
  // The volume is judged over at least an hour: a few minutes of logs say little.
  const solvesPerDay = (solves * DAY_MS) / Math.max(spanMs, HOUR_MS)
  const window = WINDOW_BY_VOLUME.find((w) => solvesPerDay < w.below)
  return {
    type: name,
    solves,
    successRate,
    days: daily,
    baseline,
    baselineFrom: useMedian ? 'median of daily rates' : 'whole log',
    recommendedSlo: slo > 0 ? slo : null,
    solvesPerDay,
    recommendedWindowMs: window.windowMs,
    windowReason: window.why,
  }
}

/** Per-type counts of a replay, and the advice drawn from them. */
class Baseline {
  constructor() {
    /** @type {Map<string, TypeCounts>} */
    this.types = new Map()
  }

  counts(type) {
    let c = this.types.get(type)
    if (c === undefined) {
      c = new TypeCounts(type)
      this.types.set(type, c)
    }
    return c
  }

  /**
   * The advice: one row per type (by name), then one for all types together
   * when there are several. `pooled` (`{ days, types }`): that row's counts and the
   * number of types, when only some types were counted here.
   * @param {number} spanMs
   */
  advice(spanMs, pooled) {
    const rows = [...this.types.values()].sort((a, b) => (a.type < b.type ? -1 : 1)).map((c) => adviceFor(c.type, c.days, spanMs))
    if (pooled !== undefined) {
      if (pooled.types > 1) rows.push(adviceFor('(all)', pooled.days, spanMs))
    } else if (this.types.size > 1) {
      const all = new Map()
      for (const c of this.types.values()) {
        for (const [day, [ok, fail]] of c.days) {
          const sum = all.get(day) ?? [0, 0]
          all.set(day, [sum[0] + ok, sum[1] + fail])
        }
      }
      rows.push(adviceFor('(all)', all, spanMs))
    }
    const days = spanMs / DAY_MS
    return {
      rows,
      margin: MARGIN,
      rule: 'recommended SLO = baseline − 2.5 points (the article: 2–3 % below the baseline)',
      baselineRule: `baseline = median of the daily success rates with ${MIN_DAYS_FOR_MEDIAN} days or more (one bad day does not lower it), else the whole-log rate`,
      windowRule: WINDOW_BY_VOLUME.map((w) => ({ belowSolvesPerDay: w.below === Infinity ? null : w.below, windowMs: w.windowMs, why: w.why })),
      shortLog: days < FEW_WEEKS_DAYS,
    }
  }
}

module.exports = { Baseline, TypeCounts, adviceFor, WINDOW_BY_VOLUME, MARGIN, DAY_MS }
