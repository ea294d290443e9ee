'use strict'
// `config.fleet`: one error budget for every worker of a fleet, through Redis.
// The native tracker keeps recording locally at its usual cost; a FleetSync
// (sync.js) pushes its counts and installs the fleet's window, so report(),
// the getters, status, alerts, listeners and guard() read the fleet's window.
const { checkFleet } = require('./options.js')
const { FleetSync, FleetSyncError } = require('./sync.js')

/** The FleetSync of each fleet tracker. */
const fleets = new WeakMap()

/**
 * The exported class: `Native` itself for every use but `new` with
 * `config.fleet`, which creates the native tracker without it and links it to
 * its fleet. (A Proxy keeps statics, prototype and `instanceof` as they are.)
 * @param {Function} Native the native ErrorBudgetTracker class
 * @param {(tracker: object, bucketMs?: number) => object} fleetLink the native linker
 */
function withFleet(Native, fleetLink) {
  Object.defineProperty(Native.prototype, 'sync', { value: sync, writable: true, configurable: true })
  return new Proxy(Native, {
    construct(target, args, newTarget) {
      const config = args[0]
      if (config === null || typeof config !== 'object' || config.fleet === undefined) {
        return Reflect.construct(target, args, newTarget)
      }
      const options = checkFleet(config)
      const { fleet: _, ...rest } = config
      const tracker = Reflect.construct(target, [rest, ...args.slice(1)], newTarget)
      let link
      try {
        link = fleetLink(tracker, options.bucketMs)
      } catch (err) {
        tracker.close()
        throw err
      }
      attach(Native, tracker, new FleetSync(tracker, link, options))
      return tracker
    },
  })
}

/**
 * Pushes this worker's unsent counts and installs the fleet's window, now
 * (after any sync in progress). Resolves to `report().fleet`; rejects with a
 * FleetSyncError (`code` 'ERR_FLEET_SYNC') when Redis did not answer, the
 * counts staying unsent for the next sync.
 */
function sync() {
  const fleet = fleets.get(this)
  if (fleet === undefined) {
    const err = new Error('sync() needs a tracker created with config.fleet')
    err.code = 'ERR_INVALID_STATE'
    return Promise.reject(err)
  }
  return fleet.sync()
}

/** Own methods of a fleet tracker: report() with `fleet`, 'fleet-error' listeners, close() stopping the sync. */
function attach(Native, tracker, fleet) {
  fleets.set(tracker, fleet)
  const proto = Native.prototype
  const own = (name, value) => Object.defineProperty(tracker, name, { value, writable: true, configurable: true })
  own('report', function report() {
    const r = proto.report.call(this)
    r.fleet = fleet.info()
    return r
  })
  own('on', function on(event, listener) {
    if (event !== 'fleet-error') return proto.on.call(this, event, listener)
    if (typeof listener !== 'function') return proto.on.call(this, event, listener)
    fleet.errorListeners.push(listener)
    return this
  })
  own('off', function off(event, listener) {
    if (event !== 'fleet-error') return proto.off.call(this, event, listener)
    const i = fleet.errorListeners.lastIndexOf(listener)
    if (i >= 0) fleet.errorListeners.splice(i, 1)
    return this
  })
  function close() {
    fleet.close()
    return proto.close.call(this)
  }
  own('close', close)
  if (typeof Symbol.dispose === 'symbol') own(Symbol.dispose, close)
  fleet.start()
}

module.exports = { withFleet, FleetSyncError }
