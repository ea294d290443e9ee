'use strict'
// The family's label tree: one level of Maps per label name, the child at the
// leaf, so that `family.labels(l)` costs a few Map reads and no string building;
// and the checks of label names and label sets.
const errors = require('../util/errors.js')
const { LABEL_NAME_RULE, RESERVED_LABELS, isLabelName } = require('../util/labels.js')

/**
 * The longest label value a family takes, in UTF-16 code units (`string.length`): every
 * series of a child repeats its values, and a fleet family stores them in Redis
 * (docs/many-budgets.md). A host name is at most 253.
 */
const MAX_LABEL_VALUE_LENGTH = 1024

function isPlainObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Checks a family's `labelNames` (`where` names them in messages); returns a frozen copy. */
function checkLabelNames(labelNames, where) {
  if (!Array.isArray(labelNames)) throw errors.invalidArgType(`${where} must be an array of label names, got ${errors.describe(labelNames)}`)
  if (labelNames.length === 0) throw errors.invalidArgValue(`${where} must name at least one label`)
  const seen = new Set()
  for (const name of labelNames) {
    if (typeof name !== 'string') throw errors.invalidArgType(`${where}: each label name must be a string, got ${errors.describe(name)}`)
    if (!isLabelName(name)) throw errors.invalidArgValue(`${where}: '${name}' is not a Prometheus label name (${LABEL_NAME_RULE})`)
    if (RESERVED_LABELS.includes(name)) throw errors.invalidArgValue(`${where}: '${name}' is reserved (${RESERVED_LABELS.join(', ')})`)
    if (seen.has(name)) throw errors.invalidArgValue(`${where}: '${name}' is given twice`)
    seen.add(name)
  }
  return Object.freeze([...labelNames])
}

/** Checks that `labels` has exactly `names` as own keys with string values; returns a copy in `names` order. */
function checkLabels(labels, names, where = `family.labels(labels): labels`, fail) {
  const typeError = fail ?? errors.invalidArgType
  const valueError = fail ?? errors.invalidArgValue
  if (!isPlainObject(labels)) throw typeError(`${where} must be an object with the keys ${names.join(', ')}, got ${errors.describe(labels)}`)
  const copy = {}
  for (const name of names) {
    if (!Object.hasOwn(labels, name)) throw valueError(`${where}.${name} is missing; a family's labels are exactly: ${names.join(', ')}`)
    const value = labels[name]
    if (typeof value !== 'string') throw typeError(`${where}.${name} must be a string, got ${errors.describe(value)}`)
    if (value.length > MAX_LABEL_VALUE_LENGTH) {
      throw (fail ?? errors.outOfRange)(`${where}.${name} must be at most ${MAX_LABEL_VALUE_LENGTH} characters long, got ${value.length}`)
    }
    // Two values that differ only in a lone surrogate would be one series once written as UTF-8.
    if (!value.isWellFormed()) {
      const at = loneSurrogateAt(value)
      const unit = value.charCodeAt(at).toString(16)
      throw valueError(
        `${where}.${name} must be well-formed Unicode: it has a lone surrogate (\\u${unit}) at index ${at}, which would make it the same as another string`,
      )
    }
    copy[name] = value
  }
  for (const key in labels) {
    if (!names.includes(key)) throw valueError(`${where}.${key} is not a label of this family; its labels are exactly: ${names.join(', ')}`)
  }
  return copy
}

/** The index of the first lone surrogate of `value` (one that `isWellFormed()` refused). */
function loneSurrogateAt(value) {
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = value.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) i++
      else return i
    } else if (unit >= 0xdc00 && unit <= 0xdfff) return i
  }
  return -1
}

/**
 * The fast path of `labels(l)`: the child for `l` when it exists and `l` has
 * exactly as many keys, all its own, as there are label names, else undefined (the checked
 * path then decides). A Map read per label name, unrolled with the names as
 * constant property keys (checked identifiers: [a-zA-Z_][a-zA-Z0-9_]*), which is
 * about half the cost of a loop over the names; the loop where code generation
 * is disallowed.
 */
function finder(names, root) {
  const count = names.length
  const reads = names.map((name) => `node = node.get(l[${JSON.stringify(name)}]); if (node === undefined) return undefined;`).join(' ')
  try {
    return new Function(
      'root',
      'hasOwn',
      `return function find(l) { if (typeof l !== 'object' || l === null) return undefined; let node = root; ${reads} let n = 0; for (const k in l) { if (!hasOwn(l, k)) return undefined; n++ } return n === ${count} ? node : undefined }`,
    )(root, Object.hasOwn)
  } catch {
    return function find(l) {
      if (typeof l !== 'object' || l === null) return undefined
      let node = root
      for (let i = 0; i < count && node !== undefined; i++) node = node.get(l[names[i]])
      if (node === undefined) return undefined
      let n = 0
      for (const k in l) {
        if (!Object.hasOwn(l, k)) return undefined
        n++
      }
      return n === count ? node : undefined
    }
  }
}

/** The children by their labels: `find(l)` (unchecked, fast), `get`, `set` and `delete` of a checked copy. */
class LabelTree {
  #names
  #root = new Map()

  /** @param {readonly string[]} names the family's label names, checked */
  constructor(names) {
    this.#names = names
    this.find = finder(names, this.#root)
  }

  /** The child for checked `labels` (every name present), or undefined. */
  get(labels) {
    let node = this.#root
    for (const name of this.#names) {
      node = node.get(labels[name])
      if (node === undefined) break
    }
    return node
  }

  set(labels, child) {
    const names = this.#names
    let node = this.#root
    for (let i = 0; i < names.length - 1; i++) {
      let next = node.get(labels[names[i]])
      if (next === undefined) {
        next = new Map()
        node.set(labels[names[i]], next)
      }
      node = next
    }
    node.set(labels[names[names.length - 1]], child)
  }

  /** Removes the child of `labels` and the levels it leaves empty. */
  delete(labels) {
    const names = this.#names
    const path = [this.#root]
    for (const name of names.slice(0, -1)) path.push(path[path.length - 1].get(labels[name]))
    path[path.length - 1].delete(labels[names[names.length - 1]])
    for (let i = path.length - 1; i > 0; i--) {
      if (path[i].size === 0) path[i - 1].delete(labels[names[i - 1]])
    }
  }

  clear() {
    this.#root.clear()
  }
}

module.exports = { LabelTree, checkLabelNames, checkLabels, isPlainObject, MAX_LABEL_VALUE_LENGTH }
