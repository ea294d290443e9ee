// Issue 44, items 4 and 12: createFailover(family, …) hands a provider's capacity
// answer and its running back-off to the next provider, as createFailover([solvers])
// does (one walk over the providers for both forms); and its final refusal is a copy,
// not inside its own `refusals`.
const test = require('ava')
const { BudgetFamily, BudgetExhaustedError, ProviderBackoffError, createSolver, createFailover } = require('../..')
const { startMockCaptchaAI } = require('../helpers/mock-captchaai')

const task = { method: 'turnstile', sitekey: '0x4AAAAAAA-test', pageurl: 'https://example.com/login' }
const inPhp = (mock) => mock.requests.filter((r) => r.path === '/in.php').length
// in.php turns every task away for capacity (the CaptchaAI profile: capacity, 5 s back-off).
const noSlot = { 'in.php': (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":0,"request":"ERROR_NO_SLOT_AVAILABLE"}') }

function family() {
  return new BudgetFamily({ labelNames: ['provider', 'site'], attribution: { provider: 'provider', site: 'site' }, clock: 'manual', alerts: [] })
}

test('a capacity answer from the first provider hands the task to the next; during its back-off the next is asked without sending to the first', async (t) => {
  const busy = await startMockCaptchaAI({ raw: noSlot })
  const free = await startMockCaptchaAI()
  t.teardown(() => Promise.all([busy.close(), free.close()]))
  const f = family()
  t.teardown(() => f.close())
  const at = (mock) => (tracker) => createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker, pollIntervalMs: 1 })
  const failover = createFailover(f, { providers: { a: at(busy), b: at(free) } })
  // a answers ERROR_NO_SLOT_AVAILABLE: nothing solved there, b solves it.
  t.deepEqual(await failover.solve(task, { labels: { site: 's' } }), { taskId: '73000001', answer: 'token-73000001', provider: 'b' })
  t.is(inPhp(busy), 1)
  // a's back-off (5 s) runs: b is asked, nothing is sent to a.
  t.deepEqual(await failover.solve(task, { labels: { site: 's' } }), { taskId: '73000002', answer: 'token-73000002', provider: 'b' })
  t.is(inPhp(busy), 1)
  t.deepEqual(f.labels({ provider: 'a', site: 's' }).recorded, { successes: 0, failures: 0, excluded: 0, capacity: 1 })
  t.deepEqual(f.labels({ provider: 'b', site: 's' }).recorded, { successes: 2, failures: 0, excluded: 0, capacity: 0 })
  // 5 s on, a is asked again.
  f.advanceTo(5000)
  await failover.solve(task, { labels: { site: 's' } })
  t.is(inPhp(busy), 2)
})

test('every provider held by a back-off: the ProviderBackoffError of soonest retryAfterMs, with every one in refusals', async (t) => {
  const busy = await startMockCaptchaAI({ raw: noSlot })
  t.teardown(() => busy.close())
  const f = family()
  t.teardown(() => f.close())
  const solver = (tracker) => createSolver({ apiKey: 'test-key', baseUrl: busy.url, tracker })
  const failover = createFailover(f, { providers: { a: solver, b: solver } })
  // Both turned away for capacity at t = 0: the last one's error, as the list form.
  const first = await t.throwsAsync(failover.solve(task, { labels: { site: 's' } }))
  t.is(first.code, 'ERROR_NO_SLOT_AVAILABLE')
  t.is(inPhp(busy), 2)
  f.advanceTo(1000) // a and b back off until 5000: 4000 ms left each
  const err = await t.throwsAsync(failover.solve(task, { labels: { site: 's' } }), { instanceOf: ProviderBackoffError })
  t.is(inPhp(busy), 2)
  t.is(err.retryAfterMs, 4000)
  t.is(err.refusals.length, 2)
  t.false(err.refusals.includes(err))
  t.deepEqual(
    JSON.parse(JSON.stringify(err)).refusals.map((r) => r.retryAfterMs),
    [4000, 4000],
  )
})

test('every budget refusing: a copy of the soonest refusal, not inside its own refusals, and JSON.stringify of it works', async (t) => {
  const f = family()
  t.teardown(() => f.close())
  f.labels({ provider: 'a', site: 's' }).record(false)
  f.labels({ provider: 'b', site: 's' }).record(false)
  const make = (whenExhausted) => (tracker) => ({
    solve: (task, options) => tracker.guard(async () => 'token', { whenExhausted, minSolves: 0, probeIntervalMs: 3000, ...options }),
  })
  const failover = createFailover(f, { providers: { a: make('refuse'), b: make('throttle') } })
  const err = await t.throwsAsync(failover.solve(task, { labels: { site: 's' } }), { instanceOf: BudgetExhaustedError })
  // a ('refuse') cannot tell when; b's next probe is 3 s on.
  t.is(err.retryAfterMs, 3000)
  t.is(err.refusals.length, 2)
  t.false(err.refusals.includes(err))
  const json = JSON.parse(JSON.stringify(err))
  t.is(json.code, 'EBUDGET_EXHAUSTED')
  t.deepEqual(
    json.refusals.map((r) => r.retryAfterMs),
    [null, 3000],
  )
})
