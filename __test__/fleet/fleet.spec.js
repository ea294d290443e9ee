// Needs Debian's redis-server: without it (and not under CI) the file skips in one line.
const test = require('../helpers/external.js').needs(require('ava'), 'redis-server', __filename)
const { BudgetExhaustedError } = require('../..')
const { T0, fleetTracker, storedCounts, recordEach, redisForFile } = require('../helpers/fleet')

const fleetRedis = redisForFile(test)
const { client } = fleetRedis

for (const kind of ['ioredis', 'node-redis', 'node-redis v5']) {
  test.serial(`${kind}: worker B's failures exhaust the fleet → A's 'exhausted' listener fires after A's sync and A's guard() refuses`, async (t) => {
    const key = `exhaust-${kind}`
    const a = fleetTracker(await client(kind), key, { targetRate: 0.9 })
    const b = fleetTracker(await client(kind), key, { targetRate: 0.9 })
    const heard = []
    const exhausted = new Promise((resolve) => a.on('exhausted', (report) => resolve(report)))
    a.on('warning', (r) => heard.push(`warning ${r.total}`))
    recordEach(a, 100, 0)
    await a.sync()
    // B alone: 20 failures of 20 → its own budget is gone; A does not know yet.
    recordEach(b, 0, 20)
    await b.sync()
    t.is(a.status, 'healthy')
    t.is(await a.guard(async () => 'token'), 'token')
    await a.sync()
    // Hand-worked: 101 + 20 = 121 solves at 90 %: budget 12.1, 20 failures spent → exhausted.
    const report = await exhausted
    t.like(report, { status: 'exhausted', total: 121, failures: 20, budgetTotal: 12.1, budgetRemaining: 0 })
    t.deepEqual(heard, [])
    t.is(a.status, 'exhausted')
    let called = false
    await t.throwsAsync(
      a.guard(async () => {
        called = true
      }),
      { instanceOf: BudgetExhaustedError },
    )
    t.false(called)
    // Both workers report the same fleet window.
    await b.sync()
    t.like(b.report(), { total: 121, failures: 20, status: 'exhausted' })
    t.like(a.report().fleet, { key, workers: 2, stale: false, staleSince: null, syncedAt: T0, unsent: { successes: 0, failures: 0 }, lastError: null })
    a.close()
    b.close()
  })
}

test.serial('report().fleet counts what is unsent; a sync pushes it once and pulls the fleet', async (t) => {
  const redis = await client()
  const a = fleetTracker(redis, 'unsent')
  const b = fleetTracker(await client(), 'unsent')
  recordEach(a, 7, 3)
  t.deepEqual(a.report().fleet.unsent, { successes: 7, failures: 3 })
  t.true(a.report().fleet.stale, 'never synced yet')
  const info = await a.sync()
  t.like(info, { stale: false, unsent: { successes: 0, failures: 0 }, syncedAt: T0 })
  await a.sync()
  await a.sync()
  t.deepEqual(await storedCounts(redis, 'unsent'), { successes: 7, failures: 3 })
  recordEach(b, 1, 1)
  await b.sync()
  await a.sync()
  t.like(a.report(), { total: 12, successes: 8, failures: 4 })
  // The getters read the same window.
  t.deepEqual([a.total, a.successes, a.failures], [12, 8, 4])
  t.deepEqual(await storedCounts(redis, 'unsent'), { successes: 8, failures: 4 })
  a.close()
  b.close()
})

test.serial('counts leave the fleet with the window; Redis keeps O(buckets), expires the keys, and both keys share one hash slot', async (t) => {
  const redis = await client()
  const key = 'expiry'
  // Window 60 s, fleet buckets of 1 s (resolution 100 ms).
  const config = { windowMs: 60_000, resolutionMs: 100, fleet: { bucketMs: 1000 } }
  const a = fleetTracker(redis, key, config)
  const b = fleetTracker(await client(), key, config)
  for (let s = 0; s < 120; s++) {
    a.advanceTo(T0 + s * 1000)
    b.advanceTo(T0 + s * 1000)
    recordEach(a, 2, 0)
    recordEach(b, 0, 1)
    await a.sync()
    await b.sync()
  }
  await a.sync()
  // At T0 + 119 s the window holds the buckets starting after T0 + 59 s: 60 seconds of 2 + 1.
  t.like(a.report(), { successes: 120, failures: 60 })
  t.like(b.report(), { successes: 120, failures: 60 })
  const buckets = `captcha-budget:{${key}}:buckets`
  const fields = Object.keys(await redis.hgetall(buckets)).filter((f) => /^[sf]/.test(f))
  // The 60 live buckets (s and f each) plus one bucket of margin, not the 120 ever written.
  t.true(fields.length <= 2 * 61, `${fields.length} fields`)
  const ttl = await redis.pttl(buckets)
  t.true(ttl > 0 && ttl <= 62_000, `ttl ${ttl}`)
  const changes = `captcha-budget:{${key}}:changes`
  const workers = `captcha-budget:{${key}}:workers`
  t.true((await redis.zcard(changes)) <= 61)
  for (const other of [changes, workers]) t.true((await redis.pttl(other)) > 0)
  const slot = require('cluster-key-slot')
  t.is(slot(buckets), slot(changes))
  t.is(slot(buckets), slot(workers))
  // The window moves on with no solves: after a sync the fleet's counts are gone.
  a.advanceTo(T0 + 200_000)
  await a.sync()
  t.like(a.report(), { total: 0 })
  a.close()
  b.close()
})

test.serial("background sync: another worker's failures reach a listener with no sync() called", async (t) => {
  const key = 'background'
  const a = fleetTracker(await client(), key, { targetRate: 0.9, fleet: { syncMs: 20 } })
  const b = fleetTracker(await client(), key, { targetRate: 0.9 })
  const exhausted = new Promise((resolve) => a.on('exhausted', resolve))
  recordEach(b, 10, 5)
  await b.sync()
  const report = await exhausted
  t.like(report, { total: 15, failures: 5, status: 'exhausted' })
  a.close()
  b.close()
})

test.serial("a tracker with another fleet bucket width is refused by the store: the sync rejects, 'fleet-error' says why, counts stay unsent", async (t) => {
  const key = 'width'
  const a = fleetTracker(await client(), key, { windowMs: 60_000, resolutionMs: 100, fleet: { bucketMs: 1000 } })
  const b = fleetTracker(await client(), key, { windowMs: 60_000, resolutionMs: 100, fleet: { bucketMs: 500 } })
  await a.sync()
  const errors = []
  b.on('fleet-error', (err) => errors.push(err))
  recordEach(b, 1, 0)
  const err = await t.throwsAsync(b.sync(), { code: 'ERR_FLEET_SYNC' })
  t.regex(
    err.message,
    /the fleet's SLO is targetRate 0\.95, windowMs 60000 \(1m\), bucketMs 1000; this tracker's is targetRate 0\.95, windowMs 60000 \(1m\), bucketMs 500:/,
  )
  t.deepEqual(errors, [err])
  // Never synced: stale since its creation (manual clock at 0, before advanceTo(T0)).
  t.like(b.report().fleet, { stale: true, staleSince: 0, unsent: { successes: 1, failures: 0 } })
  t.regex(b.report().fleet.lastError, /bucketMs 1000; .* bucketMs 500/)
  a.close()
  b.close()
})

test.serial('sync() on a tracker without fleet rejects; close() stops the background sync', async (t) => {
  const { ErrorBudgetTracker } = require('../..')
  const plain = new ErrorBudgetTracker({ clock: 'manual' })
  await t.throwsAsync(plain.sync(), { code: 'ERR_INVALID_STATE', message: 'sync() needs a tracker created with config.fleet' })
  const a = fleetTracker(await client(), 'closed', { fleet: { syncMs: 10 } })
  a.close()
  await t.throwsAsync(a.sync(), { code: 'ERR_FLEET_SYNC', message: /closed/ })
  t.throws(() => a.record(true), { code: 'ERR_TRACKER_CLOSED' })
})

test.serial('a store that lost its data (FLUSHALL: a new epoch) is re-read whole: the view drops what it lost, keeps what is unsent', async (t) => {
  const redis = await client()
  const key = 'flushed'
  const a = fleetTracker(redis, key)
  const b = fleetTracker(await client(), key)
  recordEach(a, 10, 2)
  await a.sync()
  await b.sync()
  t.like(b.report(), { successes: 10, failures: 2 })
  await redis.flushall()
  recordEach(a, 1, 1)
  await a.sync()
  t.like(a.report(), { successes: 1, failures: 1 })
  await b.sync()
  t.like(b.report(), { successes: 1, failures: 1 })
  t.deepEqual(await storedCounts(redis, key), { successes: 1, failures: 1 })
  a.close()
  b.close()
})
