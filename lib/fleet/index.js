'use strict'
// `config.fleet`: one error budget for every worker of a fleet, through Redis.
// The native tracker keeps recording locally at its usual cost; a native
// FleetLink drains its counts for a push and installs the fleet's window after
// it, so report(), the getters, status, alerts, listeners and guard() read the
// fleet's window. One path for both owners: a tracker's FleetSync (sync.js)
// drives its own link; a BudgetFamily's FamilySync (family-sync.js) a link per
// child, made here the same way, with the family's SLO, bucket width and clock
// from a native FamilyFleet. lib/tracker/tracker.js links a tracker here and its
// report(), on(), off(), close() and sync() ask `fleetOf(tracker)`;
// lib/family/ starts a family's sync here and hands it each child it adds or drops.
const { linkTracker } = require('./link.js')
const { checkFleet } = require('./options.js')
const { FleetSync } = require('./sync.js')
const { FleetSyncError } = require('../util/errors.js')
const { FamilySync } = require('./family-sync.js')

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
 */
function linkFleet(tracker, options) {
  const fleet = new FleetSync(tracker, linkTracker(tracker, options.bucketMs), options)
  Object.defineProperty(tracker, FLEET, { value: fleet })
  fleet.start()
}

/**
 * Starts a family's fleet sync: `fleet` its native FamilyFleet (made by the family's option checks, link.js), `options` its checked fleet options, `labelNames` its label names, `manualNow()` its time
 * on a manual clock (null: the real clock), `create(labels)` its `labels()` (for a child another worker created).
 * The family then hands the sync each child: `join(child, labels)`, `leave(child)`.
 * @returns {FamilySync}
 */
function startFamilyFleet(fleet, options, { labelNames, manualNow, create }) {
  const sync = new FamilySync(fleet, options, { labelNames, manualNow, create })
  sync.start()
  return sync
}

/**
 * The FleetSync of `tracker`, or undefined for a tracker without a fleet (or not a tracker).
 * @param {unknown} tracker
 */
function fleetOf(tracker) {
  return tracker === null || tracker === undefined ? undefined : tracker[FLEET]
}

module.exports = { fleetConfig, linkFleet, startFamilyFleet, fleetOf, FLEET, FleetSyncError }
