'use strict'
// The guard's state of each tracker object, in one place: its throttle
// (lib/guard/throttle.js: decisions, admitted / refused counts) and its outcome
// ledger (lib/guard/outcomes.js: excluded / capacity counts, providers' back-offs).
// They are the guard's, not the window's: per tracker object (each handle of a
// shared tracker has its own), in this process, never in the core or a snapshot.
// The tracker's `report()`, `recorded` and `metrics()` read them through
// `withGuardFields()` / `countsOf()`; nothing is ever defined on the tracker itself,
// so a tracker has the same own properties, and its report the same keys,
// before and after its first guard().

const { Throttle } = require('./throttle.js')
const { OutcomeLedger } = require('./outcomes.js')

/** One tracker object's guard state. */
class GuardState {
  constructor() {
    /** Made by the first decision, which knows the SLO target (`throttleFor`); null before. */
    this.throttle = null
    this.ledger = new OutcomeLedger()
  }

  /** The throttle, made on first use for a tracker of SLO target `sloTarget`. */
  throttleFor(sloTarget) {
    return (this.throttle ??= new Throttle(sloTarget))
  }
}

const states = new WeakMap()
// Whether any guard() ran in this thread: until then a report needs no lookup.
let anyState = false

/** The guard state of `tracker`, made by its first guard(). */
function stateOf(tracker) {
  let state = states.get(tracker)
  if (state === undefined) {
    state = new GuardState()
    states.set(tracker, state)
    anyState = true
  }
  return state
}

/** `{ excluded, capacity }` of `tracker`: zeros before its first guard(). */
function countsOf(tracker) {
  const ledger = states.get(tracker)?.ledger
  return ledger === undefined ? { excluded: 0, capacity: 0 } : { excluded: ledger.excluded, capacity: ledger.capacity }
}

/**
 * Sets the guard's fields of `tracker` at tracker time `report.at` on `report`, in
 * report order: `excluded`, `capacity` and `throttle` (its `info()`); zeros and a
 * null `throttle` before the first guard() decided (no state, nothing admitted or
 * refused yet). report() and metrics() both read them here.
 * @template {{ at: number }} R
 * @param {R} report
 * @returns {R & { excluded: number, capacity: number, throttle: object }}
 */
function withGuardFields(report, tracker) {
  const state = anyState ? states.get(tracker) : undefined
  if (state === undefined) {
    report.excluded = 0
    report.capacity = 0
    report.throttle = null
  } else {
    report.excluded = state.ledger.excluded
    report.capacity = state.ledger.capacity
    report.throttle = state.throttle === null ? null : state.throttle.info(report.at)
  }
  return report
}

/**
 * When the last of `tracker`'s running back-offs ends (its clock, epoch ms), or null. A
 * family keeps such a child (lib/family/eviction.js): the back-off would go with it.
 */
function backoffEnd(tracker) {
  const ledger = states.get(tracker)?.ledger
  return ledger === undefined ? null : ledger.heldUntil(tracker.now)
}

module.exports = { stateOf, countsOf, withGuardFields, backoffEnd }
