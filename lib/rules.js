'use strict'
const YAML = require('yaml')
// Prometheus recording and alerting rules for one SLO over the counters of
// lib/metrics.js, summed over every instance (the fleet is judged as one), with
// the alert policy the tracker itself would use. Shaped after Sloth's output:
// error ratios per window, burn rates, remaining budget, then one multiwindow
// burn-rate alert per pair of the policy.
const { ErrorBudgetTracker } = require('../native.js')
const { formatDuration } = require('./metrics.js')
const { parseDuration } = require('./duration.js')

const COUNTER = 'captcha_budget_solves_total'
function rangeError(message) {
  return Object.assign(new RangeError(message), { code: 'ERR_OUT_OF_RANGE' })
}

// The PromQL selector of the SLO's counter: its name label, and an outcome.
function selector(name, outcome) {
  return `${COUNTER}{name=${JSON.stringify(name)}${outcome ? `,outcome="${outcome}"` : ''}}`
}

// A number as PromQL/YAML read it back exactly (JS prints the shortest round-trip form).
const num = (x) => String(x)

function pascal(name) {
  return name
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')
}

// "2.5" rather than "2.5000000000000004" in prose.
const brief = (x) => String(Number(x.toPrecision(3)))

// A duration for prose: "50h", "5d", "2.08d".
function roughly(ms) {
  const units = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]]
  const [unit, size] = units.find(([, size]) => ms >= 2 * size) || ['ms', 1]
  return `${brief(ms / size)}${unit}`
}

/**
 * The tracker's view of the SLO: its config is checked by the tracker itself
 * and its alert policy (default or `alerts`, windows rounded to buckets) is
 * the one the in-process tracker uses.
 */
function policyOf({ targetRate, windowMs, alerts, minEvents = 0, resolutionMs }) {
  const config = { targetRate, windowMs, minEvents, clock: 'manual' }
  if (alerts !== undefined) config.alerts = alerts
  if (resolutionMs !== undefined) config.resolutionMs = resolutionMs
  const tracker = new ErrorBudgetTracker(config)
  try {
    return tracker.alertPolicy
  } finally {
    tracker.close()
  }
}

/**
 * The rule groups (as plain objects) for the SLO `name`: the counters of
 * `tracker.metrics({ name })` summed over every instance.
 * @param {{ name: string, targetRate: number, windowMs: number, alerts?: object[], minEvents?: number, resolutionMs?: number }} slo
 */
function ruleGroups(slo) {
  const { name, targetRate, windowMs, minEvents = 0 } = slo
  if (typeof name !== 'string' || name === '' || /[\u0000-\u001f]/.test(name)) {
    throw Object.assign(new TypeError(`name must be a non-empty string without control characters, got ${JSON.stringify(name)}`), {
      code: 'ERR_INVALID_ARG_TYPE',
    })
  }
  if (targetRate === 1) throw rangeError('targetRate must be below 1 for rules: a 100% target leaves no error budget to burn')
  const policy = policyOf(slo)
  const period = formatDuration(windowMs)
  const sel = `{name=${JSON.stringify(name)}}`
  const windows = [...new Set([...policy.flatMap((r) => [r.shortWindowMs, r.longWindowMs]), windowMs])].sort((a, b) => a - b)

  const recordings = []
  for (const ms of windows) {
    const w = formatDuration(ms)
    recordings.push(
      { record: `captcha_budget:solves:increase${w}`, expr: `sum by (name) (increase(${selector(name)}[${w}]))` },
      {
        record: `captcha_budget:solve_error:ratio_rate${w}`,
        expr: [
          `sum by (name) (rate(${selector(name, 'failure')}[${w}]))`,
          '/',
          `sum by (name) (rate(${selector(name)}[${w}]))`,
        ].join('\n'),
      },
      { record: `captcha_budget:burn_rate:ratio_rate${w}`, expr: `captcha_budget:solve_error:ratio_rate${w}${sel} / (1 - ${num(targetRate)})` },
    )
  }
  recordings.push(
    {
      record: 'captcha_budget:error_budget_remaining:ratio',
      expr: `clamp_min(1 - captcha_budget:burn_rate:ratio_rate${period}${sel}, 0)`,
    },
    { record: 'captcha_budget:objective:ratio', expr: `vector(${num(targetRate)})`, labels: { name } },
    { record: 'captcha_budget:period:seconds', expr: `vector(${num(windowMs / 1000)})`, labels: { name } },
  )

  const alertNames = new Set()
  const alerts = policy.map((pair) => {
    const long = formatDuration(pair.longWindowMs)
    const short = formatDuration(pair.shortWindowMs)
    const alert = `CaptchaBudget${pascal(pair.name)}`
    if (alertNames.has(alert) || alert === 'CaptchaBudget') {
      throw rangeError(`alert pair '${pair.name}' gives the alert name ${alert}, which is empty or taken: rename the pair`)
    }
    alertNames.add(alert)
    const conditions = [
      `captcha_budget:burn_rate:ratio_rate${long}${sel} > ${num(pair.burnRate)}`,
      `captcha_budget:burn_rate:ratio_rate${short}${sel} > ${num(pair.burnRate)}`,
    ]
    if (pair.minEvents > 0) conditions.push(`captcha_budget:solves:increase${long}${sel} >= ${pair.minEvents}`)
    if (minEvents > 0) conditions.push(`captcha_budget:solves:increase${period}${sel} >= ${minEvents}`)
    const spent = (100 * pair.burnRate * pair.longWindowMs) / windowMs
    return {
      alert,
      expr: conditions.join('\nand\n'),
      labels: { severity: pair.severity, pair: pair.name },
      annotations: {
        summary: `${name}: the CAPTCHA error budget burns over ${brief(pair.burnRate)}x the sustainable rate (${pair.name})`,
        description:
          `The burn rate of ${name} is above ${brief(pair.burnRate)} over both ${long} and ${short}, across all instances: ` +
          `${brief(spent)}% of the ${period} error budget (SLO ${brief(targetRate * 100)}%) goes in ${long}, ` +
          `all of it in ${roughly(windowMs / pair.burnRate)}.`,
      },
    }
  })

  // One group: its rules run in order at each evaluation, so the alerts read the
  // recordings of the same instant (separate groups run on their own timers).
  return { groups: [{ name: `captcha-budget-${name}`, rules: [...recordings, ...alerts] }] }
}

/**
 * YAML for plain objects, as Prometheus and promtool read it (the `yaml`
 * package; PromQL with line breaks comes out as literal blocks).
 */
function toYaml(value) {
  return YAML.stringify(value, { lineWidth: 0 }).trimEnd()
}

/**
 * Prometheus rules (YAML) for one SLO: recording rules (error ratio, burn rate
 * and solves over each alert window and the whole period, remaining budget)
 * and one multiwindow burn-rate alert per pair of the tracker's alert policy,
 * over `captcha_budget_solves_total{name=…}` summed across instances.
 * @param {{ name: string, targetRate: number, windowMs: number, alerts?: object[], minEvents?: number, resolutionMs?: number }} slo
 * @returns {string}
 */
function prometheusRules(slo) {
  if (typeof slo !== 'object' || slo === null) {
    throw Object.assign(new TypeError('prometheusRules(slo): slo must be an object'), { code: 'ERR_INVALID_ARG_TYPE' })
  }
  const groups = ruleGroups(slo)
  return `# Prometheus rules for the CAPTCHA error budget ${JSON.stringify(slo.name)} (captcha-error-budget).\n${toYaml(groups)}\n`
}

module.exports = { COUNTER, parseDuration, policyOf, ruleGroups, prometheusRules, toYaml }
