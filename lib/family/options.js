'use strict'
// A family's options: which keys are the family's and which go to every child,
// and their checks (`new BudgetFamily(options)`).
const errors = require('../util/errors.js')
const native = require('../native/load-native.js')
const { ErrorBudgetTracker: Tracker } = require('../tracker/tracker.js')
const { checkFleet } = require('../fleet/options.js')
const { familyFleet } = require('../fleet/link.js')
const { checkLabelNames, isPlainObject } = require('./label-tree.js')
const { checkPersist } = require('./persist.js')
const { checkAttribution } = require('../providers/blame.js')

/** The family's own options; every other key is a tracker option for each child. */
const FAMILY_KEYS = ['labelNames', 'childConfig', 'maxChildren', 'name', 'persist', 'fleet', 'shared', 'attribution']
/** Tracker options a family does not pass on to its children. */
const NOT_FOR_CHILDREN = {
  snapshot: 'use BudgetFamily.restore(json) to restore a family',
  now: 'use BudgetFamily.restore(json, { now }) to restore a family',
}
const MAX_CHILDREN_LIMIT = 1_000_000
const DEFAULT_MAX_CHILDREN = 10_000
/** The key of the options BudgetFamily.restore() passes to the constructor: the parsed snapshot (lib/family/snapshot.js). */
const RESTORING = Symbol('restoring')
/** The tracker's config keys (the core's table), read on first use. */
let configFields = null
const configFieldNames = () => (configFields ??= native.configFields().map((field) => field.name))

function closedError(method) {
  return errors.trackerClosed(`${method} after close(): the family is closed`)
}

/**
 * The error of an unknown key of a family's options: the family's keys listed,
 * then the tracker options it passes on to its children (not those it refuses).
 */
function unknownFamilyKey(key, where) {
  const trackerKeys = configFieldNames().filter((name) => !FAMILY_KEYS.includes(name) && !Object.hasOwn(NOT_FOR_CHILDREN, name))
  return errors.unknownKey(key, [...FAMILY_KEYS, ...trackerKeys], `${where}: options`)
}

/**
 * Checks `new BudgetFamily(options)`'s options and returns `{ names, childConfig, maxChildren, name, persist,
 * shared, attribution, fleet, fleetShape, base, restoring }`: `base` the frozen tracker options of every child, checked by
 * the tracker's own checks (a tracker made and closed); `fleetShape` a fleet family's native FamilyFleet (the children's
 * SLO and bucket width, read off that tracker), else null; `restoring` the parsed snapshot from BudgetFamily.restore().
 */
function checkFamilyOptions(options, where) {
  const restoring = options[RESTORING]
  const { labelNames, childConfig, maxChildren = DEFAULT_MAX_CHILDREN, name = 'default', persist, fleet, shared, attribution, ...base } = options
  delete base[RESTORING] // (the rest copies symbol keys too)
  // Unknown keys first: a misspelt labelNames is named as such, not as "labelNames … got undefined".
  const unknown = Object.keys(base).find((key) => !configFieldNames().includes(key))
  if (unknown !== undefined) throw unknownFamilyKey(unknown, where)
  const names = checkLabelNames(labelNames, `${where}: options.labelNames`)
  const checkedAttribution = checkAttribution(attribution, names, `${where}: options.attribution`)
  if (childConfig !== undefined && typeof childConfig !== 'function') {
    throw errors.invalidArgType(`${where}: options.childConfig must be a function (labels) => config, got ${errors.describe(childConfig)}`)
  }
  const max = errors.integerOption(maxChildren, `${where}: options.maxChildren`, 1, MAX_CHILDREN_LIMIT, DEFAULT_MAX_CHILDREN)
  if (typeof name !== 'string' || name === '') {
    throw errors.invalidArgType(`${where}: options.name must be a non-empty string, got ${name === '' ? "''" : errors.describe(name)}`)
  }
  for (const key of Object.keys(NOT_FOR_CHILDREN)) {
    if (base[key] !== undefined) throw errors.invalidArgValue(`${where}: options.${key} cannot be given to a family (${NOT_FOR_CHILDREN[key]})`)
  }
  const checkedPersist = persist === undefined ? null : checkPersist(persist, `${where}: options.persist`)
  if (shared !== undefined) {
    if (typeof shared !== 'string' || shared === '') {
      throw errors.invalidArgType(`${where}: options.shared must be a non-empty string, got ${shared === '' ? "''" : errors.describe(shared)}`)
    }
    for (const [key, value] of [
      ['persist', persist],
      ['fleet', fleet],
    ]) {
      if (value !== undefined) throw errors.invalidArgValue(`${where}: options.shared cannot be given with options.${key}`)
    }
    if (restoring) throw errors.invalidArgValue('BudgetFamily.restore(): a shared family cannot be restored (its children live in the process)')
  }
  let fleetOptions = null
  if (fleet !== undefined) {
    if (persist !== undefined) throw errors.invalidArgValue(`${where}: options.fleet cannot be given with options.persist: the fleet's window lives in Redis`)
    if (restoring) throw errors.invalidArgValue('BudgetFamily.restore(): a fleet family restores from Redis, not from a snapshot')
    try {
      fleetOptions = checkFleet({ fleet })
    } catch (err) {
      err.message = `${where}: ${err.message.replace(/config\./g, 'options.')}`
      throw err
    }
  }
  // The children's options are checked once here, by the tracker's own checks (nothing is kept but a fleet's shape).
  const template = new Tracker({ ...base, [errors.ARGUMENT_NAME]: `${where}: options` })
  let fleetShape = null
  try {
    if (fleetOptions !== null) fleetShape = familyFleet(template, fleetOptions.bucketMs)
  } finally {
    template.close()
  }
  return {
    names,
    childConfig,
    maxChildren: max,
    name,
    persist: checkedPersist,
    shared: shared ?? null,
    attribution: checkedAttribution,
    fleet: fleetOptions,
    fleetShape,
    base: Object.freeze({ ...base }),
    restoring,
  }
}

module.exports = {
  FAMILY_KEYS,
  NOT_FOR_CHILDREN,
  MAX_CHILDREN_LIMIT,
  DEFAULT_MAX_CHILDREN,
  RESTORING,
  closedError,
  checkFamilyOptions,
  isPlainObject,
}
