'use strict'
// One request to a provider, for both protocols' clients (lib/providers/solver.js: in.php /
// res.php; lib/providers/create-task.js: createTask / getTaskResult) and the reports of bad
// answers (lib/providers/bad-answer.js), and the SolveError each of them rejects with. Every
// request carries the API key (in.php's form body, res.php's query, createTask's
// clientKey), so a redirect is never followed: fetch would re-send a 307's body to
// whatever host the Location names and take that host's answer. What a rejection
// holds never shows the key: its code, task id and the server's words in its
// message are redacted (lib/util/redact.js) and escaped, and fetch's error is kept as
// its cause only as a redacted copy (undici's errors may quote the request's URL,
// `?key=…`).
const { readLimited } = require('../util/read-limited.js')
const { SolveError, printable } = require('../util/errors.js')
const { redact, redactError, quoteBody } = require('../util/redact.js')

/**
 * A server's words (a code, a task id, fetch's reason) as a message may quote
 * them: redacted with `apiKey` as a secret (they may echo the request) and escaped
 * (`printable`: a line break or a terminal escape would forge log lines). Only
 * those words: the whole message is not redacted, since a short key ('k') would
 * mask the client's own words too.
 * @param {unknown} text
 * @param {string} apiKey
 */
function serverWords(text, apiKey) {
  return printable(redact(text, [apiKey]))
}

/**
 * A SolveError whose code and task id, the server's, are `serverWords`; its
 * message is built of them (or of bodies quoted by `quoteBody`), and escaped again.
 * @param {string} apiKey
 * @param {string} code
 * @param {string} message
 * @param {{ stage: string, taskId?: string | null, httpStatus?: number | null, cause?: unknown }} details
 */
function solveError(apiKey, code, message, { taskId = null, ...details }) {
  return new SolveError(serverWords(code, apiKey), printable(message), { ...details, taskId: taskId === null ? null : serverWords(taskId, apiKey) })
}

/**
 * `fetch(url, init)` under `signal`, redirects not followed, the answer read up to
 * `maxBytes` (after decompression). Resolves `{ text, httpStatus }`. Rejects with
 * `signal.reason` once the signal is aborted (the guard has settled on it), else
 * with a SolveError (`solveError`): ERR_NETWORK (no answer; its cause fetch's
 * error, redacted), ERR_BAD_RESPONSE (a redirect; an answer over `maxBytes`, the
 * request then aborted). `what` starts each message ('CaptchaAI submit'); `stage`
 * and `taskId` go on the error.
 * @param {URL} url
 * @param {RequestInit} init
 * @param {{ signal: AbortSignal, maxBytes: number, apiKey: string, what: string, stage: string, taskId: string | null }} request
 * @returns {Promise<{ text: string, httpStatus: number }>}
 */
async function fetchAnswer(url, init, request) {
  // fetch (undici) keeps its abort listener on the signal it is given until the request
  // is garbage-collected: on the guard's signal, a solve's polls piled them up (1500 in
  // a minute at pollIntervalMs: 1, MaxListenersExceededWarning). Each request gets a
  // signal of its own, which follows the guard's through one listener, removed when the
  // request ends (its answer read, or not).
  const { signal } = request
  const own = new AbortController()
  const follow = () => own.abort(signal.reason)
  if (signal.aborted) follow()
  else signal.addEventListener('abort', follow, { once: true })
  try {
    return await fetchUnder(url, init, own.signal, request)
  } finally {
    signal.removeEventListener('abort', follow)
  }
}

/** fetchAnswer's request, under `requestSignal` (the request's own, following the guard's `signal`). */
async function fetchUnder(url, init, requestSignal, { signal, maxBytes, apiKey, what, stage, taskId }) {
  let response
  try {
    response = await fetch(url, { ...init, redirect: 'manual', signal: requestSignal })
  } catch (error) {
    throw networkError(error, signal, apiKey, what, stage, taskId)
  }
  const httpStatus = response.status
  if (httpStatus >= 300 && httpStatus < 400) {
    response.body?.cancel().catch(() => {}) // its body is not read: the connection is let go
    const location = response.headers.get('location')
    const to = location === null ? '' : ` to ${quoteBody(location, [apiKey])}`
    throw solveError(apiKey, SolveError.BAD_RESPONSE, `${what} answered HTTP ${httpStatus}, a redirect${to}: not followed (the request carries the API key)`, {
      stage,
      taskId,
      httpStatus,
    })
  }
  let text
  try {
    text = await readLimited(response, maxBytes)
  } catch (error) {
    throw networkError(error, signal, apiKey, what, stage, taskId)
  }
  if (text === null) {
    throw solveError(
      apiKey,
      SolveError.BAD_RESPONSE,
      `${what} answer is longer than ${maxBytes} bytes (HTTP ${httpStatus}): not the protocol's JSON, request aborted`,
      {
        stage,
        taskId,
        httpStatus,
      },
    )
  }
  return { text, httpStatus }
}

// fetch's error (no answer, or the body cut short) as the rejection: the guard's
// reason once the signal was aborted, else ERR_NETWORK naming fetch's reason.
function networkError(error, signal, apiKey, what, stage, taskId) {
  if (signal.aborted) return signal.reason
  const why = serverWords(reasonOf(error), apiKey)
  let cause
  try {
    cause = redactError(error, [apiKey])
  } catch {
    cause = undefined // a rejection that cannot be looked into (a revoked Proxy, a throwing trap) is not kept
  }
  return solveError(apiKey, SolveError.NETWORK, `${what} request failed: ${why}`, { stage, taskId, cause })
}

// fetch's reason, as the message names it: the system's code or message (the
// cause's), else the error's message, else a string rejection itself. A replaced
// fetch may reject with anything, and reading it may throw (a throwing getter, a
// Proxy's trap, a revoked Proxy): then, or when none of those is a string, it is
// "an unreadable error", never the getter's error in place of ERR_NETWORK.
function reasonOf(error) {
  if (typeof error === 'string' && error !== '') return error
  try {
    const cause = error?.cause
    const reason = [cause?.code, cause?.message, error?.message].find((value) => typeof value === 'string' && value !== '')
    return reason ?? 'an unreadable error'
  } catch {
    return 'an unreadable error'
  }
}

module.exports = { fetchAnswer, solveError, serverWords }
