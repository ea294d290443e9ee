'use strict'
// The trackers of a replay: one for the whole log, or one per CAPTCHA type
// (`--by type`), each a manual-clock ErrorBudgetTracker with its own target and
// window. Collects what their listeners report (status changes, alerts) and the
// worst burn rate seen.
const { ErrorBudgetTracker } = require('../../tracker/tracker.js')

const { STATUSES } = require('../../native/fast-report.js')
const { ThrottleReplay } = require('./throttle.js')
const ALL = 'all'
/** How many line numbers of dropped solves a tracker keeps (the summary names them). */
const DROPPED_LINES_KEPT = 10

/** One tracker of the replay and what happened to it. */
class Slot {
  constructor(name, config, labels) {
    this.name = name
    /** With several `--by` fields: the value of each, else undefined. */
    this.labels = labels
    this.config = config
    this.tracker = new ErrorBudgetTracker({ ...config, clock: 'manual' })
    this.events = 0
    /** The earliest event's time: until a window after it, the window is still filling. */
    this.firstAt = Infinity
    /** Status changes and alerts, in the order the tracker produced them. */
    this.timeline = []
    /** With `--throttle`: what a throttling guard would have done (lib/cli/replay/throttle.js); else null. */
    this.throttle = null
    this.delivered = 'healthy'
    this.worst = { burnRate: 0, at: null }
    /** Half the window: a line less far behind the latest is never too old for it (run.js). */
    this.halfWindowMs = config.windowMs / 2
    /** Solves dropped as older than the window when they came, and the first lines of them. */
    this.dropped = 0
    this.droppedLines = []
    for (const status of STATUSES) {
      this.tracker.on(status, (report) => {
        this.timeline.push({
          at: report.at,
          kind: 'status',
          from: this.delivered,
          to: status,
          budgetRemainingPct: report.budgetRemainingPct,
          burnRate: report.burnRate,
        })
        this.delivered = status
      })
    }
    for (const kind of ['alert', 'resolve']) {
      this.tracker.on(kind, (e) => {
        const { name, severity, burnRateLong, burnRateShort, threshold, at } = e
        this.timeline.push({ at, kind, name, severity, burnRateLong, burnRateShort, threshold })
      })
    }
  }

  /**
   * Reads the burn rate now and keeps it if it is the worst so far. Through
   * report() (≈105 ns), not the burnRate getter (≈280 ns): this runs after every
   * failure of the replay. So the worst is the report's, to 2 decimals, first reached at `at`.
   */
  checkWorst(at) {
    this.noteBurnRate(this.tracker.report().burnRate, at)
  }

  /** Keeps `burnRate` (read at `at`) if it is the worst so far. */
  noteBurnRate(burnRate, at) {
    if (burnRate > this.worst.burnRate) this.worst = { burnRate, at }
  }

  /**
   * After recording event `i` of a batch (`lineNumbers()`, reader.js): if the tracker
   * dropped it, counts it and keeps its line among the first DROPPED_LINES_KEPT.
   */
  noteDropped(lineNumbers, i) {
    const dropped = this.tracker.report().dropped
    if (dropped === this.dropped) return
    this.dropped = dropped
    if (this.droppedLines.length < DROPPED_LINES_KEPT) this.droppedLines.push(lineNumbers()[i])
  }

  /** Whether every transition the tracker made has reached the listeners. */
  settled() {
    const firing = new Set()
    for (const e of this.timeline) {
      if (e.kind === 'throttle') continue
      if (e.kind === 'alert') firing.add(e.name)
      else if (e.kind === 'resolve') firing.delete(e.name)
    }
    const report = this.tracker.report()
    return this.delivered === this.tracker.lastStatus && report.alerts.every((a) => firing.has(a.name)) && firing.size === report.alerts.length
  }
}

/**
 * The set of trackers. `settingsFor(name)` gives a tracker's config (targetRate,
 * windowMs, alerts, minEvents); with `byType`, a tracker is created for each new
 * type as it appears, else a single one named 'all' takes every event.
 */
class ReplayTrackers {
  constructor({ byType, settingsFor, throttle = false }) {
    this.byType = byType
    this.settingsFor = settingsFor
    this.throttle = throttle
    /** @type {Map<string, Slot>} */
    this.slots = new Map()
    /** Called with each new slot (the chart pads its series). */
    this.onSlot = () => {}
  }

  /** The slot that takes the events of `type` (with several `--by` fields, `labels` are its values). */
  slotFor(type, labels) {
    const name = this.byType ? type : ALL
    let slot = this.slots.get(name)
    if (slot === undefined) {
      slot = new Slot(name, this.settingsFor(name, this.byType ? labels : undefined), this.byType ? labels : undefined)
      this.slots.set(name, slot)
      if (this.throttle) slot.throttle = new ThrottleReplay(slot.config, (e) => slot.timeline.push(e))
      this.onSlot(slot)
    }
    return slot
  }

  /** Moves every tracker's clock to `ms` (producing the transitions due by then). */
  advanceTo(ms) {
    for (const slot of this.slots.values()) {
      if (slot.tracker.now < ms) slot.tracker.advanceTo(ms)
    }
  }

  /** The end of the replay without a chart: every clock moved to `ms`, and the burn rate there read as the chart's last sample would. */
  finish(ms) {
    for (const slot of this.slots.values()) {
      if (slot.tracker.now < ms) slot.tracker.advanceTo(ms)
      slot.noteBurnRate(slot.tracker.report().burnRate, ms)
    }
  }

  /**
   * Waits until the listeners have received every transition: they are called
   * asynchronously, later on the event loop, in order.
   */
  async settle(timeoutMs = 5000) {
    const started = Date.now()
    let seen = -1
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve))
      const count = [...this.slots.values()].reduce((n, s) => n + s.timeline.length, 0)
      if (count === seen && [...this.slots.values()].every((s) => s.settled())) return
      if (Date.now() - started > timeoutMs) throw new Error('the tracker listeners did not settle')
      seen = count
    }
  }

  close() {
    for (const slot of this.slots.values()) {
      slot.tracker.close()
      slot.throttle?.close()
    }
  }
}

module.exports = { ReplayTrackers, ALL }
