'use strict'
// Shared pieces of the fleet specs: clients of both kinds, trackers on a
// manual clock, and the fleet's counts read straight from Redis.
const { fork } = require('node:child_process')
const { once } = require('node:events')
const Redis = require('ioredis')
const nodeRedis = { 'node-redis': require('redis'), 'node-redis v5': require('redis-v5') }
const { ErrorBudgetTracker } = require('../..')
const { startRedis } = require('./redis-server.js')

/**
 * Epoch ms the specs' manual clocks start at: the real time rounded down to a
 * whole minute (the store refuses clocks far from its own `TIME`), the same in
 * the worker processes a spec forks (through the environment).
 */
const T0 = Number(process.env.FLEET_SPEC_T0) || Math.floor(Date.now() / 60_000) * 60_000
process.env.FLEET_SPEC_T0 = String(T0)

/**
 * The clock skew the specs' trackers allow by default: 10 min, so that manual
 * clocks may move ahead of the real time (the skew specs give their own).
 */
const SPEC_MAX_SKEW_MS = 600_000

/** A connected client of `kind` ('ioredis' | 'node-redis' (v6) | 'node-redis v5') on `url`, and how to close it. */
async function connect(kind, url) {
  if (kind === 'ioredis') {
    const redis = new Redis(url, { lazyConnect: true })
    redis.on('error', () => {})
    await redis.connect()
    return { redis, close: () => redis.disconnect() }
  }
  const redis = nodeRedis[kind].createClient({ url })
  redis.on('error', () => {})
  await redis.connect()
  return { redis, close: () => redis.destroy() }
}

/** A manual-clock fleet tracker at `at` (default T0); `fleet` options on top of { redis, key, syncMs: 0, maxSkewMs: 10 min }. */
function fleetTracker(redis, key, { at = T0, fleet = {}, ...config } = {}) {
  const options = { redis, key, syncMs: 0, timeoutMs: 20_000, maxSkewMs: SPEC_MAX_SKEW_MS, ...fleet }
  const tracker = new ErrorBudgetTracker({ clock: 'manual', windowMs: 3_600_000, ...config, fleet: options })
  tracker.advanceTo(at)
  return tracker
}

/** The successes and failures stored under fleet `key`, summed over its buckets (read with an ioredis client). */
async function storedCounts(redis, key) {
  const fields = await redis.hgetall(`captcha-budget:{${key}}:buckets`)
  const sum = { successes: 0, failures: 0 }
  for (const [field, value] of Object.entries(fields)) {
    if (/^s-?\d+$/.test(field)) sum.successes += Number(value)
    if (/^f-?\d+$/.test(field)) sum.failures += Number(value)
  }
  return sum
}

/** Records `successes` then `failures` one by one (the per-call path a worker uses). */
function recordEach(tracker, successes, failures) {
  for (let i = 0; i < successes; i++) tracker.record(true)
  for (let i = 0; i < failures; i++) tracker.record(false)
}

/**
 * A worker process running `script` (a fixture answering messages), killed at the
 * test's end; ask(msg) sends a message and resolves with its answer.
 */
function spawnWorker(t, script) {
  const child = fork(script, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  t.teardown(() => child.kill('SIGKILL'))
  const ask = async (msg) => {
    const answer = once(child, 'message')
    child.send(msg)
    return (await answer)[0]
  }
  return { child, ask }
}

/**
 * One redis-server for a spec file, started before its tests and stopped after
 * them: `server` once started, and `client(kind)`, a connected client's redis
 * (closed with the server).
 */
function redisForFile(test) {
  const clients = []
  const redis = {
    server: null,
    async client(kind = 'ioredis') {
      const c = await connect(kind, redis.server.url)
      clients.push(c)
      return c.redis
    },
  }
  test.before(async () => {
    redis.server = await startRedis()
  })
  test.after.always(async () => {
    for (const c of clients) c.close()
    await redis.server?.stop()
  })
  return redis
}

module.exports = { T0, connect, fleetTracker, storedCounts, recordEach, spawnWorker, redisForFile }
