// Issue 30, item 18: when every budget refuses, createFailover rejects with a
// refusal that holds every solver's in `refusals` — not itself among them, so the
// error serialises (JSON.stringify threw "Converting circular structure").
const test = require('ava')
const { ErrorBudgetTracker, BudgetExhaustedError, createSolver, createFailover } = require('../..')
const { startMockCaptchaAI } = require('../helpers/mock-captchaai')

const task = { method: 'turnstile', sitekey: '0x4AAAAAAA-test', pageurl: 'https://example.com/login' }

test('the final refusal is not in its own refusals, and JSON.stringify of it works', async (t) => {
  const mock = await startMockCaptchaAI()
  t.teardown(() => mock.close())
  const a = new ErrorBudgetTracker({ clock: 'manual' })
  const b = new ErrorBudgetTracker({ clock: 'manual' })
  a.record(false)
  b.record(false)
  const failover = createFailover([
    createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker: a, minSolves: 0, probeIntervalMs: 3000 }),
    createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker: b, whenExhausted: 'refuse' }),
  ])
  const err = await t.throwsAsync(failover.solve(task), { instanceOf: BudgetExhaustedError })
  t.is(err.retryAfterMs, 3000)
  t.is(err.refusals.length, 2)
  t.false(err.refusals.includes(err))
  t.true(err.refusals.every((r) => r instanceof BudgetExhaustedError && r.refusals === undefined))
  t.deepEqual(
    err.refusals.map((r) => r.retryAfterMs),
    [3000, null],
  )
  // One solve refused in each window of 1 failure: the report of a's refusal, as the error's.
  t.is(err.message, err.refusals[0].message)
  const json = JSON.parse(JSON.stringify(err))
  t.is(json.code, 'EBUDGET_EXHAUSTED')
  t.is(json.retryAfterMs, 3000)
  t.deepEqual(
    json.refusals.map((r) => r.retryAfterMs),
    [3000, null],
  )
  t.deepEqual(
    json.refusals.map((r) => [r.report.total, r.report.failures]),
    [
      [1, 1],
      [1, 1],
    ],
  )
})
