// Bad answers sent back (lib/providers/bad-answer.js), createSolver({ reportBad: true }): a solve's result.reject() that the budget
// took also reports the bad answer to the provider — at most 35 % of the recent
// solves, within the provider's age limit, never awaited or thrown. The HTTP is
// answered on loopback (the CaptchaAI mock, a createTask server).
const test = require('ava')
const { ErrorBudgetTracker, createSolver, createFailover } = require('../..')
const { startMockCaptchaAI } = require('../helpers/mock-captchaai')
const { startCreateTaskServer } = require('../helpers/provider-http')

const turnstile = { method: 'turnstile', sitekey: '0x4AAAAAAA-test', pageurl: 'https://example.com/login' }
const manual = (config = {}) => new ErrorBudgetTracker({ clock: 'manual', alerts: [], ...config })
const reportsTo = (mock) => mock.requests.filter((r) => r.params.action === 'reportbad')

async function inPhpSolver(t, behaviour = {}, options = {}, config = {}) {
  const mock = await startMockCaptchaAI(behaviour)
  const tracker = manual(config)
  t.teardown(async () => {
    tracker.close()
    await mock.close()
  })
  const solver = createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker, pollIntervalMs: 1, reportBad: true, ...options })
  return { mock, tracker, solver }
}

test('one report per rejected success, and none beyond 35 % of the recent solves', async (t) => {
  const { mock, tracker, solver } = await inPhpSolver(t)
  const results = []
  for (let i = 0; i < 20; i++) results.push(await solver.solve(turnstile))
  // 8 of the 20 tokens rejected by the site: each is a failure of the budget...
  for (const result of results.slice(0, 8)) t.true(result.reject('incorrect-captcha-sol'))
  t.false(results[0].reject(), 'one verdict per solve')
  await solver.reportsSettled()
  t.like(tracker.report(), { successes: 12, failures: 8 })
  // ...but 35 % of 20 solves is 7 reports: the 8th is skipped.
  t.deepEqual(
    reportsTo(mock).map((r) => r.params.id),
    results.slice(0, 7).map((r) => r.taskId),
  )
  t.deepEqual(solver.reports, { reported: 7, skipped: 1, failed: 0 })
})

test('the share counts the last 15 minutes: later solves make room again', async (t) => {
  const { mock, tracker, solver } = await inPhpSolver(t)
  const first = []
  for (let i = 0; i < 3; i++) first.push(await solver.solve(turnstile))
  t.true(first[0].reject()) // 1 of 3 solves: 1 ≤ 0.35 × 3 = 1.05
  t.true(first[1].reject()) // 2 > 1.05: skipped
  // 15 min 1 s on: the first solves and the report have left the share's window.
  tracker.advanceTo(15 * 60_000 + 1000)
  const later = []
  for (let i = 0; i < 3; i++) later.push(await solver.solve(turnstile))
  t.true(later[0].reject())
  await solver.reportsSettled()
  t.deepEqual(
    reportsTo(mock).map((r) => r.params.id),
    [first[0].taskId, later[0].taskId],
  )
  t.deepEqual(solver.reports, { reported: 2, skipped: 1, failed: 0 })
})

test('none after the verdict window: a verdict too late is no failure and no report', async (t) => {
  const { mock, tracker, solver } = await inPhpSolver(t, {}, {}, { verdictWindowMs: 60_000 })
  const results = []
  for (let i = 0; i < 3; i++) results.push(await solver.solve(turnstile))
  tracker.advanceTo(60_001)
  t.false(results[0].reject('too late'))
  await solver.reportsSettled()
  t.is(reportsTo(mock).length, 0)
  t.deepEqual(solver.reports, { reported: 0, skipped: 0, failed: 0 })
  t.like(tracker.report(), { successes: 3, failures: 0 })
})

test("past the provider's own age limit (Anti-Captcha: 60 s) the budget takes the verdict, the report is skipped", async (t) => {
  const server = await startCreateTaskServer()
  const tracker = manual()
  t.teardown(async () => {
    tracker.close()
    await server.close()
  })
  const solver = createSolver({ provider: 'anticaptcha', apiKey: 'ac-key', baseUrl: server.url, tracker, pollIntervalMs: 1, reportBad: true })
  const task = { type: 'RecaptchaV2TaskProxyless', websiteURL: 'https://example.com/', websiteKey: '6Le-test' }
  const results = []
  for (let i = 0; i < 3; i++) {
    server.next('OK')
    results.push(await solver.solve(task))
  }
  tracker.advanceTo(60_001)
  t.true(results[0].reject())
  await solver.reportsSettled()
  t.deepEqual(solver.reports, { reported: 0, skipped: 1, failed: 0 })
  t.is(server.requests.filter((r) => r.path.startsWith('/report')).length, 0)
  t.like(tracker.report(), { successes: 2, failures: 1 })
})

for (const reports of ['refuse', 'reset']) {
  test(`a failing report endpoint (${reports}) does not reach the caller: it is counted`, async (t) => {
    const { mock, tracker, solver } = await inPhpSolver(t, { reports })
    const results = []
    for (let i = 0; i < 3; i++) results.push(await solver.solve(turnstile))
    t.true(results[0].reject('incorrect-captcha-sol'))
    await solver.reportsSettled()
    t.is(reportsTo(mock).length, 1)
    t.deepEqual(solver.reports, { reported: 0, skipped: 0, failed: 1 })
    t.like(tracker.report(), { successes: 2, failures: 1 })
    // The solver goes on as before.
    t.is((await solver.solve(turnstile)).answer, 'token-73000004')
  })
}

test("2Captcha: GET res.php with the key, action=reportbad, the task's id and json=1", async (t) => {
  const { mock, solver } = await inPhpSolver(t, {}, { provider: '2captcha', timeoutMs: 10_000 }) // polls 500 ms apart (2Captcha: 20 polls a task)
  const results = []
  for (let i = 0; i < 3; i++) results.push(await solver.solve(turnstile))
  results[1].reject()
  await solver.reportsSettled()
  t.deepEqual(reportsTo(mock), [{ path: '/res.php', httpMethod: 'GET', params: { key: 'test-key', action: 'reportbad', id: '73000002', json: '1' } }])
  t.deepEqual(solver.reports, { reported: 1, skipped: 0, failed: 0 })
})

// Each createTask provider: the method its table names for the task type, and its body.
const CREATE_TASK_CASES = [
  ['anticaptcha', 'RecaptchaV2TaskProxyless', '/reportIncorrectRecaptcha', { clientKey: 'key-1', taskId: 7301 }],
  ['anticaptcha', 'ImageToTextTask', '/reportIncorrectImageCaptcha', { clientKey: 'key-1', taskId: 7301 }],
  ['anticaptcha', 'HCaptchaTaskProxyless', '/reportIncorrectHcaptcha', { clientKey: 'key-1', taskId: 7301 }],
  ['anticaptcha', 'TurnstileTaskProxyless', null, null],
  ['capmonster', 'RecaptchaV2TaskProxyless', '/reportIncorrectTokenCaptcha', { clientKey: 'key-1', taskId: 7301 }],
  ['capmonster', 'TurnstileTask', '/reportIncorrectTokenCaptcha', { clientKey: 'key-1', taskId: 7301 }],
  ['capmonster', 'ImageToTextTask', '/reportIncorrectImageCaptcha', { clientKey: 'key-1', taskId: 7301 }],
  ['capsolver', 'ReCaptchaV2TaskProxyLess', '/feedbackTask', { clientKey: 'key-1', taskId: 7301, result: { invalid: true, message: 'incorrect-captcha-sol' } }],
]
for (const [provider, type, path, body] of CREATE_TASK_CASES) {
  test(`${provider} ${type}: ${path ?? 'not reportable (skipped)'}`, async (t) => {
    const server = await startCreateTaskServer()
    const tracker = manual()
    t.teardown(async () => {
      tracker.close()
      await server.close()
    })
    const solver = createSolver({ provider, apiKey: 'key-1', baseUrl: server.url, tracker, pollIntervalMs: 1, reportBad: true })
    const results = []
    for (let i = 0; i < 3; i++) {
      server.next('OK')
      results.push(await solver.solve({ type, websiteURL: 'https://example.com/', websiteKey: 'site-key' }))
    }
    t.true(results[2].reject('incorrect-captcha-sol'))
    await solver.reportsSettled()
    const reports = server.requests.filter((r) => r.path !== '/createTask' && r.path !== '/getTaskResult')
    t.deepEqual(reports, path === null ? [] : [{ path, body }])
    t.deepEqual(solver.reports, path === null ? { reported: 0, skipped: 1, failed: 0 } : { reported: 1, skipped: 0, failed: 0 })
  })
}

test('a createTask provider refusing the report: counted as failed', async (t) => {
  const server = await startCreateTaskServer({ reports: 'refuse' })
  const tracker = manual()
  t.teardown(async () => {
    tracker.close()
    await server.close()
  })
  const solver = createSolver({ provider: 'capmonster', apiKey: 'key-1', baseUrl: server.url, tracker, pollIntervalMs: 1, reportBad: true })
  const results = []
  for (let i = 0; i < 3; i++) {
    server.next('OK')
    results.push(await solver.solve({ type: 'TurnstileTask', websiteURL: 'https://example.com/', websiteKey: 'k' }))
  }
  t.true(results[0].reject())
  await solver.reportsSettled()
  t.deepEqual(solver.reports, { reported: 0, skipped: 0, failed: 1 })
})

test('without reportBad: result.reject() is the budget verdict only, nothing is sent', async (t) => {
  const { mock, tracker, solver } = await inPhpSolver(t, {}, { reportBad: false })
  const results = []
  for (let i = 0; i < 3; i++) results.push(await solver.solve(turnstile))
  t.true(results[0].reject())
  await solver.reportsSettled()
  t.is(reportsTo(mock).length, 0)
  t.deepEqual(solver.reports, { reported: 0, skipped: 0, failed: 0 })
  t.like(tracker.report(), { successes: 2, failures: 1 })
})

test('result.reject is not enumerable (the result prints as the answer) and a failover keeps it', async (t) => {
  const { mock, tracker, solver } = await inPhpSolver(t)
  const failover = createFailover([solver])
  const results = []
  for (let i = 0; i < 3; i++) results.push(await failover.solve(turnstile))
  t.deepEqual(Object.keys(results[0]), ['taskId', 'answer', 'solver'])
  t.true(results[0].reject())
  await solver.reportsSettled()
  t.is(reportsTo(mock).length, 1)
  t.like(tracker.report(), { successes: 2, failures: 1 })
})

test('bad input: reportBad not a boolean, a reason not a string', async (t) => {
  const tracker = manual()
  t.teardown(() => tracker.close())
  t.throws(() => createSolver({ apiKey: 'k', tracker, reportBad: 'yes' }), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_TYPE',
    message: 'createSolver options.reportBad must be a boolean, got string',
  })
  const { mock, solver } = await inPhpSolver(t)
  const results = []
  for (let i = 0; i < 3; i++) results.push(await solver.solve(turnstile))
  t.throws(() => results[0].reject(42), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_TYPE' })
  await solver.reportsSettled()
  t.is(reportsTo(mock).length, 0)
  t.true(results[0].reject(), 'the bad call changed nothing')
})

test("docs/providers.md's report table is each profile's reportBad, row for row", (t) => {
  const { PROVIDERS } = require('../../lib/guard/profiles.js')
  const page = require('node:fs').readFileSync(require('node:path').join(__dirname, '..', '..', 'docs', 'providers.md'), 'utf8')
  const section = page.split('## Reporting a bad answer')[1].split(/^## /m)[0]
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| |\s*\|$/g, '').replace(/`/g, '')))
  const age = (ms) => (ms === null ? '—' : ms >= 120_000 ? `${ms / 60_000} min` : `${ms / 1000} s`) // 60 s as Anti-Captcha words it
  const expected = Object.entries(PROVIDERS).flatMap(([name, { protocol, reportBad }]) =>
    Object.entries(reportBad.endpoints).map(([pattern, endpoint]) => [
      name,
      protocol === 'in.php' ? `res.php?action=${endpoint}` : endpoint,
      pattern,
      age(reportBad.withinMs),
      `${Math.round(reportBad.maxShare * 100)} %`,
    ]),
  )
  t.deepEqual(rows, expected)
  // 2Captcha refuses reports over 40 % of recent solves or older than 15 minutes; Anti-Captcha's limit is 60 s.
  t.true(PROVIDERS['2captcha'].reportBad.maxShare < 0.4)
  t.is(PROVIDERS['2captcha'].reportBad.withinMs, 15 * 60_000)
  t.is(PROVIDERS.anticaptcha.reportBad.withinMs, 60_000)
})
