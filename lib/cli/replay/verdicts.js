'use strict'
// `replay --verdict-field`: the site's verdict on each line, read as one more grouping
// field (the last) and split off the parsed type again; values matched without regard
// to case, and what the replay should say about the field afterwards (never seen, or
// values it does not know).
const { GROUP_SEPARATOR } = require('./reader.js')

/** The verdict that turns a line's success into a failure after the fact. */
const REJECTED = 'rejected'
/** The verdict that leaves it a success; any other (non-empty) value is reported. */
const ACCEPTED = 'accepted'
/** How many distinct unrecognised values the report names (the rest are only counted). */
const NAMED_VALUES = 5

/**
 * A parsed type `<type…>U+001F<verdict>` split: [the type as without a verdict field,
 * the verdict in lower case ('' when the line has none)].
 */
function splitVerdict(t) {
  const at = t.lastIndexOf(GROUP_SEPARATOR)
  return [t.slice(0, at), t.slice(at + 1).toLowerCase()]
}

/** What the lines' verdicts were: whether any line had one, and the unrecognised ones by value. */
class VerdictCounts {
  constructor(field) {
    this.field = field
    this.seen = false
    /** @type {Map<string, number>} unrecognised value (as written) → lines */
    this.unrecognised = new Map()
  }

  /**
   * Counts a batch's verdicts: `types` its parsed types (with the verdict), `typeIndex`
   * each event's. The events are only walked when some type has an unrecognised verdict.
   * Returns, per type, [the type without its verdict, whether the verdict is 'rejected'].
   */
  batch(types, typeIndex) {
    const split = types.map(splitVerdict)
    const unknown = []
    split.forEach(([, verdict], k) => {
      if (verdict !== '') this.seen = true
      if (verdict !== '' && verdict !== REJECTED && verdict !== ACCEPTED) unknown.push(k)
    })
    if (unknown.length > 0) {
      const lines = new Map(unknown.map((k) => [k, 0]))
      for (const k of typeIndex) if (lines.has(k)) lines.set(k, lines.get(k) + 1)
      for (const [k, n] of lines) {
        const written = types[k].slice(types[k].lastIndexOf(GROUP_SEPARATOR) + 1)
        this.unrecognised.set(written, (this.unrecognised.get(written) ?? 0) + n)
      }
    }
    return split.map(([type, verdict]) => [type, verdict === REJECTED])
  }

  /** The warnings the replay prints about the field (none when all is well). */
  warnings() {
    const flag = `--verdict-field ${this.field}`
    if (!this.seen) return [`${flag}: no line has a value for field '${this.field}' (no verdict applied)`]
    if (this.unrecognised.size === 0) return []
    const byCount = [...this.unrecognised].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    const total = byCount.reduce((sum, [, n]) => sum + n, 0)
    const named = byCount.slice(0, NAMED_VALUES).map(([value, n]) => `${JSON.stringify(value)} ×${n}`)
    const more = byCount.length > NAMED_VALUES ? `, and ${byCount.length - NAMED_VALUES} more values` : ''
    return [
      `${flag}: ${total} line${total === 1 ? '' : 's'} with a verdict other than ${REJECTED} or ${ACCEPTED} (any case), their outcome left as it is: ${named.join(', ')}${more}`,
    ]
  }
}

module.exports = { splitVerdict, VerdictCounts, REJECTED, ACCEPTED }
