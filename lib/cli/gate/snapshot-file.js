'use strict'
// `captcha-budget gate <file>` (lib/cli/commands/gate.js): what a snapshot file holds, judged
// now. A tracker's snapshot is restored aged to now; a BudgetFamily's
// (family.snapshot() or a family's persist file) is restored on the real clock
// too, whatever clock it was saved with, so every child is aged to now and
// judged as a tracker's snapshot is; `--labels` keeps one child.
const { ErrorBudgetTracker } = require('../../tracker/tracker.js')
const { BudgetFamily } = require('../../family/index.js')
const { labelText, parseLabels } = require('../../util/label-text.js')

/** The `format` of a family's snapshot (lib/family/snapshot.js). */
const FAMILY_FORMAT = 'captcha-error-budget.family'

/** Whether `text` is a family's snapshot. Not JSON: no (the tracker's restore names the fault). */
function isFamilySnapshot(text) {
  try {
    const parsed = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
    return parsed !== null && typeof parsed === 'object' && parsed.format === FAMILY_FORMAT
  } catch {
    return false
  }
}

/**
 * The snapshot `text` judged now: `{ report }` for a tracker's; for a family's,
 * `{ family: { name, size }, children }`, every child's report (with its labels)
 * worst first as family.report() orders them, or only the child of `options.labels`.
 * Throws an Error whose message the gate prints (exit 2).
 */
function judgeSnapshot(text, options) {
  const flag = options.family ? '--family' : options.labels === undefined ? null : '--labels'
  if (!isFamilySnapshot(text)) {
    if (flag !== null) throw new Error(`${flag} needs a BudgetFamily snapshot (family.snapshot() or its persist file); this is a tracker's`)
    const tracker = ErrorBudgetTracker.restore(text)
    try {
      return { report: tracker.report() }
    } finally {
      tracker.close()
    }
  }
  const family = BudgetFamily.restore(text, { clock: 'monotonic' })
  try {
    let children = family.report()
    if (options.labels !== undefined) children = [oneChild(children, parseLabels(options.labels), family.labelNames)]
    return { family: { name: family.name, size: family.size }, children }
  } finally {
    family.close()
  }
}

/** The report of the child of `labels` (which must name exactly the family's `labelNames`) among `children`. */
function oneChild(children, labels, labelNames) {
  const names = Object.keys(labels)
  if (names.length !== labelNames.length || !labelNames.every((n) => names.includes(n))) {
    throw new Error(`--labels must name exactly the family's labels: ${labelNames.join(', ')}`)
  }
  const child = children.find((report) => labelNames.every((n) => report.labels[n] === labels[n]))
  if (child === undefined) throw new Error(`the family has no child ${labelText(Object.fromEntries(labelNames.map((n) => [n, labels[n]])))}`)
  return child
}

module.exports = { judgeSnapshot }
