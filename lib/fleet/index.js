'use strict'
// `config.fleet`: one error budget for every worker of a fleet, through Redis.
// The native tracker keeps recording locally at its usual cost; a FleetSync
// (sync.js) pushes its counts and installs the fleet's window, so report(),
// the getters, status, alerts, listeners and guard() read the fleet's window.
// lib/tracker.js constructs the tracker and links it here; its report(), on(),
// off(), close() and sync() ask `fleetOf(tracker)`.
const { checkFleet } = require('./options.js')
const { FleetSync, FleetSyncError } = require('./sync.js')

/** Where a fleet tracker keeps its FleetSync (an own, non-enumerable data property). */
const FLEET = Symbol('captcha-error-budget.fleet')

/**
 * The checked fleet options of `config` and the config for the native
 * tracker (without `fleet`), or null when `config` has no `fleet`.
 * @param {unknown} config the constructor's argument
 */
function fleetConfig(config) {
  if (config === null || typeof config !== 'object' || config.fleet === undefined) return null
  const options = checkFleet(config)
  const { fleet: _, ...rest } = config
  return { options, rest }
}

/**
 * Links the just-constructed `tracker` to its fleet and starts the sync; on a
 * failure closes the tracker and throws.
 * @param {object} tracker
 * @param {object} options from fleetConfig()
 * @param {(tracker: object, bucketMs?: number) => object} fleetLink the native linker
 */
function linkFleet(tracker, options, fleetLink) {
  let link
  try {
    link = fleetLink(tracker, options.bucketMs)
  } catch (err) {
    tracker.close()
    throw err
  }
  const fleet = new FleetSync(tracker, link, options)
  Object.defineProperty(tracker, FLEET, { value: fleet })
  fleet.start()
}

/**
 * The FleetSync of `tracker`, or undefined for a tracker without a fleet (or not a tracker).
 * @param {unknown} tracker
 */
function fleetOf(tracker) {
  return tracker === null || tracker === undefined ? undefined : tracker[FLEET]
}

module.exports = { fleetConfig, linkFleet, fleetOf, FLEET, FleetSyncError }
