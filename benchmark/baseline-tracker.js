'use strict'
// The JavaScript tracker users run today, written from its description
// ("Error Budget Tracking for CAPTCHA Solve Reliability"): every event is an
// object in an array; record() drops the events older than the window, then
// scans all of them to work out the status and fire transitions. Naive in its
// algorithm on purpose — it is the baseline — but not a straw man: no
// allocation beyond the event itself and the report, no closures in the loop,
// and expired events are dropped by moving a start index (compacting now and
// then), not by copying the array on every record.

class BaselineTracker {
  constructor({ targetRate = 0.95, windowMs = 3_600_000, warningThreshold = 0.5, criticalThreshold = 0.1, minEvents = 0 } = {}, now = Date.now) {
    this.targetRate = targetRate
    this.windowMs = windowMs
    this.warningThreshold = warningThreshold
    this.criticalThreshold = criticalThreshold
    this.minEvents = minEvents
    this.now = now
    this.events = []
    this.start = 0 // events before this index have left the window
    this.lastStatus = 'healthy'
    this.listeners = { healthy: [], warning: [], critical: [], exhausted: [] }
  }

  record(success) {
    const t = this.now()
    this.events.push({ t, success })
    const cutoff = t - this.windowMs
    while (this.start < this.events.length && this.events[this.start].t <= cutoff) this.start++
    if (this.start > 1024 && this.start * 2 > this.events.length) {
      this.events = this.events.slice(this.start)
      this.start = 0
    }
    const report = this.report(t)
    if (report.status !== this.lastStatus) {
      this.lastStatus = report.status
      for (const cb of this.listeners[report.status]) cb(report)
    }
  }

  on(status, cb) {
    this.listeners[status].push(cb)
    return this
  }

  report(now = this.now()) {
    let total = 0
    let successes = 0
    for (let i = this.start; i < this.events.length; i++) {
      const e = this.events[i]
      if (now - e.t < this.windowMs) {
        total++
        if (e.success) successes++
      }
    }
    const failures = total - successes
    const budgetTotal = total * (1 - this.targetRate)
    const budgetRemaining = Math.max(0, budgetTotal - failures)
    const fraction = budgetTotal <= 0 ? (failures === 0 ? 1 : 0) : budgetRemaining / budgetTotal
    let status = 'healthy'
    if (total >= this.minEvents) {
      if (fraction <= 0) status = 'exhausted'
      else if (fraction < this.criticalThreshold) status = 'critical'
      else if (fraction < this.warningThreshold) status = 'warning'
    }
    return {
      status,
      currentRate: total === 0 ? 1 : Math.round((successes / total) * 10000) / 10000,
      total,
      failures,
      budgetRemainingPct: Math.round(fraction * 1000) / 10,
      burnRate: total === 0 || budgetTotal <= 0 ? 0 : Math.round((failures / budgetTotal) * 100) / 100,
      sloTarget: this.targetRate,
    }
  }
}

module.exports = { BaselineTracker }
