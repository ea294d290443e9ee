'use strict'

// A held pair's recovery test (the core's table: a window holding f failures passes from
// needed[f] solves, with more failures than the table only from burnAloneFrom) as one PromQL
// condition: the window's solves at or over a curve of its failures — the lowest of a few
// lines, written as a start, a slope and a change of slope where each next line takes over
// (clamp_min(f - at, 0)), capped at burnAloneFrom and never under minSolves. One selector of
// the solves and one of the failures per line, where a lookup table cost PromQL a recording
// of one `label_replace(vector(…))` per entry at every evaluation.

// Kept from each bound, so that float rounding in PromQL never flips a comparison with a whole
// number of solves.
const MARGIN = 1e-3

/**
 * The curve of `test` (`{ minSolves, failureSteps, burnAloneFrom }`, from the core), or null
 * when no few segments fit (a table far from smooth): `start` + `slope` × f, plus, from each
 * knot `at` on, `change` × (f − at), capped at `cap` and never under `floor`. Exact for every
 * whole n and f: checked as PromQL computes it.
 * @returns {{ start: number, slope: number, knots: Array<{ at: number, change: number }>, cap: number, floor: number } | null}
 */
function recoveryCurve(test) {
  const { minSolves, burnAloneFrom } = test
  const needed = neededOf(test)
  const lines = recoveryLines(needed, burnAloneFrom, minSolves)
  if (lines === null) return null
  // The lowest of the lines is concave: steepest first, each taking over where it crosses the
  // one before (a line that is never the lowest is left out).
  const sorted = [...lines].sort((p, q) => q.b - p.b || p.a - q.a)
  const hull = []
  for (const line of sorted) {
    if (hull.length && hull.at(-1).b === line.b) continue
    while (hull.length >= 2 && cross(hull.at(-2), line) <= cross(hull.at(-2), hull.at(-1))) hull.pop()
    hull.push(line)
  }
  // Each knot where two lines cross, in as few decimals as keep the curve exact.
  for (let digits = 0; digits <= 12; digits++) {
    const knots = []
    for (let i = 1; i < hull.length; i++) {
      knots.push({ at: Number(cross(hull[i - 1], hull[i]).toFixed(digits)), change: Number((hull[i].b - hull[i - 1].b).toPrecision(12)) })
    }
    const curve = { start: hull[0].a, slope: hull[0].b, knots, cap: burnAloneFrom, floor: minSolves }
    if (exact(curve, needed, burnAloneFrom)) return curve
  }
  return null
}

/** The table: the fewest solves for 0, 1, … failures, never under minSolves. */
const neededOf = ({ minSolves, failureSteps }) => [minSolves, ...failureSteps].map((n) => Math.max(n, minSolves))

/** Where line q takes over from the steeper p. */
const cross = (p, q) => (q.a - p.a) / (p.b - q.b)

/**
 * A held pair's recovery test (the core's table: a span holding f failures passes from
 * `needed[f]` solves; with more than `needed.length - 1` failures only from `burnAloneFrom`)
 * as the fewest lines a + b × f such that, for whole n and f below `burnAloneFrom`,
 * n ≥ min over the lines of (a + b × f) exactly when the table passes (n, f): a concave
 * curve through the table, which PromQL reads with a few operations instead of a lookup.
 * The spans judged must also hold `minSolves` solves (the curve's floor), so the lines may
 * pass fewer where the table says `minSolves`. Null when no such set of lines exists (a
 * table that is not close enough to concave).
 * @param {number[]} needed ascending, needed[0] the fewest solves judged at all
 * @param {number} burnAloneFrom
 * @param {number} minSolves
 * @returns {Array<{ a: number, b: number }> | null}
 */
function recoveryLines(needed, burnAloneFrom, minSolves) {
  const last = needed.length - 1
  // Every line stays above each entry less one (so the lowest line never passes a span the
  // table refuses; an entry the floor holds is free), and one failure past the table above
  // burnAloneFrom less one.
  const floor = needed.flatMap((n, f) => (n > minSolves ? [[f, n - 1 + MARGIN]] : []))
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
  return lines
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

/** The curve at whole `f`, in PromQL's order of operations (left to right, clamps last). */
function curveAt({ start, slope, knots, cap, floor }, f) {
  let value = start + slope * f
  for (const { at, change } of knots) value = value + change * Math.max(f - at, 0)
  return Math.max(Math.min(value, cap), floor)
}

/**
 * Whether the fewest whole solves at or over the curve are the table's for every failure
 * count below burnAloneFrom (a window holds no more failures than solves).
 */
function exact(curve, needed, burnAloneFrom) {
  for (let f = 0; f < burnAloneFrom; f++) {
    const fewest = Math.max(f, Math.ceil(curveAt(curve, f)))
    const table = Math.max(f, f < needed.length ? needed[f] : burnAloneFrom)
    if (fewest !== table) return false
  }
  return true
}

/**
 * A held pair's recovery test below and from `burnAloneFrom`, as one PromQL condition over the
 * solves `n` and failures `f` of each judged window (expressions of whole numbers): the curve,
 * or, when no curve fits, one term per table entry.
 */
function recoveryCondition(test, n, f) {
  const curve = recoveryCurve(test)
  if (curve === null) {
    const entries = neededOf(test).map((least, failures) => `(${n} >= ${least} and ${f} <= ${failures})`)
    return `(\n  ${n} >= ${test.burnAloneFrom}\n  or ${entries.join('\n  or ')}\n)`
  }
  // A sign and factor before a term (none for 1).
  const times = (x) => `${x < 0 ? '-' : '+'} ${Math.abs(x) === 1 ? '' : `${Math.abs(x)} * `}`
  const terms = [String(curve.start), `${times(curve.slope)}${f}`, ...curve.knots.map(({ at, change }) => `${times(change)}clamp_min(${f} - ${at}, 0)`)]
  return `${n} >= clamp_min(clamp_max(\n  ${terms.join('\n  ')},\n  ${curve.cap}), ${curve.floor}\n)`
}

module.exports = { recoveryCurve, recoveryCondition, curveAt }
