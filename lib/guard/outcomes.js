'use strict'
// The attempts guard() ran that are neither a success nor a failure, and the
// providers' back-offs. A solve attempt has four outcomes (lib/guard/classify.js):
// 'success' and 'failure' go to the window (the native tracker); 'excluded'
// (the caller's or the account's problem) and 'capacity' (no worker, thread or
// slot free) are in neither the numerator nor the denominator, and are counted
// here, per tracker object, in this process — as the throttle's admitted and
// refused counts are (lib/guard/throttle.js): they are the guard's, not the window's,
// so the core and snapshots do not hold them. Each tracker's ledger is kept with its
// throttle in lib/guard/state.js; `recorded` (lib/tracker/tracker.js), report() and
// metrics() (lib/prometheus/metrics.js) show its counts, zeros before the first guard().
//
// A provider's published back-off (lib/guard/profiles.js) after a code such as
// ERROR_NO_SLOT_AVAILABLE holds the next attempts for that provider until it
// has passed on the tracker's clock, so a manual clock replays it.

class OutcomeLedger {
  constructor() {
    this.excluded = 0
    this.capacity = 0
    /** Per provider name: `{ until, code }`, tracker time the back-off ends. */
    this.backoffs = new Map()
  }

  /** Counts one attempt of `outcome` 'excluded' or 'capacity'. */
  count(outcome) {
    if (outcome === 'excluded') this.excluded++
    else if (outcome === 'capacity') this.capacity++
  }

  /** Holds `provider`'s next attempts for `backoffMs` from `now` (a longer hold already set stays). */
  holdOff(provider, code, now, backoffMs) {
    if (provider === undefined || !(backoffMs > 0)) return
    const held = this.backoffs.get(provider)
    if (held === undefined || held.until < now + backoffMs) this.backoffs.set(provider, { until: now + backoffMs, code })
  }

  /** The back-off of `provider` still running at `now` (`{ retryAfterMs, code }`), or null. */
  heldAt(provider, now) {
    const held = provider === undefined ? undefined : this.backoffs.get(provider)
    if (held === undefined) return null
    if (now >= held.until) {
      this.backoffs.delete(provider)
      return null
    }
    return { retryAfterMs: held.until - now, code: held.code }
  }

  /** When the last back-off still running at `now` ends, or null: none runs. */
  heldUntil(now) {
    let end = null
    for (const provider of this.backoffs.keys()) {
      const held = this.heldAt(provider, now)
      if (held !== null && (end === null || now + held.retryAfterMs > end)) end = now + held.retryAfterMs
    }
    return end
  }
}

module.exports = { OutcomeLedger }
