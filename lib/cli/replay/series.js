'use strict'
// Samples of every tracker at regular instants of the replay, for the chart:
// budget left (%) and burn rate. The step starts at one second and doubles
// (dropping every other sample) whenever there would be more than MAX_SAMPLES,
// so a log of any length gives a chart of at most that many points per line.

const MAX_SAMPLES = 2048
const FIRST_STEP_MS = 1000

class Series {
  /** @param {import('./trackers').ReplayTrackers} trackers */
  constructor(trackers) {
    this.trackers = trackers
    this.start = null
    this.step = FIRST_STEP_MS
    /** The next instant to sample; replay time crossing it triggers `sampleUpTo`. */
    this.next = Infinity
    this.times = []
    /** Per tracker name: `{ budget: number[], burn: number[] }`, aligned with `times`. */
    this.lines = new Map()
    trackers.onSlot = (slot) => this.add(slot.name)
  }

  add(name) {
    // A tracker created late was untouched (full budget, no burn) before.
    this.lines.set(name, { budget: this.times.map(() => 100), burn: this.times.map(() => 0) })
  }

  /** Replay time starts at `ms` (the first event). */
  begin(ms) {
    this.start = ms
    this.next = ms
  }

  /** Takes every sample due at or before `ms`, moving the trackers' clocks there. */
  sampleUpTo(ms) {
    while ((ms - this.start) / this.step >= MAX_SAMPLES) this.thin()
    while (this.next <= ms) {
      this.take(this.next)
      this.next += this.step
    }
  }

  /** The last sample: at the end of the replay, after every event. */
  finish(ms) {
    if (this.start === null) return
    this.sampleUpTo(ms - 1)
    this.take(ms)
  }

  take(at) {
    this.trackers.advanceTo(at)
    this.times.push(at)
    for (const slot of this.trackers.slots.values()) {
      // One report() (≈105 ns, built in JavaScript) rather than two getters (≈280 ns
      // each, through the method glue): rounded to 0.1 % and 0.01, finer than the chart shows.
      const report = slot.tracker.report()
      const line = this.lines.get(slot.name)
      line.budget.push(report.budgetRemainingPct)
      line.burn.push(report.burnRate)
      slot.noteBurnRate(report.burnRate, at)
    }
  }

  // Doubles the step, keeping the samples at even multiples of it.
  thin() {
    const keep = (_, i) => i % 2 === 0
    this.times = this.times.filter(keep)
    for (const line of this.lines.values()) {
      line.budget = line.budget.filter(keep)
      line.burn = line.burn.filter(keep)
    }
    this.step *= 2
    this.next = this.start + this.times.length * this.step
  }
}

module.exports = { Series, MAX_SAMPLES }
