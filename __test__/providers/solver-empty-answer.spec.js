// Issue 44 item 6: a "ready" answer that holds no token is not a solve. Both
// protocols: createTask's `solution` missing, null, empty or with an empty answer
// field; in.php / res.php's status 1 with an empty `request`. Each is
// ERR_BAD_RESPONSE and one failure, never a success with an empty answer.
const test = require('ava')
const { ErrorBudgetTracker, createSolver, SolveError } = require('../..')
const { startMockCaptchaAI } = require('../helpers/mock-captchaai')
const { startCreateTaskServer, TASK_ID } = require('../helpers/provider-http')

const TASK = { type: 'RecaptchaV2TaskProxyless', websiteURL: 'https://shop.example/login', websiteKey: '6Le-test-sitekey' }
const TURNSTILE = { method: 'turnstile', sitekey: '0x4AAAAAAAB-test', pageurl: 'https://shop.example/login' }
const NOTHING = { successes: 0, failures: 1, excluded: 0, capacity: 0 }

async function createTaskSolver(t) {
  const server = await startCreateTaskServer()
  t.teardown(() => server.close())
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const solver = createSolver({ apiKey: 'test-key', provider: 'capsolver', baseUrl: server.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000 })
  return { server, tracker, solver }
}

// [what, the getTaskResult answer, the message's tail, as the client words it]
const readyWithout = [
  ['no solution at all', { errorId: 0, status: 'ready' }, 'answered ready without a solution'],
  ['solution: null', { errorId: 0, status: 'ready', solution: null }, 'answered ready without a solution'],
  ['solution: {}', { errorId: 0, status: 'ready', solution: {} }, 'answered ready with an empty solution'],
  ["gRecaptchaResponse: ''", { errorId: 0, status: 'ready', solution: { gRecaptchaResponse: '' } }, 'answered ready without a token (gRecaptchaResponse: "")'],
  ['token: null', { errorId: 0, status: 'ready', solution: { token: null, userAgent: 'UA' } }, 'answered ready without a token (token: null)'],
  ['text: 42', { errorId: 0, status: 'ready', solution: { text: 42 } }, 'answered ready without a token (text: 42)'],
]
for (const [what, ready, tail] of readyWithout) {
  test(`createTask: 'ready' with ${what} is ERR_BAD_RESPONSE and one failure`, async (t) => {
    const { server, tracker, solver } = await createTaskSolver(t)
    server.answers([
      ['/createTask', { errorId: 0, taskId: TASK_ID }],
      ['/getTaskResult', ready],
    ])
    const err = await t.throwsAsync(solver.solve(TASK), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
    t.is(err.message, `CapSolver getTaskResult (task ${TASK_ID}) ${tail}`)
    t.like(err, { stage: 'result', taskId: String(TASK_ID), httpStatus: 200 })
    t.deepEqual(tracker.recorded, NOTHING)
  })
}

test("createTask: a solution with another task family's fields (no answer field) is still a solve, answer null", async (t) => {
  const { server, tracker, solver } = await createTaskSolver(t)
  const solution = { cookies: { datadome: 'abc' }, userAgent: 'UA' }
  server.answers([
    ['/createTask', { errorId: 0, taskId: TASK_ID }],
    ['/getTaskResult', { errorId: 0, status: 'ready', solution }],
  ])
  t.deepEqual(await solver.solve(TASK), { taskId: String(TASK_ID), answer: null, solution })
  t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
})

test("createTask: an empty taskId ('') is ERR_BAD_RESPONSE at submission, nothing polled", async (t) => {
  const { server, tracker, solver } = await createTaskSolver(t)
  server.answers([['/createTask', { errorId: 0, taskId: '' }]])
  const err = await t.throwsAsync(solver.solve(TASK), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
  t.is(err.message, 'CapSolver createTask answered no taskId')
  t.is(err.stage, 'submit')
  t.deepEqual(
    server.requests.map((r) => r.path),
    ['/createTask'],
  )
  t.deepEqual(tracker.recorded, NOTHING)
})

test('in.php: res.php status 1 with an empty request is ERR_BAD_RESPONSE and one failure', async (t) => {
  const mock = await startMockCaptchaAI({ pollsUntilReady: 0, answer: () => '' })
  t.teardown(() => mock.close())
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const solver = createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000 })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
  t.is(err.message, 'CaptchaAI res.php (task 73000001) answered status 1 without an answer')
  t.like(err, { stage: 'result', taskId: '73000001', httpStatus: 200 })
  t.deepEqual(tracker.recorded, NOTHING)
})

test('in.php: status 1 with an empty task id is ERR_BAD_RESPONSE at submission, nothing polled', async (t) => {
  const submitted = (res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":1,"request":""}')
  const mock = await startMockCaptchaAI({ raw: { 'in.php': submitted } })
  t.teardown(() => mock.close())
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const solver = createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000 })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
  t.is(err.message, 'CaptchaAI in.php answered status 1 without a task id')
  t.like(err, { stage: 'submit', taskId: null })
  t.deepEqual(
    mock.requests.map((r) => r.path),
    ['/in.php'],
  )
  t.deepEqual(tracker.recorded, NOTHING)
})
