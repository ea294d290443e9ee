'use strict'

/**
 * A plain-JavaScript reference error-budget tracker, written from the
 * description of the tracker users already run: it keeps every event as
 * `{ t, ok }` in an array and scans the whole array on every call.
 *
 * It is deliberately naive. It is the oracle the native addon is compared to,
 * so it must not share any code (or cleverness) with it.
 *
 * Time: every read is evaluated at `this.now()`. By default that is
 * `Date.now()`; tests pass `{ now: () => someVariable }` to drive it.
 */

const STATUSES = ['healthy', 'warning', 'critical', 'exhausted']

const DEFAULTS = {
  targetRate: 0.95,
  windowMs: 3600000,
  warningThreshold: 0.5,
  criticalThreshold: 0.1,
  minEvents: 0,
}

class OracleTracker {
  constructor(config = {}, { now = Date.now } = {}) {
    this.config = { ...DEFAULTS }
    for (const key of Object.keys(DEFAULTS)) {
      if (config[key] !== undefined) this.config[key] = config[key]
    }
    this.now = now
    this.events = []
    this.lastStatus = 'healthy'
    this.listeners = { healthy: [], warning: [], critical: [], exhausted: [] }
  }

  /** Records one event at `t` (default now), then fires a transition if the status changed. */
  record(ok, t = this.now()) {
    this.events.push({ t, ok })
    const status = this.evaluate().status
    if (status !== this.lastStatus) {
      this.lastStatus = status
      const report = this.report()
      for (const cb of this.listeners[status].slice()) cb(report)
    }
  }

  on(status, cb) {
    this.listeners[status].push(cb)
    return this
  }

  off(status, cb) {
    const list = this.listeners[status]
    const i = list.lastIndexOf(cb)
    if (i !== -1) list.splice(i, 1)
    return this
  }

  /** Unrounded figures at time `now` (default: the tracker's clock). */
  evaluate(now = this.now()) {
    const { targetRate, windowMs, warningThreshold, criticalThreshold, minEvents } = this.config
    let total = 0
    let successes = 0
    let failures = 0
    for (const e of this.events) {
      if (now - e.t < windowMs) {
        total++
        if (e.ok) successes++
        else failures++
      }
    }
    const currentRate = total === 0 ? 1 : successes / total
    const budgetTotal = total * (1 - targetRate)
    const budgetRemaining = Math.max(0, budgetTotal - failures)
    const remainingFraction = budgetTotal <= 0 ? (failures === 0 ? 1 : 0) : Math.max(0, budgetRemaining / budgetTotal)
    const burnRate = total === 0 || budgetTotal <= 0 || total < minEvents ? 0 : failures / (total * (1 - targetRate))
    let status
    if (total < minEvents) {
      status = 'healthy'
    } else {
      const f = remainingFraction
      if (f <= 0) status = 'exhausted'
      else if (f < criticalThreshold) status = 'critical'
      else if (f < warningThreshold) status = 'warning'
      else status = 'healthy'
    }
    return { total, successes, failures, currentRate, budgetTotal, budgetRemaining, remainingFraction, burnRate, status }
  }

  /** The rounded report at time `now` (default: the tracker's clock). */
  report(now = this.now()) {
    const m = this.evaluate(now)
    return {
      status: m.status,
      currentRate: Math.round(m.currentRate * 10000) / 10000,
      total: m.total,
      failures: m.failures,
      budgetRemainingPct: Math.round(m.remainingFraction * 100 * 10) / 10,
      burnRate: Math.round(m.burnRate * 100) / 100,
      sloTarget: this.config.targetRate,
      successes: m.successes,
      budgetTotal: Math.round(m.budgetTotal * 10) / 10,
      budgetRemaining: Math.round(m.budgetRemaining * 10) / 10,
    }
  }

  get total() {
    return this.evaluate().total
  }
  get successes() {
    return this.evaluate().successes
  }
  get failures() {
    return this.evaluate().failures
  }
  get currentRate() {
    return this.evaluate().currentRate
  }
  get budgetTotal() {
    return this.evaluate().budgetTotal
  }
  get budgetRemaining() {
    return this.evaluate().budgetRemaining
  }
  get remainingFraction() {
    return this.evaluate().remainingFraction
  }
  get burnRate() {
    return this.evaluate().burnRate
  }
  get status() {
    return this.evaluate().status
  }
}

module.exports = { OracleTracker, STATUSES, DEFAULTS }
