'use strict'
// `replay --throttle`: what a throttling guard (`guard()` with its defaults:
// whenExhausted 'throttle', lib/guard/throttle.js) would have admitted and refused
// over the log. The guard sees its own tracker: a shadow of the replay's, with
// the same config, fed only the solves it would have admitted (a refused solve
// never happens, so it is never recorded). Its state changes join the timeline
// as `{ kind: 'throttle', from, to, admitted, refused, probes }`.
const { Throttle, DEFAULTS, recentBurnRate } = require('../../guard/throttle.js')
const { ErrorBudgetTracker } = require('../../tracker/tracker.js')

const OPTIONS = Object.freeze({ whenExhausted: 'throttle', ...DEFAULTS.throttle, critical: false })

class ThrottleReplay {
  /**
   * @param {object} config the replay tracker's config (without clock)
   * @param {(entry: object) => void} onChange receives each state change
   */
  constructor(config, onChange) {
    this.shadow = new ErrorBudgetTracker({ ...config, clock: 'manual' })
    this.throttle = new Throttle(config.targetRate)
    this.onChange = onChange
    this.state = this.throttle.state
    this.throttledSince = null
    this.throttledMs = 0
    this.stretches = 0
  }

  /** One solve of the log at `t`: admitted (and recorded) or refused. */
  step(t, good) {
    const shadow = this.shadow
    const th = this.throttle
    const now = t > shadow.now ? t : shadow.now
    if (th.decide(now, shadow.status === 'exhausted', shadow.total, OPTIONS, () => recentBurnRate(shadow)).admit) {
      shadow.record(good, t)
      th.note(good, now, OPTIONS.probeIntervalMs)
    }
    if (th.state !== this.state) this.change(now)
  }

  change(at) {
    const from = this.state
    const to = this.throttle.state
    if (to === 'throttled') {
      this.throttledSince = at
      this.stretches++
    } else if (from === 'throttled') {
      this.throttledMs += at - this.throttledSince
      this.throttledSince = null
    }
    this.state = to
    const { admitted, refused, probes } = this.throttle
    this.onChange({ at, kind: 'throttle', from, to, admitted, refused, probes })
  }

  /** The totals at the end of the log (`end`: its last timestamp). */
  summary(end) {
    const { admitted, refused, probes } = this.throttle
    const open = this.throttledSince === null ? 0 : end - this.throttledSince
    return { admitted, refused, probes, stretches: this.stretches, throttledMs: this.throttledMs + open, state: this.state }
  }

  close() {
    this.shadow.close()
  }
}

module.exports = { ThrottleReplay, OPTIONS }
