// Issue 44, item 10: family.blame() against a naive recount over every child, after
// random records (through the family and on the children themselves), late verdicts,
// clock moves and evictions; guard() solves and attempt.reject(); restore(); a child
// closed on its own; a real clock's lock-free records, and its solves leaving the window. The recount
// (helpers/blame-recount.js) is the specs' own: the G test of lib/providers/blame.js's header,
// worked from `family.children()`'s window counts. A fleet's sync:
// family-fleet-blame.spec.js.
const test = require('ava')
const { BudgetFamily } = require('../..')
const { prng } = require('../../scripts/prng.js')
const { isDeepStrictEqual } = require('node:util')
const { setTimeout: sleep } = require('node:timers/promises')
const { expectRecount, recount } = require('../helpers/blame-recount.js')

test('10. blame() equals a naive recount over every child after random records, verdicts, clock moves and evictions', (t) => {
  const random = prng(44)
  const PROVIDERS = ['p0', 'p1', 'p2']
  const SITES = ['s0', 's1', 's2', 's3', 's4', 's5']
  const TYPES = ['image', 'token']
  const family = new BudgetFamily({
    labelNames: ['provider', 'site', 'type'],
    attribution: { provider: 'provider', site: 'site' },
    clock: 'manual',
    windowMs: 300_000,
    resolutionMs: 1000,
    maxChildren: 30,
    alerts: [],
  })
  t.teardown(() => family.close())
  const pick = (list) => list[Math.floor(random() * list.length)]
  // Failure rates that change in phases: a provider's outage, then a site's, then neither.
  const failRate = (phase, provider, site) => (phase === 0 ? (provider === 'p0' ? 0.8 : 0.05) : phase === 1 ? (site === 's3' ? 0.95 : 0.02) : 0.1)
  const seen = { provider: 0, site: 0, null: 0 }
  let now = 0
  for (let step = 0; step < 600; step++) {
    const phase = Math.floor(step / 200)
    const labels = { provider: pick(PROVIDERS), site: pick(SITES), type: pick(TYPES) }
    const r = random()
    try {
      if (r < 0.45) family.record(labels, random() >= failRate(phase, labels.provider, labels.site), now)
      else if (r < 0.75) {
        const ok = Math.floor(random() * 6)
        const failed = Math.round(ok * failRate(phase, labels.provider, labels.site) * 3)
        family.labels(labels).recordMany(ok, failed, now)
      } else if (r < 0.85) family.labels(labels).record(random() >= failRate(phase, labels.provider, labels.site))
      else if (r < 0.9) family.labels(labels).reject(now)
      else {
        now += Math.floor(random() * 20_000)
        family.advanceTo(now)
      }
    } catch (err) {
      // A full family (no child evictable) or a verdict with nothing to turn: both change nothing.
      if (err.code !== 'ERR_OUT_OF_RANGE' && err.code !== 'ERR_INVALID_STATE') throw err
    }
    if (step % 10 === 9) {
      const now = expectRecount(t, family, PROVIDERS, SITES, { type: 'image' }, `step ${step}`)
      for (const key of Object.keys(seen)) seen[key] += now[key]
    }
  }
  // Each answer came up, so that the comparisons were not all null.
  t.true(seen.provider > 20 && seen.site > 20 && seen.null > 20, JSON.stringify(seen))
})

const ATTRIBUTION = { provider: 'provider', site: 'site' }
const PROVIDERS = ['a', 'b', 'c']
const SITES = ['s0', 's1', 's2', 's3']

function providerFamily(options = {}) {
  return new BudgetFamily({ labelNames: ['provider', 'site'], attribution: ATTRIBUTION, windowMs: 3_600_000, resolutionMs: 1000, alerts: [], ...options })
}

// Through guard(): provider a fails 3 solves in 4, the others 1 in 10 (`i` numbers the solve).
async function guardedSolves(family, attempts) {
  for (let i = 0; i < 120; i++) {
    const labels = { provider: PROVIDERS[i % 3], site: SITES[Math.floor(i / 3) % 4] }
    const fails = labels.provider === 'a' ? i % 4 !== 0 : i % 10 === 0
    await family
      .labels(labels)
      .guard(
        async (signal, attempt) => {
          if (fails) throw new Error('unsolvable')
          attempts.push({ labels, attempt })
          return 'token'
        },
        { whenExhausted: 'refuse' },
      )
      .catch(() => {})
  }
}

test('10. blame() equals the recount after guard() solves, attempt.reject(), restore() and a child closed on its own', async (t) => {
  // A 10 % target and 40 earlier successes a child: a's budget lasts through its failures (guard() refuses none).
  const family = providerFamily({ clock: 'manual', targetRate: 0.1 })
  t.teardown(() => family.close())
  family.advanceTo(1_000_000)
  for (const provider of PROVIDERS) for (const site of SITES) family.labels({ provider, site }).recordMany(40, 0, 999_000)
  const attempts = []
  await guardedSolves(family, attempts)
  const before = expectRecount(t, family, PROVIDERS, SITES, {}, 'guarded')
  t.true(before.provider > 0, JSON.stringify(before))
  // Site s3 rejects every token of b and c: late verdicts turn those successes into failures.
  let rejected = 0
  for (const { labels, attempt } of attempts) if (labels.site === 's3' && attempt.reject('site says no')) rejected++
  // On s3 (solves 9–11, 21–23, …): b's 10 solves less the failed 10th and 70th, c's 10; a's all failed.
  t.is(rejected, 18)
  expectRecount(t, family, PROVIDERS, SITES, {}, 'after the verdicts')
  // Restored: the same answers, and they follow the restored children's records.
  const restored = BudgetFamily.restore(family.snapshot(), { attribution: ATTRIBUTION })
  t.teardown(() => restored.close())
  expectRecount(t, restored, PROVIDERS, SITES, {}, 'restored')
  for (const site of SITES) restored.labels({ provider: 'b', site }).recordMany(0, 30, 1_001_000)
  t.deepEqual(expectRecount(t, restored, PROVIDERS, SITES, {}, 'restored, then b failing'), { provider: 4, site: 0, null: 8 })
  // A child closed on its own keeps its counts as of close(), in the family and the recount alike.
  const closing = family.labels({ provider: 'c', site: 's1' })
  closing.recordMany(0, 25, 1_000_000)
  closing.close()
  expectRecount(t, family, PROVIDERS, SITES, {}, 'a child closed')
})

test('10. blame() equals the recount on a real clock, records through the lock-free lease and the family alike', (t) => {
  // An hour's window: nothing leaves it while the test runs.
  const family = providerFamily()
  t.teardown(() => family.close())
  for (const provider of PROVIDERS) for (const site of SITES) family.record({ provider, site }, true)
  expectRecount(t, family, PROVIDERS, SITES, {}, 'one solve each')
  // record(ok) on a child, again and again: after the first, the fast path's lease takes them without the lock.
  const child = family.labels({ provider: 'a', site: 's0' })
  for (let i = 0; i < 200; i++) child.record(i % 5 === 0)
  for (let i = 0; i < 200; i++) family.labels({ provider: 'b', site: 's2' }).record(true)
  for (const site of SITES) for (let i = 0; i < 50; i++) family.labels({ provider: 'a', site }).record(false)
  t.deepEqual(expectRecount(t, family, PROVIDERS, SITES, {}, 'a failing'), { provider: 4, site: 0, null: 8 })
  // And records between two blame() calls of the same child, with nothing else in between.
  for (let i = 0; i < 400; i++) family.labels({ provider: 'b', site: 's1' }).record(i % 2 === 0)
  expectRecount(t, family, PROVIDERS, SITES, {}, 'b on s1 half failing')
})

test('10. blame() equals the recount as a manual clock moves buckets out of the window, in steps and in one jump', (t) => {
  const family = providerFamily({ clock: 'manual', windowMs: 60_000, resolutionMs: 1000 })
  t.teardown(() => family.close())
  // a fails on every site at 0–9 s; from 30 s on, s2 fails on every provider.
  for (let s = 0; s < 10; s++) for (const site of SITES) family.labels({ provider: 'a', site }).recordMany(1, 9, s * 1000)
  for (let s = 0; s < 10; s++) for (const site of SITES) for (const provider of ['b', 'c']) family.labels({ provider, site }).recordMany(10, 0, s * 1000)
  family.advanceTo(30_000)
  for (const provider of PROVIDERS) for (const site of SITES) family.labels({ provider, site }).recordMany(20, site === 's2' ? 20 : 0, 30_000)
  const answers = []
  for (const at of [59_000, 62_000, 65_000, 69_999, 70_000, 89_999, 90_000]) {
    family.advanceTo(at)
    answers.push(expectRecount(t, family, PROVIDERS, SITES, {}, `at ${at}`))
  }
  // At 90 000 ms every bucket has left: nothing to blame.
  t.deepEqual(answers.at(-1), { provider: 0, site: 0, null: 12 })
  t.notDeepEqual(answers[0], answers.at(-2), 'the answers changed as a’s failures left the window')
})

test('10. blame() sees the lock-free records that follow a record that changes no count', (t) => {
  const family = providerFamily()
  t.teardown(() => family.close())
  // Every cell 100 solves, 2 failed; but on s3 a and b fail 60 of 160, c 18 of 48.
  const failedOnS3 = { a: [100, 60], b: [100, 60], c: [30, 18] }
  for (const provider of PROVIDERS) for (const site of SITES) family.labels({ provider, site }).recordMany(...(site === 's3' ? failedOnS3[provider] : [100, 2]))
  // Every provider fails on s3: the site's fault.
  t.deepEqual(family.blame({ provider: 'a', site: 's3' }), { label: 'site', value: 's3' })
  const late = family.labels({ provider: 'c', site: 's3' })
  late.recordMany(0, 0)
  for (let i = 0; i < 500; i++) late.record(true)
  // c: 18 failed of 548 on s3, against 6 of 306 elsewhere, is no longer a significant difference: not the site's fault.
  t.is(family.blame({ provider: 'a', site: 's3' }), null)
  t.is(late.successes, 530)
  expectRecount(t, family, PROVIDERS, SITES, {}, 'c solving s3')
})

test('10. blame() on a real clock: the provider while its failures are in the window, null once they leave, as the recount says at each moment', async (t) => {
  // The shortest window this spec can trust on a loaded machine: 2 s in 100 ms buckets.
  const WINDOW_MS = 2000
  const family = providerFamily({ windowMs: WINDOW_MS, resolutionMs: 100 })
  t.teardown(() => family.close())
  // The answer and the recount read at one moment: the recount before and after blame() agree (no bucket left between).
  const steadyAnswer = (p, s) => {
    for (;;) {
      const before = recount(family, p, s)
      const answer = family.blame({ provider: p, site: s })
      if (isDeepStrictEqual(before, recount(family, p, s))) return { answer, expected: before }
    }
  }
  // Every cell 40 solves, 1 failed; and a fails 30 more on every site.
  for (const provider of PROVIDERS) for (const site of SITES) family.labels({ provider, site }).recordMany(40, provider === 'a' ? 31 : 1)
  const recordedAt = performance.now()
  // Over s1–s3, a fails 93 of 213 against 6 of 246 for b and c; on a, s0 fails as its other sites do: a's fault.
  const first = steadyAnswer('a', 's0')
  t.deepEqual(first.answer, first.expected)
  t.deepEqual(first.answer, { label: 'provider', value: 'a' })
  // Halfway through the window, the same solves again without a's failures: they outlast the first ones.
  while (performance.now() - recordedAt < WINDOW_MS / 2) await sleep(20)
  for (const provider of PROVIDERS) for (const site of SITES) family.labels({ provider, site }).recordMany(40, 1)
  // Polled in short steps, for up to 20 s (generous: the first solves leave after about 2 s), until the answer is null.
  let last = first
  for (let step = 0; step < 1000 && last.answer !== null; step++) {
    await sleep(20)
    last = steadyAnswer('a', 's0')
    t.deepEqual(last.answer, last.expected, `step ${step}`)
  }
  t.is(last.answer, null, 'blame() still names a provider 20 s after its failures were recorded')
  expectRecount(t, family, PROVIDERS, SITES, {}, 'after the failures left')
})
