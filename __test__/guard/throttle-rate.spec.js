// Issue 33: the throttle's probes follow the attempt rate (lib/guard/throttle.js), worked
// by hand on the Throttle itself: one attempt every 10 s, every probe failing.
const test = require('ava')
const { Throttle } = require('../../lib/guard/throttle')

const OPTIONS = { whenExhausted: 'throttle', minSolves: 0, probeIntervalMs: 20_000, critical: false }
const burning = () => 2 // the window's last minutes burn: throttle at once

/** Attempts every `gapS` seconds from 0 to `untilS` (exclusive); the seconds at which a probe ran. */
function probesAt(throttle, gapS, untilS, probeOk = () => false) {
  const probes = []
  const refusals = []
  for (let s = 0; s < untilS; s += gapS) {
    const decision = throttle.decide(s * 1000, true, 1000, OPTIONS, burning)
    if (decision.admit) {
      probes.push(s)
      throttle.note(probeOk(s), s * 1000, OPTIONS.probeIntervalMs)
    } else refusals.push([s, decision.retryAfterMs])
  }
  return { probes, refusals }
}

test('failing probes, 6 attempts a minute: the first after 20 s, then after 10, 20, then 30 refusals each', (t) => {
  const { probes } = probesAt(new Throttle(0.95), 10, 1000)
  // 20 s (the interval alone), then 10 refusals (30…120 s) → 130 s, 20 (140…330) → 340 s,
  // 30 (350…640) → 650 s, 30 more → 960 s.
  t.deepEqual(probes, [20, 130, 340, 650, 960])
})

test('retryAfterMs: the later of the interval and the refusals still to come at the attempt rate', (t) => {
  const { refusals } = probesAt(new Throttle(0.95), 10, 150)
  // At 140 s: 1 of the 20 refusals after the probe at 130 s, 19 to come at one per 10 s.
  t.deepEqual(
    refusals.find(([s]) => s === 140),
    [140, 190_000],
  )
  // At 10 s, before the first probe: the interval alone (20 s − 10 s); no attempt rate known yet counts 0.
  t.deepEqual(
    refusals.find(([s]) => s === 10),
    [10, 10_000],
  )
})

test('a probe success drops the spacing: the next probe one interval on', (t) => {
  // Probes fail until 600 s, succeed from then: after the probe at 650 s (a success) the
  // next ones come every 20 s (each attempt 10 s apart: every other one).
  const { probes } = probesAt(new Throttle(0.95), 10, 760, (s) => s >= 600)
  t.deepEqual(probes, [20, 130, 340, 650, 670, 690, 710, 730, 750])
})

test('at 1 attempt a second the refusals, not the interval, space failing probes: 1 in 31', (t) => {
  const { probes } = probesAt(new Throttle(0.95), 1, 200)
  // 20 s; then 10 refusals (21…30: 11 s, under the interval) → the interval: 40 s;
  // 20 refusals (41…60) → 61 s; 30 (62…91) → 92 s; 30 → 123 s; → 154 s; → 185 s.
  t.deepEqual(probes, [20, 40, 61, 92, 123, 154, 185])
})
