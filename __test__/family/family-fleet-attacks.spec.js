// Issue 30, items 4, 6, 9 and 16: the family fleet attacked through the size of
// its pushes, label names in another order, an evicted key and the values the
// gate reads (a real redis-server per test: they delete keys and corrupt values).
// Needs Debian's redis-server: without it (and not under CI) the file skips in one line.
const test = require('../helpers/external.js').needs(require('ava'), 'redis-server', __filename)
const { execFile } = require('node:child_process')
const path = require('node:path')
const { BudgetFamily, FleetSyncError } = require('../..')
const { startRedis } = require('../helpers/redis-server')
const { T0, connect } = require('../helpers/fleet')
const { catchWarnings } = require('../helpers/warnings.js')
const { familyKeysOf, SCRIPT } = require('../../lib/fleet/family-store.js')
const { MAX_CHUNK_COUNTS } = require('../../lib/fleet/family-sync.js')

const MINUTE = 60_000

// Each server's helper listens for the process's exit: more than the default 10 at once here.
process.setMaxListeners(Math.max(process.getMaxListeners(), 32))
async function setUp(t) {
  const server = await startRedis()
  const opened = []
  t.teardown(async () => {
    for (const c of opened) c.close()
    await server.stop('SIGKILL')
  })
  const client = async (kind = 'ioredis') => {
    const c = await connect(kind, server.url)
    opened.push(c)
    return c.redis
  }
  return { server, client, direct: await client() }
}

// A worker's family on the manual clock (one-minute buckets), syncing only when told.
function worker(redis, key, { at = T0, fleet = {}, ...options } = {}) {
  const family = new BudgetFamily({
    labelNames: ['type', 'site'],
    clock: 'manual',
    windowMs: 3_600_000,
    resolutionMs: MINUTE,
    targetRate: 0.9,
    ...options,
    fleet: { redis, key, syncMs: 0, timeoutMs: 60_000, maxSkewMs: 600_000, bucketMs: MINUTE, ...fleet },
  })
  family.advanceTo(at)
  return family
}

/** The process warnings of code CAPTCHA_BUDGET_FLEET that mention `text`, collected during the test. */
function warningsAbout(t, text) {
  return catchWarnings(
    t,
    (w) => w.code === 'CAPTCHA_BUDGET_FLEET' && w.message.includes(text),
    (w) => w.message,
  )
}
const settled = () => new Promise(setImmediate)

/** An ioredis client whose script calls are seen by `onCall(args, n)` (n from 1), which may throw or lose the reply. */
function watched(redis, onCall) {
  let n = 0
  return Object.assign(Object.create(redis), {
    call: async (...args) => {
      const lose = onCall(args, ++n)
      const reply = await redis.call(...args)
      if (lose) throw new Error('connection reset (reply lost)')
      return reply
    },
  })
}

const site = (i) => ({ type: 'turnstile', site: `site-${i}.example` })

test('4. 2 000 children × 30 pending one-minute buckets (ioredis): the push goes in bounded chunks and another worker reads every count', async (t) => {
  const { client } = await setUp(t)
  const key = 'many-pending'
  const calls = []
  const redis = watched(await client(), (args) => void calls.push(args.length))
  // 30 minutes ending a minute before T0 (the real time rounded down): all within the allowed skew.
  const start = T0 - 30 * MINUTE
  const a = worker(redis, key, { at: start, maxChildren: 2000 })
  await redis.script('LOAD', SCRIPT) // the calls counted below are the pushes
  for (let m = 0; m < 30; m++) {
    a.advanceTo(start + m * MINUTE)
    for (let i = 0; i < 2000; i++) a.record(site(i), true)
  }
  for (let i = 0; i < 2000; i++) a.record(site(i), false)
  calls.length = 0
  await a.sync()
  // 60 000 pending (child, bucket) counts, at most MAX_CHUNK_COUNTS a call: 60 chunks
  // (versions 1–60); the last one's reply, the changes since this worker's last sync,
  // holds versions 1–5 (READ_PAGE buckets), and 11 calls without a batch read the rest.
  t.is(calls.length, Math.ceil(60_000 / MAX_CHUNK_COUNTS) + 11)
  for (const length of calls) t.true(length <= 3 + 4 + 15 + 4 * MAX_CHUNK_COUNTS, String(length)) // EVALSHA sha 4, the keys, the arguments
  const reader = worker(await client('node-redis'), key, { at: start + 29 * MINUTE, maxChildren: 2000 })
  await reader.sync()
  t.is(reader.size, 2000)
  // Each child: a success in each of the 30 minutes, and one failure.
  const wrong = reader.report().filter((r) => r.total !== 31 || r.failures !== 1)
  t.deepEqual(wrong, [])
  t.like(a.fleet, { stale: false, lastError: null })
  a.close()
  reader.close()
})

test('4. exactly once per chunk: a chunk whose reply was lost goes again under its number, the next one after it, each counted once', async (t) => {
  const { client } = await setUp(t)
  const key = 'chunks-once'
  // While `failing`, by script call: the 2nd runs but its reply is lost, the 4th never leaves.
  let failing = false
  let n = 0
  const redis = watched(await client(), () => {
    if (!failing) return false
    n++
    if (n === 4) throw new Error('connection closed')
    return n === 2
  })
  const children = 2 * MAX_CHUNK_COUNTS + 500 // three chunks
  const a = worker(redis, key, { maxChildren: children })
  a.on('fleet-error', () => {})
  await a.sync()
  // Child i: i % 3 + 1 successes and i % 2 failures.
  let solves = 0
  let failures = 0
  for (let i = 0; i < children; i++) {
    for (let k = 0; k <= i % 3; k++) a.record(site(i), true)
    if (i % 2 === 1) a.record(site(i), false)
    solves += (i % 3) + 1 + (i % 2)
    failures += i % 2
  }
  failing = true
  const err = await t.throwsAsync(a.sync(), { instanceOf: FleetSyncError, code: 'ERR_FLEET_SYNC' })
  t.regex(err.message, /connection reset/)
  t.true(a.fleet.stale)
  t.is(n, 2, 'the round stops at the lost reply')
  // Chunk 2 again (counted already: not again), then chunk 3, which never leaves.
  await t.throwsAsync(a.sync(), { instanceOf: FleetSyncError, message: /connection closed/ })
  t.is(n, 4)
  failing = false
  await a.sync()
  const reader = worker(await client(), key, { maxChildren: children })
  await reader.sync()
  t.is(reader.size, children)
  const sum = (f) => f.report().reduce((acc, r) => [acc[0] + r.total, acc[1] + r.failures], [0, 0])
  // Hand-summed over the children above; a chunk counted twice would add to it.
  t.deepEqual(sum(reader), [solves, failures])
  t.deepEqual(sum(a), [solves, failures])
  a.close()
  reader.close()
})

test('4. chunks are bounded in bytes of labels too: three 600 KiB label sets go in three calls (at most 1 MiB of ids each), the last bringing the buckets back', (t) => {
  const { FamilySync, MAX_CHUNK_BYTES } = require('../../lib/fleet/family-sync.js')
  t.is(MAX_CHUNK_BYTES, 1024 * 1024)
  const id = (c) => JSON.stringify({ type: 'turnstile', site: c.repeat(600 * 1024) })
  const args = ['a', 'b', 'c'].flatMap((c) => [id(c), '7', '1', '0'])
  const chunks = FamilySync.prototype.split.call({ labelNamesJson: '["type","site"]' }, { args })
  t.deepEqual(
    chunks.map((c) => [c.pushOnly, c.head, c.args.length, c.args[0].slice(28, 29)]),
    [
      [true, ['0', '["type","site"]'], 4, 'a'],
      [true, ['0', '["type","site"]'], 4, 'b'],
      [false, ['1', '["type","site"]'], 4, 'c'],
    ],
  )
  // Small ids: one chunk, however many bytes in all below the bound.
  t.is(FamilySync.prototype.split.call({ labelNamesJson: '[]' }, { args: ['x', '1', '1', '0', 'y', '1', '0', '1'] }).length, 1)
  t.deepEqual(FamilySync.prototype.split.call({ labelNamesJson: '[]' }, { args: [] }), [{ args: [], pushOnly: false, head: ['1', '[]'] }])
})

test('5. a joining worker reads a large window in pages of whole versions (READ_PAGE buckets at most a reply), every count once', async (t) => {
  const { READ_PAGE } = require('../../lib/fleet/family-store.js')
  t.is(READ_PAGE, 5000)
  const { client, direct } = await setUp(t)
  const key = 'paged-read'
  const start = T0 - 5 * MINUTE
  const writer = worker(await client(), key, { at: start, maxChildren: 2000 })
  // 2 000 children × 6 one-minute buckets: 12 000 counts, pushed in 12 chunks (versions 1–12, 1 000 buckets each).
  for (let m = 0; m < 6; m++) {
    writer.advanceTo(start + m * MINUTE)
    for (let i = 0; i < 2000; i++) writer.record(site(i), m !== 0 || i % 4 !== 0)
  }
  await writer.sync()
  t.is(await direct.hget(familyKeysOf(key)[0], 'version'), '12')
  const read = async () => {
    let calls = 0
    const reader = worker(
      watched(await client(), () => void calls++),
      key,
      { at: start + 5 * MINUTE, maxChildren: 2000 },
    )
    await reader.sync()
    const rows = reader.report()
    reader.close()
    // Each child: 6 solves; every fourth child's first one failed.
    return {
      calls,
      size: rows.length,
      wrong: rows.filter((r) => r.total !== 6 || r.failures !== (Number(/site-(\d+)/.exec(r.labels.site)[1]) % 4 === 0 ? 1 : 0)).length,
    }
  }
  // Versions 1–5 (5 000 buckets), 6–10, then 11–12: three calls.
  t.deepEqual(await read(), { calls: 3, size: 2000, wrong: 0 })
  // A version holding more than a page (as an older script wrote): read whole, in one call.
  const changes = familyKeysOf(key)[1]
  const members = await direct.zrange(changes, 0, -1)
  await direct.zadd(changes, ...members.flatMap((m) => ['12', m]))
  t.deepEqual(await read(), { calls: 1, size: 2000, wrong: 0 })
  writer.close()
})

/** The commands the script ran inside Redis since the last CONFIG RESETSTAT (INFO commandstats; the client's own left out). */
async function scriptCommands(direct) {
  const stats = {}
  for (const m of (await direct.info('commandstats')).matchAll(/^cmdstat_(\w+):calls=(\d+)/gm)) {
    if (!['evalsha', 'eval', 'info', 'config', 'script'].includes(m[1])) stats[m[1]] = Number(m[2])
  }
  return stats
}

test("5. the script runs as many Redis commands for 500 counts as for 10: no call per count (the time is bench:fleet's)", async (t) => {
  const { client, direct } = await setUp(t)
  const key = 'commands-per-sync'
  const a = worker(await client(), key, { maxChildren: 510 })
  await a.sync() // loads the script, creates the keys
  const commands = []
  for (const [from, to] of [
    [0, 10],
    [10, 510],
  ]) {
    for (let i = from; i < to; i++) a.record(site(i), i % 5 !== 0)
    await direct.config('RESETSTAT')
    await a.sync()
    commands.push(await scriptCommands(direct))
  }
  t.deepEqual(commands[1], commands[0])
  t.is(a.size, 510)
  a.close()
})

test('4. Redis killed right after running a chunk, restarted from its append-only file: the chunk goes again under its number, every count once', async (t) => {
  const server = await startRedis({ appendonly: true })
  let restarted = null
  const opened = []
  t.teardown(async () => {
    for (const c of opened) c.close()
    await server.stop('SIGKILL')
    await restarted?.stop('SIGKILL')
  })
  const open = async () => {
    const c = await connect('ioredis', server.url)
    opened.push(c)
    return c.redis
  }
  const redis = await open()
  const key = 'chunks-restart'
  let n = 0
  let killAt = 0
  // The 2nd script call runs (appendfsync always: it is on disk), then Redis dies before its reply.
  const lossy = Object.assign(Object.create(redis), {
    call: async (...args) => {
      const reply = await redis.call(...args)
      if (++n === killAt) {
        await server.stop('SIGKILL')
        throw new Error('connection lost')
      }
      return reply
    },
  })
  const children = 2 * MAX_CHUNK_COUNTS + 500 // three chunks
  const a = worker(lossy, key, { maxChildren: children })
  a.on('fleet-error', () => {})
  await a.sync() // loads the script
  for (let i = 0; i < children; i++) a.record(site(i), i % 7 !== 0)
  n = 0
  killAt = 2
  await t.throwsAsync(a.sync(), { instanceOf: FleetSyncError, message: /connection lost/ })
  restarted = await startRedis({ port: server.port, dir: server.dir, appendonly: true })
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve))
  await a.sync()
  const reader = worker(await open(), key, { maxChildren: children })
  await reader.sync()
  // One solve per child; every seventh failed (children 0, 7, …, 2499 = 7 × 357: 358 of them).
  const sum = reader.report().reduce((acc, r) => [acc[0] + r.total, acc[1] + r.failures], [0, 0])
  t.deepEqual([reader.size, ...sum], [children, children, 358])
  a.close()
  reader.close()
})

test('6. label names in another order, or other label names, on one key: refused naming both (the SLO check), nothing written', async (t) => {
  const { client, direct } = await setUp(t)
  const key = 'label-order'
  const a = worker(await client(), key)
  a.record({ type: 'turnstile', site: 'shop.example' }, true)
  a.record({ type: 'turnstile', site: 'shop.example' }, false)
  await a.sync()
  const before = await direct.hgetall(familyKeysOf(key)[0])
  for (const [labelNames, theirs] of [
    [['site', 'type'], 'labelNames site, type'],
    [['type'], 'labelNames type'],
    [['type', 'site', 'region'], 'labelNames type, site, region'],
  ]) {
    const b = worker(await client(), key, { labelNames })
    b.on('fleet-error', () => {})
    b.record(Object.fromEntries(labelNames.map((n) => [n, 'x'])), false)
    const err = await t.throwsAsync(b.sync(), { instanceOf: FleetSyncError, code: 'ERR_FLEET_SYNC' })
    t.is(
      err.message,
      `fleet '${key}': sync failed: the fleet's SLO is targetRate 0.9, windowMs 3600000 (1h), bucketMs 60000, labelNames type, site; this family's is targetRate 0.9, windowMs 3600000 (1h), bucketMs 60000, ${theirs}: a worker with another SLO cannot share its key`,
    )
    b.close()
  }
  t.deepEqual(await direct.hgetall(familyKeysOf(key)[0]), before)
  // The same names in the same order still share the key.
  const c = worker(await client(), key)
  await c.sync()
  t.deepEqual(
    c.report().map((r) => [r.labels, r.total, r.failures]),
    [[{ type: 'turnstile', site: 'shop.example' }, 2, 1]],
  )
  a.close()
  c.close()
})

test('9. the family-changes key evicted: a joining worker still sees every child (rebuilt), with a warning', async (t) => {
  const { client, direct } = await setUp(t)
  const key = 'evicted-family-changes'
  const warnings = warningsAbout(t, `'${key}'`)
  const a = worker(await client(), key)
  const broken = { type: 'image', site: 'broken.example' }
  for (let i = 0; i < 10; i++) a.record(broken, i >= 8)
  a.record({ type: 'image', site: 'fine.example' }, true)
  await a.sync()
  await direct.del(familyKeysOf(key)[1])
  const joining = worker(await client(), key)
  await joining.sync()
  const rows = (f) => f.report().map((r) => [r.labels.site, r.total, r.failures])
  t.deepEqual(rows(joining), [
    ['broken.example', 10, 8],
    ['fine.example', 1, 0],
  ])
  await a.sync()
  t.deepEqual(rows(a), [
    ['broken.example', 10, 8],
    ['fine.example', 1, 0],
  ])
  await settled()
  t.is(warnings.length, 1)
  t.regex(warnings[0], /captcha-budget:\{evicted-family-changes\}:family-changes was missing .*maxmemory-policy noeviction/)
  a.close()
  joining.close()
})

test('9. the family-index key evicted: rebuilt, so the buckets still expire with the window', async (t) => {
  const { client, direct } = await setUp(t)
  const key = 'evicted-family-index'
  const warnings = warningsAbout(t, `'${key}'`)
  const start = T0 - 5 * MINUTE
  const a = worker(await client(), key, { at: start })
  a.record({ type: 'image', site: 'x' }, true)
  await a.sync()
  await direct.del(familyKeysOf(key)[2])
  a.advanceTo(start + MINUTE)
  await a.sync()
  // Bucket K = start / 1 min holds the solve; the index holds it again under its K.
  const member = `${start / MINUTE}\n${JSON.stringify({ type: 'image', site: 'x' })}`
  t.is(await direct.zscore(familyKeysOf(key)[2], member), String(start / MINUTE))
  await settled()
  t.is(warnings.length, 1)
  t.regex(warnings[0], /family-index was missing/)
  a.close()
})

test('9. the family-workers key evicted between a lost reply and its retry: the batch still counts once', async (t) => {
  const { client, direct } = await setUp(t)
  const key = 'evicted-family-workers'
  const warnings = warningsAbout(t, `'${key}'`)
  let lose = false
  const a = worker(
    watched(await client(), () => {
      const now = lose
      lose = false
      return now
    }),
    key,
  )
  a.on('fleet-error', () => {})
  await a.sync()
  for (let i = 0; i < 7; i++) a.record({ type: 'image', site: 'x' }, i !== 0)
  lose = true
  await t.throwsAsync(a.sync(), { code: 'ERR_FLEET_SYNC' })
  await direct.del(familyKeysOf(key)[3])
  await a.sync()
  const reader = worker(await client(), key)
  await reader.sync()
  t.deepEqual(
    reader.report().map((r) => [r.total, r.failures]),
    [[7, 1]],
  )
  await settled()
  t.true(
    warnings.some((w) => /family-workers was missing/.test(w)),
    warnings.join('\n'),
  )
  a.close()
  reader.close()
})

const cli = path.join(__dirname, '..', '..', 'bin', 'captcha-budget.js')
function gate(url, key, ...args) {
  return new Promise((resolve) =>
    execFile(process.execPath, [cli, 'gate', '--redis', url, '--key', key, ...args], (err, stdout, stderr) =>
      resolve({ code: err ? err.code : 0, stdout, stderr }),
    ),
  )
}

test('16. gate --labels / --family: values that are no whole number from 0 to 2^53 − 1 exit 2 "the key is corrupt"; counts past 2^32 − 1 count', async (t) => {
  const { server, client, direct } = await setUp(t)
  const key = 'family-gate-values'
  const shop = { type: 'turnstile', site: 'shop.example' }
  // Real clock: the gate reads the window at the current time.
  const family = new BudgetFamily({
    labelNames: ['type', 'site'],
    targetRate: 0.9,
    windowMs: 3_600_000,
    resolutionMs: MINUTE,
    fleet: { redis: await client(), key, syncMs: 0, bucketMs: MINUTE },
  })
  family.record(shop, true)
  await family.sync()
  family.close()
  // The child's counts set by hand in the current minute's bucket: 19 successes, 1 failure (budget 2, half left).
  const hash = familyKeysOf(key)[0]
  await direct.hdel(hash, ...(await direct.hkeys(hash)).filter((f) => /^[sf]-?\d+\n/.test(f)))
  const bucket = String(Math.floor(Date.now() / MINUTE))
  const sField = `s${bucket}\n${JSON.stringify(shop)}`
  const fField = `f${bucket}\n${JSON.stringify(shop)}`
  await direct.hset(hash, sField, '19', fField, '1')
  const ok = await gate(server.url, key, '--labels', 'type=turnstile,site=shop.example', '--json')
  t.is(ok.code, 0, ok.stderr)
  t.like(JSON.parse(ok.stdout).report, { total: 20, failures: 1, budgetRemainingPct: 50 })
  for (const bad of ['abc', '0x10', '1e3', '-1', '9007199254740992']) {
    await direct.hset(hash, fField, bad)
    for (const which of [['--labels', 'type=turnstile,site=shop.example'], ['--family']]) {
      const r = await gate(server.url, key, ...which)
      t.is(r.code, 2, `${bad} ${which[0]}: ${r.stdout}`)
      t.is(
        r.stderr,
        `captcha-budget gate: ${server.url} ${key}: Redis holds ${bad} for bucket ${bucket}'s failures of the child type=turnstile,site=shop.example: not a whole number from 0 to 2^53 − 1 (9007199254740991); the key is corrupt\n`,
      )
    }
  }
  // 2^32 failures and 2^32 + 8 successes (the fleet allows them): exhausted, exit 3.
  await direct.hset(hash, fField, '4294967296')
  await direct.hset(hash, sField, '4294967304')
  const big = await gate(server.url, key, '--labels', 'type=turnstile,site=shop.example', '--json')
  t.is(big.code, 3, big.stderr)
  t.like(JSON.parse(big.stdout).report, { total: 8589934600, failures: 4294967296 })
  // A stored config without labelNames, or that is no JSON: the key is corrupt, not a TypeError.
  const config = JSON.parse(await direct.hget(hash, 'config'))
  delete config.labelNames
  for (const [stored, why] of [
    [JSON.stringify(config), 'the stored config has no labelNames'],
    ['{"labelNames":', 'the stored config is not JSON'],
  ]) {
    await direct.hset(hash, 'config', stored)
    const r = await gate(server.url, key, '--family')
    t.is(r.code, 2, r.stdout)
    t.regex(r.stderr, new RegExp(`^captcha-budget gate: ${server.url} ${key}: ${why}.*; the key is corrupt\\n$`))
  }
})
