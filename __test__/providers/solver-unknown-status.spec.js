// A getTaskResult answer (errorId 0) whose status is neither 'processing' nor
// 'ready' is no answer of the protocol: ERR_BAD_RESPONSE at once, naming the
// status, one failure; never polled again until the deadline (ETIMEDOUT).
const test = require('ava')
const { ErrorBudgetTracker, createSolver, SolveError } = require('../..')
const { startCreateTaskServer, TASK_ID } = require('../helpers/provider-http')

const TASK = { type: 'RecaptchaV2TaskProxyless', websiteURL: 'https://shop.example/login', websiteKey: '6Le-test-sitekey' }

// [what, the getTaskResult answer, how the message names its status]
const unknown = [
  ['no status', { errorId: 0 }, 'no status'],
  ['status: null', { errorId: 0, status: null }, 'status null'],
  ['status: 7', { errorId: 0, status: 7 }, 'status number'],
  ["status: 'failed'", { errorId: 0, status: 'failed' }, 'status "failed"'],
  ["status: 'idle'", { errorId: 0, status: 'idle' }, 'status "idle"'],
  ["status: 'READY' (not the protocol's lower case)", { errorId: 0, status: 'READY', solution: { gRecaptchaResponse: 'tok' } }, 'status "READY"'],
  ['a status with a line break and an escape', { errorId: 0, status: 'x\n\u001b[2J' }, 'status "x\\n\\u001b[2J"'],
]
for (const [what, result, named] of unknown) {
  test(`createTask: getTaskResult with ${what} is ERR_BAD_RESPONSE at once, one failure, polled once`, async (t) => {
    const server = await startCreateTaskServer()
    t.teardown(() => server.close())
    const tracker = new ErrorBudgetTracker({ clock: 'manual' })
    const solver = createSolver({ apiKey: 'test-key', provider: 'capsolver', baseUrl: server.url, tracker, pollIntervalMs: 1, timeoutMs: 60_000 })
    // Every later poll would be answered the same: only the client's own rule ends the solve.
    server.answers([['/createTask', { errorId: 0, taskId: TASK_ID }], ...Array.from({ length: 50 }, () => ['/getTaskResult', result])])
    const err = await t.throwsAsync(solver.solve(TASK), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
    t.is(err.message, `CapSolver getTaskResult (task ${TASK_ID}) answered ${named}, neither "processing" nor "ready"`)
    t.like(err, { stage: 'result', taskId: String(TASK_ID), httpStatus: 200 })
    t.is(server.requests.filter((r) => r.path === '/getTaskResult').length, 1)
    t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
  })
}
