// Issue 32: a fleet family syncs on the tracker's machinery. Each child gets the
// native FleetLink a fleet tracker gets, and nothing else: no extra tracker
// linked for the family, and no snapshot() read to learn the SLO, by either owner.
// Needs Debian's redis-server: without it (and not under CI) the file skips in one line.
const test = require('../helpers/external.js').needs(require('ava'), 'redis-server', __filename)
// The native linker, counted: wrapped before the package loads, so every fleet link goes through the wrapper.
const native = require('../../lib/native/load-native.js')
const linked = []
const fleetLink = native.fleetLink
native.fleetLink = (tracker, bucketMs) => {
  linked.push(tracker)
  return fleetLink(tracker, bucketMs)
}
const { ErrorBudgetTracker, BudgetFamily } = require('../..')
const { T0, redisForFile } = require('../helpers/fleet')

const fleetRedis = redisForFile(test)
const { client } = fleetRedis

/** The specs' SLO: an hour in buckets of a minute, as wide as the fleet's. */
const SLO = { windowMs: 3_600_000, resolutionMs: 60_000, targetRate: 0.9 }
const fleetOptions = (redis, key) => ({ redis, key, syncMs: 0, timeoutMs: 20_000, maxSkewMs: 600_000, bucketMs: 60_000 })

test.serial('a fleet family links each child natively as a fleet tracker is linked, and nothing else', async (t) => {
  linked.length = 0
  const redis = await client()
  const family = new BudgetFamily({ labelNames: ['site'], clock: 'manual', ...SLO, fleet: fleetOptions(redis, 'one-path-links') })
  family.advanceTo(T0)
  t.deepEqual(linked, [], 'no tracker is linked before the first child')
  const shop = family.labels({ site: 'shop.example' })
  const tickets = family.labels({ site: 'tickets.example' })
  t.deepEqual(linked, [shop, tickets])
  family.record({ site: 'shop.example' }, false)
  await family.sync()
  t.is(linked.length, 2)
  family.close()

  const tracker = new ErrorBudgetTracker({ clock: 'manual', ...SLO, fleet: fleetOptions(redis, 'one-path-tracker') })
  t.deepEqual(linked.slice(2), [tracker])
  tracker.close()
})

test.serial('neither a fleet tracker nor a fleet family reads a snapshot to sync; the stored SLO and config are those of before', async (t) => {
  const redis = await client()
  const proto = ErrorBudgetTracker.prototype
  const snapshot = proto.snapshot
  let snapshots = 0
  proto.snapshot = function () {
    snapshots++
    return snapshot.call(this)
  }
  try {
    const tracker = new ErrorBudgetTracker({ clock: 'manual', ...SLO, fleet: fleetOptions(redis, 'one-path-snap-t') })
    tracker.advanceTo(T0)
    tracker.record(true)
    tracker.record(false)
    await tracker.sync()
    const family = new BudgetFamily({
      labelNames: ['site'],
      clock: 'manual',
      ...SLO,
      fleet: fleetOptions(redis, 'one-path-snap-f'),
    })
    family.advanceTo(T0)
    family.record({ site: 'shop.example' }, true)
    await family.sync()
    t.is(snapshots, 0)
    // Worked out by hand: one success and one failure; the family's one success.
    t.deepEqual([tracker.report().total, tracker.report().failures], [2, 1])
    t.deepEqual([family.labels({ site: 'shop.example' }).report().total], [1])
    tracker.close()
    family.close()
  } finally {
    proto.snapshot = snapshot
  }
  // The config each key stores (for `gate --redis`): a snapshot's config object, the family's led by its label names.
  const tracker = new ErrorBudgetTracker({ ...SLO })
  const { config } = JSON.parse(tracker.snapshot())
  tracker.close()
  t.is(await redis.hget('captcha-budget:{one-path-snap-t}:buckets', 'config'), JSON.stringify(config))
  t.is(await redis.hget('captcha-budget:{one-path-snap-f}:family-buckets', 'config'), JSON.stringify({ labelNames: ['site'], ...config }))
})

test.serial("a real-clock fleet family reads the real clock: its sync's time is now (generous bounds)", async (t) => {
  const redis = await client()
  const family = new BudgetFamily({ labelNames: ['site'], ...SLO, fleet: fleetOptions(redis, 'one-path-real') })
  family.record({ site: 'shop.example' }, true)
  const before = Date.now()
  const info = await family.sync()
  const after = Date.now()
  t.true(info.syncedAt >= before - 1000 && info.syncedAt <= after + 1000, `syncedAt ${info.syncedAt} in [${before}, ${after}]`)
  t.is(family.labels({ site: 'shop.example' }).report().total, 1)
  family.close()
})
