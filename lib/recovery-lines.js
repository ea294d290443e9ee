'use strict'

// Margin kept from each bound, so that float rounding of a + b × failures in PromQL
// never flips a comparison with a whole number of solves.
const MARGIN = 1e-3

/**
 * A held pair's recovery test (the core's table: a span holding f failures passes from
 * `needed[f]` solves; with more than `needed.length - 1` failures only from `burnAloneFrom`)
 * as the fewest lines a + b × f such that, for whole n and f below `burnAloneFrom`,
 * n ≥ min over the lines of (a + b × f) exactly when the table passes (n, f): a concave
 * curve through the table, which PromQL reads with a few operations instead of a lookup.
 * With `gate`, the spans judged must also hold `gate` solves (a separate term), so the
 * lines may pass fewer where the table says `gate`. Null when no such set of lines exists
 * (a table that is not close enough to concave).
 * @param {number[]} needed ascending, needed[0] the fewest solves judged at all
 * @param {number} burnAloneFrom
 * @param {number} [gate]
 * @returns {Array<{ a: number, b: number }> | null}
 */
function recoveryLines(needed, burnAloneFrom, gate = 0) {
  const last = needed.length - 1
  // Every line stays above each entry less one (so the lowest line never passes a span the
  // table refuses; an entry the gate holds is free), and above burnAloneFrom less one one
  // failure past the table.
  const floor = needed.flatMap((n, f) => (n > gate ? [[f, n - 1 + MARGIN]] : []))
  floor.push([last + 1, burnAloneFrom - 1 + MARGIN])
  const lines = []
  for (let start = 0; start <= last;) {
    // The longest run of entries from `start` that one line passes at or under.
    let end = start
    let found = lineThrough(needed, floor, start, end)
    if (found === null) return null
    for (let next; end < last && (next = lineThrough(needed, floor, start, end + 1)) !== null; end++) found = next
    lines.push(found)
    start = end + 1
  }
  return verified(lines, needed, burnAloneFrom, gate) ? lines : null
}

/** A line with a short decimal form at or under needed[f] for f in [from, to], above every floor point. */
function lineThrough(needed, floor, from, to) {
  const ceiling = []
  for (let f = from; f <= to; f++) ceiling.push([f, needed[f] - MARGIN])
  // For a slope b, the intercepts that fit: [max(floor − b f), min(ceiling − b f)]; its width is
  // concave in b, so the slopes that fit are an interval, found around the best one.
  const span = (b) => {
    let [lo, hi] = [-Infinity, Infinity]
    for (const [f, y] of floor) lo = Math.max(lo, y - b * f)
    for (const [f, y] of ceiling) hi = Math.min(hi, y - b * f)
    return [lo, hi]
  }
  const width = (b) => {
    const [lo, hi] = span(b)
    return hi - lo
  }
  // The width is concave in b (a least of lines less a greatest): ternary search for its
  // maximum, no steeper than the solves that end the table.
  const steepest = floor[floor.length - 1][1] + 1
  let [left, right] = [0, steepest]
  for (let i = 0; i < 80; i++) {
    const [m1, m2] = [left + (right - left) / 3, right - (right - left) / 3]
    if (width(m1) < width(m2)) left = m1
    else right = m2
  }
  const best = (left + right) / 2
  if (!(width(best) > 0)) return null
  const edge = (outside) => {
    let [inside, out] = [best, outside]
    for (let i = 0; i < 50; i++) {
      const mid = (inside + out) / 2
      if (width(mid) > 0) inside = mid
      else out = mid
    }
    return inside
  }
  const b = simplest(edge(0), edge(steepest))
  const [lo, hi] = span(b)
  return { a: simplest(lo, hi), b }
}

/** The decimal with the fewest digits in [lo, hi] (lo ≤ hi). */
function simplest(lo, hi) {
  for (let digits = 0; digits < 12; digits++) {
    const scale = 10 ** digits
    const x = Math.ceil(lo * scale - 1e-9) / scale
    if (x <= hi) return Number(x.toFixed(digits))
  }
  return (lo + hi) / 2
}

/**
 * Whether the lines pass exactly the whole (n, f) the table passes below burnAloneFrom: for
 * each failure count, the fewest solves that reach the curve (a + b × f as PromQL computes
 * it) are the table's, and one failure past the table needs burnAloneFrom or more.
 */
function verified(lines, needed, burnAloneFrom, gate) {
  for (let f = 0; f <= needed.length; f++) {
    const least = Math.max(gate, f, Math.ceil(Math.min(...lines.map(({ a, b }) => a + b * f))))
    const table = f < needed.length ? Math.max(f, needed[f]) : burnAloneFrom
    if (Math.min(least, burnAloneFrom) !== Math.min(table, burnAloneFrom)) return false
  }
  return lines.every(({ b }) => b >= 0)
}

/**
 * A held pair's recovery test (`{ minSolves, failureSteps, burnAloneFrom }`, from the core)
 * below `burnAloneFrom` solves, as the fewest PromQL terms: lines alone, or lines and a gate
 * of `minSolves` solves (`gate` 0 when there is none), whichever reads shorter; `lines` null
 * when neither fits (then every entry is a term of its own).
 * @returns {{ needed: number[], gate: number, lines: Array<{ a: number, b: number }> | null }}
 */
function recoveryCurve({ minSolves, failureSteps, burnAloneFrom }) {
  // Never under minSolves: the first entry is that gate.
  const needed = [minSolves, ...failureSteps].map((n) => Math.max(n, minSolves))
  const plain = recoveryLines(needed, burnAloneFrom)
  const gated = recoveryLines(needed, burnAloneFrom, minSolves)
  // A gate is half a line's operations.
  if (gated !== null && (plain === null || gated.length + 0.5 < plain.length)) return { needed, gate: minSolves, lines: gated }
  return { needed, gate: 0, lines: plain }
}

/**
 * The PromQL terms of a held pair's recovery test below `burnAloneFrom`, over the solves `n`
 * and failures `f` of each judged window (expressions of whole numbers): `passes`, any of
 * which passes a window (`n >= a + b * f` per line; without lines, one term per table entry),
 * and `gate`, a term every passing window must also meet (null when there is none).
 */
function recoveryTerms(test, n, f) {
  const { needed, gate, lines } = recoveryCurve(test)
  const passes = lines
    ? lines.map(({ a, b }) => `${n} >= ${String(a)} + ${String(b)} * ${f}`)
    : needed.map((least, failures) => `(${n} >= ${least} and ${f} <= ${failures})`)
  return { passes, gate: gate > 0 ? `${n} >= ${gate}` : null }
}

module.exports = { recoveryLines, recoveryCurve, recoveryTerms }
