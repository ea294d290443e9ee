'use strict'
// Prometheus recording and alerting rules for one SLO over the counters of
// lib/metrics.js, summed over every instance (the fleet is judged as one), with
// the alert policy the tracker itself would use. Shaped after Sloth's output:
// error ratios per window, burn rates, remaining budget, then one multiwindow
// burn-rate alert per pair of the policy.
const YAML = require('yaml')
const { ErrorBudgetTracker } = require('../native.js')
const { describe, invalidArgType, outOfRange } = require('./errors')
const { promDuration, approxDuration, threeDigits } = require('./duration')

/** The fields of `slo`: the `name` label and the tracker config fields the rules depend on. */
const SLO_KEYS = ['name', 'targetRate', 'windowMs', 'alerts', 'minEvents', 'resolutionMs']
/** What every message about `slo` starts with (the CLI strips it: its own flags name the field). */
const WHERE = 'prometheusRules(slo): '

// The PromQL selector of the SLO's counter (lib/metrics.js): its name label, and an outcome.
function selector(name, outcome) {
  return `captcha_budget_solves_total{name=${JSON.stringify(name)}${outcome ? `,outcome="${outcome}"` : ''}}`
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

/**
 * Checks what only the rules need (an object of known keys, `name`, the required
 * fields, a target below 1); the rest is the tracker's own check.
 */
function checkSlo(slo) {
  if (slo === null || typeof slo !== 'object' || Array.isArray(slo)) {
    throw invalidArgType(`${WHERE}slo must be an object, got ${describe(slo)}`)
  }
  for (const key of Object.keys(slo)) {
    // A typo (`minEvent`) would otherwise drop its guard from the rules without a word.
    if (!SLO_KEYS.includes(key)) throw invalidArgType(`${WHERE}unknown key '${key}' in slo; known keys: ${SLO_KEYS.join(', ')}`)
  }
  const { name, targetRate, windowMs } = slo
  if (typeof name !== 'string' || name === '' || /[\u0000-\u001f]/.test(name)) {
    throw invalidArgType(`${WHERE}slo.name must be a non-empty string without control characters, got ${JSON.stringify(name) ?? 'undefined'}`)
  }
  for (const [field, value] of [['targetRate', targetRate], ['windowMs', windowMs]]) {
    if (value === undefined) throw invalidArgType(`${WHERE}slo.${field} is required`)
  }
  // The tracker allows 1 (no budget at all); rules over a budget of nothing would never fire.
  if (typeof targetRate === 'number' && !(targetRate > 0 && targetRate < 1)) {
    throw outOfRange(`${WHERE}slo.targetRate must be in (0, 1) for rules (a 100% target leaves no error budget to burn), got ${targetRate}`)
  }
}

/**
 * The tracker's error about the SLO's config, worded for `slo`: the tracker names
 * the fields `config.<field>` or `<field>`, the caller wrote `slo.<field>`.
 */
function sloError(err) {
  if (!(err instanceof Error) || typeof err.code !== 'string') return err
  const body = err.message.replace(/\bconfig\./g, 'slo.')
  const field = SLO_KEYS.some((key) => body.startsWith(key)) ? 'slo.' : ''
  const worded = new err.constructor(`${WHERE}${field}${body}`)
  worded.code = err.code
  return worded
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
  let tracker
  try {
    tracker = new ErrorBudgetTracker(config)
  } catch (err) {
    throw sloError(err)
  }
  try {
    return tracker.alertPolicy
  } finally {
    tracker.close()
  }
}

/**
 * The rule groups (as plain objects) for the SLO `name`, over the counters of
 * `tracker.metrics({ name })` summed over every instance, and the alert policy
 * they implement.
 * @param {{ name: string, targetRate: number, windowMs: number, alerts?: object[], minEvents?: number, resolutionMs?: number }} slo
 * @returns {{ groups: object[], policy: import('../index').AlertRuleInfo[] }}
 */
function compile(slo) {
  checkSlo(slo)
  const { name, targetRate, windowMs, minEvents = 0 } = slo
  const policy = policyOf(slo)
  const period = promDuration(windowMs)
  const sel = `{name=${JSON.stringify(name)}}`
  const windows = [...new Set([...policy.flatMap((r) => [r.shortWindowMs, r.longWindowMs]), windowMs])].sort((a, b) => a - b)

  const recordings = []
  for (const ms of windows) {
    const w = promDuration(ms)
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
    const long = promDuration(pair.longWindowMs)
    const short = promDuration(pair.shortWindowMs)
    const alert = `CaptchaBudget${pascal(pair.name)}`
    if (alertNames.has(alert) || alert === 'CaptchaBudget') {
      throw outOfRange(`${WHERE}slo.alerts: the pair '${pair.name}' gives the alert name ${alert}, which is empty or taken: rename the pair`)
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
        summary: `${name}: the CAPTCHA error budget burns over ${threeDigits(pair.burnRate)}x the sustainable rate (${pair.name})`,
        description:
          `The burn rate of ${name} is above ${threeDigits(pair.burnRate)} over both ${long} and ${short}, across all instances: ` +
          `${threeDigits(spent)}% of the ${period} error budget (SLO ${threeDigits(targetRate * 100)}%) goes in ${long}, ` +
          `all of it in ${approxDuration(windowMs / pair.burnRate)}.`,
      },
    }
  })

  // One group: its rules run in order at each evaluation, so the alerts read the
  // recordings of the same instant (separate groups run on their own timers).
  return { groups: [{ name: `captcha-budget-${name}`, rules: [...recordings, ...alerts] }], policy }
}

/** The rule groups (as plain objects, `{ groups }`) for the SLO: what `prometheusRules` writes as YAML. */
function ruleGroups(slo) {
  return { groups: compile(slo).groups }
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
  return rulesAndPolicy(slo).text
}

/** The YAML of `prometheusRules(slo)` and the alert policy it implements (for the CLI's warnings). */
function rulesAndPolicy(slo) {
  const { groups, policy } = compile(slo)
  const text = `# Prometheus rules for the CAPTCHA error budget ${JSON.stringify(slo.name)} (captcha-error-budget).\n${toYaml({ groups })}\n`
  return { text, policy }
}

module.exports = { ruleGroups, prometheusRules, rulesAndPolicy, toYaml, WHERE }
