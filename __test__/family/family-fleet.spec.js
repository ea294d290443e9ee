// A BudgetFamily over Redis: three workers against a real redis-server, one
// script call per sync for the whole family, exactly-once pushes.
// Needs Debian's redis-server: without it (and not under CI) the file skips in one line.
const test = require('../helpers/external.js').needs(require('ava'), 'redis-server', __filename)
const { BudgetFamily, FleetSyncError } = require('../..')
const { catchWarnings } = require('../helpers/warnings')
const { T0, redisForFile } = require('../helpers/fleet')
const { familyKeysOf } = require('../../lib/fleet/family-store.js')

const fleetRedis = redisForFile(test)
const { client } = fleetRedis

// A worker's family on the manual clock at T0 (`at`), syncing only when told; its
// clock may be 10 min from Redis's (T0 is the real time rounded down to a minute).
function worker(redis, key, { at = T0, fleet = {}, ...options } = {}) {
  const family = new BudgetFamily({
    labelNames: ['type', 'site'],
    clock: 'manual',
    windowMs: 3_600_000,
    targetRate: 0.9,
    ...options,
    fleet: { redis, key, syncMs: 0, timeoutMs: 20_000, maxSkewMs: 600_000, ...fleet },
  })
  family.advanceTo(at)
  return family
}

function recordEach(family, labels, successes, failures) {
  for (let i = 0; i < successes; i++) family.record(labels, true)
  for (let i = 0; i < failures; i++) family.record(labels, false)
}

const totals = (family) => family.report().map((r) => [r.labels.type, r.labels.site, r.total, r.failures])

for (const kind of ['ioredis', 'node-redis']) {
  test.serial(`${kind}: three workers; after a sync round every worker reports every child with the fleet's exact totals`, async (t) => {
    const key = `family-three-${kind}`
    const [a, b, c] = [worker(await client(kind), key), worker(await client(kind), key), worker(await client(kind), key)]
    const shop = { type: 'turnstile', site: 'shop.example' }
    const tickets = { type: 'turnstile', site: 'tickets.example' }
    const image = { type: 'image', site: 'shop.example' }
    recordEach(a, shop, 40, 2)
    recordEach(a, tickets, 10, 0)
    recordEach(b, shop, 30, 1)
    recordEach(b, tickets, 5, 5)
    recordEach(c, image, 20, 0) // only c ever sees image/shop locally
    for (const w of [a, b, c]) await w.sync()
    for (const w of [a, b]) await w.sync() // a and b learn what the later syncs pushed
    // Hand-summed: shop 70 + 3 = 73 solves, 3 failures; tickets 15 + 5 = 20, 5; image 20, 0.
    // At 90 %: tickets 5 failures of 20 → budget 2 → exhausted; shop 3 of 73 → 7.3 budget, 4.3 left;
    // image all left. Worst first: tickets, shop, image.
    const expected = [
      ['turnstile', 'tickets.example', 20, 5],
      ['turnstile', 'shop.example', 73, 3],
      ['image', 'shop.example', 20, 0],
    ]
    for (const w of [a, b, c]) t.deepEqual(totals(w), expected)
    t.is(a.size, 3, 'a has image/shop from the fleet, though it never recorded it')
    t.is(a.fleet.workers, 3)
    t.false(a.fleet.stale)
    // More solves on one worker reach the others at their next sync, and no count twice.
    recordEach(c, tickets, 0, 1)
    await c.sync()
    await a.sync()
    await a.sync()
    t.deepEqual(totals(a)[0], ['turnstile', 'tickets.example', 21, 6])
    for (const w of [a, b, c]) w.close()
  })
}

test.serial('one Redis call per sync, however many children', async (t) => {
  const redis = await client()
  let calls = 0
  const counting = Object.assign(Object.create(redis), { call: (...args) => (calls++, redis.call(...args)) })
  const family = worker(counting, 'family-calls', { maxChildren: 500 })
  await family.sync() // the first sync may also load the script (EVALSHA, then EVAL)
  for (const n of [1, 50, 500]) {
    for (let i = family.size; i < n; i++) family.record({ type: 'turnstile', site: `site-${i}.example` }, i % 10 !== 0)
    calls = 0
    await family.sync()
    t.is(calls, 1, `${n} children`)
  }
  t.is(family.size, 500)
  family.close()
})

test.serial('exactly once: a push whose reply was lost is sent again under its number and counted once', async (t) => {
  const redis = await client()
  let loseNextReply = false
  // The command reaches Redis and runs; only its reply is lost.
  const lossy = Object.assign(Object.create(redis), {
    call: async (...args) => {
      const reply = await redis.call(...args)
      if (loseNextReply) {
        loseNextReply = false
        throw new Error('connection reset')
      }
      return reply
    },
  })
  const a = worker(lossy, 'family-once')
  const b = worker(await client(), 'family-once')
  const errors = []
  a.on('fleet-error', (err) => errors.push(err))
  recordEach(a, { type: 'image', site: 'x' }, 9, 1)
  loseNextReply = true
  await t.throwsAsync(a.sync(), { instanceOf: FleetSyncError, code: 'ERR_FLEET_SYNC' })
  t.true(a.fleet.stale)
  t.is(errors.length, 1)
  // Still counted locally while stale.
  t.deepEqual(totals(a), [['image', 'x', 10, 1]])
  await a.sync()
  await b.sync()
  t.deepEqual(totals(a), [['image', 'x', 10, 1]])
  t.deepEqual(totals(b), [['image', 'x', 10, 1]])
  t.false(a.fleet.stale)
  a.close()
  b.close()
})

test('fleet options are checked like a tracker fleet; childConfig cannot change the buckets', async (t) => {
  t.throws(() => new BudgetFamily({ labelNames: ['t'], fleet: { key: 'x' } }), {
    code: 'ERR_INVALID_ARG_TYPE',
    message: /options\.fleet\.redis must be an ioredis client/,
  })
  const redis = await client()
  t.throws(() => new BudgetFamily({ labelNames: ['t'], fleet: { redis, key: 'a{b}' } }), { code: 'ERR_INVALID_ARG_VALUE' })
  t.throws(() => new BudgetFamily({ labelNames: ['t'], persist: { path: '/tmp/x' }, fleet: { redis, key: 'x' } }), { code: 'ERR_INVALID_ARG_VALUE' })
  const family = worker(redis, 'family-options', { childConfig: (l) => (l.site === 'long' ? { windowMs: 7_200_000 } : { targetRate: 0.8 }) })
  t.throws(() => family.labels({ type: 'a', site: 'long' }), { code: 'ERR_INVALID_ARG_VALUE', message: /windowMs cannot differ per child in a fleet family/ })
  t.is(family.labels({ type: 'a', site: 'short' }).report().sloTarget, 0.8)
  await t.throwsAsync(new BudgetFamily({ labelNames: ['t'] }).sync(), { code: 'ERR_INVALID_STATE' })
  family.close()
})

test.serial('gate --redis --key --labels answers for one child; --family for the worst', async (t) => {
  const { execFile } = require('node:child_process')
  const path = require('node:path')
  const cli = path.join(__dirname, '..', '..', 'bin', 'captcha-budget.js')
  const gate = (...args) =>
    new Promise((resolve) =>
      execFile(process.execPath, [cli, 'gate', '--redis', fleetRedis.server.url, '--key', 'family-gate', ...args], (err, stdout, stderr) =>
        resolve({ code: err ? err.code : 0, stdout, stderr }),
      ),
    )
  // Real clock: the gate reads the window at the current time.
  const family = new BudgetFamily({
    labelNames: ['type', 'site'],
    targetRate: 0.9,
    windowMs: 3_600_000,
    fleet: { redis: await client(), key: 'family-gate', syncMs: 0 },
  })
  recordEach(family, { type: 'turnstile', site: 'shop.example' }, 19, 1) // 20 solves, budget 2, 1 spent: 50 % left
  recordEach(family, { type: 'turnstile', site: 'tickets.example' }, 5, 5) // budget 1, 5 spent: exhausted
  await family.sync()
  family.close()
  const shop = await gate('--labels', 'type=turnstile,site=shop.example', '--json')
  t.is(shop.code, 0, shop.stderr)
  t.like(JSON.parse(shop.stdout).report, { labels: { type: 'turnstile', site: 'shop.example' }, total: 20, failures: 1, budgetRemainingPct: 50 })
  const tickets = await gate('--labels', 'site=tickets.example,type=turnstile')
  t.is(tickets.code, 3)
  t.regex(tickets.stdout, /^labels {12}type=turnstile,site=tickets\.example\nstatus {12}exhausted\n/)
  const worst = await gate('--family', '--json')
  t.is(worst.code, 3)
  t.like(JSON.parse(worst.stdout).report, { labels: { site: 'tickets.example' }, fleet: { key: 'family-gate', children: 2 } })
  const bad = await gate('--labels', 'type=turnstile')
  t.is(bad.code, 2)
  t.regex(bad.stderr, /--labels must name exactly the family's labels: type, site/)
  // A child no worker created: a usage error naming it and listing the children there are.
  const missing = await gate('--labels', 'type=turnstile,site=zzz')
  t.is(missing.code, 2, missing.stdout)
  t.is(missing.stdout, '')
  t.regex(
    missing.stderr,
    /the family budget 'family-gate' has no child type=turnstile,site=zzz .*; its children: type=turnstile,site=shop\.example; type=turnstile,site=tickets\.example\n/,
  )
})

test.serial("a worker whose clock is a day ahead is refused (skewMs), and the honest workers' counts stay", async (t) => {
  const key = 'family-skew'
  const shop = { type: 'turnstile', site: 'shop.example' }
  const honest = worker(await client(), key, { fleet: { maxSkewMs: 600_000 } })
  const liar = worker(await client(), key, { at: T0 + 86_400_000, fleet: { maxSkewMs: 600_000 } })
  recordEach(honest, shop, 0, 100)
  await honest.sync()
  liar.on('fleet-error', () => {})
  recordEach(liar, shop, 1, 0)
  const err = await t.throwsAsync(liar.sync(), {
    instanceOf: FleetSyncError,
    code: 'ERR_FLEET_SYNC',
    message: /clock is \d+ ms \(about 24h\) ahead of the Redis server's \(TIME\); config\.fleet\.maxSkewMs allows 600000 ms/,
  })
  // A day ahead of T0, which is at most a few minutes behind the real time.
  t.true(err.skewMs > 86_400_000 - 600_000 && err.skewMs <= 86_400_000, String(err.skewMs))
  t.true(liar.fleet.stale)
  recordEach(honest, shop, 0, 100)
  await honest.sync()
  const fresh = worker(await client(), key)
  await fresh.sync()
  // Hand-counted: the honest worker's 200 failures, nothing of the liar's.
  t.deepEqual(totals(fresh), [['turnstile', 'shop.example', 200, 200]])
  t.deepEqual(totals(honest), [['turnstile', 'shop.example', 200, 200]])
  for (const f of [honest, liar, fresh]) f.close()
})

test.serial('a family with another SLO (target, window or bucket width) is refused naming both; nothing is written', async (t) => {
  const key = 'family-slo'
  const first = worker(await client(), key)
  recordEach(first, { type: 'image', site: 'x' }, 3, 1)
  await first.sync()
  const redis = await client()
  const before = await redis.hgetall(familyKeysOf(key)[0])
  for (const [options, theirs] of [
    [{ targetRate: 0.99 }, /this family's is targetRate 0\.99, windowMs 3600000 \(1h\)/],
    [
      { windowMs: 86_400_000, resolutionMs: 60_000, fleet: { bucketMs: 60_000 } },
      /this family's is targetRate 0\.9, windowMs 86400000 \(24h\), bucketMs 60000/,
    ],
  ]) {
    const other = worker(await client(), key, options)
    other.on('fleet-error', () => {})
    recordEach(other, { type: 'image', site: 'x' }, 0, 5)
    const err = await t.throwsAsync(other.sync(), { instanceOf: FleetSyncError, code: 'ERR_FLEET_SYNC' })
    t.regex(err.message, /the fleet's SLO is targetRate 0\.9, windowMs 3600000 \(1h\), bucketMs \d+;/)
    t.regex(err.message, theirs)
    other.close()
  }
  t.deepEqual(await redis.hgetall(familyKeysOf(key)[0]), before)
  first.close()
})

test.serial('a corrupt stored count is a FleetSyncError naming the child and the value, not a RangeError; nothing is written', async (t) => {
  const key = 'family-corrupt'
  const shop = { type: 'turnstile', site: 'shop.example' }
  const a = worker(await client(), key)
  a.on('fleet-error', () => {})
  recordEach(a, shop, 2, 1)
  await a.sync()
  const redis = await client()
  const hash = familyKeysOf(key)[0]
  const field = (await redis.hkeys(hash)).find((f) => f.startsWith('f') && f.endsWith(`\n${JSON.stringify(shop)}`))
  t.truthy(field)
  const bucket = /^f(-?\d+)\n/.exec(field)[1]
  for (const bad of ['1.5', '9007199254740992', 'abc']) {
    await redis.hset(hash, field, bad)
    const reader = worker(await client(), key)
    reader.on('fleet-error', () => {})
    const err = await t.throwsAsync(reader.sync(), { instanceOf: FleetSyncError, code: 'ERR_FLEET_SYNC' })
    t.is(
      err.message,
      `fleet '${key}': sync failed: Redis holds ${bad} for bucket ${bucket}'s failures of the child type=turnstile,site=shop.example: not a whole number from 0 to 2^53 − 1 (9007199254740991); the key is corrupt`,
    )
    reader.close()
  }
  // A sum past 2^53 − 1 is refused before anything is written: the successes stay 2.
  await redis.hset(hash, field, '9007199254740991')
  recordEach(a, shop, 1, 1)
  await t.throwsAsync(a.sync(), {
    instanceOf: FleetSyncError,
    code: 'ERR_FLEET_SYNC',
    message: /Redis holds 9007199254740991 for bucket -?\d+'s failures of the child type=turnstile,site=shop\.example/,
  })
  t.is(await redis.hget(hash, `s${field.slice(1)}`), '2')
  t.is(await redis.hget(hash, field), '9007199254740991')
  a.close()
})

test.serial(
  "'fleet-error' listeners of a family throwing a Symbol or a null-prototype object: the others still run, the warnings show the values, sync() rejects with FleetSyncError",
  async (t) => {
    const key = 'family-listeners'
    const first = worker(await client(), key)
    await first.sync()
    // Another SLO on the same key: every sync of `other` is refused.
    const other = worker(await client(), key, { targetRate: 0.99 })
    const warnings = catchWarnings(
      t,
      (w) => w.code === 'CAPTCHA_BUDGET_FLEET' && w.message.includes('listener threw'),
      (w) => w.message,
    )
    const ran = []
    other.on('fleet-error', () => {
      ran.push(1)
      throw Symbol('boom')
    })
    other.on('fleet-error', () => {
      ran.push(2)
      throw Object.assign(Object.create(null), { why: 'odd' })
    })
    other.on('fleet-error', (err) => ran.push(err.name))
    const err = await t.throwsAsync(other.sync(), { instanceOf: FleetSyncError, code: 'ERR_FLEET_SYNC' })
    t.regex(err.message, /the fleet's SLO is/)
    t.deepEqual(ran, [1, 2, 'FleetSyncError'])
    await new Promise(setImmediate)
    t.deepEqual(warnings, [
      "fleet 'family-listeners': a 'fleet-error' listener threw Symbol(boom)",
      "fleet 'family-listeners': a 'fleet-error' listener threw [Object: null prototype] { why: 'odd' }",
    ])
    for (const f of [first, other]) f.close()
  },
)
