// Late verdicts in a Redis fleet: one worker's rejection reaches every worker's view
// exactly once, through restarts and lost replies.
// Needs Debian's redis-server: without it (and not under CI) the file skips in one line.
const test = require('../helpers/external.js').needs(require('ava'), 'redis-server', __filename)
const path = require('node:path')
const { once } = require('node:events')
const { startRedis } = require('../helpers/redis-server')
const { startProxy } = require('../helpers/tcp-proxy')
const { T0, connect, fleetTracker, storedCounts, spawnWorker } = require('../helpers/fleet')

const WORKER = path.join(__dirname, '..', 'helpers', 'verdict-worker.js')

let server
test.before(async () => {
  server = await startRedis()
})
test.after.always(() => server?.stop())

test('3 processes: each rejection is counted once in every view, and survives a restart', async (t) => {
  const key = 'verdicts-three'
  const workers = [0, 1, 2].map(() => spawnWorker(t, WORKER))
  await Promise.all(workers.map((w, i) => w.ask({ op: 'start', url: server.url, key, at: T0 + i * 1000 })))
  // Worker i: 100 successes at T0 + i s (its own bucket), then i + 2 of them rejected (2 + 3 + 4 = 9).
  await Promise.all(workers.map((w, i) => w.ask({ op: 'record', successes: 100, at: T0 + i * 1000 })))
  const answers = await Promise.all(workers.map((w, i) => w.ask({ op: 'reject', at: T0 + i * 1000, times: i + 2 })))
  t.deepEqual(
    answers.map((a) => a.answers.filter(Boolean).length),
    [2, 3, 4],
  )
  const expected = { total: 300, successes: 291, failures: 9 }
  for (const { report } of await Promise.all(workers.map((w) => w.ask({ op: 'report', at: T0 + 5000 })))) {
    t.like(report, expected)
    t.like(report.fleet, { key, workers: 3, stale: false })
  }
  // Syncing again changes nothing: each rejection was pushed once.
  for (const { report } of await Promise.all(workers.map((w) => w.ask({ op: 'report', at: T0 + 5000 })))) t.like(report, expected)
  const c = await connect('ioredis', server.url)
  t.teardown(c.close)
  t.deepEqual(await storedCounts(c.redis, key), { successes: 291, failures: 9 })
  // Worker 1 is killed and started again: its new view holds every rejection once.
  workers[1].child.kill('SIGKILL')
  await once(workers[1].child, 'exit')
  const again = spawnWorker(t, WORKER)
  await again.ask({ op: 'start', url: server.url, key, at: T0 + 3000 })
  t.like((await again.ask({ op: 'report', at: T0 + 5000 })).report, expected)
  // A rejection after the restart, by a worker that kept running, reaches the new one once.
  t.deepEqual((await workers[2].ask({ op: 'reject', at: T0 + 2000, times: 1 })).answers, [true])
  t.like((await again.ask({ op: 'report', at: T0 + 5000 })).report, { total: 300, successes: 290, failures: 10 })
  t.deepEqual(await storedCounts(c.redis, key), { successes: 290, failures: 10 })
})

test('a reply lost after the script ran: the rejection is counted once', async (t) => {
  const proxy = await startProxy(server.port)
  t.teardown(() => proxy.close())
  const key = 'verdicts-lost-reply'
  const c = await connect('ioredis', proxy.url)
  const direct = await connect('ioredis', server.url)
  t.teardown(() => {
    c.close()
    direct.close()
  })
  const a = fleetTracker(c.redis, key)
  a.on('fleet-error', () => {})
  a.recordMany(10, 0, T0)
  await a.sync()
  t.true(a.reject(T0))
  t.true(a.reject(T0))
  const lost = proxy.dropReplyOnce()
  const first = a.sync().then(
    () => 'resolved',
    (err) => err.code,
  )
  await lost
  // The batch reached Redis and was applied; only its reply is gone.
  t.deepEqual(await storedCounts(direct.redis, key), { successes: 8, failures: 2 })
  t.true(['resolved', 'ERR_FLEET_SYNC'].includes(await first))
  await a.sync()
  await a.sync()
  t.deepEqual(await storedCounts(direct.redis, key), { successes: 8, failures: 2 })
  t.like(a.report(), { successes: 8, failures: 2 })
  a.close()
})

test('a family child in a fleet: its rejection is pushed, though `recorded` did not change', async (t) => {
  const { BudgetFamily } = require('../..')
  const key = 'verdicts-family'
  const c = await connect('ioredis', server.url)
  t.teardown(c.close)
  const options = {
    labelNames: ['site'],
    clock: 'manual',
    windowMs: 3_600_000,
    fleet: { redis: c.redis, key, syncMs: 0, timeoutMs: 20_000, maxSkewMs: 600_000 },
  }
  const a = new BudgetFamily(options)
  const b = new BudgetFamily(options)
  a.advanceTo(T0)
  b.advanceTo(T0)
  a.labels({ site: 'x' }).recordMany(20, 0, T0)
  await a.sync()
  t.true(a.labels({ site: 'x' }).reject(T0))
  await a.sync()
  await b.sync()
  t.like(b.report()[0], { labels: { site: 'x' }, successes: 19, failures: 1 })
  a.close()
  b.close()
})
