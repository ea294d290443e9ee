const test = require('ava')
const { policyOf } = require('../lib/rules-slo.js')
const { recoveryLines, recoveryCurve, recoveryTerms } = require('../lib/recovery-lines.js')

const DAY = 86_400_000

// The core's recovery test below burnAloneFrom, read as the core reads it (RecoveryTest::recovered
// without the burn term): n ≥ minSolves and no more failures than failureSteps has entries ≤ n.
const tablePasses = ({ minSolves, failureSteps }, n, f) => n >= minSolves && f <= failureSteps.filter((step) => step <= n).length
// The curve as PromQL computes it: some line a + b × f reached, and the gate if there is one.
const curvePasses = ({ gate, lines }, n, f) => n >= gate && lines.some(({ a, b }) => n >= a + b * f)

/** Every held pair's test of the default policy for `slo` at `scrapeMs`. */
function heldTests(slo, scrapeMs) {
  const { pairs, recovery } = policyOf(slo, scrapeMs)
  return pairs.flatMap((pair, i) =>
    pair.resolveBurnRate < pair.burnRate && recovery[i].burnAloneFrom > recovery[i].minSolves ? [[pair.name, recovery[i]]] : [],
  )
}

test("the lines pass exactly the spans the core's table passes, for every whole count below burnAloneFrom", (t) => {
  let checked = 0
  for (const targetRate of [0.5, 0.8, 0.9, 0.95, 0.96, 0.99, 0.995, 0.999]) {
    for (const windowMs of [DAY / 4, DAY, 7 * DAY, 30 * DAY]) {
      for (const scrapeMs of [15_000, 60_000]) {
        for (const [name, recovery] of heldTests({ targetRate, windowMs }, scrapeMs)) {
          const curve = recoveryCurve(recovery)
          t.truthy(curve.lines, `${targetRate} ${windowMs} ${name}`)
          // Every failure count up to two past the table (f ≤ n: a span holds no more failures than solves).
          for (let f = 0; f <= recovery.failureSteps.length + 2; f++) {
            for (let n = f; n < recovery.burnAloneFrom; n++) {
              if (curvePasses(curve, n, f) !== tablePasses(recovery, n, f)) {
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

test('a 95 % SLO over 30 days: slow-burn by hand (binomial test at 0.01 %), in a few lines', (t) => {
  const [, slowBurn] = heldTests({ targetRate: 0.95, windowMs: 30 * DAY }, 60_000).find(([name]) => name === 'slow-burn')
  const { gate, lines } = recoveryCurve(slowBurn)
  // 0 failures from 57 solves, 1 from 73, 2 from 87, 3 from 100, 4 from 112 (math.comb in Python).
  const fewest = (f) => Math.max(gate, Math.ceil(Math.min(...lines.map(({ a, b }) => a + b * f))))
  t.deepEqual([0, 1, 2, 3, 4].map(fewest), [57, 73, 87, 100, 112])
  // 21 entries, 6 lines at most: each short (slopes and intercepts of a few digits).
  t.true(lines.length <= 6, String(lines.length))
  for (const { a, b } of lines) t.true(String(a).length <= 6 && String(b).length <= 5, `${a} ${b}`)
})

test("fast-burn's table starts flat (10, 10, 13, …: the 10-solve floor), so its lines come with that gate", (t) => {
  const [, fastBurn] = heldTests({ targetRate: 0.95, windowMs: 30 * DAY }, 60_000).find(([name]) => name === 'fast-burn')
  t.deepEqual([fastBurn.minSolves, ...fastBurn.failureSteps.slice(0, 2)], [10, 10, 13])
  const { passes, gate } = recoveryTerms(fastBurn, 'n', 'f')
  t.is(gate, 'n >= 10')
  t.true(
    passes.every((term) => /^n >= [\d.]+ \+ [\d.]+ \* f$/.test(term)),
    passes.join('; '),
  )
})

test('a table no few lines can follow is written entry by entry instead, still exact', (t) => {
  // A zig-zag: 10 solves for no failure, 40 for one, 41 for two, 90 for three; 100 alone.
  const test_ = { minSolves: 10, failureSteps: [40, 41, 90], burnAloneFrom: 100 }
  t.is(recoveryLines([10, 40, 41, 90], 100), null)
  t.is(recoveryLines([10, 40, 41, 90], 100, 10), null)
  const { passes, gate } = recoveryTerms(test_, 'n', 'f')
  t.is(gate, null)
  t.deepEqual(passes, ['(n >= 10 and f <= 0)', '(n >= 40 and f <= 1)', '(n >= 41 and f <= 2)', '(n >= 90 and f <= 3)'])
})
