const test = require('ava')
const { ErrorBudgetTracker, createSolver, defaultCountsAsFailure, CALLER_ERROR_CODES, SolveError, GuardTimeoutError, BudgetExhaustedError } = require('../..')
const { startMockCaptchaAI, refusedUrl } = require('../helpers/mock-captchaai')
const { settle } = require('../helpers/deliveries')

const TURNSTILE = { method: 'turnstile', sitekey: '0x4AAAAAAAB-test', pageurl: 'https://shop.example/login' }
const FIRST_ID = '73000001' // the mock's first task id

// A mock on an ephemeral port, closed when the test ends, and a fast solver on it.
async function setUp(t, behaviour = {}, solverOptions = {}) {
  const mock = await startMockCaptchaAI(behaviour)
  t.teardown(() => mock.close())
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  // A deadline no loaded machine reaches on the paths that succeed or fail on their own;
  // the timeout tests set theirs.
  const solver = createSolver({ apiKey: 'test-key', baseUrl: mock.url, tracker, pollIntervalMs: 5, timeoutMs: 60_000, ...solverOptions })
  return { mock, tracker, solver }
}

test('success (turnstile): submit, poll past CAPCHA_NOT_READY, one success recorded', async (t) => {
  const { mock, tracker, solver } = await setUp(t, { pollsUntilReady: 2 })
  t.deepEqual(await solver.solve(TURNSTILE), { taskId: FIRST_ID, answer: `token-${FIRST_ID}` })
  t.deepEqual(
    mock.requests.map((r) => [r.httpMethod, r.path]),
    [
      ['POST', '/in.php'],
      ['GET', '/res.php'],
      ['GET', '/res.php'],
      ['GET', '/res.php'],
    ],
  )
  t.deepEqual(mock.requests[0].params, { key: 'test-key', json: '1', ...TURNSTILE })
  t.deepEqual(mock.requests[1].params, { key: 'test-key', action: 'get', id: FIRST_ID, json: '1' })
  t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
})

test('success (userrecaptcha with extra parameters; booleans sent as 1/0)', async (t) => {
  const { mock, solver } = await setUp(t)
  const task = { method: 'userrecaptcha', googlekey: '6Le-test', pageurl: 'https://shop.example/', invisible: true, enterprise: false }
  t.is((await solver.solve(task)).answer, `token-${FIRST_ID}`)
  t.like(mock.requests[0].params, { method: 'userrecaptcha', googlekey: '6Le-test', invisible: '1', enterprise: '0' })
})

test('success (base64 image): the answer is the recognised text', async (t) => {
  const { mock, tracker, solver } = await setUp(t, { pollsUntilReady: 0, answer: (params) => `text of ${params.body.length} chars` })
  const body = Buffer.from('not really a png').toString('base64')
  t.deepEqual(await solver.solve({ method: 'base64', body }), { taskId: FIRST_ID, answer: `text of ${body.length} chars` })
  t.is(mock.requests[0].params.body, body, 'the base64 body arrives intact (+, / and = survive the form encoding)')
  t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
})

test('unsolvable: SolveError ERROR_CAPTCHA_UNSOLVABLE from res.php, one failure', async (t) => {
  const { tracker, solver } = await setUp(t, { outcome: 'unsolvable' })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERROR_CAPTCHA_UNSOLVABLE' })
  t.like(err, { stage: 'result', taskId: FIRST_ID, httpStatus: 200 })
  t.is(err.message, `CaptchaAI res.php (task ${FIRST_ID}) answered ERROR_CAPTCHA_UNSOLVABLE`)
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test("zero balance: SolveError ERROR_ZERO_BALANCE from in.php, CaptchaAI's no free thread: capacity, not a failure", async (t) => {
  const { mock, tracker, solver } = await setUp(t, { zeroBalance: true })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERROR_ZERO_BALANCE' })
  t.like(err, { stage: 'submit', taskId: null, message: 'CaptchaAI in.php answered ERROR_ZERO_BALANCE' })
  t.is(mock.requests.length, 1, 'no polling after a refused submit')
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 1 })
})

test('zero balance counts when the classifier says so', async (t) => {
  const countsAsFailure = (err) => err.code === 'ERROR_ZERO_BALANCE' || defaultCountsAsFailure(err)
  const { tracker, solver } = await setUp(t, { zeroBalance: true }, { countsAsFailure })
  await t.throwsAsync(solver.solve(TURNSTILE), { code: 'ERROR_ZERO_BALANCE' })
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test('a wrong API key is the caller’s bug: SolveError, excluded (nothing in the window)', async (t) => {
  const { tracker, solver } = await setUp(t, {}, { apiKey: 'someone-elses-key' })
  await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERROR_KEY_DOES_NOT_EXIST' })
  t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 1, capacity: 0 })
})

test('slow service: the solver’s timeoutMs fails the attempt once', async (t) => {
  const { tracker, solver } = await setUp(t, { delayMs: 1000 }, { timeoutMs: 40 })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: GuardTimeoutError, code: 'ETIMEDOUT' })
  t.is(err.timeoutMs, 40)
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test('never ready: the timeout stops the polling, and records once', async (t) => {
  // The 5 ms polls need only start once before the deadline. A loaded machine may
  // take longer than the deadline to submit (ava runs spec files in parallel): then
  // the run is repeated with a deadline four times as long, so the outcome does not
  // depend on the load; a solver that never polls still fails after the last one.
  for (const timeoutMs of [1000, 4000, 16_000]) {
    const run = await neverReady(t, timeoutMs)
    if (run.polls.length === 0 && timeoutMs < 16_000) continue
    t.true(run.polls.length >= 1, 'polled before the deadline')
    await Promise.all(run.polls.map((p) => p.settled))
    const sent = run.polls.length
    // A loop that ignored the abort would start its next poll one 5 ms interval after the
    // last one settled; this 60 ms timer is due after that one, however loaded the machine.
    await settle(60)
    t.is(run.polls.length, sent, 'no poll after the deadline')
    t.deepEqual(
      run.polls.filter((p) => p.afterDeadline),
      [],
      'no poll started with the aborted signal',
    )
    t.true(run.mock.requests.filter((r) => r.path === '/res.php').length <= sent, 'the mock saw only those polls')
    t.deepEqual(run.tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
    return
  }
})

// One solve against a mock that is never ready, with a deadline of `timeoutMs`.
async function neverReady(t, timeoutMs) {
  const { mock, tracker, solver } = await setUp(t, { pollsUntilReady: Infinity }, { timeoutMs })
  // The first fetch of a worker loads undici (up to a second on a busy machine): do it
  // before the clock starts, so that the deadline goes to submitting and polling.
  await (await fetch(`${mock.url}/warm-up`)).text()
  // Every poll as the solver starts it: whether its signal was already aborted (the
  // deadline passed), and when it settles. No fixed sleeps: a poll in flight at the
  // deadline is awaited, however long a loaded machine takes to abort it.
  const polls = []
  const realFetch = globalThis.fetch
  globalThis.fetch = function fetchSpy(url, init) {
    const pending = realFetch.call(this, url, init)
    if (String(url).startsWith(`${mock.url}/res.php`)) {
      polls.push({
        afterDeadline: Boolean(init?.signal?.aborted),
        settled: pending.then(
          () => {},
          () => {},
        ),
      })
    }
    return pending
  }
  try {
    await t.throwsAsync(solver.solve(TURNSTILE), { code: 'ETIMEDOUT' })
  } finally {
    globalThis.fetch = realFetch
  }
  return { mock, tracker, polls }
}

test('malformed JSON from in.php: SolveError ERR_BAD_RESPONSE, one failure', async (t) => {
  const { tracker, solver } = await setUp(t, { malformed: 'in.php' })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
  t.like(err, { stage: 'submit', taskId: null, httpStatus: 200 })
  t.true(err.message.includes('{\\"status\\":1,\\"re'), err.message)
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test('malformed JSON from res.php: SolveError ERR_BAD_RESPONSE with the task id', async (t) => {
  const { tracker, solver } = await setUp(t, { malformed: 'res.php' })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
  t.like(err, { stage: 'result', taskId: FIRST_ID })
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test('connection refused: SolveError ERR_NETWORK with fetch’s error as cause, one failure', async (t) => {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const solver = createSolver({ apiKey: 'test-key', baseUrl: await refusedUrl(), tracker, pollIntervalMs: 5, timeoutMs: 60_000 })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERR_NETWORK' })
  t.is(err.message, 'CaptchaAI submit request failed: ECONNREFUSED')
  t.is(err.cause.cause.code, 'ECONNREFUSED')
  t.like(err, { stage: 'submit', httpStatus: null })
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test('baseUrl keeps a proxy’s path prefix; an HTTP error page is ERR_BAD_RESPONSE', async (t) => {
  const mock = await startMockCaptchaAI()
  t.teardown(() => mock.close())
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const solver = createSolver({ apiKey: 'test-key', baseUrl: `${mock.url}/captchaai`, tracker, pollIntervalMs: 5 })
  t.is(solver.baseUrl, `${mock.url}/captchaai/`)
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { code: 'ERR_BAD_RESPONSE' })
  t.is(mock.requests[0].path, '/captchaai/in.php')
  t.is(err.httpStatus, 404)
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test("exhausted budget ('refuse'): BudgetExhaustedError and no request at all; critical solves anyway", async (t) => {
  const { mock, tracker, solver } = await setUp(t, {}, { whenExhausted: 'refuse' }) // the throttle: failover.spec.js
  tracker.record(true)
  tracker.record(false) // 1 of 2 at 95 % → exhausted
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: BudgetExhaustedError, code: 'EBUDGET_EXHAUSTED' })
  t.is(err.report.status, 'exhausted')
  t.is(mock.requests.length, 0)
  t.is((await solver.solve(TURNSTILE, { critical: true })).answer, `token-${FIRST_ID}`)
  t.deepEqual(tracker.recorded, { successes: 2, failures: 1, excluded: 0, capacity: 0 })
})

test('the default classifier: caller codes do not count, everything else does', (t) => {
  const solveError = (code) => new SolveError(code, code, { stage: 'submit' })
  for (const code of ['ERROR_WRONG_USER_KEY', 'ERROR_KEY_DOES_NOT_EXIST', 'ERROR_ZERO_BALANCE', 'ERROR_PAGEURL']) {
    t.true(CALLER_ERROR_CODES.includes(code))
    t.false(defaultCountsAsFailure(solveError(code)), code)
  }
  for (const code of ['ERROR_CAPTCHA_UNSOLVABLE', 'ERROR_NO_SLOT_AVAILABLE', 'ERROR_WRONG_CAPTCHA_ID', 'ERR_NETWORK', 'ERR_BAD_RESPONSE', 'ERROR_NEW_ONE']) {
    t.true(defaultCountsAsFailure(solveError(code)), code)
  }
  t.true(defaultCountsAsFailure(Object.assign(new Error('not a SolveError'), { code: 'ERROR_ZERO_BALANCE' })))
  t.true(Object.isFrozen(CALLER_ERROR_CODES))
})

const badTasks = [
  // [task, message, code (default ERR_INVALID_ARG_TYPE)]
  [undefined, 'solve(task): task must be an object, got undefined'],
  [{ sitekey: 'x', pageurl: 'y' }, 'solve(task): task.method must be a non-empty string, got undefined'],
  [{ method: 'turnstile', sitekey: 'x' }, "task.pageurl must be a non-empty string for method 'turnstile', got undefined"],
  [{ method: 'userrecaptcha', pageurl: 'https://a.example/' }, "task.googlekey must be a non-empty string for method 'userrecaptcha'"],
  [{ method: 'base64', body: '' }, "task.body must be a non-empty string for method 'base64', got string"],
  [{ ...TURNSTILE, key: 'other' }, 'solve(task): task.key is set by the solver, not the task', 'ERR_INVALID_ARG_VALUE'],
  [{ ...TURNSTILE, data: { a: 1 } }, 'solve(task): task.data must be a string, finite number or boolean, got object'],
]

for (const [task, message, code = 'ERR_INVALID_ARG_TYPE'] of badTasks) {
  test(`bad task: ${message}; nothing sent, nothing recorded`, async (t) => {
    const { mock, tracker, solver } = await setUp(t)
    const err = await t.throwsAsync(solver.solve(task), { instanceOf: TypeError, code })
    t.true(err.message.includes(message), err.message)
    t.is(mock.requests.length, 0)
    t.deepEqual(tracker.recorded, { successes: 0, failures: 0, excluded: 0, capacity: 0 })
  })
}

test('bad solve options are a TypeError', async (t) => {
  const { solver } = await setUp(t)
  await t.throwsAsync(solver.solve(TURNSTILE, { critical: 1 }), {
    instanceOf: TypeError,
    message: 'solve options.critical must be a boolean, got number',
  })
  await t.throwsAsync(solver.solve(TURNSTILE, { timeoutMs: 5 }), { message: "unknown key 'timeoutMs' in solve options; known keys: critical" })
})

const tracker = new ErrorBudgetTracker({ clock: 'manual' })
const good = { apiKey: 'k', tracker }
const badSolvers = [
  // [options, error class, message]
  [undefined, TypeError, 'createSolver(options): options must be an object, got undefined'],
  [{ tracker }, TypeError, 'createSolver options.apiKey must be a non-empty string, got undefined'],
  [{ tracker, apiKey: '' }, TypeError, "createSolver options.apiKey must be a non-empty string, got ''", 'ERR_INVALID_ARG_VALUE'],
  [{ apiKey: 'k' }, TypeError, 'createSolver options.tracker must be an ErrorBudgetTracker, got undefined'],
  [{ ...good, tracker: {} }, TypeError, 'createSolver options.tracker must be an ErrorBudgetTracker, got object'],
  [{ ...good, baseUrl: 'ocr.captchaai.com' }, TypeError, "options.baseUrl must be an absolute http(s) URL, got 'ocr.captchaai.com'"],
  [{ ...good, baseUrl: 'ftp://127.0.0.1/' }, TypeError, "options.baseUrl must be an http(s) URL, got 'ftp://127.0.0.1/'"],
  [{ ...good, pollIntervalMs: 0 }, RangeError, 'createSolver options.pollIntervalMs must be an integer in [1, 2147483647], got 0'],
  [{ ...good, timeoutMs: '3m' }, TypeError, 'createSolver options.timeoutMs must be a number, got string'],
  [{ ...good, countsAsFailure: 'no' }, TypeError, 'createSolver options.countsAsFailure must be a function, got string'],
  [
    { ...good, apikey: 'k' },
    TypeError,
    "unknown key 'apikey' in createSolver options; known keys: apiKey, provider, baseUrl, tracker",
    'ERR_INVALID_ARG_VALUE',
  ],
]

// [options, error class, message, code (default: by class)]
for (const [options, errorClass, message, code] of badSolvers) {
  test(`createSolver: ${message}`, (t) => {
    const err = t.throws(() => createSolver(options), { instanceOf: errorClass })
    t.true(err.message.includes(message), err.message)
    t.is(err.code, code ?? (errorClass === TypeError ? 'ERR_INVALID_ARG_TYPE' : 'ERR_OUT_OF_RANGE'))
  })
}

test('createSolver refuses credentials in baseUrl, and never echoes them', (t) => {
  // fetch() refuses such URLs anyway, and its error quotes the URL: every solve
  // would fail with the password in its message.
  for (const baseUrl of ['http://user:s3cret@127.0.0.1/', new URL('https://user:s3cret@ocr.captchaai.com/'), 'http://s3cret@127.0.0.1/']) {
    const err = t.throws(() => createSolver({ ...good, baseUrl }), { instanceOf: TypeError })
    t.is(err.code, 'ERR_INVALID_ARG_VALUE')
    t.regex(err.message, /^createSolver options\.baseUrl must not hold credentials \(user:password@\): .*\*\*\*@/)
    t.false(err.message.includes('s3cret'), err.message)
  }
  // The other baseUrl errors quote the URL without them too.
  for (const baseUrl of ['ftp://user:s3cret@127.0.0.1/', 'user:s3cret@127.0.0.1', 'http://user:s3cret@[::1']) {
    const err = t.throws(() => createSolver({ ...good, baseUrl }), { instanceOf: TypeError })
    t.regex(err.message, /^createSolver options\.baseUrl must be an (absolute )?http\(s\) URL, got '.*\*\*\*@/)
    t.false(err.message.includes('s3cret'), err.message)
  }
})

test('createSolver defaults to CaptchaAI’s own endpoint', (t) => {
  t.is(createSolver(good).baseUrl, 'https://ocr.captchaai.com/')
})

// Issue 20 item 8: every answer is read up to 16 KiB, counted after decompression;
// past that the request is aborted and the attempt fails once with ERR_BAD_RESPONSE.
const LIMIT = 16 * 1024
const TOO_LONG = /^CaptchaAI (submit|result) answer is longer than 16384 bytes \(HTTP 200\): not the protocol's JSON, request aborted$/

test('an endless in.php body: cut at 16 KiB, the connection closed, one failure', async (t) => {
  let closed
  const serverSawClose = new Promise((resolve) => (closed = resolve))
  let sent = 0
  const endless = (res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    const chunk = Buffer.alloc(4096, ' ')
    const pump = () => {
      while (!res.destroyed && res.write(chunk)) sent += chunk.length
    }
    res.on('drain', pump)
    res.on('close', () => closed(sent))
    res.write('{"status":1,"request":"')
    pump()
  }
  const { tracker, solver } = await setUp(t, { raw: { 'in.php': endless } })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
  t.regex(err.message, TOO_LONG)
  t.like(err, { stage: 'submit', httpStatus: 200 })
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
  // The server's write stops: the client hung up (bounded by socket buffers, far below the 64 MiB sent in a second).
  const total = await serverSawClose
  t.true(total < 64 * 1024 * 1024, `${total} bytes sent`)
})

test('a huge res.php answer (1 MiB token): refused, not returned, one failure', async (t) => {
  const huge = (res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ status: 1, request: 'x'.repeat(1024 * 1024) }))
  }
  const { tracker, solver } = await setUp(t, { raw: { 'res.php': huge } })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
  t.regex(err.message, TOO_LONG)
  t.like(err, { stage: 'result', taskId: FIRST_ID })
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test('a gzip bomb (a valid answer of 8 MiB in a few KiB on the wire): decompressed bytes count', async (t) => {
  const zlib = require('node:zlib')
  const wire = zlib.gzipSync(`{"status":1,"request":"${'a'.repeat(8 * 1024 * 1024)}"}`)
  t.true(wire.length < LIMIT, `${wire.length} bytes on the wire: under the limit`)
  const bomb = (res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': wire.length })
    res.end(wire)
  }
  const { tracker, solver } = await setUp(t, { raw: { 'res.php': bomb } })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError, code: 'ERR_BAD_RESPONSE' })
  t.regex(err.message, TOO_LONG)
  t.deepEqual(tracker.recorded, { successes: 0, failures: 1, excluded: 0, capacity: 0 })
})

test('an answer of exactly the limit is still read', async (t) => {
  // 16 384 bytes exactly: {"status":1,"request":"…"} is 25 bytes around the token.
  const token = 'y'.repeat(LIMIT - 25)
  const { tracker, solver } = await setUp(t, { answer: () => token })
  t.is(JSON.stringify({ status: 1, request: token }).length, LIMIT)
  const { answer } = await solver.solve(TURNSTILE)
  t.is(answer, token)
  t.deepEqual(tracker.recorded, { successes: 1, failures: 0, excluded: 0, capacity: 0 })
})

// Issue 20 item 9: the API key never shows in an error, whatever the server echoes.
const SECRET = 'S3cr/et+Key-0123456789abcdef'
// Its whole forms (raw, percent- and form-encoded), and its first 8 characters: half a key is a leak too.
const leaks = (text) =>
  [SECRET, encodeURIComponent(SECRET), new URLSearchParams({ k: SECRET }).toString().slice(2), SECRET.slice(0, 8)].filter((f) => text.includes(f))
const echoes = {
  'an error page echoing the polled URL': {
    'res.php': (res, params, req) => res.writeHead(404, { 'content-type': 'text/html' }).end(`<pre>Cannot GET ${req.url}</pre>`),
  },
  'a body quoting the raw key past the 80-character cut': {
    'in.php': (res, params) => res.writeHead(502).end(`${'-'.repeat(50)} upstream said: key ${params.key} is throttled`),
  },
  'error_text quoting the key': {
    'in.php': (res, params) =>
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ status: 0, request: 'ERROR_KEY_DOES_NOT_EXIST', error_text: `no key ${params.key} here` })),
  },
  'a service code that is the key itself': {
    'res.php': (res, params) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 0, request: params.key })),
  },
}
for (const [what, raw] of Object.entries(echoes)) {
  test(`the API key is redacted from the error: ${what}`, async (t) => {
    const { mock, tracker, solver } = await setUp(t, { apiKey: SECRET, raw }, { apiKey: SECRET })
    const err = await t.throwsAsync(solver.solve(TURNSTILE), { instanceOf: SolveError })
    t.true(
      mock.requests.some((r) => r.params.key === SECRET),
      'the server did get the key',
    )
    const shown = `${err.message}\n${err.code}\n${require('node:util').inspect(err, { depth: Infinity })}`
    t.deepEqual(leaks(shown), [], shown)
    t.true(err.message.includes('***'), err.message)
    t.is(tracker.recorded.successes, 0)
  })
}

test('redaction: a polled URL echoed in a body shows key=*** and keeps the rest', async (t) => {
  const echo = (res, params, req) => res.writeHead(404, { 'content-type': 'text/plain' }).end(`Cannot GET ${req.url}`)
  const { solver } = await setUp(t, { apiKey: SECRET, raw: { 'res.php': echo } }, { apiKey: SECRET })
  const err = await t.throwsAsync(solver.solve(TURNSTILE), { code: 'ERR_BAD_RESPONSE' })
  t.is(err.message, `CaptchaAI result answer is not the protocol's JSON (HTTP 404): "Cannot GET /res.php?key=***&action=get&id=${FIRST_ID}&json=1"`)
})

test('issue 33: the caller-side codes defaultCountsAsFailure missed are in CALLER_ERROR_CODES, any ERROR_PROXY_* too', (t) => {
  const solveError = (code) => new SolveError(code, code, { stage: 'submit' })
  const missed = [
    'ERROR_WRONG_GOOGLEKEY',
    'ERROR_DOMAIN_NOT_ALLOWED',
    'ERROR_EMPTY_ACTION',
    'ERROR_TOKEN_EXPIRED',
    'ERROR_IP_ADDRES',
    'ERROR_PROXY_CONNECTION_FAILED',
    'ERROR: 1001',
    'ERROR: 1002',
    'ERROR: 1003',
    'ERROR: 1004',
    'ERROR: 1005',
  ]
  for (const code of missed) {
    t.true(CALLER_ERROR_CODES.includes(code), code)
    t.false(defaultCountsAsFailure(solveError(code)), code)
  }
  t.false(defaultCountsAsFailure(solveError('ERROR_PROXY_BANNED')))
})
