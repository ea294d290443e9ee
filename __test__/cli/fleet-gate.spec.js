// Needs Debian's redis-server: without it (and not under CI) the file skips in one line.
const test = require('../helpers/external.js').needs(require('ava'), 'redis-server', __filename)
const { execFile } = require('node:child_process')
const path = require('node:path')
const { startRedis } = require('../helpers/redis-server')
const { freePort } = require('../helpers/ports')
const { connect, fleetTracker, recordEach } = require('../helpers/fleet')

const BIN = path.join(__dirname, '..', '..', 'bin', 'captcha-budget.js')
const cli = (args) =>
  new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }))
  })

let server
let client
let redis
test.before(async () => {
  server = await startRedis()
  client = await connect('ioredis', server.url)
  redis = client.redis
})
test.after.always(async () => {
  client?.close()
  await server?.stop()
})

test.serial('gate --redis --key answers for the fleet: 0 while the budget lasts, 3 once exhausted, the report as the workers see it', async (t) => {
  // The gate reads the fleet at the current time: the workers' manual clocks stand there.
  const a = fleetTracker(redis, 'gate', { at: Date.now(), targetRate: 0.9 })
  const b = fleetTracker(redis, 'gate', { at: Date.now(), targetRate: 0.9 })
  recordEach(a, 100, 0)
  await a.sync()
  recordEach(b, 0, 5)
  await b.sync()
  const ok = await cli(['gate', '--redis', server.url, '--key', 'gate'])
  t.is(ok.code, 0, ok.stderr)
  // 105 solves at 90 %: budget 10.5, 5 spent → 52.4 % left (warning below 50 %).
  t.regex(ok.stdout, /^status {12}healthy$/m)
  t.regex(ok.stdout, /^solves in window {2}105 \(5 failed\)$/m)
  t.regex(ok.stdout, /^deploys may proceed$/m)
  recordEach(b, 0, 15)
  await b.sync()
  const stop = await cli(['gate', '--redis', server.url, '--key', 'gate', '--json'])
  t.is(stop.code, 3, stop.stderr)
  const answer = JSON.parse(stop.stdout)
  t.like(answer, { proceed: false, strict: false, report: { status: 'exhausted', total: 120, failures: 20, sloTarget: 0.9, fleet: { key: 'gate' } } })
  a.close()
  b.close()
})

test.serial('gate --redis: bad input exits 2 (no such key, unreachable Redis, --redis without --key, both a snapshot and --redis)', async (t) => {
  const missing = await cli(['gate', '--redis', server.url, '--key', 'nobody'])
  t.is(missing.code, 2)
  t.regex(missing.stderr, /no fleet budget 'nobody' in Redis \(no worker synced it within its window\)\n$/)
  // A BudgetFamily fleet's key: the message says to add --family or --labels.
  await redis.call('HSET', 'captcha-budget:{fam}:family-buckets', 'config', '{}')
  const family = await cli(['gate', '--redis', server.url, '--key', 'fam'])
  t.is(family.code, 2)
  t.regex(
    family.stderr,
    /no fleet budget 'fam' in Redis .*; 'fam' is a BudgetFamily fleet: add --family \(its worst child\) or --labels type=…,site=… \(one child\)\n$/,
  )
  await redis.call('DEL', 'captcha-budget:{fam}:family-buckets')
  const closed = await freePort()
  const unreachable = await cli(['gate', '--redis', `redis://127.0.0.1:${closed}`, '--key', 'gate'])
  t.is(unreachable.code, 2)
  t.regex(unreachable.stderr, /^captcha-budget gate: redis:\/\/127\.0\.0\.1:\d+ gate: /)
  const alone = await cli(['gate', '--redis', server.url])
  t.is(alone.code, 2)
  t.regex(alone.stderr, /--redis <url> and --key <key> go together/)
  const both = await cli(['gate', 'snap.json', '--redis', server.url, '--key', 'gate'])
  t.is(both.code, 2)
  t.regex(both.stderr, /give a snapshot or --redis, not both/)
})

test.serial("gate --redis: a corrupt bucket exits 2 naming it (the range of the workers and snapshots); a URL's password never reaches stderr", async (t) => {
  const a = fleetTracker(redis, 'gate-corrupt', { at: Date.now(), targetRate: 0.9 })
  recordEach(a, 10, 0)
  await a.sync()
  const buckets = 'captcha-budget:{gate-corrupt}:buckets'
  const [field] = Object.keys(await redis.hgetall(buckets)).filter((f) => /^s-?\d+$/.test(f))
  await redis.hset(buckets, field, '9223372036854775807')
  const corrupt = await cli(['gate', '--redis', server.url, '--key', 'gate-corrupt'])
  t.is(corrupt.code, 2)
  t.true(
    corrupt.stderr.includes(
      `Redis holds 9223372036854775807 for bucket ${field.slice(1)}'s successes (field ${field}): not a whole number from 0 to 2^53 − 1 (9007199254740991); the key is corrupt`,
    ),
    corrupt.stderr,
  )
  const closed = await freePort()
  const secret = await cli(['gate', '--redis', `redis://user:S3cretPassw0rd@127.0.0.1:${closed}`, '--key', 'gate'])
  t.is(secret.code, 2)
  t.false(secret.stderr.includes('S3cretPassw0rd'), secret.stderr)
  // One redaction helper for every message (lib/util/redact.js): user:password@ becomes ***@.
  t.regex(secret.stderr, /^captcha-budget gate: redis:\/\/\*\*\*@127\.0\.0\.1:\d+ gate: cannot connect: connect ECONNREFUSED/)
  a.close()
})
