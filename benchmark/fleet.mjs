// The fleet's costs (part of `npm run bench`; alone: `node benchmark/fleet.mjs`):
// - `fleetRecordTracker()`: a tracker with `fleet` on, syncing every second in
//   the background, for run.mjs's record() row against the floor;
// - `fleetFigures()`: one sync's latency with a day's window full (1440 fleet
//   buckets), then 100 simulated workers each syncing once per simulated
//   second, and what Redis spent on them (INFO commandstats) and keeps per
//   budget (MEMORY USAGE).
// Each starts its own redis-server (Debian's) on a free loopback port.
import { createRequire } from 'node:module'
import { performance } from 'node:perf_hooks'

const require = createRequire(import.meta.url)
const Redis = require('ioredis')
const { ErrorBudgetTracker, BudgetFamily } = require('../index.js')
const { startRedis } = require('../__test__/helpers/redis-server.js')

const DAY = 86_400_000
const MINUTE = 60_000

async function client(url) {
  const redis = new Redis(url, { lazyConnect: true })
  redis.on('error', () => {})
  await redis.connect()
  return redis
}

/** A tracker with `events` in a 1 h window and fleet on (background sync every 1 s); stop() ends it all. */
export async function fleetRecordTracker(events) {
  const server = await startRedis()
  const redis = await client(server.url)
  const tracker = new ErrorBudgetTracker({ targetRate: 0.95, windowMs: 3_600_000, fleet: { redis, key: 'bench-record', syncMs: 1000 } })
  tracker.recordMany(events - Math.floor(events / 32), Math.floor(events / 32))
  await tracker.sync()
  return {
    tracker,
    async stop() {
      tracker.close()
      redis.disconnect()
      await server.stop()
    },
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

/** `INFO commandstats` as { command: { calls, usec } }. */
async function commandstats(redis) {
  const stats = {}
  for (const m of (await redis.info('commandstats')).matchAll(/^cmdstat_(\w+):calls=(\d+),usec=(\d+)/gm)) {
    stats[m[1]] = { calls: Number(m[2]), usec: Number(m[3]) }
  }
  return stats
}

/** Prints the fleet tables (markdown). */
export async function fleetFigures({ workers = 100, seconds = 30 } = {}) {
  const server = await startRedis()
  const admin = await client(server.url)
  const t0 = Math.floor(Date.now() / DAY) * DAY
  // The manual clocks run from the day's start to a day later: up to a day from Redis's TIME.
  const SKEW = 2 * DAY
  const make = (redis) => {
    const t = new ErrorBudgetTracker({
      targetRate: 0.95,
      windowMs: DAY,
      clock: 'manual',
      fleet: { redis, key: 'bench', syncMs: 0, timeoutMs: 60_000, maxSkewMs: SKEW },
    })
    t.advanceTo(t0 + DAY)
    return t
  }
  // A day of history: one worker fills every fleet bucket of the window (1440 of a minute).
  const filler = new ErrorBudgetTracker({
    targetRate: 0.95,
    windowMs: DAY,
    clock: 'manual',
    fleet: { redis: admin, key: 'bench', syncMs: 0, timeoutMs: 60_000, maxSkewMs: SKEW },
  })
  for (let m = 1; m <= 1440; m++) {
    filler.advanceTo(t0 + m * MINUTE)
    filler.recordMany(968, 32)
    await filler.sync()
  }
  filler.close()

  // A worker's first sync reads the whole window; later ones what changed since
  // (here: 1000 solves since the last, a full day in the store).
  const one = make(admin)
  let start = performance.now()
  await one.sync()
  const first = performance.now() - start
  const latencies = []
  for (let i = 0; i < 200; i++) {
    one.recordMany(968, 32)
    start = performance.now()
    await one.sync()
    latencies.push(performance.now() - start)
  }
  one.close()

  // 100 workers, each syncing once per simulated second with 100 solves since its last sync.
  const redises = await Promise.all(Array.from({ length: workers }, () => client(server.url)))
  const trackers = redises.map(make)
  // Their first syncs (whole window) before the count starts.
  await Promise.all(trackers.map((t) => t.sync()))
  await admin.config('RESETSTAT')
  start = performance.now()
  for (let s = 1; s <= seconds; s++) {
    await Promise.all(
      trackers.map((t) => {
        t.advanceTo(t0 + DAY + s * 1000)
        t.recordMany(97, 3)
        return t.sync()
      }),
    )
  }
  const wallMs = performance.now() - start
  const stats = await commandstats(admin)
  const script = ['evalsha', 'eval'].map((c) => stats[c] ?? { calls: 0, usec: 0 }).reduce((a, b) => ({ calls: a.calls + b.calls, usec: a.usec + b.usec }))
  let bytes = 0
  for (const k of ['buckets', 'changes', 'workers']) bytes += await admin.memory('USAGE', `captcha-budget:{bench}:${k}`)
  const fields = await admin.hlen('captcha-budget:{bench}:buckets')
  const report = trackers[0].report()
  for (const t of trackers) t.close()
  for (const r of redises) r.disconnect()
  admin.disconnect()
  await server.stop()

  console.log("\n| fleet (a day's window, 1440 fleet buckets of 1 min, all full) | figure |")
  console.log('| --- | ---: |')
  console.log(`| a worker's first sync(): the whole window | ${first.toFixed(2)} ms |`)
  console.log(`| one sync(), 1000 solves since the last: round trip, script and install, median of ${latencies.length} | ${median(latencies).toFixed(2)} ms |`)
  console.log(`| ${workers} workers × ${seconds} syncs (after each one's first): script calls (EVALSHA + EVAL) | ${script.calls} |`)
  console.log(`| Redis time per sync (INFO commandstats usec / calls) | ${(script.usec / script.calls).toFixed(0)} µs |`)
  console.log(
    `| Redis time per second of fleet time, ${workers} workers syncing every 1 s | ${(script.usec / seconds / 1000).toFixed(1)} ms (${(script.usec / seconds / 1e4).toFixed(1)} % of a core) |`,
  )
  console.log(`| Redis memory per budget (MEMORY USAGE of its 3 keys; ${fields} hash fields) | ${(bytes / 1024).toFixed(0)} KiB |`)
  console.log(`| wall time of the ${seconds} simulated seconds on this machine | ${(wallMs / 1000).toFixed(1)} s |`)
  console.log(`| check: workers seen (with the 2 set-up ones) / solves in the window | ${report.fleet.workers} / ${report.total} |`)
}

/**
 * A BudgetFamily fleet: `workers` workers, each a family of the same `children`
 * label sets (1 h window), syncing `syncs` times with one solve per child since
 * the last sync. Redis calls per sync are counted on the server (INFO
 * commandstats): one script call per sync whatever the number of children.
 */
export async function familyFleetFigures({ workers = 4, children = 1000, syncs = 10 } = {}) {
  const server = await startRedis()
  const admin = await client(server.url)
  // Simulated time starts at today's midnight (UTC), up to a day behind the
  // Redis server's clock: the fleet's clock check allows a day here.
  const t0 = Math.floor(Date.now() / DAY) * DAY
  const redises = await Promise.all(Array.from({ length: workers }, () => client(server.url)))
  const families = redises.map((redis) => {
    // One-minute buckets: at the default resolution (43 200 buckets an hour) each
    // child's drain and install walks its whole ring, ≈1 ms a child (see docs/many-budgets.md).
    const f = new BudgetFamily({
      labelNames: ['type', 'site'],
      targetRate: 0.95,
      windowMs: 3_600_000,
      resolutionMs: 60_000,
      clock: 'manual',
      maxChildren: children,
      fleet: { redis, key: 'bench-family', syncMs: 0, timeoutMs: 60_000, maxSkewMs: DAY },
    })
    f.advanceTo(t0)
    return f
  })
  const sets = Array.from({ length: children }, (_, i) => ({ type: ['turnstile', 'recaptcha', 'image', 'hcaptcha'][i % 4], site: `site-${i >> 2}.example` }))
  for (const f of families) for (const l of sets) f.record(l, true)
  await Promise.all(families.map((f) => f.sync()))
  await Promise.all(families.map((f) => f.sync()))
  await admin.config('RESETSTAT')
  const latencies = []
  for (let s = 1; s <= syncs; s++) {
    for (const f of families) {
      f.advanceTo(t0 + s * 1000)
      for (const l of sets) f.record(l, (s & 7) !== 0)
      const start = performance.now()
      await f.sync()
      latencies.push(performance.now() - start)
    }
  }
  const stats = await commandstats(admin)
  // Commands the clients sent (the script's own HINCRBY … are counted too by commandstats: left out).
  const script = ['evalsha', 'eval'].map((c) => stats[c] ?? { calls: 0, usec: 0 }).reduce((a, b) => ({ calls: a.calls + b.calls, usec: a.usec + b.usec }))
  await families[0].sync() // the last round of the others
  const total = families[0].labels(sets[0]).total
  for (const f of families) f.close()
  for (const r of redises) r.disconnect()
  admin.disconnect()
  await server.stop()
  console.log(`\n| fleet family (${children} children × ${workers} workers, one solve per child between syncs) | figure |`)
  console.log('| --- | ---: |')
  console.log(`| script calls per sync (EVALSHA + EVAL, INFO commandstats, ${workers * syncs} syncs) | ${(script.calls / (workers * syncs)).toFixed(2)} |`)
  console.log(`| Redis time per sync (commandstats usec / calls) | ${(script.usec / script.calls / 1000).toFixed(2)} ms |`)
  console.log(`| one family sync(): ${children} children's counts up, the fleet's changes back, median | ${median(latencies).toFixed(2)} ms |`)
  console.log(`| check: solves of one child in the fleet window (${workers} × ${syncs + 1}) | ${total} |`)
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await fleetFigures()
  await familyFleetFigures()
}
