// Issue 44, items 5 and 11: which child a full family evicts, and when. A child whose
// provider's back-off is running is not evicted (its re-created child would send at
// once); a manual-clock family fed by record(labels, ok, atMs) judges its children at
// the time of the record being made, not at its time before it.
const test = require('ava')
const { BudgetFamily, ProviderBackoffError, createSolver } = require('../..')
const { startMockCaptchaAI } = require('../helpers/mock-captchaai')

const HOUR = 3_600_000
const task = { method: 'turnstile', sitekey: '0x4AAAAAAA-test', pageurl: 'https://example.com/login' }
const manualFamily = (options) => new BudgetFamily({ labelNames: ['site'], clock: 'manual', windowMs: HOUR, resolutionMs: 1000, alerts: [], ...options })
const sites = (family) => family.children().map((c) => c.labels.site)
// in.php answers 'ERROR: 1001': excluded (not in the window), and a 10-minute back-off.
const banned = { 'in.php': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":0,"request":"ERROR: 1001"}') }

test('5. a child whose only attempts were excluded, its 10-minute back-off running, is not evicted; it is once the back-off has passed', async (t) => {
  const mock = await startMockCaptchaAI({ raw: banned })
  t.teardown(() => mock.close())
  const family = manualFamily({ maxChildren: 1 })
  t.teardown(() => family.close())
  const solverOf = (site) => createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker: family.labels({ site }) })
  await t.throwsAsync(solverOf('a').solve(task), { code: 'ERROR: 1001' })
  const a = family.labels({ site: 'a' })
  t.is(a.total, 0, 'an empty window')
  t.deepEqual(a.recorded, { successes: 0, failures: 0, excluded: 1, capacity: 0 })
  const err = t.throws(() => family.labels({ site: 'b' }), { instanceOf: RangeError, code: 'ERR_OUT_OF_RANGE' })
  t.regex(err.message, /a provider's back-off running/)
  t.deepEqual(sites(family), ['a'])
  // Still held: nothing sent.
  const held = await t.throwsAsync(solverOf('a').solve(task), { instanceOf: ProviderBackoffError })
  t.is(held.retryAfterMs, 600_000)
  t.is(mock.requests.length, 1)
  family.advanceTo(599_999)
  t.throws(() => family.labels({ site: 'b' }), { code: 'ERR_OUT_OF_RANGE' }, '1 ms of the back-off left')
  family.advanceTo(600_000)
  family.labels({ site: 'b' })
  t.true(a.closed)
  t.deepEqual(sites(family), ['b'])
})

test('5. the oldest evictable child goes; an older one whose back-off runs stays', async (t) => {
  const mock = await startMockCaptchaAI({ raw: banned })
  t.teardown(() => mock.close())
  const family = manualFamily({ maxChildren: 2 })
  t.teardown(() => family.close())
  await t.throwsAsync(createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker: family.labels({ site: 'held' }) }).solve(task))
  family.labels({ site: 'idle' })
  family.labels({ site: 'new' }) // 'held' is the older, but its back-off runs: 'idle' goes
  t.deepEqual(sites(family), ['held', 'new'])
})

test('11. family.record(labels, ok, atMs) on a full manual-clock family evicts the children long empty at atMs', (t) => {
  const family = manualFamily({ maxChildren: 2 })
  t.teardown(() => family.close())
  family.record({ site: 'a' }, true, 0)
  family.record({ site: 'b' }, false, 0)
  // 10 h later: a and b left their window at 1 h. The family's time is still 0 before this record.
  family.record({ site: 'c' }, true, 10 * HOUR)
  t.deepEqual(sites(family), ['b', 'c'])
  family.record({ site: 'd' }, true, 20 * HOUR)
  t.deepEqual(sites(family), ['c', 'd'])
  // 1 s after d's solve: c (at 10 h) is empty, d is not.
  family.record({ site: 'e' }, true, 20 * HOUR + 1000)
  t.deepEqual(sites(family), ['d', 'e'])
  t.like(family.labels({ site: 'e' }).report(), { successes: 1, total: 1 })
  t.is(family.now, 20 * HOUR + 1000)
  // A record whose solves are all still in the window: refused, nothing lost.
  t.throws(() => family.record({ site: 'f' }, true, 20 * HOUR + 2000), { code: 'ERR_OUT_OF_RANGE' })
  t.deepEqual(sites(family), ['d', 'e'])
})

test('11. an atMs the child would refuse (past 2^53 − 1) is refused before anything is evicted', (t) => {
  const family = manualFamily({ maxChildren: 1 })
  t.teardown(() => family.close())
  const idle = family.labels({ site: 'idle' })
  t.throws(() => family.record({ site: 'b' }, true, 2 ** 53), {
    instanceOf: RangeError,
    code: 'ERR_OUT_OF_RANGE',
    message: 'family.record(labels, success, atMs): atMs must be a finite number of epoch ms from -(2^53 - 1) to 2^53 - 1, got 9007199254740992',
  })
  t.false(idle.closed)
  t.deepEqual(sites(family), ['idle'])
  t.is(family.now, 0)
})
