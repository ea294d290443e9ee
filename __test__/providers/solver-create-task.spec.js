// createSolver({ provider }) for the createTask / getTaskResult providers (Anti-Captcha,
// CapSolver, CapMonster): lib/providers/create-task.js against a loopback server.
const test = require('ava')
const http = require('node:http')
const { startMockCaptchaAI } = require('../helpers/mock-captchaai')
const { ErrorBudgetTracker, createSolver, SolveError, GuardTimeoutError, ProviderBackoffError } = require('../..')
const { startCreateTaskServer, TASK_ID, TOKEN } = require('../helpers/provider-http')

const TASK = { type: 'RecaptchaV2TaskProxyless', websiteURL: 'https://shop.example/login', websiteKey: '6Le-test-sitekey' }

async function setUp(t, provider, solverOptions = {}) {
  const server = await startCreateTaskServer()
  t.teardown(() => server.close())
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const solver = createSolver({ apiKey: 'test-key', provider, baseUrl: server.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000, ...solverOptions })
  return { server, tracker, solver }
}

for (const provider of ['anticaptcha', 'capsolver', 'capmonster']) {
  test(`${provider}: createTask, getTaskResult past 'processing', the task id and answer on the result`, async (t) => {
    const { server, tracker, solver } = await setUp(t, provider)
    server.next('OK', 2)
    t.deepEqual(await solver.solve(TASK), { taskId: String(TASK_ID), answer: TOKEN, solution: { gRecaptchaResponse: TOKEN } })
    t.deepEqual(
      server.requests.map((r) => r.path),
      ['/createTask', '/getTaskResult', '/getTaskResult', '/getTaskResult'],
    )
    t.deepEqual(server.requests[0].body, { clientKey: 'test-key', task: TASK })
    t.deepEqual(server.requests[1].body, { clientKey: 'test-key', taskId: TASK_ID })
    t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
    t.is(solver.provider, provider)
  })
}

test('ERROR_CAPTCHA_UNSOLVABLE from getTaskResult: a SolveError with the stage and task id, one failure', async (t) => {
  const { server, tracker, solver } = await setUp(t, 'anticaptcha')
  server.next('ERROR_CAPTCHA_UNSOLVABLE')
  const err = await t.throwsAsync(solver.solve(TASK), { instanceOf: SolveError, code: 'ERROR_CAPTCHA_UNSOLVABLE' })
  t.like(err, { stage: 'result', taskId: String(TASK_ID), httpStatus: 200 })
  t.is(err.message, `Anti-Captcha getTaskResult (task ${TASK_ID}) answered ERROR_CAPTCHA_UNSOLVABLE: "the service's words for ERROR_CAPTCHA_UNSOLVABLE"`)
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test("the provider's profile classifies: ERROR_ZERO_BALANCE excluded, ERROR_NO_SLOT_AVAILABLE capacity and a 5 s hold", async (t) => {
  const { server, tracker, solver } = await setUp(t, 'anticaptcha')
  server.next('ERROR_ZERO_BALANCE')
  const err = await t.throwsAsync(solver.solve(TASK), { instanceOf: SolveError, code: 'ERROR_ZERO_BALANCE' })
  t.like(err, { stage: 'submit', taskId: null })
  server.next('ERROR_NO_SLOT_AVAILABLE')
  await t.throwsAsync(solver.solve(TASK), { code: 'ERROR_NO_SLOT_AVAILABLE' })
  const held = await t.throwsAsync(solver.solve(TASK), { instanceOf: ProviderBackoffError })
  t.is(held.retryAfterMs, 5000)
  t.is(server.requests.length, 2, 'nothing sent while held')
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 1, capacity: 1 })
})

test('an answer that is not the protocol (an HTML error page): ERR_BAD_RESPONSE, the key redacted, one failure', async (t) => {
  const server = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => res.writeHead(502, { 'content-type': 'text/html' }).end('<html>bad gateway for key test-key</html>'))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const solver = createSolver({ apiKey: 'test-key', provider: 'capsolver', baseUrl: `http://127.0.0.1:${server.address().port}`, tracker, pollIntervalMs: 1 })
  const err = await t.throwsAsync(solver.solve(TASK), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
  t.like(err, { stage: 'submit', httpStatus: 502 })
  t.true(err.message.startsWith("CapSolver createTask answer is not the protocol's JSON (HTTP 502): "), err.message)
  t.false(err.message.includes('test-key'), err.message)
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test('every solve has a deadline: a task never ready fails once, with GuardTimeoutError', async (t) => {
  const { server, tracker, solver } = await setUp(t, 'capmonster', { timeoutMs: 200, pollIntervalMs: 20 })
  server.next('OK', 1_000_000)
  await t.throwsAsync(solver.solve(TASK), { instanceOf: GuardTimeoutError })
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test('a createTask task must be an object with a type: TypeError, nothing sent or recorded', async (t) => {
  const { server, tracker, solver } = await setUp(t, 'anticaptcha')
  const err = await t.throwsAsync(solver.solve({ websiteURL: 'https://x.example/' }), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_TYPE' })
  t.is(err.message, "solve(task): task.type must be a non-empty string (the provider's task type, e.g. 'RecaptchaV2TaskProxyless'), got undefined")
  t.is(server.requests.length, 0)
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 0 })
})

test('createSolver options.provider: an unknown provider is refused', (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const err = t.throws(() => createSolver({ apiKey: 'k', tracker, provider: 'nocaptcha' }), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_VALUE' })
  t.is(err.message, "createSolver options.provider must be one of 'captchaai', '2captcha', 'anticaptcha', 'capsolver', 'capmonster', got 'nocaptcha'")
})

test('2captcha through the in.php protocol: its profile, its name in messages, its base URL by default', async (t) => {
  const mock = await startMockCaptchaAI({ outcome: 'unsolvable' })
  t.teardown(() => mock.close())
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  // 2Captcha allows about 20 polls a task: a 20 s deadline spaces them 1 s apart.
  const solver = createSolver({ apiKey: 'test-key', provider: '2captcha', baseUrl: mock.url, tracker, pollIntervalMs: 1, timeoutMs: 20_000 })
  const err = await t.throwsAsync(solver.solve({ method: 'turnstile', sitekey: 'k', pageurl: 'https://x.example/' }), { code: 'ERROR_CAPTCHA_UNSOLVABLE' })
  t.is(err.message, '2Captcha res.php (task 73000001) answered ERROR_CAPTCHA_UNSOLVABLE')
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
  t.is(createSolver({ apiKey: 'k', tracker, provider: '2captcha' }).baseUrl, 'https://2captcha.com/')
  t.is(createSolver({ apiKey: 'k', tracker, provider: 'anticaptcha' }).baseUrl, 'https://api.anti-captcha.com/')
})

test('2captcha: at most 20 res.php polls a task, however short pollIntervalMs (polls spaced by the deadline)', async (t) => {
  const mock = await startMockCaptchaAI({ pollsUntilReady: Infinity })
  t.teardown(() => mock.close())
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  // 1 ms asked; 4 s / 20 polls: one every 200 ms at the most, the 20th at 4 s, the deadline's.
  const solver = createSolver({ apiKey: 'test-key', provider: '2captcha', baseUrl: mock.url, tracker, pollIntervalMs: 1, timeoutMs: 4000 })
  await t.throwsAsync(solver.solve({ method: 'turnstile', sitekey: 'k', pageurl: 'https://x.example/' }), { instanceOf: GuardTimeoutError })
  const polls = mock.requests.filter((r) => r.path === '/res.php').length
  t.true(polls <= 20, `${polls} polls`)
  t.true(polls >= 1, `${polls} polls`)
})

// Issue 44 item 14: a task JSON cannot hold (a BigInt, a circular structure) is the
// caller's bug, found before anything is sent or recorded, as in.php tasks' are.
const circular = () => {
  const task = { ...TASK }
  task.self = task
  return task
}
const deepCircular = () => {
  const inner = { b: {} }
  inner.b.c = inner
  return { ...TASK, a: inner }
}
const unserialisable = [
  // [what, task, message, code]
  [
    'a BigInt',
    { ...TASK, minScore: 1n },
    'solve(task): task.minScore must be JSON (a string, number, boolean, null, array or object), got bigint',
    'ERR_INVALID_ARG_TYPE',
  ],
  ['a nested BigInt', { ...TASK, proxy: { port: 8080n } }, 'solve(task): task.proxy.port must be JSON', 'ERR_INVALID_ARG_TYPE'],
  ['a BigInt in an array', { ...TASK, cookies: [{ 'max-age': 1n }] }, 'solve(task): task.cookies[0]["max-age"] must be JSON', 'ERR_INVALID_ARG_TYPE'],
  ['a task holding itself', circular(), 'solve(task): task.self refers back to task: a circular structure cannot be sent as JSON', 'ERR_INVALID_ARG_VALUE'],
  ['a deeper circle', deepCircular(), 'solve(task): task.a.b.c refers back to task.a: a circular structure', 'ERR_INVALID_ARG_VALUE'],
  [
    'a toJSON that throws',
    {
      ...TASK,
      when: {
        toJSON() {
          throw new Error('the date is not set')
        },
      },
    },
    'solve(task): task cannot be sent as JSON: the date is not set',
    'ERR_INVALID_ARG_VALUE',
  ],
]
for (const [what, task, message, code] of unserialisable) {
  test(`a createTask task with ${what}: a TypeError naming the field, nothing sent or recorded`, async (t) => {
    const { server, tracker, solver } = await setUp(t, 'capsolver')
    server.next('OK')
    const err = await t.throwsAsync(solver.solve(task), { instanceOf: TypeError, code })
    t.true(err.message.startsWith(message), err.message)
    t.is(server.requests.length, 0)
    t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 0 })
  })
}

test('a createTask task with the same object twice (not a circle) is sent', async (t) => {
  const { server, tracker, solver } = await setUp(t, 'capsolver')
  const shared = { name: 'session', value: 'abc' }
  server.next('OK')
  await solver.solve({ ...TASK, first: shared, again: [shared] })
  t.deepEqual(server.requests[0].body.task, { ...TASK, first: shared, again: [shared] })
  t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
})
