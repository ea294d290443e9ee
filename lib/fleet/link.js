'use strict'
// The native side of a fleet, for both owners (index.js): a tracker's FleetLink
// (the ledger of what it pushed), made the same way for a tracker of its own
// and for each child of a fleet family, and a family's FamilyFleet (the SLO,
// bucket width and clock its children share).
const { fleetLink, familyFleet } = require('../native/load-native.js')

/** The native FleetLink of `tracker` (a tracker's own, or a family child's) to buckets of `bucketMs`; closes the tracker when that fails. */
function linkTracker(tracker, bucketMs) {
  try {
    return fleetLink(tracker, bucketMs)
  } catch (err) {
    tracker.close()
    throw err
  }
}

/**
 * The SLO a fleet stores and every worker of its key shares, read off a native FleetLink or FamilyFleet:
 * `{ targetRate, windowMs, bucketMs, config }`, `config` the tracker's config as a snapshot's `config` object.
 */
function sloOf(native) {
  return { targetRate: native.targetRate, windowMs: native.windowMs, bucketMs: native.bucketMs, config: JSON.parse(native.configJson) }
}

module.exports = { linkTracker, familyFleet, sloOf }
