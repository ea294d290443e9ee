'use strict'
// The createTask / getTaskResult protocol (Anti-Captcha, CapSolver, CapMonster
// Cloud), for createSolver() (lib/solver.js): POST createTask with
// { clientKey, task } answers { errorId: 0, taskId }; POST getTaskResult with
// { clientKey, taskId } answers { errorId: 0, status: 'processing' } until
// { errorId: 0, status: 'ready', solution }; an error is { errorId > 0,
// errorCode, errorDescription }. Every answer is read bounded and every message
// redacted with the API key as a secret, as the in.php client's (lib/solver.js).
const { setTimeout: sleep } = require('node:timers/promises')
const { readLimited } = require('./read-limited.js')
const { SolveError, describe, invalidArgType } = require('./errors.js')
const { redact, quoteBody } = require('./redact.js')

// A createTask answer is a status and a task id, a solution a token or a few
// cookies: a few KiB. A longer body is cut off (ERR_BAD_RESPONSE).
const MAX_BODY_BYTES = 64 * 1024
const MAX_ERROR_TEXT = 200
// The solution fields that hold the answer, by task family; the whole solution is on the result too.
const ANSWER_FIELDS = ['gRecaptchaResponse', 'token', 'text']

/**
 * A 'ready' solution's answer, or why it holds none: `{ answer }` or `{ problem }`. The
 * answer is the first answer field that is a non-empty string. A solution with none
 * of those fields but others (another task family's: cookies, a user agent) is a
 * solve whose answer is null, the solution whole on the result; no solution, an
 * empty one, or answer fields without a token are no solve at all: a success
 * recorded there would hide a provider that answers nothing.
 */
function readyAnswer(solution) {
  if (solution === null || typeof solution !== 'object' || Array.isArray(solution)) return { problem: 'without a solution' }
  const answer = ANSWER_FIELDS.map((name) => solution[name]).find((value) => typeof value === 'string' && value !== '')
  if (answer !== undefined) return { answer }
  const field = ANSWER_FIELDS.find((name) => Object.hasOwn(solution, name))
  if (field === undefined) return Object.keys(solution).length === 0 ? { problem: 'with an empty solution' } : { answer: null }
  // Not a non-empty string: '', null, a number, a boolean (shown as JSON), or an object (named, never quoted).
  const value = solution[field]
  const shown = value !== null && typeof value === 'object' ? (Array.isArray(value) ? 'an array' : 'an object') : JSON.stringify(value)
  return { problem: `without a token (${field}: ${shown})` }
}

/** `task` checked: a plain object with a non-empty `type` (the provider's task type). */
function checkTask(task) {
  if (task === null || typeof task !== 'object' || Array.isArray(task)) {
    throw invalidArgType(`solve(task): task must be an object, got ${describe(task)}`)
  }
  if (typeof task.type !== 'string' || task.type === '') {
    throw invalidArgType(
      `solve(task): task.type must be a non-empty string (the provider's task type, e.g. 'RecaptchaV2TaskProxyless'), got ${describe(task.type)}`,
    )
  }
  return task
}

/**
 * A createTask client: `run(task, signal)` resolves `{ taskId, answer, solution }`
 * or rejects with a SolveError (the service's `code`, ERR_NETWORK, ERR_BAD_RESPONSE).
 * @param {{ title: string, base: URL, apiKey: string, pollIntervalMs: number }} options
 */
function createTaskClient({ title, base, apiKey, pollIntervalMs }) {
  async function call(method, body, signal, stage, taskId) {
    let response
    let text
    try {
      response = await fetch(new URL(method, base), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        signal,
      })
      text = await readLimited(response, MAX_BODY_BYTES)
    } catch (error) {
      if (signal.aborted) throw signal.reason
      const why = redact(error?.cause?.code ?? error?.cause?.message ?? error?.message, [apiKey])
      throw new SolveError('ERR_NETWORK', `${title} ${method} request failed: ${why}`, { stage, taskId, cause: error })
    }
    if (text === null) {
      throw new SolveError('ERR_BAD_RESPONSE', `${title} ${method} answer is longer than ${MAX_BODY_BYTES} bytes (HTTP ${response.status}): request aborted`, {
        stage,
        taskId,
        httpStatus: response.status,
      })
    }
    let answer
    try {
      answer = JSON.parse(text)
    } catch {
      answer = undefined
    }
    if (answer === null || typeof answer !== 'object' || typeof answer.errorId !== 'number') {
      throw new SolveError('ERR_BAD_RESPONSE', `${title} ${method} answer is not the protocol's JSON (HTTP ${response.status}): ${quoteBody(text, [apiKey])}`, {
        stage,
        taskId,
        httpStatus: response.status,
      })
    }
    if (answer.errorId !== 0) {
      const code = typeof answer.errorCode === 'string' && answer.errorCode !== '' ? redact(answer.errorCode, [apiKey]) : `ERROR_ID_${answer.errorId}`
      const detail =
        typeof answer.errorDescription === 'string' && answer.errorDescription !== '' ? `: ${quoteBody(answer.errorDescription, [apiKey], MAX_ERROR_TEXT)}` : ''
      const where = taskId === null ? method : `${method} (task ${redact(taskId, [apiKey])})`
      throw new SolveError(code, `${title} ${where} answered ${code}${detail}`, { stage, taskId, httpStatus: response.status })
    }
    return { answer, httpStatus: response.status }
  }

  async function run(task, signal) {
    const { answer: created } = await call('createTask', { clientKey: apiKey, task }, signal, 'submit', null)
    if ((typeof created.taskId !== 'number' && typeof created.taskId !== 'string') || created.taskId === '') {
      throw new SolveError('ERR_BAD_RESPONSE', `${title} createTask answered no taskId`, { stage: 'submit', taskId: null })
    }
    const taskId = String(created.taskId)
    for (;;) {
      await sleep(pollIntervalMs, undefined, { signal })
      const { answer: result, httpStatus } = await call('getTaskResult', { clientKey: apiKey, taskId: created.taskId }, signal, 'result', taskId)
      if (result.status !== 'ready') continue
      const { answer, problem } = readyAnswer(result.solution)
      if (problem !== undefined) {
        throw new SolveError('ERR_BAD_RESPONSE', `${title} getTaskResult (task ${redact(taskId, [apiKey])}) answered ready ${problem}`, {
          stage: 'result',
          taskId,
          httpStatus,
        })
      }
      return { taskId, answer, solution: result.solution }
    }
  }

  return { run, checkTask }
}

module.exports = { createTaskClient }
