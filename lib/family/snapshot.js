'use strict'
// A family's snapshot: the JSON `family.snapshot()` writes, and what
// `BudgetFamily.restore()` and a persisted family read back (checked, then
// every child restored with its labels).
const errors = require('../util/errors.js')
const { ErrorBudgetTracker: Tracker } = require('../tracker/tracker.js')
const { checkLabelNames, checkLabels, isPlainObject } = require('./label-tree.js')
const { FAMILY_KEYS, NOT_FOR_CHILDREN, MAX_CHILDREN_LIMIT, DEFAULT_MAX_CHILDREN } = require('./options.js')
const { readPersisted } = require('./persist.js')

const SNAPSHOT_FORMAT = 'captcha-error-budget.family'
const RESTORE_OPTIONS = ['clock', 'now', 'childConfig', 'persist', 'attribution']

const snapshotInvalid = (message) => errors.snapshotInvalid(`BudgetFamily.restore(json): ${message}`)

/**
 * The family's snapshot JSON: its options (`base`, not `childConfig`) and every child's snapshot with its labels
 * (`children`: child → entry), saved at `now()`.
 */
function familySnapshot({ now, names, name, maxChildren, base, children }) {
  const childSnapshots = [...children].map(([child, entry]) => ({ labels: entry.labels, snapshot: JSON.parse(child.snapshot()) }))
  return JSON.stringify({
    format: SNAPSHOT_FORMAT,
    version: 1,
    savedAt: now(),
    labelNames: names,
    name,
    maxChildren,
    options: base,
    children: childSnapshots,
  })
}

/**
 * The children of a parsed snapshot, restored: `[[labels, tracker]]`, for a
 * family with `labelNames` and `maxChildren`. Nothing is left open when it throws.
 */
function restoreChildren(parsed, labelNames, maxChildren) {
  if (JSON.stringify(parsed.labelNames) !== JSON.stringify(labelNames)) {
    throw snapshotInvalid(`labelNames [${parsed.labelNames}] differ from the family's [${labelNames}]`)
  }
  // Counted before any child is restored: 100 000 children cost seconds and hundreds of MB.
  if (parsed.children.length > maxChildren) throw snapshotInvalid(`${parsed.children.length} children, over maxChildren (${maxChildren})`)
  const restored = []
  const seen = new Map() // each child's labels (as JSON, in labelNames order) → its index
  try {
    for (let i = 0; i < parsed.children.length; i++) {
      const item = parsed.children[i]
      if (!isPlainObject(item)) throw snapshotInvalid(`children[${i}] must be an object { labels, snapshot }, got ${errors.describe(item)}`)
      const { labels, snapshot } = item
      if (!isPlainObject(snapshot)) {
        throw snapshotInvalid(`children[${i}].snapshot must be a tracker's snapshot (an object), got ${errors.describe(snapshot)}`)
      }
      const copy = checkLabels(labels, parsed.labelNames, `children[${i}].labels`, snapshotInvalid)
      const key = JSON.stringify(copy)
      if (seen.has(key)) throw snapshotInvalid(`children[${i}].labels ${key} are those of children[${seen.get(key)}]: each label set is one child`)
      seen.set(key, i)
      const opts = { clock: parsed.clock }
      if (parsed.now !== undefined) opts.now = parsed.now
      restored.push([copy, Tracker.restore(JSON.stringify(snapshot), opts)])
    }
  } catch (err) {
    for (const [, child] of restored) child.close()
    throw err
  }
  return restored
}

function parseFamilySnapshot(json, opts) {
  let parsed
  try {
    parsed = JSON.parse(json.charCodeAt(0) === 0xfeff ? json.slice(1) : json)
  } catch (err) {
    throw snapshotInvalid(`not JSON (${err.message})`)
  }
  if (!isPlainObject(parsed) || parsed.format !== SNAPSHOT_FORMAT) throw snapshotInvalid(`not a family snapshot (format must be '${SNAPSHOT_FORMAT}')`)
  if (parsed.version !== 1) throw snapshotInvalid(`version ${parsed.version} is not supported (1 is)`)
  if (!Array.isArray(parsed.labelNames) || !Array.isArray(parsed.children) || !isPlainObject(parsed.options)) {
    throw snapshotInvalid('labelNames, options and children are required')
  }
  return { ...parsed, clock: opts.clock ?? parsed.options.clock, now: opts.now }
}

/**
 * What restore() takes from the snapshot itself (labelNames, name, maxChildren,
 * the children's options), checked before anything is created: a bad value is
 * the document's fault, ERR_SNAPSHOT_INVALID, not a TypeError of the caller's.
 */
function checkSnapshotContent(parsed) {
  const where = "the snapshot's"
  try {
    checkLabelNames(parsed.labelNames, `${where} labelNames`)
    errors.integerOption(parsed.maxChildren, `${where} maxChildren`, 1, MAX_CHILDREN_LIMIT, DEFAULT_MAX_CHILDREN)
    if (parsed.name !== undefined && (typeof parsed.name !== 'string' || parsed.name === '')) {
      throw errors.invalidArgType(`${where} name must be a non-empty string, got ${parsed.name === '' ? "''" : errors.describe(parsed.name)}`)
    }
    for (const key of [...FAMILY_KEYS, ...Object.keys(NOT_FOR_CHILDREN)]) {
      if (Object.hasOwn(parsed.options, key)) {
        throw errors.invalidArgValue(
          `${where} options.${key} cannot be there: they are the children's tracker options, and ${key} is the family's or one a family refuses`,
        )
      }
    }
    new Tracker({ ...parsed.options, [errors.ARGUMENT_NAME]: `${where} options` }).close()
  } catch (err) {
    if (err.code === 'ERR_SNAPSHOT_INVALID') throw err
    throw Object.assign(snapshotInvalid(err.message), { cause: err })
  }
}

/**
 * `BudgetFamily.restore(json, options)`'s arguments, checked, and the snapshot parsed and checked:
 * `{ parsed, opts }`.
 */
function readRestoreArgs(json, options) {
  if (typeof json !== 'string') throw errors.invalidArgType(`BudgetFamily.restore(json): json must be a string, got ${errors.describe(json)}`)
  const opts = errors.checkOptionsObject(options ?? undefined, RESTORE_OPTIONS, 'BudgetFamily.restore(json, options): options')
  if (opts.childConfig !== undefined && typeof opts.childConfig !== 'function') {
    throw errors.invalidArgType(
      `BudgetFamily.restore(json, options): options.childConfig must be a function (labels) => config, got ${errors.describe(opts.childConfig)}`,
    )
  }
  const parsed = parseFamilySnapshot(json, opts)
  checkSnapshotContent(parsed)
  return { parsed, opts }
}

/** A persisted family's snapshot file, parsed (`opts.clock`: the family's clock); null when there is none. */
function readFamilySnapshot(file, opts) {
  const text = readPersisted(file)
  return text === null ? null : parseFamilySnapshot(text, opts)
}

module.exports = { familySnapshot, restoreChildren, readRestoreArgs, readFamilySnapshot }
