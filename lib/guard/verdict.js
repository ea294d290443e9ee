'use strict'
// The handle guard() gives fn as its second argument: `attempt.reject(reason?)`
// turns that attempt's success into a failure when the target site rejects the
// token later (a late verdict: `tracker.reject(atMs)` on the success's stamp).
// One verdict per attempt: the first call answers, every later one is false,
// so an attempt is never counted as a failure twice.
const { describe, invalidArgType } = require('../util/errors.js')

/** The longest reason kept: a note for logs, not a payload. */
const MAX_REASON_LENGTH = 200

/** An attempt's side of a late verdict (guard() holds it; fn gets `handle`). */
class Verdict {
  /** @param {object} tracker the tracker guard() records into */
  constructor(tracker, throttle, probeIntervalMs) {
    this.tracker = tracker
    this.throttle = throttle
    this.probeIntervalMs = probeIntervalMs
    /** The success's stamp once recorded; undefined before, null once answered. */
    this.successAt = undefined
    this.reason = undefined
    const verdict = this
    this.handle = Object.freeze({
      /**
       * The site rejected this attempt's token: count it as a failure where it
       * was recorded. True if it was; false when the attempt was not (yet) a
       * recorded success, is older than `verdictWindowMs` or out of the window,
       * or a verdict was already given.
       * @param {string} [reason]
       * @returns {boolean}
       */
      reject(reason) {
        return verdict.reject(reason)
      },
      /** The reason of the rejection taken, else undefined. */
      get reason() {
        return verdict.reason
      },
    })
  }

  /** guard() recorded the attempt's success, stamped `at`. */
  succeeded(at) {
    if (this.successAt === undefined) this.successAt = at
  }

  reject(reason) {
    if (reason !== undefined && typeof reason !== 'string') {
      throw invalidArgType(`attempt.reject(reason): reason must be a string, got ${describe(reason)}`)
    }
    const at = this.successAt
    if (at === undefined || at === null) return false
    this.successAt = null
    if (this.tracker.closed) return false
    const taken = this.tracker.reject(at)
    if (taken) {
      this.reason = reason?.slice(0, MAX_REASON_LENGTH)
      // The guard's recent evidence takes the verdict too (lib/guard/throttle.js).
      this.throttle.noteRejected(this.tracker.now, this.probeIntervalMs)
    }
    return taken
  }
}

module.exports = { Verdict }
