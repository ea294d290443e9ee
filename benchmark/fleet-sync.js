#!/usr/bin/env node
'use strict'
// How long one family fleet sync blocks Redis (issue 30, item 5): the script's
// own time, from SLOWLOG (each call over 100 µs, with its execution time: the
// commands inside a script are logged too past that, so not every one), for
// a worker's push of children × buckets counts and for a joining worker's first
// read of them, with the script as it was (benchmark/family-script-before.js,
// one call for the batch) and as it is (lib/fleet/family-store.js, in the
// chunks lib/fleet/family-sync.js makes, the read in pages), in one run on one redis-server.
//
//   npm run bench:fleet [-- --children 1000] [-- --buckets 25] [-- --long-children 200] [-- --huge-label 1048576]
//
// Then a BudgetFamily's own sync() of children × buckets pending counts through
// ioredis (the library end to end: drain, chunks, reply, install).
const os = require('node:os')
const { performance } = require('node:perf_hooks')
const { createClient } = require('redis')
const Redis = require('ioredis')
const { startRedis } = require('../__test__/helpers/redis-server.js')
const before = require('./family-script-before.js')
const { SCRIPT, familyKeysOf } = require('../lib/fleet/family-store.js')
const { FamilySync } = require('../lib/fleet/family-sync.js')
const { BudgetFamily } = require('../index.js')

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}
const CHILDREN = arg('children', 1000)
const BUCKETS = arg('buckets', 25)
const LONG_CHILDREN = arg('long-children', 200)
const HUGE_LABEL = arg('huge-label', 1 << 20)

const MINUTE = 60_000
const WINDOW = 3_600_000
const LABEL_NAMES = ['type', 'site']
const CONFIG = JSON.stringify({ labelNames: LABEL_NAMES, targetRate: 0.9, windowMs: WINDOW })
const SLO = JSON.stringify({ targetRate: 0.9, windowMs: WINDOW, bucketMs: MINUTE })

/** The 13 arguments every fleet script starts with (lib/fleet/loop.js). */
function common(worker, seq, now) {
  const oldest = Math.floor((now - WINDOW) / MINUTE) + 1
  return [worker, String(seq), String(MINUTE), String(oldest), String(WINDOW + 2 * MINUTE), String(now), '30000', CONFIG, '', '0', SLO, String(WINDOW), '60000']
}

/** children × buckets (child id, K, successes, failures) quads ending at the current minute; sites `length` characters long. */
function quads(children, buckets, length, now) {
  const newest = Math.floor(now / MINUTE)
  const args = []
  for (let i = 0; i < children; i++) {
    const name = `site-${i}.example`
    const id = JSON.stringify({ type: 'turnstile', site: name.padEnd(length, 'x') })
    for (let k = newest - buckets + 1; k <= newest; k++) args.push(id, String(k), '9', '1')
  }
  return args
}

/** The CPU time of Redis's main thread so far (INFO cpu), ms: what a busy machine's preemptions do not add to. */
async function mainThreadCpu(redis) {
  const info = String(await redis.sendCommand(['INFO', 'cpu']))
  const seconds = (name) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)[1])
  return (seconds('used_cpu_user_main_thread') + seconds('used_cpu_sys_main_thread')) * 1000
}

/**
 * The script time of the EVALSHA calls `run()` makes, from SLOWLOG: { total,
 * median call, longest call (ms), calls }, and `cpu`, the main thread's CPU ms meanwhile.
 */
async function redisTime(redis, run) {
  await redis.sendCommand(['SLOWLOG', 'RESET'])
  const cpuBefore = await mainThreadCpu(redis)
  await run()
  const cpu = (await mainThreadCpu(redis)) - cpuBefore
  const log = await redis.sendCommand(['SLOWLOG', 'GET', '100000'])
  const us = log.filter((e) => /^evalsha$/i.test(String(e[3][0]))).map((e) => Number(e[2]))
  const sorted = [...us].sort((a, b) => a - b)
  return { total: us.reduce((a, b) => a + b, 0) / 1000, median: sorted[sorted.length >> 1] / 1000, longest: Math.max(0, ...us) / 1000, calls: us.length, cpu }
}

/** One scenario on fresh keys: before's push (one call) and join, then after's push (in chunks) and join. */
async function scenario(redis, shas, name, batch) {
  const now = Date.now()
  const keys = (k) => ['4', ...familyKeysOf(`bench-${name}-${k}`)]
  const beforePush = await redisTime(redis, () => redis.sendCommand(['EVALSHA', shas.before, ...keys('before'), ...common('w1', 1, now), ...batch]))
  const beforeJoin = await redisTime(redis, () => redis.sendCommand(['EVALSHA', shas.before, ...keys('before'), ...common('w2', 1, now)]))
  const chunks = FamilySync.prototype.split.call({ labelNamesJson: JSON.stringify(LABEL_NAMES) }, { args: batch })
  const afterPush = await redisTime(redis, async () => {
    let seq = 0
    for (const chunk of chunks) await redis.sendCommand(['EVALSHA', shas.after, ...keys('after'), ...common('w1', ++seq, now), ...chunk.head, ...chunk.args])
  })
  // A joining worker's read: pages of at most READ_PAGE buckets, each call from the version the last covers.
  const afterJoin = await redisTime(redis, async () => {
    let [epoch, version] = ['', '0']
    for (;;) {
      const args = common('w2', 1, now)
      args[8] = epoch
      args[9] = version
      const reply = await redis.sendCommand(['EVALSHA', shas.after, ...keys('after'), ...args, '1', JSON.stringify(LABEL_NAMES)])
      ;[epoch, version] = [String(reply[2]), String(reply[3])]
      if (Number(reply[6]) !== 1) break
    }
  })
  return { name, buckets: batch.length / 4, beforePush, beforeJoin, afterPush, afterJoin }
}

/** A BudgetFamily (ioredis) with children × buckets pending counts: its sync()'s wall time and Redis time. */
async function familySync(url, admin) {
  const redis = new Redis(url, { lazyConnect: true })
  redis.on('error', () => {})
  await redis.connect()
  const now = Date.now()
  const start = Math.floor(now / MINUTE) * MINUTE - (BUCKETS - 1) * MINUTE
  const family = new BudgetFamily({
    labelNames: LABEL_NAMES,
    targetRate: 0.9,
    windowMs: WINDOW,
    resolutionMs: MINUTE,
    clock: 'manual',
    maxChildren: CHILDREN,
    fleet: { redis, key: 'bench-family-sync', syncMs: 0, timeoutMs: 120_000, bucketMs: MINUTE },
  })
  for (let m = 0; m < BUCKETS; m++) {
    family.advanceTo(start + m * MINUTE)
    for (let i = 0; i < CHILDREN; i++) family.record({ type: 'turnstile', site: `site-${i}.example` }, i % 10 !== 0)
  }
  await redis.script('LOAD', SCRIPT)
  let wall = 0
  const time = await redisTime(admin, async () => {
    const t0 = performance.now()
    await family.sync()
    wall = performance.now() - t0
  })
  const total = family.report().reduce((sum, r) => sum + r.total, 0)
  family.close()
  redis.disconnect()
  return { wall, time, total }
}

/**
 * A yardstick of this machine's Redis speed in the same run: the median of 25
 * calls of a script making 1 000 HINCRBY calls (≈0.5–1 ms on an idle core).
 */
async function yardstick(redis) {
  const sha = await redis.sendCommand(['SCRIPT', 'LOAD', "for i = 1, 1000 do redis.call('HINCRBY', KEYS[1], 'f' .. i, 1) end return 1"])
  const time = await redisTime(redis, async () => {
    for (let i = 0; i < 25; i++) await redis.sendCommand(['EVALSHA', sha, '1', 'bench-yardstick'])
  })
  return time.median
}

const ms = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(2))

async function main() {
  const server = await startRedis()
  const redis = createClient({ url: server.url })
  redis.on('error', () => {})
  await redis.connect()
  await redis.sendCommand(['CONFIG', 'SET', 'slowlog-log-slower-than', '100'])
  await redis.sendCommand(['CONFIG', 'SET', 'slowlog-max-len', '100000'])
  const shas = { before: await redis.sendCommand(['SCRIPT', 'LOAD', before.SCRIPT]), after: await redis.sendCommand(['SCRIPT', 'LOAD', SCRIPT]) }
  const version = /redis_version:(\S+)/.exec(await redis.sendCommand(['INFO', 'server']))[1]
  console.log(
    `# family fleet sync: Redis time per sync (SLOWLOG), script before (one call) and after (chunks of at most 1000 counts, replies of at most 5000 buckets)`,
  )
  console.log(
    `# ${os.cpus()[0].model}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB; Node ${process.version}; redis-server ${version}; load ${os
      .loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  )
  const unit = await yardstick(redis)
  const now = Date.now()
  const rows = []
  rows.push(await scenario(redis, shas, 'short', quads(CHILDREN, BUCKETS, 0, now)))
  rows.push(await scenario(redis, shas, 'long', quads(LONG_CHILDREN, BUCKETS, 300, now)))
  rows.push(await scenario(redis, shas, 'huge', quads(1, 1, HUGE_LABEL, now)))
  const what = {
    short: `${CHILDREN} children × ${BUCKETS} buckets, short labels`,
    long: `${LONG_CHILDREN} children × ${BUCKETS} buckets, 300-character site`,
    huge: `1 child, 1 bucket, a ${HUGE_LABEL >> 10} KiB site`,
  }
  // Per 1000 counts: the median call of a push in chunks of 1000 (a loaded machine's
  // preemptions land in a few calls), else the calls' time scaled.
  console.log(
    '\n| scenario | counts | before: Redis ms (one call) | after: Redis ms (calls; median, longest call) | after, ms per 1000 counts | before ÷ after | Redis main thread CPU ms, before → after | CPU: after ms per 1000 counts |',
  )
  console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const r of rows) {
    for (const [step, b, a] of [
      ['push', r.beforePush, r.afterPush],
      ["joining worker's read", r.beforeJoin, r.afterJoin],
    ]) {
      const per1000 = step === 'push' && a.calls > 1 ? a.median : (a.total / r.buckets) * 1000
      console.log(
        `| ${what[r.name]}: ${step} | ${r.buckets} | ${ms(b.total)} | ${ms(a.total)} (${a.calls}; ${ms(a.median)}, ${ms(a.longest)}) | ${ms(per1000)} | ${(b.total / a.total).toFixed(0)} × | ${ms(b.cpu)} → ${ms(a.cpu)} | ${ms((a.cpu / r.buckets) * 1000)} |`,
      )
    }
  }
  const unitAfter = await yardstick(redis)
  console.log(
    `\nYardstick: a script of 1 000 HINCRBY calls, median of 25: ${ms(unit)} ms before the scenarios, ${ms(unitAfter)} ms after (an idle core: ≈0.5–1 ms).`,
  )
  const family = await familySync(server.url, redis)
  console.log(`\n| BudgetFamily.sync() through ioredis, ${CHILDREN} children × ${BUCKETS} pending buckets | figure |`)
  console.log('| --- | ---: |')
  console.log(`| wall time of the sync() | ${ms(family.wall)} ms |`)
  console.log(
    `| Redis time (script calls; median, longest call) | ${ms(family.time.total)} ms (${family.time.calls}; ${ms(family.time.median)} ms, ${ms(family.time.longest)} ms) |`,
  )
  console.log(`| Redis main thread CPU | ${ms(family.time.cpu)} ms |`)
  console.log(`| check: solves in the family after it (${CHILDREN} × ${BUCKETS}) | ${family.total} |`)
  redis.destroy()
  await server.stop()
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
