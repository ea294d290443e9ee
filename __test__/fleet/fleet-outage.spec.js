// Needs Debian's redis-server: without it (and not under CI) the file skips in one line.
const test = require('../helpers/external.js').needs(require('ava'), 'redis-server', __filename)
const { startRedis } = require('../helpers/redis-server')
const { catchWarnings } = require('../helpers/warnings')
const { startProxy } = require('../helpers/tcp-proxy')
const { T0, connect, fleetTracker, storedCounts, recordEach } = require('../helpers/fleet')

// ioredis's 'ready' after a reconnect (events.once would reject on the reconnect errors it emits meanwhile).
const ready = (redis) => redis.status === 'ready' || new Promise((resolve) => redis.once('ready', resolve))

// Each test has its own redis-server: they stop it, cut it off or lose its replies.
async function setUp(t, options) {
  const server = await startRedis(options)
  const opened = []
  t.teardown(async () => {
    for (const c of opened) c.close()
    await server.stop('SIGKILL')
  })
  const client = async (kind, url = server.url) => {
    const c = await connect(kind, url)
    opened.push(c)
    return c.redis
  }
  return { server, client, direct: await client('ioredis') }
}

for (const kind of ['ioredis', 'node-redis', 'node-redis v5']) {
  test(`${kind}: a reply lost after the script ran → the batch is counted once`, async (t) => {
    const { server, client, direct } = await setUp(t)
    const proxy = await startProxy(server.port)
    t.teardown(() => proxy.close())
    const key = 'lost-reply'
    const a = fleetTracker(await client(kind, proxy.url), key)
    a.on('fleet-error', () => {})
    recordEach(a, 10, 0)
    await a.sync()
    recordEach(a, 5, 2)
    const lost = proxy.dropReplyOnce()
    const first = a.sync().then(
      () => 'resolved',
      (err) => err.code,
    )
    await lost
    // The batch reached Redis and was applied; only its reply is gone.
    t.deepEqual(await storedCounts(direct, key), { successes: 15, failures: 2 })
    // ioredis resends the command on its new connection; node-redis fails it: either way the count stands.
    t.true(['resolved', 'ERR_FLEET_SYNC'].includes(await first))
    await a.sync()
    t.deepEqual(await storedCounts(direct, key), { successes: 15, failures: 2 })
    t.like(a.report(), { successes: 15, failures: 2 })
    recordEach(a, 1, 0)
    await a.sync()
    t.deepEqual(await storedCounts(direct, key), { successes: 16, failures: 2 })
    t.like(a.report().fleet, { stale: false, unsent: { successes: 0, failures: 0 } })
    a.close()
  })
}

test('Redis killed and restarted with its append-only file → every acknowledged count survives, none doubles; stale in between', async (t) => {
  const { server, client } = await setUp(t, { appendonly: true })
  const key = 'aof'
  const redis = await client('ioredis')
  const a = fleetTracker(redis, key, { fleet: { timeoutMs: 500 } })
  a.on('fleet-error', () => {})
  recordEach(a, 100, 5)
  await a.sync()
  await server.stop('SIGKILL')
  a.advanceTo(T0 + 1000)
  recordEach(a, 50, 3)
  await t.throwsAsync(a.sync(), { code: 'ERR_FLEET_SYNC' })
  // Recording goes on; the view is the last fleet window plus this worker's own solves.
  t.like(a.report(), { successes: 150, failures: 8 })
  t.like(a.report().fleet, { stale: true, staleSince: T0 + 1000, syncedAt: T0, unsent: { successes: 50, failures: 3 } })
  const restarted = await startRedis({ port: server.port, dir: server.dir, appendonly: true })
  t.teardown(() => restarted.stop('SIGKILL'))
  await ready(redis)
  await a.sync()
  const b = fleetTracker(await client('ioredis'), key, { at: T0 + 1000 })
  await b.sync()
  t.like(b.report(), { successes: 150, failures: 8 })
  t.deepEqual(await storedCounts(await client('ioredis'), key), { successes: 150, failures: 8 })
  t.like(a.report().fleet, { stale: false, staleSince: null, syncedAt: T0 + 1000 })
  a.close()
  b.close()
})

test('Redis unreachable for a while → workers keep recording, report stale, warn once, never reject in the background, then catch up exactly', async (t) => {
  const { server, client, direct } = await setUp(t)
  const proxy = await startProxy(server.port)
  t.teardown(() => proxy.close())
  const key = 'unreachable'
  const redis = await client('ioredis', proxy.url)
  const a = fleetTracker(redis, key, { fleet: { timeoutMs: 300 } })
  const b = fleetTracker(direct, key)
  // Process-wide: only this test's key (the tests of this file run concurrently); caught, not printed.
  const warnings = catchWarnings(
    t,
    (w) => w.code === 'CAPTCHA_BUDGET_FLEET' && w.message.includes(`'${key}'`),
    (w) => w.message,
  )
  recordEach(a, 20, 1)
  await a.sync()
  proxy.down()
  a.advanceTo(T0 + 2000)
  b.advanceTo(T0 + 2000)
  recordEach(a, 30, 2)
  await t.throwsAsync(a.sync(), { code: 'ERR_FLEET_SYNC' })
  recordEach(a, 10, 0)
  await t.throwsAsync(a.sync(), { code: 'ERR_FLEET_SYNC' })
  t.like(a.report().fleet, { stale: true, staleSince: T0 + 2000, unsent: { successes: 40, failures: 2 } })
  t.like(a.report(), { successes: 60, failures: 3 })
  // A background sync failing is reported, not thrown.
  // Its client cannot connect yet: it keeps retrying in the background.
  const offline = new (require('ioredis'))(proxy.url)
  offline.on('error', () => {})
  t.teardown(() => offline.disconnect())
  const c = fleetTracker(offline, key, { fleet: { syncMs: 10, timeoutMs: 50 } })
  let failures = 0
  await new Promise((resolve) => c.on('fleet-error', () => ++failures === 3 && resolve()))
  c.close()
  // Meanwhile another worker keeps syncing.
  recordEach(b, 5, 5)
  await b.sync()
  proxy.up()
  await ready(redis)
  await a.sync()
  // 20 + 30 + 10 successes and 1 + 2 failures from A, 5 and 5 from B.
  t.deepEqual(await storedCounts(direct, key), { successes: 65, failures: 8 })
  t.like(a.report(), { successes: 65, failures: 8 })
  t.like(a.report().fleet, { stale: false, unsent: { successes: 0, failures: 0 } })
  await a.sync()
  t.deepEqual(await storedCounts(direct, key), { successes: 65, failures: 8 })
  // A's two failed syncs warned once (nobody listened to 'fleet-error').
  t.is(warnings.length, 1)
  t.regex(warnings[0], /fleet 'unreachable': sync failed: .*counts locally until a sync succeeds/)
  a.close()
  b.close()
})
