'use strict'
// `replay --by … --top N` over a regular file: which N keys to replay, found
// without a tracker per key. The summary ranks trackers by their state at the
// end (remaining budget, then burn rate, then name), which is a function of
// the counts in each tracker's window at the end alone. So: one pass finds the
// end, a second counts per key the solves of its final window (two numbers
// per key), and each key's rank from those counts by the budget's formulas
// (budget.rs `Budget::of`; a tracker per key to compute them cost 55 µs and
// garbage each). The replay proper then keeps trackers only for the N worst.
const fs = require('node:fs')
const { readLog } = require('./reader.js')

/** The tracker's default bucket width (config.rs `default_resolution_ms`): a 43 200th of the window, at least 1 ms. */
const resolutionOf = (windowMs) => Math.max(Math.floor(windowMs / 43_200), 1)

/**
 * `[remainingFraction, burnRate]` of a window holding `successes` and `failures`
 * under `config` (`targetRate`, `minEvents`): what the tracker's getters read,
 * computed as budget.rs `Budget::of` does, in the same floating-point steps.
 */
function budgetOf(successes, failures, { targetRate, minEvents }) {
  const total = successes + failures
  const budgetTotal = total * (1 - targetRate)
  const budgetRemaining = Math.max(budgetTotal - failures, 0)
  const remainingFraction = budgetTotal <= 0 ? (failures === 0 ? 1 : 0) : Math.max(budgetRemaining / budgetTotal, 0)
  const burnRate = total === 0 || budgetTotal <= 0 || total < minEvents ? 0 : failures / budgetTotal
  return [remainingFraction, burnRate]
}

/**
 * When `input` can be read more than once (a regular file, not stdin, a FIFO or a
 * device): a function opening its first `size` bytes as they are now, so that
 * every pass reads the same lines of a log still being written; else null.
 */
function rereadable(input) {
  if (input === '-') return null
  let size
  try {
    const stat = fs.statSync(input)
    if (!stat.isFile() || stat.size === 0) return null
    size = stat.size
  } catch {
    return null
  }
  return () => fs.createReadStream(input, { start: 0, end: size - 1, highWaterMark: 1 << 20 })
}

/**
 * Per key (tracker name): its solves in the window at the end and its target, in
 * growing typed arrays (24 bytes a key, plus the Map entry of its name).
 */
class KeyCounts {
  constructor() {
    this.index = new Map()
    this.ok = new Float64Array(1024)
    this.fail = new Float64Array(1024)
    this.targetRate = new Float64Array(1024)
  }

  indexOf(name, targetRate) {
    let i = this.index.get(name)
    if (i === undefined) {
      i = this.index.size
      if (i === this.ok.length) {
        const grow = (a) => {
          const b = new Float64Array(a.length * 2)
          b.set(a)
          return b
        }
        this.ok = grow(this.ok)
        this.fail = grow(this.fail)
        this.targetRate = grow(this.targetRate)
      }
      this.index.set(name, i)
      this.targetRate[i] = targetRate
    }
    return i
  }
}

/**
 * The tracker names of the `top` worst keys at the end, and how many keys there
 * are; `open()` opens the input (rereadable()). `group(type)` gives a key's
 * tracker name and labels, `settingsFor(name, labels)` its tracker config (its
 * minEvents the same for every key). Bad lines are skipped here (the replay
 * proper reports them).
 * @returns {Promise<{ top: Set<string>, keyCount: number }>}
 */
async function rankKeys({ input, open, format, fields, group, rejectedOf = null, settingsFor, top }) {
  let end = -Infinity
  for await (const batch of readLog({ input, format, fields, stream: open() })) {
    const { ts } = batch
    for (let i = 0; i < ts.length; i++) if (ts[i] > end) end = ts[i]
  }
  const keys = new KeyCounts()
  // The first bucket of each window length still in the window at the end (window.rs `first_live_bucket`).
  const floors = new Map()
  const floorOf = (windowMs) => {
    let f = floors.get(windowMs)
    if (f === undefined) {
      const res = resolutionOf(windowMs)
      f = { res, floorK: Math.floor((end - windowMs) / res) + 1 }
      floors.set(windowMs, f)
    }
    return f
  }
  for await (const batch of readLog({ input, format, fields, stream: open() })) {
    const { ts, ok, typeIndex } = batch
    if (ts.length === 0) continue
    // Keyed by tracker name, as the trackers are ('' and 'untyped' are one).
    const slots = batch.types.map((type) => {
      const g = group(type)
      const config = settingsFor(g.name, g.labels)
      return { i: keys.indexOf(g.name, config.targetRate), rejected: rejectedOf !== null && rejectedOf(type), ...floorOf(config.windowMs) }
    })
    for (let j = 0; j < ts.length; j++) {
      const s = slots[typeIndex[j]]
      // Counted at the end iff its bucket is still in the window then (an event dropped as too old never is).
      if (Math.floor(ts[j] / s.res) < s.floorK) continue
      if (ok[j] === 1 && !s.rejected) keys.ok[s.i]++
      else keys.fail[s.i]++
    }
  }
  // Each key's state at the end, from its counts there; the `top` worst so far kept in order
  // (the summary's: least budget left, then highest burn rate, then name), nothing more per key.
  const worst = []
  const before = (a, b) => a.remaining - b.remaining || b.burn - a.burn || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  const { minEvents } = settingsFor('')
  for (const [name, i] of keys.index) {
    const [remaining, burn] = budgetOf(keys.ok[i], keys.fail[i], { targetRate: keys.targetRate[i], minEvents })
    const key = { name, remaining, burn }
    if (worst.length === top && before(key, worst[top - 1]) >= 0) continue
    let lo = 0
    let hi = worst.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (before(worst[mid], key) < 0) lo = mid + 1
      else hi = mid
    }
    worst.splice(lo, 0, key)
    if (worst.length > top) worst.pop()
  }
  return { top: new Set(worst.map((k) => k.name)), keyCount: keys.index.size }
}

module.exports = { rankKeys, rereadable, resolutionOf, budgetOf }
