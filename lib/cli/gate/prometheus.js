'use strict'
// `captcha-budget gate --prometheus <url> --slo <id>`: the deploy gate asked of
// the fleet. One instant query per figure to Prometheus's HTTP API for the
// series `captcha-budget rules` records (lib/prometheus/rules.js); the status comes from
// the remaining budget with the tracker's thresholds, the exit code as the
// snapshot gate's (lib/cli/commands/gate.js), so a pipeline can use either.
const { parseDuration } = require('../../util/duration.js')
const { readLimited } = require('../../util/read-limited.js')
const { redact, redactUrl, urlSecrets } = require('../../util/redact.js')
const { printable } = require('../../util/errors.js')

/** A gate query's answer is a few series: anything past this is cut off (an endless or hostile body). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024

/**
 * The environment variable that may hold Prometheus's credentials instead of the
 * URL: `user:password` (sent as HTTP basic auth) or `Bearer <token>`.
 */
const AUTH_ENV = 'CAPTCHA_BUDGET_PROMETHEUS_AUTH'

/** Exit codes, as `gate <snapshot>`. */
const EXIT = { proceed: 0, badInput: 2, stop: 3 }

/** The options of `gate` that ask Prometheus ([flags, description, default]). */
const OPTIONS = [
  ['--prometheus <url>', 'ask this Prometheus (the rules of `captcha-budget rules` loaded) instead of reading a snapshot'],
  ['--slo <id>', 'with --prometheus: the slo label of the SLO to judge'],
  ['--max-burn-rate <x>', 'with --prometheus: also stop while the current burn rate is above x'],
  ['--warning-threshold <f>', 'with --prometheus: as config.warningThreshold', '0.5'],
  ['--critical-threshold <f>', 'with --prometheus: as config.criticalThreshold', '0.1'],
  ['--timeout <duration>', 'with --prometheus: per query', '10s'],
]

/** Adds OPTIONS to the `gate` command (commander). */
function addOptions(command) {
  for (const [flags, description, byDefault] of OPTIONS) command.option(flags, description, byDefault)
}

/**
 * The Prometheus gate's exit code (a promise) when `options` ask for it, a
 * usage error's (2) when they mix it with a snapshot or give its flags alone,
 * else null (the snapshot gate's turn).
 */
function fromOptions(file, options) {
  const usage = (message) => {
    console.error(`captcha-budget gate: ${message}`)
    return Promise.resolve(EXIT.badInput)
  }
  if (options.prometheus === undefined) {
    const only = [
      ['slo', '--slo'],
      ['maxBurnRate', '--max-burn-rate'],
    ].find(([key]) => options[key] !== undefined)
    return only ? usage(`${only[1]} needs --prometheus <url>`) : null
  }
  if (file !== undefined) return usage('give a snapshot or --prometheus, not both')
  return gatePrometheus(options)
}

// The Authorization header for the URL's user:password@ or AUTH_ENV (never both), and the
// secrets every message masks; the URL itself loses its credentials (fetch refuses them).
function credentials(url, env) {
  const decode = (x) => {
    try {
      return decodeURIComponent(x)
    } catch {
      return x
    }
  }
  const fromUrl = url.username !== '' || url.password !== ''
  const fromEnv = typeof env === 'string' && env !== ''
  if (fromUrl && fromEnv) return { error: `give Prometheus's credentials in the --prometheus URL or in ${AUTH_ENV}, not both` }
  if (fromUrl) {
    const pair = `${decode(url.username)}:${decode(url.password)}`
    url.username = ''
    url.password = ''
    const token = Buffer.from(pair).toString('base64')
    return { authorization: `Basic ${token}`, secrets: [pair, token] }
  }
  if (!fromEnv) return { authorization: undefined, secrets: [] }
  if (/^bearer\s+\S/i.test(env)) return { authorization: env.trim(), secrets: [env.trim().split(/\s+/).slice(1).join(' ')] }
  const colon = env.indexOf(':')
  if (colon === -1) return { error: `${AUTH_ENV} must be user:password (basic auth) or 'Bearer <token>'` }
  const token = Buffer.from(env).toString('base64')
  return { authorization: `Basic ${token}`, secrets: [env, env.slice(colon + 1), token] }
}

/** Checked options, or a message for a usage error. */
function checkOptions({ prometheus, slo, maxBurnRate, warningThreshold = '0.5', criticalThreshold = '0.1', timeout = '10s' }, env = process.env) {
  let url
  const notUrl = () => ({ error: `--prometheus must be an http(s) URL such as http://127.0.0.1:9090, got '${redactUrl(prometheus, urlSecrets(prometheus))}'` })
  try {
    url = new URL(prometheus)
  } catch {
    return notUrl()
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return notUrl()
  const auth = credentials(url, env[AUTH_ENV])
  if (auth.error) return auth
  const secrets = [...urlSecrets(prometheus), ...auth.secrets]
  if (slo === undefined || slo === '') return { error: '--slo <id> is required with --prometheus (the slo label of the rules, e.g. turnstile-95-30d)' }
  const fraction = (given, flag) => {
    const x = /^(\d+(\.\d+)?|\.\d+)$/.test(given) ? Number(given) : NaN
    return x >= 0 && x <= 1 ? x : { error: `${flag} must be a fraction in [0, 1] such as 0.1, got '${given}'` }
  }
  const warning = fraction(warningThreshold, '--warning-threshold')
  const critical = fraction(criticalThreshold, '--critical-threshold')
  for (const x of [warning, critical]) if (x.error) return x
  if (critical > warning) return { error: `--critical-threshold (${critical}) must not exceed --warning-threshold (${warning})` }
  let maxBurn
  if (maxBurnRate !== undefined) {
    maxBurn = /^(\d+(\.\d+)?|\.\d+)$/.test(maxBurnRate) ? Number(maxBurnRate) : NaN
    if (!(maxBurn > 0)) return { error: `--max-burn-rate must be a positive number such as 2, got '${maxBurnRate}'` }
  }
  let timeoutMs
  try {
    timeoutMs = parseDuration(timeout, '--timeout')
  } catch (err) {
    return { error: err.message }
  }
  return { url, slo, warning, critical, maxBurn, timeoutMs, authorization: auth.authorization, secrets }
}

/**
 * An instant query: the samples as [{ labels, value }]; throws with what went
 * wrong, every quoted text redacted (lib/util/redact.js) of `secrets`.
 */
async function query(base, promql, timeoutMs, { authorization, secrets = [] } = {}) {
  const url = new URL('api/v1/query', base.href.endsWith('/') ? base : new URL(base.href + '/'))
  url.searchParams.set('query', promql)
  const headers = { Accept: 'application/json' }
  if (authorization !== undefined) headers.Authorization = authorization
  const origin = redactUrl(base.origin, secrets)
  let res
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), headers })
  } catch (err) {
    throw new Error(`cannot reach Prometheus at ${origin}: ${redact(err.cause?.code ?? err.cause?.message ?? err.message, secrets)}`)
  }
  if (res.status === 401 || res.status === 403) {
    res.body?.cancel().catch(() => {})
    const given = authorization === undefined ? 'none were given' : 'check them'
    throw new Error(
      `Prometheus at ${origin} answered HTTP ${res.status}: it needs credentials (user:password@ in the --prometheus URL, or ${AUTH_ENV}); ${given}`,
    )
  }
  const text = await readLimited(res, MAX_ANSWER_BYTES)
  if (text === null) {
    throw new Error(
      `${origin}${redactUrl(url.pathname, secrets)}: the answer is longer than ${MAX_ANSWER_BYTES} bytes (HTTP ${res.status}): not a gate query's vector, request aborted`,
    )
  }
  let body
  try {
    body = JSON.parse(text)
  } catch {
    throw new Error(`${origin}${redactUrl(url.pathname, secrets)}: HTTP ${res.status}, not the Prometheus API's JSON`)
  }
  if (body.status !== 'success') {
    throw new Error(`Prometheus refused ${promql}: ${redact(body.errorType ?? `HTTP ${res.status}`, secrets)}: ${redact(body.error ?? '', secrets)}`)
  }
  if (body.data?.resultType !== 'vector') throw new Error(`Prometheus answered ${promql} with a ${redact(body.data?.resultType, secrets)}, not a vector`)
  return body.data.result.map((r) => ({ labels: r.metric, value: Number(r.value[1]) }))
}

/** The status of a remaining fraction, as the tracker's (crates/budget-core: status_for). */
function statusOf(remaining, { warning, critical }) {
  if (remaining <= 0) return 'exhausted'
  if (remaining < critical) return 'critical'
  if (remaining < warning) return 'warning'
  return 'healthy'
}

// The worst value when a query gives several (e.g. the same rules in two
// Prometheus servers behind one query front end): a gate must not pass on the best.
const worst = (samples, pick) => (samples.length ? pick(...samples.map((s) => s.value)) : undefined)

/**
 * Runs the gate; resolves to the exit code. Prints the decision (or JSON with `json`).
 * @param {{ prometheus: string, slo: string, strict?: boolean, json?: boolean, maxBurnRate?: string, warningThreshold?: string, criticalThreshold?: string, timeout?: string }} options
 */
async function gatePrometheus(options) {
  const checked = checkOptions(options)
  if (checked.error) {
    console.error(`captcha-budget gate: ${checked.error}`)
    return EXIT.badInput
  }
  const { url, slo, maxBurn, timeoutMs } = checked
  const auth = { authorization: checked.authorization, secrets: checked.secrets }
  const sel = `{slo=${JSON.stringify(slo)}}`
  let info
  let remaining
  let burn
  let periodBurn
  let firing
  try {
    info = await query(url, `captcha_budget:slo_info${sel}`, timeoutMs, auth)
    if (info.length === 0) {
      throw new Error(`Prometheus has no SLO '${slo}' (no captcha_budget:slo_info${sel}): are the rules of \`captcha-budget rules\` loaded, and the id right?`)
    }
    ;[remaining, burn, periodBurn, firing] = await Promise.all([
      query(url, `captcha_budget:error_budget_remaining:ratio${sel}`, timeoutMs, auth),
      query(url, `captcha_budget:current_burn_rate:ratio${sel}`, timeoutMs, auth),
      query(url, `captcha_budget:period_burn_rate:ratio${sel}`, timeoutMs, auth),
      query(url, `ALERTS{alertstate="firing",slo=${JSON.stringify(slo)}}`, timeoutMs, auth),
    ])
  } catch (err) {
    console.error(`captcha-budget gate: ${err.message}`)
    return EXIT.badInput
  }
  // No sample, or NaN: no solve in the window (0 / 0). Like a tracker without
  // events: nothing spent, burn 0.
  const clean = (samples) => samples.filter((s) => !Number.isNaN(s.value))
  const remainingValue = worst(clean(remaining), Math.min) ?? 1
  const burnValue = worst(clean(burn), Math.max) ?? 0
  const periodBurnValue = worst(clean(periodBurn), Math.max) ?? 0
  const noData = clean(remaining).length === 0
  const status = statusOf(remainingValue, checked)
  const stopOn = options.strict ? ['exhausted', 'critical'] : ['exhausted']
  const reasons = []
  if (stopOn.includes(status)) reasons.push(`the budget is ${status}`)
  if (maxBurn !== undefined && burnValue > maxBurn) reasons.push(`the current burn rate ${round(burnValue)} is above --max-burn-rate ${maxBurn}`)
  const proceed = reasons.length === 0
  const alerts = firing.map((a) => `${a.labels.alertname} (${a.labels.severity ?? 'no severity'})`).sort()
  const meta = info[0].labels
  if (options.json) {
    const decision = {
      proceed,
      strict: Boolean(options.strict),
      reasons,
      slo,
      source: meta.name,
      objective: Number(meta.objective),
      period: meta.period,
      status,
      noData,
      budgetRemaining: remainingValue,
      currentBurnRate: burnValue,
      periodBurnRate: periodBurnValue,
      maxBurnRate: maxBurn ?? null,
      alertsFiring: alerts,
    }
    console.log(JSON.stringify(decision, null, 2))
  } else {
    console.log(
      [
        // Label values are the server's: printed with control characters escaped.
        `slo               ${printable(slo)} (source ${printable(meta.name)}, SLO ${round(Number(meta.objective) * 100)} % over ${printable(meta.period)}, fleet-wide from ${url.origin})`,
        `status            ${status}${noData ? ' (no solves in the period)' : ''}`,
        `budget left       ${round(remainingValue * 100)} %`,
        `burn rate         ${round(burnValue)} now, ${round(periodBurnValue)} over the period`,
        `alerts firing     ${printable(alerts.join(', ')) || 'none'}`,
        proceed ? 'deploys may proceed' : `deploys stop: ${reasons.join('; ')}`,
      ].join('\n'),
    )
  }
  return proceed ? EXIT.proceed : EXIT.stop
}

const round = (x) => String(Number(x.toPrecision(4)))

module.exports = { addOptions, fromOptions, gatePrometheus, statusOf, EXIT, AUTH_ENV }
