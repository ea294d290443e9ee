// createFailover(): solvers tried in order, each under its own budget; and the
// solver's whenExhausted / minSolves / probeIntervalMs options.
const test = require('ava')
const { ErrorBudgetTracker, BudgetExhaustedError, SolveError, createSolver, createFailover } = require('../..')
const { startMockCaptchaAI } = require('../helpers/mock-captchaai')

const task = { method: 'turnstile', sitekey: '0x4AAAAAAA-test', pageurl: 'https://example.com/login' }
const manual = () => new ErrorBudgetTracker({ clock: 'manual' })
const inPhp = (mock) => mock.requests.filter((r) => r.path === '/in.php').length

test('the second solver takes over while the first one is throttled; a failure that ran is final', async (t) => {
  const broken = await startMockCaptchaAI({ outcome: 'unsolvable' })
  const healthy = await startMockCaptchaAI()
  t.teardown(() => Promise.all([broken.close(), healthy.close()]))
  const first = manual()
  const second = manual()
  const options = { apiKey: 'test-key', pollIntervalMs: 1, minSolves: 0 }
  const failover = createFailover([
    createSolver({ ...options, baseUrl: broken.url, tracker: first }),
    createSolver({ ...options, baseUrl: healthy.url, tracker: second }),
  ])
  // The first solver ran and failed: recorded there, and not sent again elsewhere.
  await t.throwsAsync(failover.solve(task), { instanceOf: SolveError, code: 'ERROR_CAPTCHA_UNSOLVABLE' })
  t.is(inPhp(healthy), 0)
  // 1 failure of 1: the first budget is exhausted and its guard throttled: the second solves.
  const result = await failover.solve(task)
  t.deepEqual(result, { taskId: '73000001', answer: 'token-73000001', solver: 1 })
  t.is(inPhp(broken), 1) // nothing sent to the throttled one
  t.deepEqual(first.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
  t.deepEqual(second.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
  t.like(first.report().throttle, { state: 'throttled', refused: 1 })
  // 20 s on (the probe interval), the first solver gets its probe again.
  first.advanceTo(20_000)
  await t.throwsAsync(failover.solve(task), { code: 'ERROR_CAPTCHA_UNSOLVABLE' })
  t.is(inPhp(broken), 2)
})

test('every budget refusing: the refusal of soonest retryAfterMs, with every refusal', async (t) => {
  const mock = await startMockCaptchaAI()
  t.teardown(() => mock.close())
  const a = manual()
  const b = manual()
  a.record(false)
  b.record(false)
  const failover = createFailover([
    createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker: a, whenExhausted: 'refuse' }),
    createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker: b, minSolves: 0, probeIntervalMs: 7000 }),
  ])
  const err = await t.throwsAsync(failover.solve(task), { instanceOf: BudgetExhaustedError })
  t.is(err.retryAfterMs, 7000) // b's next probe; a ('refuse') cannot tell
  t.deepEqual(
    err.refusals.map((e) => e.retryAfterMs),
    [null, 7000],
  )
  t.is(inPhp(mock), 0)
  t.is(failover.solvers.length, 2)
})

test('bad input: createFailover and the solver options', (t) => {
  t.throws(() => createFailover('x'), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_TYPE',
    message: 'createFailover(solvers): solvers must be an array, got string',
  })
  t.throws(() => createFailover([]), { instanceOf: RangeError, code: 'ERR_OUT_OF_RANGE' })
  t.throws(() => createFailover([{}]), { instanceOf: TypeError, message: 'createFailover(solvers): solvers[0] must be a solver (createSolver()), got object' })
  // A hole is checked like any index, not skipped (it made solve() throw an uncoded TypeError later).
  // eslint-disable-next-line no-sparse-arrays
  t.throws(() => createFailover([, { solve: async () => ({}) }]), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_TYPE',
    message: 'createFailover(solvers): solvers[0] must be a solver (createSolver()), got undefined',
  })
  // eslint-disable-next-line no-sparse-arrays
  t.throws(() => createFailover([{ solve: async () => ({}) }, ,]), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_TYPE' })
  const tracker = manual()
  t.throws(() => createSolver({ apiKey: 'k', tracker, whenExhausted: 'pause' }), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_VALUE',
    message: "createSolver options.whenExhausted must be one of 'throttle', 'refuse', got 'pause'",
  })
  t.throws(() => createSolver({ apiKey: 'k', tracker, probeIntervalMs: 0 }), {
    instanceOf: RangeError,
    code: 'ERR_OUT_OF_RANGE',
    message: 'createSolver options.probeIntervalMs must be an integer in [1, 2147483647], got 0',
  })
})
