'use strict'
// A fleet family's wiring: the family's children as a FamilySync sees them
// (lib/fleet/family-sync.js), through a "probe" tracker with the family's
// options (its clock and its buckets), and each child's native fleet link.
const { fleetLink } = require('../load-native.js')
const { FamilySync } = require('../fleet/family-sync.js')
const { ErrorBudgetTracker: Tracker } = require('../tracker.js')

/**
 * Starts the fleet sync of a family: `options` its checked fleet options, `base` its children's tracker options,
 * `names` its label names, `children` its child → entry map (read live), `now()` the family's manual time or null
 * on a real clock, `childFor(labels)` its `labels()`.
 * @returns {{ sync: FamilySync, probe: Tracker }}
 */
function startFleet(options, { base, names, children, manualNow, childFor }) {
  const probe = new Tracker({ ...base })
  let probeLink
  try {
    probeLink = fleetLink(probe, options.bucketMs)
  } catch (err) {
    probe.close()
    throw err
  }
  const sync = new FamilySync(
    {
      probe,
      probeLink,
      windowMs: JSON.parse(probe.snapshot()).config.windowMs,
      configJson: JSON.stringify({ labelNames: names, ...JSON.parse(probe.snapshot()).config }),
      now: () => manualNow() ?? probe.now,
      *children() {
        for (const entry of children.values()) yield [entry.id, entry.link]
      },
      // The counts of the children that recorded since their last drain: a drain
      // costs a walk of the child's buckets, an idle child's is skipped.
      *drained() {
        for (const [child, entry] of children) {
          const { successes, failures } = child.recorded
          const { rejected } = child // a late verdict changes the buckets, not `recorded`
          if (successes === entry.drainedAt[0] && failures === entry.drainedAt[1] && rejected === entry.drainedAt[2]) continue
          entry.drainedAt = [successes, failures, rejected]
          yield [entry.id, entry.link.drain()]
        }
      },
      linkFor(id) {
        let labels
        try {
          labels = JSON.parse(id)
          childFor(labels)
        } catch (err) {
          process.emitWarning(`fleet '${options.key}': a child another worker created is left out here: ${err.message}`, { code: 'CAPTCHA_BUDGET_FLEET' })
          return null
        }
        return children.get(childFor(labels)).link
      },
    },
    options,
  )
  sync.start()
  return { sync, probe }
}

/** Links a new child of a fleet family (its `entry`) to the fleet's buckets of `bucketMs`; closes the child when that fails. */
function linkChild(child, entry, bucketMs) {
  try {
    entry.link = fleetLink(child, bucketMs)
  } catch (err) {
    child.close()
    throw err
  }
  entry.id = JSON.stringify(entry.labels)
  entry.drainedAt = [-1, -1, -1]
}

module.exports = { startFleet, linkChild }
