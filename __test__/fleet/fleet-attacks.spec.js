// Issue 20, items 1–6: the fleet attacked through its clocks, its configs, its
// keys, its stored values and its listeners (a real redis-server; manual clocks
// set against the real time, since the store checks them against Redis `TIME`).
// Needs Debian's redis-server: without it (and not under CI) the file skips in one line.
const test = require('../helpers/external.js').needs(require('ava'), 'redis-server', __filename)
const { startRedis } = require('../helpers/redis-server')
const { catchWarnings } = require('../helpers/warnings')
const { startProxy } = require('../helpers/tcp-proxy')
const { connect, fleetTracker, storedCounts, recordEach } = require('../helpers/fleet')

const HOUR = 3_600_000
const DAY = 24 * HOUR

// Each test has its own redis-server (they delete keys and corrupt values).
// Each server's helper listens for the process's exit: more than the default 10 at once here.
process.setMaxListeners(Math.max(process.getMaxListeners(), 32))
async function setUp(t) {
  const server = await startRedis()
  const opened = []
  t.teardown(async () => {
    for (const c of opened) c.close()
    await server.stop('SIGKILL')
  })
  const client = async (kind = 'ioredis', url = server.url) => {
    const c = await connect(kind, url)
    opened.push(c)
    return c.redis
  }
  return { server, client, direct: await client() }
}

/** The process warnings of code CAPTCHA_BUDGET_FLEET that mention `text`, collected during the test. */
function warningsAbout(t, text) {
  // Caught, not printed: a passing run shows no warning it provoked on purpose.
  return catchWarnings(
    t,
    (w) => w.code === 'CAPTCHA_BUDGET_FLEET' && w.message.includes(text),
    (w) => w.message,
  )
}

/** `tracker`, listening to 'fleet-error' (its syncs are expected to fail: no process warning for them). */
const quiet = (tracker) => tracker.on('fleet-error', () => {})

/** After the process warnings emitted so far have reached their listeners (emitWarning emits on a later tick). */
const settled = () => new Promise(setImmediate)

// The real time: the honest workers' manual clocks stand there.
const now = () => Date.now()

test('1. a clock 2 h behind on a 1 h window: its 50 failures are refused loudly (the offset named), kept locally and unsent — never dropped', async (t) => {
  // One time for every worker of the test: their buckets line up.
  const at = now()
  const { client, direct } = await setUp(t)
  const key = 'behind'
  const honest = fleetTracker(await client(), key, { at, fleet: { maxSkewMs: 60_000 } })
  await honest.sync()
  const slow = fleetTracker(await client(), key, { at: at - 2 * HOUR, fleet: { maxSkewMs: 60_000 } })
  const heard = []
  slow.on('fleet-error', (err) => heard.push(err))
  recordEach(slow, 0, 50)
  const err = await t.throwsAsync(slow.sync(), { code: 'ERR_FLEET_SYNC', name: 'FleetSyncError' })
  // 2 h behind, give or take the seconds this test took: "about 2h".
  t.regex(
    err.message,
    /^fleet 'behind': sync failed: this worker's clock is -?\d+ ms \(about 2h\) behind the Redis server's \(TIME\); config\.fleet\.maxSkewMs allows 60000 ms/,
  )
  t.true(err.skewMs < -2 * HOUR + 120_000 && err.skewMs > -2 * HOUR - 120_000, `${err.skewMs}`)
  t.deepEqual(heard, [err])
  // Counted here, sent nowhere yet: the next sync (once the clock is fixed) pushes them.
  t.like(slow.report(), { failures: 50, total: 50, status: 'exhausted' })
  t.like(slow.report().fleet, { stale: true, unsent: { successes: 0, failures: 50 } })
  t.regex(slow.report().fleet.lastError, /behind the Redis server's/)
  t.deepEqual(await storedCounts(direct, key), { successes: 0, failures: 0 })
  honest.close()
  slow.close()
})

test('1. a tolerance larger than the window (a simulation) still never drops silently: counts for buckets the store expired are refused', async (t) => {
  // One time for every worker of the test: their buckets line up.
  const at = now()
  const { client, direct } = await setUp(t)
  const key = 'behind-tolerated'
  const honest = fleetTracker(await client(), key, { at })
  recordEach(honest, 1, 0)
  await honest.sync()
  const slow = quiet(fleetTracker(await client(), key, { at: at - 2 * HOUR, fleet: { maxSkewMs: 3 * HOUR } }))
  recordEach(slow, 0, 50)
  const err = await t.throwsAsync(slow.sync(), { code: 'ERR_FLEET_SYNC' })
  t.regex(err.message, /this worker's clock is behind the fleet's: its bucket -?\d+ is older than the oldest the store keeps \(-?\d+\), about 2h behind/)
  t.like(slow.report().fleet, { unsent: { successes: 0, failures: 50 } })
  t.deepEqual(await storedCounts(direct, key), { successes: 1, failures: 0 })
  honest.close()
  slow.close()
})

test('1/2. the default allowance: a tenth of the window, from 1 s to 60 s', async (t) => {
  const { client } = await setUp(t)
  const redis = await client()
  const off = async (key, windowMs, skewMs) => {
    const w = quiet(fleetTracker(redis, key, { at: Date.now() + skewMs, windowMs, fleet: { maxSkewMs: undefined } }))
    try {
      return await w.sync().then(
        () => 'accepted',
        (err) => /allows (\d+) ms/.exec(err.message)?.[1] ?? err.message,
      )
    } finally {
      w.close()
    }
  }
  // 1 h: 60 s (a tenth would be 6 min).
  t.is(await off('d1', HOUR, -90_000), '60000')
  t.is(await off('d2', HOUR, -20_000), 'accepted')
  // 60 s: 6 s.
  t.is(await off('d3', 60_000, 9000), '6000')
  t.is(await off('d4', 60_000, 3000), 'accepted')
  // 5 s: 1 s, not 500 ms.
  t.is(await off('d5', 5000, 4000), '1000')
  t.is(await off('d6', 5000, 400), 'accepted')
})

test("2. a clock a day ahead is refused before it expires anything: two honest workers' 200 failures stay in Redis", async (t) => {
  // One time for every worker of the test: their buckets line up.
  const at = now()
  const { client, direct } = await setUp(t)
  const key = 'ahead'
  const a = fleetTracker(await client(), key, { at, fleet: { maxSkewMs: 60_000 } })
  const b = fleetTracker(await client(), key, { at, fleet: { maxSkewMs: 60_000 } })
  const fast = quiet(fleetTracker(await client(), key, { at: at + DAY, fleet: { maxSkewMs: 60_000 } }))
  recordEach(a, 0, 50)
  await a.sync()
  recordEach(fast, 1, 0)
  const err = await t.throwsAsync(fast.sync(), { code: 'ERR_FLEET_SYNC' })
  t.regex(err.message, /this worker's clock is \d+ ms \(about 24h\) ahead of the Redis server's \(TIME\)/)
  recordEach(a, 0, 50)
  recordEach(b, 0, 100)
  await a.sync()
  await b.sync()
  t.deepEqual(await storedCounts(direct, key), { successes: 0, failures: 200 })
  await a.sync()
  t.like(a.report(), { failures: 200 })
  a.close()
  b.close()
  fast.close()
})

test("3. a worker with another SLO on the key is refused, naming both configs; the stored config is the first worker's", async (t) => {
  // One time for every worker of the test: their buckets line up.
  const at = now()
  const { client, direct } = await setUp(t)
  const key = 'configs'
  const hourly = fleetTracker(await client(), key, { at, targetRate: 0.99, windowMs: HOUR, resolutionMs: 60_000, fleet: { bucketMs: 60_000 } })
  recordEach(hourly, 90, 10)
  await hourly.sync()
  const daily = quiet(fleetTracker(await client(), key, { at, targetRate: 0.99, windowMs: DAY, resolutionMs: 60_000, fleet: { bucketMs: 60_000 } }))
  recordEach(daily, 5, 0)
  const err = await t.throwsAsync(daily.sync(), { code: 'ERR_FLEET_SYNC' })
  t.is(
    err.message,
    "fleet 'configs': sync failed: the fleet's SLO is targetRate 0.99, windowMs 3600000 (1h), bucketMs 60000; this tracker's is targetRate 0.99, windowMs 86400000 (24h), bucketMs 60000: a worker with another SLO cannot share its key",
  )
  const stricter = quiet(fleetTracker(await client(), key, { at, targetRate: 0.999, windowMs: HOUR, resolutionMs: 60_000, fleet: { bucketMs: 60_000 } }))
  await t.throwsAsync(stricter.sync(), {
    message: /the fleet's SLO is targetRate 0\.99, .*; this tracker's is targetRate 0\.999, windowMs 3600000 \(1h\), bucketMs 60000/,
  })
  // Nothing of the hourly fleet was deleted, and the gate's config is still the hourly one.
  t.deepEqual(await storedCounts(direct, key), { successes: 90, failures: 10 })
  const stored = JSON.parse(await direct.hget(`captcha-budget:{${key}}:buckets`, 'config'))
  t.like(stored, { windowMs: HOUR, targetRate: 0.99 })
  // A worker of the same SLO with another warning threshold syncs; the stored config stays the first's.
  const other = fleetTracker(await client(), key, {
    at,
    targetRate: 0.99,
    windowMs: HOUR,
    resolutionMs: 60_000,
    fleet: { bucketMs: 60_000 },
    warningThreshold: 0.3,
  })
  await other.sync()
  t.is(await direct.hget(`captcha-budget:{${key}}:buckets`, 'config'), JSON.stringify(stored))
  t.like(other.report(), { successes: 90, failures: 10 })
  for (const x of [hourly, daily, stricter, other]) x.close()
})

test("3. a 1 h worker on a 24 h fleet's key is refused before it expires anything: the day's older buckets stay", async (t) => {
  // One time for every worker of the test: their buckets line up.
  const at = now()
  const { client, direct } = await setUp(t)
  const key = 'configs-expiry'
  const slo = { targetRate: 0.99, resolutionMs: 60_000, fleet: { bucketMs: 60_000, maxSkewMs: 4 * HOUR } }
  // The daily fleet's failures of 3 h ago (a manual clock then moved to now).
  const daily = fleetTracker(await client(), key, { ...slo, windowMs: DAY, at: at - 3 * HOUR })
  recordEach(daily, 0, 100)
  await daily.sync()
  daily.advanceTo(at)
  await daily.sync()
  const hourly = quiet(fleetTracker(await client(), key, { ...slo, windowMs: HOUR, at }))
  await t.throwsAsync(hourly.sync(), {
    message: /the fleet's SLO is targetRate 0\.99, windowMs 86400000 \(24h\), bucketMs 60000; this tracker's is targetRate 0\.99, windowMs 3600000 \(1h\)/,
  })
  t.deepEqual(await storedCounts(direct, key), { successes: 0, failures: 100 })
  daily.close()
  hourly.close()
})

test('4. the workers hash evicted between a lost reply and its retry: the batch still counts once, and a warning says what was repaired', async (t) => {
  // One time for every worker of the test: their buckets line up.
  const at = now()
  const { server, client, direct } = await setUp(t)
  const proxy = await startProxy(server.port)
  t.teardown(() => proxy.close())
  const key = 'evicted-workers'
  const warnings = warningsAbout(t, `'${key}'`)
  // node-redis fails a command whose connection dropped: the retry is this worker's own.
  const a = fleetTracker(await client('node-redis', proxy.url), key, { at })
  a.on('fleet-error', () => {})
  // A first sync loads the script: the reply lost below is the script's, not a NOSCRIPT.
  await a.sync()
  recordEach(a, 100, 0)
  const lost = proxy.dropReplyOnce()
  const first = a.sync().then(
    () => 'resolved',
    (err) => err.code,
  )
  await lost
  t.is(await first, 'ERR_FLEET_SYNC')
  t.deepEqual(await storedCounts(direct, key), { successes: 100, failures: 0 })
  await direct.del(`captcha-budget:{${key}}:workers`)
  await a.sync()
  t.deepEqual(await storedCounts(direct, key), { successes: 100, failures: 0 })
  t.like(a.report(), { successes: 100 })
  t.like(a.report().fleet, { workers: 1, lastError: null })
  await settled()
  t.is(warnings.length, 1)
  t.regex(warnings[0], /captcha-budget:\{evicted-workers\}:workers was missing .*maxmemory-policy noeviction/)
  a.close()
})

test('4. the changes set evicted: a joining worker still sees the whole window (rebuilt), with a warning', async (t) => {
  // One time for every worker of the test: their buckets line up.
  const at = now()
  const { client, direct } = await setUp(t)
  const key = 'evicted-changes'
  const warnings = warningsAbout(t, `'${key}'`)
  const a = fleetTracker(await client(), key, { at })
  recordEach(a, 250, 50)
  await a.sync()
  await direct.del(`captcha-budget:{${key}}:changes`)
  const joining = fleetTracker(await client(), key, { at })
  await joining.sync()
  t.like(joining.report(), { successes: 250, failures: 50 })
  // A worker that saw the window before the eviction keeps it whole too.
  await a.sync()
  t.like(a.report(), { successes: 250, failures: 50 })
  await settled()
  t.is(warnings.length, 1)
  t.regex(warnings[0], /captcha-budget:\{evicted-changes\}:changes was missing/)
  a.close()
  joining.close()
})

test('4. the buckets hash evicted (the other keys kept): a warning says the counts are lost, every worker re-reads, batches still count once', async (t) => {
  // One time for every worker of the test: their buckets line up.
  const at = now()
  const { client, direct } = await setUp(t)
  const key = 'evicted-buckets'
  const warnings = warningsAbout(t, `'${key}'`)
  const a = fleetTracker(await client(), key, { at })
  const b = fleetTracker(await client(), key, { at })
  recordEach(a, 40, 10)
  await a.sync()
  await b.sync()
  t.like(b.report(), { successes: 40, failures: 10 })
  await direct.del(`captcha-budget:{${key}}:buckets`)
  recordEach(a, 3, 1)
  await a.sync()
  await settled()
  t.is(warnings.length, 1)
  t.regex(warnings[0], /captcha-budget:\{evicted-buckets\}:buckets was missing .*counts it held are lost/)
  await b.sync()
  t.like(b.report(), { successes: 3, failures: 1 })
  t.deepEqual(await storedCounts(direct, key), { successes: 3, failures: 1 })
  a.close()
  b.close()
})

const CORRUPT = [
  ['1e30', '1e30', '1e30'],
  ['2^63 − 1', '9223372036854775807', '9223372036854775807'],
  ['2^53', '9007199254740992', '9007199254740992'],
  ['a word', 'many', 'many'],
  // Quoted in part: a message never carries a whole stored value.
  ['a 10 000-digit number', '7'.repeat(10_000), `${'7'.repeat(40)}…`],
]
for (const [what, value, shown] of CORRUPT) {
  test(`5. a bucket holding ${what} is refused with a clear error; nothing of it reaches the view`, async (t) => {
    // One time for every worker of the test: their buckets line up.
    const at = now()
    const { client, direct } = await setUp(t)
    const key = `corrupt-${what}`
    const a = fleetTracker(await client(), key, { at, targetRate: 0.9 })
    recordEach(a, 10, 0)
    await a.sync()
    const [field] = Object.keys(await direct.hgetall(`captcha-budget:{${key}}:buckets`)).filter((f) => /^s-?\d+$/.test(f))
    await direct.hset(`captcha-budget:{${key}}:buckets`, field, value)
    // A joining worker reads the whole window: the corrupt bucket is in it.
    const b = quiet(fleetTracker(await client(), key, { at, targetRate: 0.9 }))
    const err = await t.throwsAsync(b.sync(), { code: 'ERR_FLEET_SYNC' })
    t.is(
      err.message,
      `fleet '${key}': sync failed: Redis holds ${shown} for bucket ${field.slice(1)}'s successes (field ${field}): not a whole number from 0 to 2^53 − 1 (9007199254740991); the key is corrupt`,
    )
    t.like(b.report(), { total: 0, status: 'healthy' })
    // The worker pushing into that bucket is refused too, before anything is added to it.
    quiet(a)
    recordEach(a, 1, 0)
    const pushed = await t.throwsAsync(a.sync(), { code: 'ERR_FLEET_SYNC' })
    t.true(pushed.message.includes(`Redis holds ${shown} for bucket ${field.slice(1)}'s successes`), pushed.message)
    t.is(await direct.hget(`captcha-budget:{${key}}:buckets`, field), value)
    a.close()
    b.close()
  })
}

test('5. buckets each within 2^53 − 1 that add up past it are refused by the native window, changing nothing', async (t) => {
  // One time for every worker of the test: their buckets line up.
  const at = now()
  const { client, direct } = await setUp(t)
  const key = 'corrupt-sum'
  const a = fleetTracker(await client(), key, { at })
  recordEach(a, 10, 0)
  await a.sync()
  const buckets = `captcha-budget:{${key}}:buckets`
  const [field] = Object.keys(await direct.hgetall(buckets)).filter((f) => /^s-?\d+$/.test(f))
  const k = Number(field.slice(1))
  // 2 × 5e15 = 1e16 > 2^53 − 1 (about 9.007e15); each alone is a valid count.
  await direct.hset(buckets, `s${k}`, '5000000000000000', `s${k - 1}`, '5000000000000000')
  await direct.zadd(`captcha-budget:{${key}}:changes`, 1, String(k - 1))
  const b = quiet(fleetTracker(await client(), key, { at }))
  const err = await t.throwsAsync(b.sync(), { code: 'ERR_FLEET_SYNC' })
  t.is(
    err.message,
    `fleet '${key}': sync failed: the fleet's buckets add up to more than 2^53 − 1 (9007199254740991) successes, the most a window may hold; the key is corrupt`,
  )
  t.is(err.cause.code, 'ERR_OUT_OF_RANGE')
  t.like(b.report(), { total: 0 })
  a.close()
  b.close()
})

test("6. 'fleet-error' listeners throwing a Symbol and a null-prototype object: the others still run, warnings show the values, sync() rejects with FleetSyncError", async (t) => {
  // One time for every worker of the test: their buckets line up.
  const at = now()
  const { client } = await setUp(t)
  const key = 'listeners'
  const warnings = warningsAbout(t, `fleet '${key}': a 'fleet-error' listener threw`)
  const a = fleetTracker(await client(), key, { at, windowMs: HOUR })
  await a.sync()
  // Another SLO on the same key: every sync of B is refused.
  const b = fleetTracker(await client(), key, { at, windowMs: DAY })
  const ran = []
  b.on('fleet-error', () => {
    ran.push(1)
    throw Symbol('boom')
  })
  b.on('fleet-error', () => {
    ran.push(2)
    throw Object.assign(Object.create(null), { why: 'odd' })
  })
  b.on('fleet-error', (err) => ran.push(err.name))
  const err = await t.throwsAsync(b.sync(), { code: 'ERR_FLEET_SYNC' })
  t.is(err.name, 'FleetSyncError')
  t.deepEqual(ran, [1, 2, 'FleetSyncError'])
  await settled()
  t.deepEqual(warnings, [
    "fleet 'listeners': a 'fleet-error' listener threw Symbol(boom)",
    "fleet 'listeners': a 'fleet-error' listener threw [Object: null prototype] { why: 'odd' }",
  ])
  a.close()
  b.close()
})

test('6. in background syncs too: a listener throwing a Symbol does not stop the next one, and nothing rejects unhandled', async (t) => {
  const at = now()
  const { client } = await setUp(t)
  const key = 'listeners-background'
  const warnings = warningsAbout(t, `fleet '${key}': a 'fleet-error' listener threw`)
  const a = fleetTracker(await client(), key, { at, windowMs: HOUR })
  await a.sync()
  const b = fleetTracker(await client(), key, { at, windowMs: DAY, fleet: { syncMs: 10 } })
  b.on('fleet-error', () => {
    throw Symbol('background')
  })
  // The next listener hears two refused background syncs.
  const errors = []
  await new Promise((resolve) => b.on('fleet-error', (err) => errors.push(err) === 2 && resolve()))
  b.close()
  await settled()
  t.true(errors.every((err) => err.name === 'FleetSyncError' && /the fleet's SLO is/.test(err.message)))
  t.true(warnings.length >= 2)
  t.true(warnings.every((w) => w === "fleet 'listeners-background': a 'fleet-error' listener threw Symbol(background)"))
  a.close()
})
