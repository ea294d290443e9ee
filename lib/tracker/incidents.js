'use strict'
// on('incident', cb): the per-pair 'alert' / 'resolve' events grouped into
// incidents, in JavaScript over the native events (lib/tracker/tracker.js asks here).
//
// An incident opens on the first pair that fires while none is open ('open',
// with that pair's severity), fires once more if a page pair fires while it is
// at ticket severity ('escalated'), and once when its last firing pair
// resolves ('resolved'). Ids count 1, 2, … per tracker. The tracker's first
// incident listener registers one native 'alert' and one native 'resolve'
// listener (so the tracker is pinned like any other listener's); its last
// off() removes them and forgets the incident state: a pair that fired before
// the first incident listener is not part of any incident.
const { inspect } = require('node:util')

/** Where a tracker keeps its incident state (an own, non-enumerable data property). */
const INCIDENTS = Symbol('captcha-error-budget.incidents')

/** What a listener threw, for a warning: a string quoted, anything else as String() (or inspect) shows it. */
function describeThrown(value) {
  if (typeof value === 'string') return inspect(value)
  try {
    return String(value)
  } catch {
    return inspect(value)
  }
}

/** Calls every listener of `state` with `incident`; a throw becomes a process warning and the next one runs. */
function emit(tracker, state, incident) {
  for (const listener of state.listeners.slice()) {
    try {
      listener.call(tracker, { ...incident, firing: incident.firing.slice() })
    } catch (thrown) {
      try {
        // As the native listeners: an Error is the warning itself, anything else described.
        process.emitWarning(thrown instanceof Error ? thrown : `an ErrorBudgetTracker 'incident' listener threw ${describeThrown(thrown)}`)
      } catch {}
    }
  }
}

/** The incident event for `open` in `stateName`, caused by the pair event `e`. */
function incidentEvent(open, stateName, e) {
  return {
    id: open.id,
    state: stateName,
    severity: open.severity,
    openedAt: open.openedAt,
    at: e.at,
    pair: e.name,
    firing: [...open.firing],
    evidence: e.evidence,
    reason: e.reason,
  }
}

function makeState(tracker) {
  const state = { listeners: [], open: null, count: 0, onAlert: null, onResolve: null }
  state.onAlert = (e) => {
    const open = state.open
    if (open === null) {
      state.count += 1
      state.open = { id: state.count, severity: e.severity, openedAt: e.at, firing: new Set([e.name]) }
      emit(tracker, state, incidentEvent(state.open, 'open', e))
      return
    }
    open.firing.add(e.name)
    if (open.severity === 'ticket' && e.severity === 'page') {
      open.severity = 'page'
      emit(tracker, state, incidentEvent(open, 'escalated', e))
    }
  }
  state.onResolve = (e) => {
    const open = state.open
    if (open === null || !open.firing.delete(e.name) || open.firing.size > 0) return
    state.open = null
    emit(tracker, state, incidentEvent(open, 'resolved', e))
  }
  return state
}

/**
 * Adds an 'incident' listener to `tracker`; `nativeOn` is the native on() (it
 * checks the receiver, a closed tracker and the listener, and throws as for any event).
 */
function addIncidentListener(tracker, listener, nativeOn) {
  // (The `closed` getter refuses a receiver that is not a tracker: ERR_INVALID_THIS.)
  if (tracker?.closed !== false || typeof listener !== 'function') return nativeOn.call(tracker, 'alert', listener)
  let state = tracker[INCIDENTS]
  if (state === undefined) {
    state = makeState(tracker)
    Object.defineProperty(tracker, INCIDENTS, { value: state, configurable: true })
  }
  if (state.listeners.length === 0) {
    nativeOn.call(tracker, 'alert', state.onAlert)
    nativeOn.call(tracker, 'resolve', state.onResolve)
    state.open = null
  }
  state.listeners.push(listener)
  return tracker
}

/** Removes the most recent registration of `listener` for 'incident'; the last one takes the native listeners off. */
function removeIncidentListener(tracker, listener, nativeOff) {
  if (tracker?.closed === undefined || typeof listener !== 'function') return nativeOff.call(tracker, 'alert', listener)
  const state = tracker[INCIDENTS]
  if (state === undefined) return tracker
  const i = state.listeners.lastIndexOf(listener)
  if (i < 0) return tracker
  state.listeners.splice(i, 1)
  if (state.listeners.length === 0) {
    state.open = null
    if (!tracker.closed) {
      nativeOff.call(tracker, 'alert', state.onAlert)
      nativeOff.call(tracker, 'resolve', state.onResolve)
    }
  }
  return tracker
}

/**
 * `method.call(tracker, event, listener)` (the native on() or off()); its
 * refusal of an unknown event lists 'incident' among the events it knows.
 */
function withIncidentEvent(method, tracker, event, listener) {
  try {
    return method.call(tracker, event, listener)
  } catch (err) {
    if (err instanceof TypeError && typeof err.message === 'string' && err.message.includes("'alert', 'resolve', got ")) {
      err.message = err.message.replace("'alert', 'resolve', got ", "'alert', 'resolve', 'incident', got ")
    }
    throw err
  }
}

module.exports = { addIncidentListener, removeIncidentListener, withIncidentEvent }
