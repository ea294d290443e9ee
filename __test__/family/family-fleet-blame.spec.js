// family.blame() in a fleet family (issue 44, item 10): another worker's records
// reach this one through sync() and its blame() follows them, as a naive recount
// over its children does (helpers/blame-recount.js). Two workers on one Redis key,
// both with `attribution`.
// Needs Debian's redis-server: without it (and not under CI) the file skips in one line.
const test = require('../helpers/external.js').needs(require('ava'), 'redis-server', __filename)
const { BudgetFamily } = require('../..')
const { T0, redisForFile } = require('../helpers/fleet.js')
const { expectRecount } = require('../helpers/blame-recount.js')

const { client } = redisForFile(test)

const PROVIDERS = ['a', 'b', 'c']
const SITES = ['s0', 's1', 's2', 's3']

// A worker's family on the manual clock at T0, syncing only when told.
function worker(redis, key) {
  const family = new BudgetFamily({
    labelNames: ['provider', 'site'],
    attribution: { provider: 'provider', site: 'site' },
    clock: 'manual',
    windowMs: 3_600_000,
    alerts: [],
    fleet: { redis, key, syncMs: 0, timeoutMs: 20_000, maxSkewMs: 600_000 },
  })
  family.advanceTo(T0)
  return family
}

test.serial("a worker's blame() names the provider once another worker's failures reach it by sync(), as the recount over its children does", async (t) => {
  const key = 'family-blame'
  const [a, b] = [worker(await client(), key), worker(await client('node-redis'), key)]
  t.teardown(() => {
    a.close()
    b.close()
  })
  // Worker B: 40 solves, 1 failed, in every cell but (a, s3), which only A ever sees.
  for (const provider of PROVIDERS) for (const site of SITES) if (provider !== 'a' || site !== 's3') b.labels({ provider, site }).recordMany(40, 1, T0)
  // Worker A: provider a fails 30 of 40 on every site.
  for (const site of SITES) a.labels({ provider: 'a', site }).recordMany(10, 30, T0)
  await b.sync()
  // B alone: every cell fails at the same rate, nothing to blame.
  t.deepEqual(expectRecount(t, b, PROVIDERS, SITES, {}, 'B before A syncs'), { provider: 0, site: 0, null: 12 })
  t.is(b.blame({ provider: 'a', site: 's0' }), null)
  await a.sync()
  await b.sync()
  // B now holds A's counts: (a, s0..s2) 50 ok and 31 failed, (a, s3) 10 and 30, every other cell 40 and 1.
  t.is(b.size, 12)
  t.like(b.labels({ provider: 'a', site: 's3' }).report(), { total: 40, failures: 30 })
  // Asked for (a, s0): over s1–s3, a fails 92 of 202 against 6 of 246 for b and c: a's fault. On a,
  // s0 fails 31 of 81, below a's other sites (61 of 121): not the site's.
  t.deepEqual(b.blame({ provider: 'a', site: 's0' }), { label: 'provider', value: 'a' })
  t.deepEqual(expectRecount(t, b, PROVIDERS, SITES, {}, 'B after A synced'), { provider: 4, site: 0, null: 8 })
  // And A, which learns B's counts at its next sync, answers the same.
  await a.sync()
  t.deepEqual(expectRecount(t, a, PROVIDERS, SITES, {}, 'A after B synced'), { provider: 4, site: 0, null: 8 })
})
