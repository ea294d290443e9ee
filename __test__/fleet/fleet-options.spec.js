const test = require('ava')
const Redis = require('ioredis')
const { createClient } = require('redis')
const { ErrorBudgetTracker } = require('../..')

// Clients that never connect: the options are checked before any traffic.
const ioredis = new Redis({ lazyConnect: true })
const nodeRedis = createClient()
const fleet = (over) => ({ clock: 'manual', fleet: { redis: ioredis, key: 'k', syncMs: 0, ...over } })

const cases = [
  [{ fleet: 5 }, TypeError, 'ERR_INVALID_ARG_TYPE', 'config.fleet must be an object { redis, key, syncMs? }, got number'],
  [{ fleet: null }, TypeError, 'ERR_INVALID_ARG_TYPE', 'config.fleet must be an object { redis, key, syncMs? }, got null'],
  [fleet({ redis: undefined }), TypeError, 'ERR_INVALID_ARG_TYPE', 'config.fleet.redis must be an ioredis client or a node-redis (v5+) client, got undefined'],
  [fleet({ redis: { get() {} } }), TypeError, 'ERR_INVALID_ARG_TYPE', 'config.fleet.redis must be an ioredis client or a node-redis (v5+) client, got object'],
  [fleet({ key: 7 }), TypeError, 'ERR_INVALID_ARG_TYPE', 'config.fleet.key must be a string, got number'],
  [
    fleet({ key: '' }),
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    `config.fleet.key must be a non-empty string without '{' or '}' (it becomes the keys' hash tag), got ""`,
  ],
  [
    fleet({ key: 'a{b}' }),
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    `config.fleet.key must be a non-empty string without '{' or '}' (it becomes the keys' hash tag), got "a{b}"`,
  ],
  [fleet({ syncMs: '1s' }), TypeError, 'ERR_INVALID_ARG_TYPE', 'config.fleet.syncMs must be a number, got string'],
  [fleet({ syncMs: -1 }), RangeError, 'ERR_OUT_OF_RANGE', 'config.fleet.syncMs must be an integer in [0, 3600000], got -1'],
  [fleet({ syncMs: 5 }), RangeError, 'ERR_OUT_OF_RANGE', 'config.fleet.syncMs must be 0 (no background sync) or an integer in [10, 3600000], got 5'],
  [fleet({ timeoutMs: 0 }), RangeError, 'ERR_OUT_OF_RANGE', 'config.fleet.timeoutMs must be an integer in [1, 600000], got 0'],
  [fleet({ bucketMs: 1.5 }), RangeError, 'ERR_OUT_OF_RANGE', 'config.fleet.bucketMs must be an integer in [1, 9007199254740991], got 1.5'],
  // windowMs 60 000 → resolutionMs 1.
  [
    { ...fleet({ bucketMs: 70_000 }), windowMs: 60_000 },
    RangeError,
    'ERR_OUT_OF_RANGE',
    'config.fleet.bucketMs must be a multiple of resolutionMs (1) from 1 to windowMs (60000), got 70000',
  ],
  [
    { ...fleet({ bucketMs: 150 }), windowMs: 60_000, resolutionMs: 100 },
    RangeError,
    'ERR_OUT_OF_RANGE',
    'config.fleet.bucketMs must be a multiple of resolutionMs (100) from 100 to windowMs (60000), got 150',
  ],
  [
    fleet({ url: 'redis://x' }),
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    "unknown key 'url' in config.fleet; known keys: redis, key, syncMs, bucketMs, timeoutMs, maxSkewMs",
  ],
  [fleet({ maxSkewMs: -1 }), RangeError, 'ERR_OUT_OF_RANGE', 'config.fleet.maxSkewMs must be an integer in [0, 604800000], got -1'],
  [fleet({ maxSkewMs: 604_800_001 }), RangeError, 'ERR_OUT_OF_RANGE', 'config.fleet.maxSkewMs must be an integer in [0, 604800000], got 604800001'],
  [fleet({ maxSkewMs: '1m' }), TypeError, 'ERR_INVALID_ARG_TYPE', 'config.fleet.maxSkewMs must be a number, got string'],
  [{ ...fleet({}), shared: 'x' }, TypeError, 'ERR_INVALID_ARG_VALUE', "config.fleet cannot be given with config.shared: the fleet's window lives in Redis"],
  [
    { ...fleet({}), persist: { path: '/tmp/x.json' } },
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    "config.fleet cannot be given with config.persist: the fleet's window lives in Redis",
  ],
  [
    { ...fleet({}), snapshot: '{}' },
    TypeError,
    'ERR_INVALID_ARG_VALUE',
    "config.fleet cannot be given with config.snapshot: the fleet's window lives in Redis",
  ],
]

for (const [config, type, code, message] of cases) {
  test(`${message}`, (t) => {
    const err = t.throws(() => new ErrorBudgetTracker(config), { code, message })
    t.true(err instanceof type, `${err.constructor.name}`)
  })
}

test('the other config keys are checked as without fleet', (t) => {
  t.throws(() => new ErrorBudgetTracker({ ...fleet({}), targetRate: 2 }), { code: 'ERR_OUT_OF_RANGE', message: /targetRate/ })
})

test('both clients are accepted; fleet: undefined is no fleet; the class keeps its statics and instanceof', async (t) => {
  for (const redis of [ioredis, nodeRedis]) {
    const tracker = new ErrorBudgetTracker(fleet({ redis }))
    t.true(tracker instanceof ErrorBudgetTracker)
    t.is(tracker.report().fleet.key, 'k')
    tracker.close()
  }
  const plain = new ErrorBudgetTracker({ clock: 'manual', fleet: undefined })
  t.false('fleet' in plain.report())
  t.is(typeof ErrorBudgetTracker.restore, 'function')
  t.is(typeof ErrorBudgetTracker.shared, 'function')
  class Sub extends ErrorBudgetTracker {}
  const sub = new Sub(fleet({}))
  t.true(sub instanceof Sub)
  sub.close()
})

test('shared(name, { fleet }) is refused as config.shared with config.fleet', (t) => {
  t.throws(() => ErrorBudgetTracker.shared('fleet-shared', fleet({})), {
    code: 'ERR_INVALID_ARG_VALUE',
    message: "config.fleet cannot be given with config.shared: the fleet's window lives in Redis",
  })
})
