'use strict'
// A family's children: the config a new child gets (the family's tracker
// options, `childConfig(labels)`'s override checked), the refusals of creation,
// (which child makes room when the family is full: eviction.js).
const errors = require('../util/errors.js')
const { isPlainObject } = require('./label-tree.js')

/** What childConfig(labels) may not set: the family decides these for every child. */
const FAMILY_WIDE = ['clock', 'persist', 'snapshot', 'now', 'shared', 'fleet']
/** What childConfig(labels) may not change in a fleet family: every child's buckets are the family's. */
const FLEET_WIDE = ['windowMs', 'resolutionMs']

function showLabels(labels) {
  return JSON.stringify(labels)
}

/**
 * The tracker config of the child for `labels`: the family's `base` options with `override` (what
 * `childConfig(labels)` returned), checked; `fleet`: the family is a fleet's; `shared`: the family's
 * shared name, or null.
 */
function childConfigOf(labels, override, { base, fleet, shared }) {
  if (override == null) override = {}
  if (typeof override.then === 'function') {
    Promise.resolve(override).catch(() => {}) // its rejection is not the process's: the TypeError says what is wrong
    throw errors.invalidArgType(
      `childConfig(${showLabels(labels)}) returned a Promise (an async function?): it must return the child's config object (or undefined) synchronously`,
    )
  }
  if (!isPlainObject(override)) {
    throw errors.invalidArgType(`childConfig(${showLabels(labels)}) must return an object (or undefined), got ${errors.describe(override)}`)
  }
  for (const key of FAMILY_WIDE) {
    if (override[key] !== undefined) {
      throw errors.invalidArgValue(`childConfig(${showLabels(labels)}).${key} cannot differ per child: give it to the family`)
    }
  }
  for (const key of fleet ? FLEET_WIDE : []) {
    if (override[key] !== undefined && override[key] !== base[key]) {
      throw errors.invalidArgValue(
        `childConfig(${showLabels(labels)}).${key} cannot differ per child in a fleet family (every child's buckets are the family's)`,
      )
    }
  }
  const config = { ...base, ...override, [errors.ARGUMENT_NAME]: `childConfig(${showLabels(labels)})` }
  // Shared: the same child in every thread whose family has this name (ErrorBudgetTracker.shared).
  if (shared !== null) config.shared = `${shared}\u001f${JSON.stringify(labels)}`
  return config
}

/** `labels(l)` called by childConfig while it runs for `configuring`. */
function createdInChildConfig(labels, configuring) {
  return errors.invalidState(
    `family.labels(${showLabels(labels)}) inside childConfig(${showLabels(configuring)}): childConfig cannot create a child ` +
      '(it runs while one is being created); nothing was created',
  )
}

/** `labels(l)` for a new child of a family at `maxChildren` that no child can make room in. */
function familyFull(labels, maxChildren) {
  return errors.outOfRange(
    `family.labels(${showLabels(labels)}): the family holds maxChildren (${maxChildren}) children and none can be evicted ` +
      "(each has solves in its window, a listener of its own, a guard() in flight or a provider's back-off running); nothing was created",
  )
}

module.exports = { childConfigOf, createdInChildConfig, familyFull }
