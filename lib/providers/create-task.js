'use strict'
// The createTask / getTaskResult protocol (Anti-Captcha, CapSolver, CapMonster
// Cloud), for createSolver() (lib/providers/solver.js): POST createTask with
// { clientKey, task } answers { errorId: 0, taskId }; POST getTaskResult with
// { clientKey, taskId } answers { errorId: 0, status: 'processing' } until
// { errorId: 0, status: 'ready', solution }; an error is { errorId > 0,
// errorCode, errorDescription }. Every request goes through lib/providers/provider-fetch.js,
// as the in.php client's (lib/providers/solver.js): no redirect followed, the answer read
// bounded, every rejection redacted with the API key as a secret.
const { setTimeout: sleep } = require('node:timers/promises')
const { SolveError, describe, invalidArgType, invalidArgValue, printable, thrownText } = require('../util/errors.js')
const { quoteBody } = require('../util/redact.js')
const { fetchAnswer, solveError, serverWords } = require('./provider-fetch.js')

// A createTask answer is a status and a task id, a solution a token or a few
// cookies: a few KiB. A longer body is cut off (ERR_BAD_RESPONSE).
const MAX_BODY_BYTES = 64 * 1024
const MAX_ERROR_TEXT = 200
// The solution fields that hold the answer, by task family; the whole solution is on the result too.
const ANSWER_FIELDS = ['gRecaptchaResponse', 'token', 'text']

/**
 * A 'ready' solution's answer, or why it holds none: `{ answer }` or `{ problem }`. The
 * answer is the first answer field that is a string holding more than whitespace. A solution with none
 * of those fields but others (another task family's: cookies, a user agent) is a
 * solve whose answer is null, the solution whole on the result; no solution, an
 * empty one, or answer fields without a token are no solve at all: a success
 * recorded there would hide a provider that answers nothing.
 */
function readyAnswer(solution) {
  if (solution === null || typeof solution !== 'object' || Array.isArray(solution)) return { problem: 'without a solution' }
  // Whitespace alone is no token either: the site would reject it as it would an empty one.
  const answer = ANSWER_FIELDS.map((name) => solution[name]).find((value) => typeof value === 'string' && value.trim() !== '')
  if (answer !== undefined) return { answer }
  const field = ANSWER_FIELDS.find((name) => Object.hasOwn(solution, name))
  if (field === undefined) return Object.keys(solution).length === 0 ? { problem: 'with an empty solution' } : { answer: null }
  // Not a token: '' or whitespace, null, a number, a boolean (shown as JSON), or an object (named, never quoted).
  const value = solution[field]
  const shown = value !== null && typeof value === 'object' ? (Array.isArray(value) ? 'an array' : 'an object') : JSON.stringify(value)
  return { problem: `without a token (${field}: ${shown})` }
}

/** A getTaskResult status as a message names it: a string quoted (the server's words, redacted), else its type. */
function statusNamed(status, apiKey) {
  if (status === undefined) return 'no status'
  return typeof status === 'string' ? `status ${quoteBody(status, [apiKey], MAX_ERROR_TEXT)}` : `status ${describe(status)}`
}

/**
 * `task` checked — a plain object with a non-empty `type` (the provider's task
 * type) — and returned as the JSON it is sent as, taken when solve() is called (as
 * the in.php client takes its parameters). A task JSON cannot hold (a BigInt, a
 * circle, a toJSON that throws) is the caller's bug: a TypeError naming the field,
 * before anything is sent or recorded.
 */
function checkTask(task) {
  if (task === null || typeof task !== 'object' || Array.isArray(task)) {
    throw invalidArgType(`solve(task): task must be an object, got ${describe(task)}`)
  }
  if (typeof task.type !== 'string' || task.type === '') {
    throw invalidArgType(
      `solve(task): task.type must be a non-empty string (the provider's task type, e.g. 'RecaptchaV2TaskProxyless'), got ${describe(task.type)}`,
    )
  }
  try {
    return JSON.stringify(task)
  } catch (error) {
    throw unserialisable(task, error)
  }
}

// Why JSON.stringify refused `task`: the first BigInt or circle on its way (the
// same order: own enumerable keys, a toJSON's result not looked into), else what it threw.
function unserialisable(task, error) {
  let found = null
  try {
    found = firstUnserialisable(task, 'task', [], [])
  } catch {
    // a getter that throws (JSON.stringify met it too), or a structure too deep to walk: what it threw says why
  }
  if (found?.circleTo !== undefined) {
    return invalidArgValue(`solve(task): ${printable(found.path)} refers back to ${printable(found.circleTo)}: a circular structure cannot be sent as JSON`)
  }
  if (found !== null) return invalidArgType(`solve(task): ${printable(found.path)} must be JSON (a string, number, boolean, null, array or object), got bigint`)
  return invalidArgValue(`solve(task): task cannot be sent as JSON: ${printable(thrownText(error))}`)
}

// The path of the first BigInt under `value` ({ path }), or of the first object that
// holds one of its ancestors ({ path, circleTo: the ancestor's path }); else null.
function firstUnserialisable(value, path, ancestors, ancestorPaths) {
  if (typeof value === 'bigint') return { path }
  if (value === null || typeof value !== 'object' || typeof value.toJSON === 'function') return null
  const at = ancestors.indexOf(value)
  if (at !== -1) return { path, circleTo: ancestorPaths[at] }
  ancestors.push(value)
  ancestorPaths.push(path)
  for (const key of Object.keys(value)) {
    const name = Array.isArray(value) ? `[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`
    const found = firstUnserialisable(value[key], path + name, ancestors, ancestorPaths)
    if (found !== null) return found
  }
  ancestors.pop()
  ancestorPaths.pop()
  return null
}

/**
 * A createTask client: `run(taskJson, signal)` (the task as checkTask gives it) resolves `{ taskId, answer, solution }`
 * or rejects with a SolveError (the service's `code`, ERR_NETWORK, ERR_BAD_RESPONSE).
 * @param {{ title: string, base: URL, apiKey: string, pollIntervalMs: number }} options
 */
function createTaskClient({ title, base, apiKey, pollIntervalMs }) {
  // One POST; the protocol's answer ({ errorId: 0, … }) or a SolveError (the
  // service's code, or lib/providers/provider-fetch.js's ERR_NETWORK / ERR_BAD_RESPONSE).
  async function call(method, bodyJson, signal, stage, taskId) {
    const init = { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: bodyJson }
    const request = { signal, maxBytes: MAX_BODY_BYTES, apiKey, what: `${title} ${method}`, stage, taskId }
    const { text, httpStatus } = await fetchAnswer(new URL(method, base), init, request)
    let answer
    try {
      answer = JSON.parse(text)
    } catch {
      answer = undefined
    }
    if (answer === null || typeof answer !== 'object' || typeof answer.errorId !== 'number') {
      const message = `${title} ${method} answer is not the protocol's JSON (HTTP ${httpStatus}): ${quoteBody(text, [apiKey])}`
      throw solveError(apiKey, SolveError.BAD_RESPONSE, message, { stage, taskId, httpStatus })
    }
    if (answer.errorId !== 0) {
      // The code, task id and errorDescription are the server's words: redacted and escaped (serverWords), the description quoted.
      const code = typeof answer.errorCode === 'string' && answer.errorCode !== '' ? answer.errorCode : `ERROR_ID_${answer.errorId}`
      const detail =
        typeof answer.errorDescription === 'string' && answer.errorDescription !== '' ? `: ${quoteBody(answer.errorDescription, [apiKey], MAX_ERROR_TEXT)}` : ''
      const where = taskId === null ? method : `${method} (task ${serverWords(taskId, apiKey)})`
      throw solveError(apiKey, code, `${title} ${where} answered ${serverWords(code, apiKey)}${detail}`, { stage, taskId, httpStatus })
    }
    return { answer, httpStatus }
  }

  /** Solves the task given as its JSON (checkTask's). */
  async function run(taskJson, signal) {
    const createBody = `{"clientKey":${JSON.stringify(apiKey)},"task":${taskJson}}`
    const { answer: created } = await call('createTask', createBody, signal, 'submit', null)
    if ((typeof created.taskId !== 'number' && typeof created.taskId !== 'string') || created.taskId === '') {
      throw solveError(apiKey, SolveError.BAD_RESPONSE, `${title} createTask answered no taskId`, { stage: 'submit' })
    }
    const taskId = String(created.taskId)
    for (;;) {
      await sleep(pollIntervalMs, undefined, { signal })
      const pollBody = JSON.stringify({ clientKey: apiKey, taskId: created.taskId })
      const { answer: result, httpStatus } = await call('getTaskResult', pollBody, signal, 'result', taskId)
      if (result.status === 'processing') continue
      // Any other status (none, 'failed', 'READY') is no answer of the protocol: polling it
      // again would only wait for the deadline and hide what the service said.
      if (result.status !== 'ready') throw badResult(taskId, `${statusNamed(result.status, apiKey)}, neither "processing" nor "ready"`, httpStatus)
      const { answer, problem } = readyAnswer(result.solution)
      if (problem !== undefined) throw badResult(taskId, `ready ${problem}`, httpStatus)
      return { taskId, answer, solution: result.solution }
    }
  }

  // A getTaskResult answer that is no solve: ERR_BAD_RESPONSE saying what it `answered`.
  function badResult(taskId, answered, httpStatus) {
    return solveError(apiKey, SolveError.BAD_RESPONSE, `${title} getTaskResult (task ${serverWords(taskId, apiKey)}) answered ${answered}`, {
      stage: 'result',
      taskId,
      httpStatus,
    })
  }

  return { run, checkTask }
}

module.exports = { createTaskClient }
