// A local CaptchaAI: a real node:http server on 127.0.0.1 (ephemeral port) that
// speaks the 2captcha-compatible protocol the solver uses — POST/GET in.php
// (key, method, the method's parameters, json) and GET/POST res.php (key,
// action=get or reportbad, id, json) — with knobs for the ways a real service fails.
const http = require('node:http')

// What each known method needs, and the code the service answers without it.
const REQUIRED = {
  turnstile: [
    ['sitekey', 'ERROR_BAD_PARAMETERS'],
    ['pageurl', 'ERROR_PAGEURL'],
  ],
  userrecaptcha: [
    ['googlekey', 'ERROR_GOOGLEKEY'],
    ['pageurl', 'ERROR_PAGEURL'],
  ],
  base64: [['body', 'ERROR_ZERO_CAPTCHA_FILESIZE']],
}

/**
 * Starts the mock. Behaviour (all optional):
 * - `apiKey` ('test-key'): the only key accepted; another gives ERROR_KEY_DOES_NOT_EXIST.
 * - `zeroBalance` (false): in.php answers ERROR_ZERO_BALANCE.
 * - `pollsUntilReady` (1): res.php answers CAPCHA_NOT_READY this many times per task
 *   (Infinity: forever), then the outcome.
 * - `outcome` ('solve'): 'solve' answers `answer(params, id)`; 'unsolvable' answers
 *   ERROR_CAPTCHA_UNSOLVABLE.
 * - `answer` ((params, id) => `token-${id}`): the solution of a task.
 * - `delayMs` (0): every answer waits this long (a slow service).
 * - `malformed` (null): 'in.php' or 'res.php' answers truncated JSON there.
 * - `reports` ('accept'): res.php?action=reportbad on a known task answers
 *   OK_REPORT_RECORDED ('accept'), ERROR_REPORT_NOT_RECORDED ('refuse'), or the
 *   connection is dropped without an answer ('reset').
 * - `raw` ({}): `{ 'in.php'?: handler, 'res.php'?: handler }`, a hostile server's
 *   answer there: `handler(res, params, req)` writes the whole response itself (an
 *   endless body, a huge answer, a gzip bomb, a body echoing the request). The
 *   request is logged first, as every other.
 * Returns `{ url, requests, close }`: `requests` logs `{ path, httpMethod, params }`.
 */
async function startMockCaptchaAI(behaviour = {}) {
  const {
    apiKey = 'test-key',
    zeroBalance = false,
    pollsUntilReady = 1,
    outcome = 'solve',
    answer = (params, id) => `token-${id}`,
    delayMs = 0,
    malformed = null,
    raw: hostileAnswers = {},
    reports = 'accept',
  } = behaviour
  const requests = []
  const tasks = new Map() // id → { params, polls }
  const timers = new Set() // slow answers still waiting, cleared by close()
  let nextId = 73000001

  function protocolAnswer(path, params) {
    if (!params.key) return 'ERROR_WRONG_USER_KEY'
    if (params.key !== apiKey) return 'ERROR_KEY_DOES_NOT_EXIST'
    if (path === '/in.php') {
      if (zeroBalance) return 'ERROR_ZERO_BALANCE'
      const required = REQUIRED[params.method]
      if (!required) return 'ERROR_NO_SUCH_METHOD'
      for (const [name, code] of required) if (!params[name]) return code
      const id = String(nextId++)
      tasks.set(id, { params, polls: 0 })
      return { status: 1, request: id }
    }
    if (params.action === 'reportbad') {
      if (!tasks.has(params.id)) return 'ERROR_WRONG_CAPTCHA_ID'
      return reports === 'accept' ? { status: 1, request: 'OK_REPORT_RECORDED' } : 'ERROR_REPORT_NOT_RECORDED'
    }
    if (params.action !== 'get') return 'ERROR_EMPTY_ACTION'
    const task = tasks.get(params.id)
    if (!task) return 'ERROR_WRONG_CAPTCHA_ID'
    task.polls += 1
    if (task.polls <= pollsUntilReady) return 'CAPCHA_NOT_READY'
    if (outcome === 'unsolvable') return 'ERROR_CAPTCHA_UNSOLVABLE'
    return { status: 1, request: answer(task.params, params.id) }
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1')
    let raw = ''
    req.setEncoding('utf8')
    req.on('data', (chunk) => (raw += chunk))
    req.on('end', () => {
      const params = Object.fromEntries(url.searchParams)
      if (req.method === 'POST') Object.assign(params, Object.fromEntries(new URLSearchParams(raw)))
      requests.push({ path: url.pathname, httpMethod: req.method, params })
      const reply = () => {
        if (url.pathname !== '/in.php' && url.pathname !== '/res.php') {
          res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
          return
        }
        if (reports === 'reset' && params.action === 'reportbad') return res.destroy()
        const hostile = hostileAnswers[url.pathname.slice(1)]
        if (hostile) return hostile(res, params, req)
        const result = protocolAnswer(url.pathname, params)
        const json = typeof result === 'string' ? { status: 0, request: result } : result
        if (malformed === url.pathname.slice(1)) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(json).slice(0, 15))
        } else if (params.json === '1') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(json))
        } else {
          // Without json=1 the service answers plain text: OK|<id>, OK|<answer>, or the code.
          res.writeHead(200, { 'content-type': 'text/plain' }).end(json.status === 1 ? `OK|${json.request}` : json.request)
        }
      }
      if (delayMs === 0) return reply()
      const timer = setTimeout(() => {
        timers.delete(timer)
        reply()
      }, delayMs)
      timers.add(timer)
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close() {
      for (const timer of timers) clearTimeout(timer)
      server.closeAllConnections() // a slow answer still pending must not hold close() up
      return new Promise((resolve) => server.close(() => resolve()))
    },
  }
}

/** A URL on 127.0.0.1 where nothing listens: a port opened, then closed. */
async function refusedUrl() {
  const server = http.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return `http://127.0.0.1:${port}`
}

module.exports = { startMockCaptchaAI, refusedUrl }
