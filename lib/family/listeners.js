'use strict'
// The family's listener fan-out: one dispatcher per child and event calls every
// family listener of that event with the child's labels; a child's own
// listeners are noted (a child with one is never evicted).
const errors = require('../util/errors.js')
const { STATUSES } = require('../native/fast-report.js')
const { ErrorBudgetTracker: Tracker } = require('../tracker/tracker.js')

const EVENTS = [...STATUSES, 'alert', 'resolve', 'incident']

function checkListenerArgs(method, event, listener) {
  if (typeof event !== 'string') throw errors.invalidArgType(`family.${method}(event, listener): event must be a string, got ${errors.describe(event)}`)
  if (!EVENTS.includes(event)) {
    throw errors.invalidArgValue(`family.${method}(event, listener): unknown event '${event}'; known events: ${EVENTS.join(', ')}`)
  }
  if (typeof listener !== 'function') {
    throw errors.invalidArgType(`family.${method}(event, listener): listener must be a function, got ${errors.describe(listener)}`)
  }
}

/**
 * Registers on `child` (its entry `entry`) the dispatcher of `event`: it calls
 * the family's listeners of `event` (`listeners`, read at each call) with the
 * child's labels; a listener that throws is a warning, not the child's error.
 * `blameOf(labels)` (the family's blame, or undefined) is given to an incident as `incident.blame`.
 */
function dispatch(listeners, child, entry, event, blameOf) {
  const dispatcher = (payload) => {
    const list = listeners.get(event)
    if (list === undefined) return
    if (event === 'incident') {
      const blame = blameOf(entry.labels)
      if (blame !== undefined) payload.blame = blame
    }
    for (const listener of list.slice()) {
      try {
        listener(payload, entry.labels)
      } catch (err) {
        process.emitWarning(err instanceof Error ? err : String(err), { type: 'BudgetFamilyListenerError' })
      }
    }
  }
  entry.dispatchers.set(event, dispatcher)
  // The tracker's own on(): the child's on() (ownListeners) would note the dispatcher as the child's listener.
  Tracker.prototype.on.call(child, event, dispatcher)
}

/** Removes the dispatchers of `event` from every child (`children`: child → entry). */
function undispatch(children, event) {
  for (const [child, entry] of children) {
    const dispatcher = entry.dispatchers.get(event)
    entry.dispatchers.delete(event)
    if (dispatcher && !child.closed) Tracker.prototype.off.call(child, event, dispatcher)
  }
}

// A child's own on()/off() note its own listeners: a child with one is never evicted
// (`onNone()` is called when its last one is taken off).
function ownListeners(child, entry, onNone) {
  const baseOn = child.on
  const baseOff = child.off
  const own = (name, value) => Object.defineProperty(child, name, { value, writable: true, configurable: true })
  own('on', function on(event, listener) {
    baseOn.call(this, event, listener)
    entry.own.push([event, listener])
    return this
  })
  own('off', function off(event, listener) {
    baseOff.call(this, event, listener)
    for (let i = entry.own.length - 1; i >= 0; i--) {
      if (entry.own[i][0] === event && entry.own[i][1] === listener) {
        entry.own.splice(i, 1)
        if (entry.own.length === 0) onNone()
        break
      }
    }
    return this
  })
}

module.exports = { EVENTS, checkListenerArgs, dispatch, undispatch, ownListeners }
