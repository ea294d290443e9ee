'use strict'

/**
 * mulberry32: a small seeded PRNG, so a seed always gives the same sequence
 * (scripts/generate-sample-log.js writes the same sample file every run,
 * benchmark/alerts-scenarios.js replays the same scenarios, and
 * __test__/tracker/reference.spec.js the same random comparisons).
 * @param {number} seed a 32-bit unsigned seed
 * @returns {() => number} a function returning the next number in [0, 1)
 */
function prng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

module.exports = { prng }
