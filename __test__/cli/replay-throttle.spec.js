// `captcha-budget replay --throttle` (lib/cli/replay/throttle.js): what guard()'s
// throttle would have admitted and refused, hand-worked on the outage log of
// __test__/cli/replay-scenarios.spec.js: one solve a second, t = 0 … 1100 s, the 60
// solves of t = 600 … 659 s failing; 95 % over 12 h, min-events 0.
//
// The guard's tracker sees what it admits. Up to t = 631 s it admits all: the
// 32nd failure (631 s) exhausts the window (31.6 allowed), so at 632 s it is
// throttled (the ledger at its floor after 32 failures): one probe per 20 s,
// 652 s (fails), 672, 692, …, 852 s (succeed: 10 successes lift the ledger from
// −0.5 to 0) → every solve again from 852 s; 632 … 851 s are 220 solves, 10 of
// them probes: 210 refused. Its window then holds 33 failures (the probe of
// 652 s) of 632 + 11 + (T − 852) solves after T: exhausted while 0.05 × (T − 209)
// ≤ 33, last at T = 868 s (659 solves; at 869 s, 660: 33.00000000000003 > 33), so
// at 870 s the budget governs again. Admitted: 1101 − 210 = 891, 11 of them probes.
const test = require('ava')
const { replayCli, replayJson, tempFiles } = require('../fixtures/replay/cli')
const { outage, toJsonl, at } = require('../fixtures/replay/logs')

const ARGS = ['--window', '12h', '--min-events', '0', '--alerts', 'none', '--throttle']

test('the throttled stretch and its end, at their instants; the totals', async (t) => {
  const files = tempFiles({ 'outage.jsonl': toJsonl(outage()) })
  const r = await replayJson([files['outage.jsonl'], ...ARGS])
  t.deepEqual(
    r.timeline.filter((e) => e.kind === 'throttle'),
    [
      { at: at(632), tracker: 'all', kind: 'throttle', from: 'open', to: 'throttled', admitted: 632, refused: 1, probes: 0 },
      { at: at(852), tracker: 'all', kind: 'throttle', from: 'throttled', to: 'admitting', admitted: 632 + 11, refused: 210, probes: 11 },
      { at: at(870), tracker: 'all', kind: 'throttle', from: 'admitting', to: 'open', admitted: 632 + 11 + 18, refused: 210, probes: 11 },
    ],
  )
  t.deepEqual(r.trackers[0].throttle, { admitted: 891, refused: 210, probes: 11, stretches: 1, throttledMs: 220_000, state: 'open' })
  // The replay's own tracker, fed every solve of the log, is untouched by it.
  t.like(r.trackers[0].final, { status: 'exhausted', total: 1101, failures: 60 })
})

test('the text timeline prints the stretch; without --throttle nothing of it', async (t) => {
  const files = tempFiles({ 'outage.jsonl': toJsonl(outage()) })
  const { stdout } = await replayCli([files['outage.jsonl'], ...ARGS, '--no-progress'])
  const lines = stdout.split('\n')
  t.true(
    lines.some((l) => l.includes(`${at(632)}  all  guard    open → throttled  probes only, one per 20s`)),
    stdout,
  )
  t.true(
    lines.some((l) => l.includes(`${at(852)}  all  guard    throttled → admitting  every solve again: recent solves meet the SLO (210 refused so far)`)),
    stdout,
  )
  t.true(
    lines.some((l) => l.includes(`${at(870)}  all  guard    admitting → open`)),
    stdout,
  )
  t.true(lines.includes('    guard        throttled 3m 40s in 1 stretch: 891 solves admitted (11 probes), 210 refused'), stdout)
  const plain = await replayCli([files['outage.jsonl'], ...ARGS.slice(0, -1), '--no-progress'])
  t.false(plain.stdout.includes('guard'))
})
