const test = require('ava')
const { policyOf } = require('../../lib/prometheus/rules-slo.js')
const { recoveryCurve, recoveryCondition, curveAt } = require('../../lib/prometheus/recovery-curve.js')

const DAY = 86_400_000

// The core's recovery test, read as the core reads it (RecoveryTest::recovered without the burn
// term): n ≥ minSolves, and from burnAloneFrom solves on at once, below that no more failures
// than failureSteps has entries ≤ n.
const tablePasses = ({ minSolves, failureSteps, burnAloneFrom }, n, f) =>
  n >= minSolves && (n >= burnAloneFrom || f <= failureSteps.filter((step) => step <= n).length)

/** Every held pair's test of the default policy for `slo` at `scrapeMs`. */
function heldTests(slo, scrapeMs) {
  const { pairs, recovery } = policyOf(slo, scrapeMs)
  return pairs.flatMap((pair, i) =>
    pair.resolveBurnRate < pair.burnRate && recovery[i].burnAloneFrom > recovery[i].minSolves ? [[pair.name, recovery[i]]] : [],
  )
}

test("the curve passes exactly the spans the core's table passes, for every whole count of solves and failures", (t) => {
  let checked = 0
  for (const targetRate of [0.5, 0.8, 0.9, 0.95, 0.96, 0.99, 0.995, 0.999]) {
    for (const windowMs of [DAY / 4, DAY, 7 * DAY, 30 * DAY]) {
      for (const scrapeMs of [15_000, 60_000]) {
        for (const [name, recovery] of heldTests({ targetRate, windowMs }, scrapeMs)) {
          const curve = recoveryCurve(recovery)
          t.truthy(curve, `${targetRate} ${windowMs} ${name}`)
          // Every failure count up to two past the table, every count of solves a little past burnAloneFrom.
          for (let f = 0; f <= recovery.failureSteps.length + 2; f++) {
            for (let n = f; n < recovery.burnAloneFrom + 3; n++) {
              if (n >= curveAt(curve, f) !== tablePasses(recovery, n, f)) {
                t.fail(`${targetRate} ${windowMs} ${name}: ${n} solves, ${f} failures`)
                return
              }
            }
          }
          checked++
        }
      }
    }
  }
  t.true(checked >= 200, String(checked))
})

test('a 95 % SLO over 30 days: slow-burn by hand (binomial test at 0.01 %), in a few segments', (t) => {
  const [, slowBurn] = heldTests({ targetRate: 0.95, windowMs: 30 * DAY }, 60_000).find(([name]) => name === 'slow-burn')
  const curve = recoveryCurve(slowBurn)
  // 0 failures from 57 solves, 1 from 73, 2 from 87, 3 from 100, 4 from 112 (math.comb in Python);
  // from 281 the burn alone decides.
  t.deepEqual(
    [0, 1, 2, 3, 4].map((f) => Math.ceil(curveAt(curve, f))),
    [57, 73, 87, 100, 112],
  )
  t.deepEqual([curve.cap, curve.floor], [281, 57])
  // 21 entries, 6 segments at most, each figure short.
  t.true(curve.knots.length <= 5, String(curve.knots.length))
  for (const x of [curve.start, curve.slope, ...curve.knots.flatMap(({ at, change }) => [at, change])]) t.true(String(x).length <= 6, String(x))
})

test('the PromQL: n at or over the curve of f, capped at burnAloneFrom and never under minSolves', (t) => {
  const [, fastBurn] = heldTests({ targetRate: 0.95, windowMs: 30 * DAY }, 60_000).find(([name]) => name === 'fast-burn')
  // 10 solves for 0 or 1 failure (the floor), 13 for 2, … ; 26 alone.
  t.deepEqual([fastBurn.minSolves, ...fastBurn.failureSteps.slice(0, 2), fastBurn.burnAloneFrom], [10, 10, 13, 26])
  const { start, slope, knots } = recoveryCurve(fastBurn)
  t.deepEqual([start, slope, knots], [7.81, 2.1, [{ at: 7.3, change: -1 }]])
  // A change of slope of 1 is written without its factor.
  t.is(recoveryCondition(fastBurn, 'n', 'f'), 'n >= clamp_min(clamp_max(\n  7.81\n  + 2.1 * f\n  - clamp_min(f - 7.3, 0),\n  26), 10\n)')
})

test('a table no few segments can follow is written entry by entry instead, still exact', (t) => {
  // A zig-zag: 10 solves for no failure, 40 for one, 41 for two, 90 for three; 100 alone.
  const zigzag = { minSolves: 10, failureSteps: [40, 41, 90], burnAloneFrom: 100 }
  t.is(recoveryCurve(zigzag), null)
  t.is(
    recoveryCondition(zigzag, 'n', 'f'),
    '(\n  n >= 100\n  or (n >= 10 and f <= 0)\n  or (n >= 40 and f <= 1)\n  or (n >= 41 and f <= 2)\n  or (n >= 90 and f <= 3)\n)',
  )
})
