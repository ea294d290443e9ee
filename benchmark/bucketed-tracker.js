'use strict'
// A well-written pure-JavaScript bucketed tracker, the fair JS rival of the
// addon: a ring of per-bucket counters in typed arrays with running sums, so
// record() is O(1) and allocates nothing; status transitions per record as in
// the reference. It tracks the window only (no alert windows, no listener
// delivery machinery), so it does less than the addon.

class BucketedTracker {
  constructor(
    { targetRate = 0.95, windowMs = 3_600_000, resolutionMs, warningThreshold = 0.5, criticalThreshold = 0.1, minEvents = 0 } = {},
    now = () => performance.timeOrigin + performance.now(), // monotonic, like the addon's clock
  ) {
    this.targetRate = targetRate
    this.warningThreshold = warningThreshold
    this.criticalThreshold = criticalThreshold
    this.minEvents = minEvents
    this.windowMs = windowMs
    this.resolutionMs = resolutionMs ?? Math.max(1, Math.floor(windowMs / 43200))
    this.size = Math.ceil(windowMs / this.resolutionMs)
    this.ok = new Float64Array(this.size)
    this.bad = new Float64Array(this.size)
    this.successes = 0
    this.failures = 0
    this.now = now
    this.newest = Math.floor(now() / this.resolutionMs) // newest bucket index
    this.lastStatus = 'healthy'
    this.listeners = { healthy: [], warning: [], critical: [], exhausted: [] }
  }

  /** Moves the ring so that bucket `k` is the newest, clearing the buckets that left. */
  advance(k) {
    const steps = Math.min(k - this.newest, this.size)
    for (let i = 1; i <= steps; i++) {
      const slot = (this.newest + i) % this.size
      this.successes -= this.ok[slot]
      this.failures -= this.bad[slot]
      this.ok[slot] = 0
      this.bad[slot] = 0
    }
    this.newest = k
  }

  record(success) {
    const k = Math.floor(this.now() / this.resolutionMs)
    if (k > this.newest) this.advance(k)
    const slot = this.newest % this.size
    if (success) {
      this.ok[slot]++
      this.successes++
    } else {
      this.bad[slot]++
      this.failures++
    }
    const status = this.status
    if (status !== this.lastStatus) {
      this.lastStatus = status
      for (const cb of this.listeners[status]) cb(status)
    }
  }

  on(status, cb) {
    this.listeners[status].push(cb)
    return this
  }

  get status() {
    const total = this.successes + this.failures
    if (total < this.minEvents) return 'healthy'
    const budgetTotal = total * (1 - this.targetRate)
    const fraction = budgetTotal <= 0 ? (this.failures === 0 ? 1 : 0) : Math.max(0, budgetTotal - this.failures) / budgetTotal
    if (fraction <= 0) return 'exhausted'
    if (fraction < this.criticalThreshold) return 'critical'
    if (fraction < this.warningThreshold) return 'warning'
    return 'healthy'
  }
}

module.exports = { BucketedTracker }
