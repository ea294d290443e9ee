// Needs Debian's redis-server: without it (and not under CI) the file skips in one line.
const test = require('../helpers/external.js').needs(require('ava'), 'redis-server', __filename)
const path = require('node:path')
const { once } = require('node:events')
const { startRedis } = require('../helpers/redis-server')
const { connect, fleetTracker, storedCounts, recordEach, spawnWorker } = require('../helpers/fleet')

const WORKER = path.join(__dirname, '..', 'helpers', 'fleet-worker.js')

let server
test.before(async () => {
  server = await startRedis()
})
test.after.always(() => server?.stop())

test('4 processes × 250 000 solves → after a sync every worker reports the exact fleet totals', async (t) => {
  const key = 'four-processes'
  const workers = [1, 2, 3, 4].map(() => spawnWorker(t, WORKER))
  await Promise.all(workers.map((w) => w.ask({ op: 'start', url: server.url, key })))
  // Every 40th solve fails: 6 250 failures per worker.
  await Promise.all(workers.map((w) => w.ask({ op: 'record', solves: 250_000, failEvery: 40, syncEvery: 25_000 })))
  const reports = await Promise.all(workers.map((w) => w.ask({ op: 'report' })))
  for (const { report } of reports) {
    t.like(report, { total: 1_000_000, successes: 975_000, failures: 25_000, currentRate: 0.975 })
    t.like(report.fleet, { key, workers: 4, stale: false, unsent: { successes: 0, failures: 0 } })
  }
  const c = await connect('ioredis', server.url)
  t.teardown(c.close)
  t.deepEqual(await storedCounts(c.redis, key), { successes: 975_000, failures: 25_000 })
})

test('a worker kill -9ed between syncs loses only its unsent counts; nothing is counted twice', async (t) => {
  const key = 'kill-9'
  const victim = spawnWorker(t, WORKER)
  await victim.ask({ op: 'start', url: server.url, key })
  // 1000 solves, every 50th failing: 980 + 20, all synced.
  await victim.ask({ op: 'record', solves: 1000, failEvery: 50, syncEvery: 1000 })
  const { fleet } = await victim.ask({ op: 'unsent', successes: 300, failures: 7 })
  t.deepEqual(fleet.unsent, { successes: 300, failures: 7 })
  victim.child.kill('SIGKILL')
  await once(victim.child, 'exit')
  const c = await connect('ioredis', server.url)
  t.teardown(c.close)
  const survivor = fleetTracker(c.redis, key)
  recordEach(survivor, 10, 1)
  await survivor.sync()
  await survivor.sync()
  t.like(survivor.report(), { successes: 990, failures: 21 })
  t.deepEqual(await storedCounts(c.redis, key), { successes: 990, failures: 21 })
  survivor.close()
})
