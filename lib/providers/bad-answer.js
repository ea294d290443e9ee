'use strict'
// Sending a bad answer back to the provider (named apart from the budget report;
// the public names stay `reportBad` and `solver.reports`, the providers' own word):
// `createSolver({ reportBad: true })`, and a solve's `result.reject(reason?)` that the budget took (a late verdict,
// lib/guard/verdict.js) also tells the provider, at the endpoint its profile names
// (lib/guard/profiles.js, `reportBad`). Never more than the provider accepts: a report
// goes only while the solve is younger than the provider's age limit and the
// reports of the last 15 minutes stay within `maxShare` of the solves then; the
// others are skipped. Fire-and-forget: the caller never waits for a report, and a
// report that fails is counted, never thrown.
const { fetchAnswer } = require('./provider-fetch.js')

/** The "recent solves" a share is taken of: 2Captcha's 15 minutes. */
const SHARE_WINDOW_MS = 15 * 60_000
/** A report's answer is a status and a word or two. */
const MAX_BODY_BYTES = 16 * 1024
/** A report that has not answered by then is a failed one (its socket closed). */
const REPORT_TIMEOUT_MS = 30_000

/** The endpoint of `profile.reportBad` for a task's `type` (undefined for in.php tasks), or null. */
function endpointFor(reportBad, type) {
  for (const [pattern, endpoint] of Object.entries(reportBad.endpoints)) {
    if (pattern === '*') return endpoint
    if (typeof type !== 'string') continue
    const lower = type.toLowerCase()
    const want = pattern.toLowerCase()
    if (want.endsWith('*') ? lower.startsWith(want.slice(0, -1)) : lower === want) return endpoint
  }
  return null
}

// The stamps of a sliding window, oldest first (no more than its span's worth).
class Stamps {
  constructor() {
    this.list = []
    this.head = 0
  }
  add(at) {
    this.list.push(at)
  }
  countSince(from) {
    while (this.head < this.list.length && this.list[this.head] <= from) this.head += 1
    if (this.head > 1024 && this.head * 2 > this.list.length) {
      this.list = this.list.slice(this.head)
      this.head = 0
    }
    return this.list.length - this.head
  }
}

/**
 * The bad-answer sender of one solver.
 * @param {{ profile: object, protocol: 'in.php' | 'createTask', base: URL, apiKey: string, now: () => number }} options
 */
function createBadAnswerSender({ profile, base, apiKey, now }) {
  const { reportBad, protocol } = profile
  const solves = new Stamps()
  const sent = new Stamps()
  const counts = { reported: 0, skipped: 0, failed: 0 }
  const pending = new Set()

  /** One more solve the provider answered, at `at` (the share's denominator). */
  function solved(at) {
    solves.add(at)
    solves.countSince(at - SHARE_WINDOW_MS) // drops the stamps out of the window: memory stays bounded
  }

  function request(endpoint, taskId, reason) {
    if (protocol === 'in.php') {
      const url = new URL('res.php', base)
      url.search = new URLSearchParams({ key: apiKey, action: endpoint, id: taskId, json: '1' }).toString()
      return { url, init: { method: 'GET' } }
    }
    // The id as the provider gave it: a number where it was one (Anti-Captcha's and CapMonster's are integers).
    const id = /^\d{1,15}$/.test(taskId) ? Number(taskId) : taskId
    const body =
      endpoint === 'feedbackTask'
        ? { clientKey: apiKey, taskId: id, result: { invalid: true, ...(reason === undefined ? {} : { message: reason }) } }
        : { clientKey: apiKey, taskId: id }
    return {
      url: new URL(endpoint, base),
      init: { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body: JSON.stringify(body) },
    }
  }

  async function send(endpoint, taskId, reason) {
    const { url, init } = request(endpoint, taskId, reason)
    try {
      // As a solve's requests (lib/providers/provider-fetch.js): the key goes nowhere but baseUrl (no redirect followed).
      const signal = AbortSignal.timeout(REPORT_TIMEOUT_MS)
      const { text } = await fetchAnswer(url, init, { signal, maxBytes: MAX_BODY_BYTES, apiKey, what: 'report', stage: 'report', taskId })
      const answer = JSON.parse(text)
      // in.php: {"status":1,"request":"OK_REPORT_RECORDED"}; createTask: {"errorId":0,…}.
      const accepted = protocol === 'in.php' ? answer?.status === 1 : answer?.errorId === 0
      if (accepted) counts.reported += 1
      else counts.failed += 1
    } catch {
      counts.failed += 1 // no answer, a redirect, or not JSON: the caller is never told (see `counts`)
    }
  }

  /**
   * The site rejected the answer of `taskId` (its task `task`, solved at
   * `solvedAt`): reports it, or skips it when the provider would refuse it.
   */
  function report(taskId, task, solvedAt, reason) {
    const at = now()
    const endpoint = endpointFor(reportBad, protocol === 'createTask' ? task.type : undefined)
    const tooOld = reportBad.withinMs !== null && at - solvedAt > reportBad.withinMs
    const from = at - SHARE_WINDOW_MS
    const withinShare = sent.countSince(from) + 1 <= reportBad.maxShare * solves.countSince(from)
    if (endpoint === null || tooOld || !withinShare) {
      counts.skipped += 1
      return
    }
    sent.add(at)
    const done = send(endpoint, taskId, reason)
    pending.add(done)
    done.then(() => pending.delete(done))
  }

  return {
    solved,
    report,
    /** `{ reported, skipped, failed }` so far (reported: the provider accepted it). */
    counts: () => ({ ...counts }),
    /** Resolves once every report sent so far has an answer or has failed; never rejects. */
    settled: async () => {
      while (pending.size > 0) await Promise.all([...pending])
    },
  }
}

module.exports = { createBadAnswerSender, endpointFor, SHARE_WINDOW_MS }
