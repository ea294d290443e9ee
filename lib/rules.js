'use strict'
// Prometheus recording and alerting rules for SLOs over the counters of
// lib/metrics.js, summed over every instance (the fleet is judged as one).
// Shaped after Sloth's output: error ratios per window, burn rates, remaining
// budget, fixed-name series for dashboards, then one multiwindow burn-rate
// alert per pair and an alert on an absent source. Every series and alert
// carries the SLO's identity (`slo`) next to its source (`name`), so two SLOs
// on one counter stay apart. The alert policy is this file's own (PROMETHEUS
// PAIRS), built for scrapes: see prometheusPolicy().
const YAML = require('yaml')
const { ErrorBudgetTracker } = require('../native.js')
const { describe, invalidArgType, outOfRange, invalidArgValue } = require('./errors')
const { promDuration, approxDuration, threeDigits } = require('./duration')

/** The fields of `slo`. */
const SLO_KEYS = ['id', 'name', 'targetRate', 'windowMs', 'alerts', 'minEvents', 'minFailures', 'resolutionMs', 'labels', 'alerting', 'description']
/** The fields of `options`. */
const OPTION_KEYS = ['scrapeIntervalMs', 'periodRules', 'evaluationIntervalMs', 'format', 'namespace']
/** The fields of `slo.alerting` (Sloth's `alerting`, our names). */
const ALERTING_KEYS = ['name', 'labels', 'annotations', 'page', 'ticket']
/** What every message about `slo` starts with (the CLI strips it: its own flags name the field). */
const WHERE = 'prometheusRules(slo): '
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
// Labels the rules set themselves: a user label of that name would break matching or identity.
const RESERVED_LABELS = ['slo', 'name', 'pair', 'window', 'outcome', 'alertname', 'alertstate', 'objective', 'period', 'description']
/** Default minimum of failures in a pair's long window before it may fire (issue 14: ~10 failures tell an incident from noise). */
const MIN_FAILURES = 10
/** How long the source may be absent before CaptchaBudgetSourceAbsent fires. */
const ABSENT_FOR_MS = 600_000

/**
 * The Prometheus default policy, from the SRE Workbook's multiwindow table for
 * 30 days: a pair spends `spent` of the budget over a long window of
 * `longFraction` of the period (burn = spent / longFraction), short window a
 * twelfth of the long one.
 */
const PROMETHEUS_PAIRS = [
  { name: 'fast-burn', severity: 'page', spent: 0.02, longFraction: 1 / 720 },
  { name: 'slow-burn', severity: 'page', spent: 0.05, longFraction: 1 / 120 },
  { name: 'budget-leak', severity: 'ticket', spent: 0.1, longFraction: 1 / 10 },
]

// The PromQL selector of the SLO's counter (lib/metrics.js): its name label, and an outcome.
function selector(name, outcome) {
  return `captcha_budget_solves_total{name=${JSON.stringify(name)}${outcome ? `,outcome="${outcome}"` : ''}}`
}

// A number as PromQL/YAML read it back exactly (JS prints the shortest round-trip form).
const num = (x) => String(x)
// 1 − target without float noise (1 − 0.95 is 0.050000000000000044).
const budgetOf = (targetRate) => Number((1 - targetRate).toPrecision(12))
const ceilSecond = (ms) => Math.ceil(ms / 1000) * 1000

function pascal(name) {
  return name
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')
}

/** The default `slo.id`: source, target in percent, period (`turnstile-99.5-30d`). */
function defaultId({ name, targetRate, windowMs }) {
  return `${name}-${Number((targetRate * 100).toPrecision(12))}-${promDuration(windowMs)}`
}

function checkStringMap(value, where, { labels }) {
  if (value === undefined) return {}
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalidArgType(`${WHERE}${where} must be an object of strings, got ${describe(value)}`)
  }
  for (const [key, v] of Object.entries(value)) {
    if (labels && (!LABEL_NAME.test(key) || key.startsWith('__'))) {
      throw invalidArgType(`${WHERE}${where}: '${key}' is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, no leading __)`)
    }
    if (labels && RESERVED_LABELS.includes(key)) {
      throw invalidArgType(`${WHERE}${where}: '${key}' is set by the rules (reserved: ${RESERVED_LABELS.join(', ')})`)
    }
    if (!labels && !LABEL_NAME.test(key)) throw invalidArgType(`${WHERE}${where}: '${key}' is not an annotation name ([a-zA-Z_][a-zA-Z0-9_]*)`)
    if (typeof v !== 'string') throw invalidArgType(`${WHERE}${where}.${key} must be a string, got ${describe(v)}`)
  }
  return value
}

/** `slo.alerting`, checked, with every part present: { name, labels, annotations, page, ticket }. */
function checkAlerting(alerting) {
  if (alerting === undefined) alerting = {}
  if (alerting === null || typeof alerting !== 'object' || Array.isArray(alerting)) {
    throw invalidArgType(`${WHERE}slo.alerting must be an object, got ${describe(alerting)}`)
  }
  for (const key of Object.keys(alerting)) {
    if (!ALERTING_KEYS.includes(key)) throw invalidArgType(`${WHERE}unknown key '${key}' in slo.alerting; known keys: ${ALERTING_KEYS.join(', ')}`)
  }
  const { name = 'CaptchaBudget' } = alerting
  if (typeof name !== 'string' || !/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name)) {
    throw invalidArgType(`${WHERE}slo.alerting.name must be an alert name ([a-zA-Z_][a-zA-Z0-9_]*), got ${JSON.stringify(name) ?? 'undefined'}`)
  }
  const out = {
    name,
    labels: checkStringMap(alerting.labels, 'slo.alerting.labels', { labels: true }),
    annotations: checkStringMap(alerting.annotations, 'slo.alerting.annotations', { labels: false }),
  }
  for (const severity of ['page', 'ticket']) {
    const part = alerting[severity] ?? {}
    if (part === null || typeof part !== 'object' || Array.isArray(part)) {
      throw invalidArgType(`${WHERE}slo.alerting.${severity} must be an object, got ${describe(part)}`)
    }
    for (const key of Object.keys(part)) {
      if (!['labels', 'annotations', 'disable'].includes(key)) {
        throw invalidArgType(`${WHERE}unknown key '${key}' in slo.alerting.${severity}; known keys: labels, annotations, disable`)
      }
    }
    if (part.disable !== undefined && typeof part.disable !== 'boolean') {
      throw invalidArgType(`${WHERE}slo.alerting.${severity}.disable must be a boolean, got ${describe(part.disable)}`)
    }
    out[severity] = {
      labels: checkStringMap(part.labels, `slo.alerting.${severity}.labels`, { labels: true }),
      annotations: checkStringMap(part.annotations, `slo.alerting.${severity}.annotations`, { labels: false }),
      disable: part.disable === true,
    }
  }
  return out
}

/**
 * Checks what only the rules need (an object of known keys, `name`, the required
 * fields, a target below 1, the routing parts); the tracker config fields are
 * then checked by the tracker itself.
 */
function checkSlo(slo) {
  if (slo === null || typeof slo !== 'object' || Array.isArray(slo)) {
    throw invalidArgType(`${WHERE}slo must be an object, got ${describe(slo)}`)
  }
  for (const key of Object.keys(slo)) {
    // A typo (`minEvent`) would otherwise drop its guard from the rules without a word.
    if (!SLO_KEYS.includes(key)) throw invalidArgType(`${WHERE}unknown key '${key}' in slo; known keys: ${SLO_KEYS.join(', ')}`)
  }
  const { name, targetRate, windowMs, id, minFailures, description } = slo
  for (const [field, value] of [['name', name], ['id', id]]) {
    if (field === 'id' && value === undefined) continue
    if (typeof value !== 'string' || value === '' || /[\u0000-\u001f]/.test(value)) {
      throw invalidArgType(`${WHERE}slo.${field} must be a non-empty string without control characters, got ${JSON.stringify(value) ?? 'undefined'}`)
    }
  }
  for (const [field, value] of [['targetRate', targetRate], ['windowMs', windowMs]]) {
    if (value === undefined) throw invalidArgType(`${WHERE}slo.${field} is required`)
  }
  // The tracker allows 1 (no budget at all); rules over a budget of nothing would never fire.
  if (typeof targetRate === 'number' && !(targetRate > 0 && targetRate < 1)) {
    throw outOfRange(`${WHERE}slo.targetRate must be in (0, 1) for rules (a 100% target leaves no error budget to burn), got ${targetRate}`)
  }
  if (minFailures !== undefined) {
    if (typeof minFailures !== 'number') throw invalidArgType(`${WHERE}slo.minFailures must be a number, got ${describe(minFailures)}`)
    if (!Number.isSafeInteger(minFailures) || minFailures < 0) {
      throw outOfRange(`${WHERE}slo.minFailures must be a non-negative integer, got ${minFailures}`)
    }
  }
  if (description !== undefined && typeof description !== 'string') {
    throw invalidArgType(`${WHERE}slo.description must be a string, got ${describe(description)}`)
  }
  checkStringMap(slo.labels, 'slo.labels', { labels: true })
  return checkAlerting(slo.alerting)
}

function checkOptions(options) {
  if (options === undefined) options = {}
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw invalidArgType(`prometheusRules(slo, options): options must be an object, got ${describe(options)}`)
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) {
      throw invalidArgType(`prometheusRules(slo, options): unknown key '${key}' in options; known keys: ${OPTION_KEYS.join(', ')}`)
    }
  }
  const { scrapeIntervalMs = 15_000, evaluationIntervalMs = 60_000, periodRules = 'exact', format = 'rules', namespace } = options
  for (const [key, value] of [['scrapeIntervalMs', scrapeIntervalMs], ['evaluationIntervalMs', evaluationIntervalMs]]) {
    if (typeof value !== 'number') throw invalidArgType(`prometheusRules(slo, options): options.${key} must be a number, got ${describe(value)}`)
    if (!Number.isSafeInteger(value) || value < 1000 || value % 1000 !== 0) {
      throw outOfRange(`prometheusRules(slo, options): options.${key} must be a whole number of seconds in ms (≥ 1000), got ${value}`)
    }
  }
  const choices = { periodRules: ['exact', 'optimised'], format: ['rules', 'prometheus-operator'] }
  for (const [key, value] of [['periodRules', periodRules], ['format', format]]) {
    if (!choices[key].includes(value)) {
      throw invalidArgValue(`prometheusRules(slo, options): options.${key} must be one of ${choices[key].join(', ')}, got ${JSON.stringify(value)}`)
    }
  }
  if (namespace !== undefined && (typeof namespace !== 'string' || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace))) {
    throw invalidArgValue(`prometheusRules(slo, options): options.namespace must be a Kubernetes namespace name, got ${JSON.stringify(namespace)}`)
  }
  return { scrapeIntervalMs, evaluationIntervalMs, periodRules, format, namespace }
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
 * Checks the tracker config fields with the tracker itself, and returns its
 * policy when `alerts` is given (the custom pairs, windows rounded to buckets).
 */
function trackerCheck({ targetRate, windowMs, alerts, minEvents = 0, resolutionMs }) {
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
    return alerts === undefined ? undefined : tracker.alertPolicy
  } finally {
    tracker.close()
  }
}

/**
 * The alert pairs the Prometheus rules use: the custom `alerts` as the tracker
 * reads them, or else PROMETHEUS_PAIRS for the period, made to fire at a
 * scrape: no window under 4 scrape intervals (a shorter rate() range holds too
 * few samples; it is lengthened), no burn rate out of reach (above
 * 1 / (1 − target), reached only with every solve failing: lowered to 80 % of
 * it). Custom pairs with a window under 4 scrapes are refused.
 * @returns {Array<{ name: string, severity: string, longWindowMs: number, shortWindowMs: number, burnRate: number, minEvents: number }>}
 */
function prometheusPolicy(slo, scrapeIntervalMs) {
  const custom = trackerCheck(slo)
  const minWindow = 4 * scrapeIntervalMs
  if (slo.windowMs < minWindow) {
    throw outOfRange(`${WHERE}slo.windowMs (${promDuration(slo.windowMs)}) must be at least 4 scrape intervals (${promDuration(minWindow)})`)
  }
  if (custom) {
    for (const pair of custom) {
      if (pair.shortWindowMs < minWindow) {
        throw outOfRange(
          `${WHERE}slo.alerts['${pair.name}'].shortWindowMs (${promDuration(pair.shortWindowMs)}) must be at least 4 scrape intervals ` +
            `(${promDuration(minWindow)}): a shorter rate() range holds too few samples to ever fire`,
        )
      }
    }
    return custom
  }
  const maxBurn = 1 / (1 - slo.targetRate)
  return PROMETHEUS_PAIRS.map(({ name, severity, spent, longFraction }) => {
    const workbook = Number((spent / longFraction).toPrecision(12))
    const burnRate = workbook < maxBurn ? workbook : Number((0.8 * maxBurn).toPrecision(3))
    const shortWindowMs = Math.max(ceilSecond((slo.windowMs * longFraction) / 12), minWindow)
    const longWindowMs = Math.min(Math.max(ceilSecond(slo.windowMs * longFraction), shortWindowMs), slo.windowMs)
    return { name, severity, longWindowMs, shortWindowMs: Math.min(shortWindowMs, longWindowMs), burnRate, minEvents: 0 }
  })
}

/**
 * The rule group (a plain object) of one SLO, and the policy its alerts implement.
 */
function compileOne(slo, options) {
  const alerting = checkSlo(slo)
  const { name, targetRate, windowMs, minEvents = 0, minFailures = MIN_FAILURES } = slo
  const id = slo.id ?? defaultId(slo)
  const policy = prometheusPolicy(slo, options.scrapeIntervalMs)
  const period = promDuration(windowMs)
  const sel = `{slo=${JSON.stringify(id)}}`
  const ids = { slo: id }
  const alertWindows = [...new Set(policy.flatMap((r) => [r.shortWindowMs, r.longWindowMs]))].sort((a, b) => a - b)
  const windows = [...new Set([...alertWindows, windowMs])].sort((a, b) => a - b)
  const shortest = windows[0]
  const optimised = options.periodRules === 'optimised' && windowMs !== shortest

  const recordings = []
  const raw = (w) => [
    { record: `captcha_budget:solves:increase${w}`, expr: `sum by (name) (increase(${selector(name)}[${w}]))`, labels: ids },
    { record: `captcha_budget:solve_failures:increase${w}`, expr: `sum by (name) (increase(${selector(name, 'failure')}[${w}]))`, labels: ids },
    {
      record: `captcha_budget:solve_error:ratio_rate${w}`,
      expr: [`sum by (name) (rate(${selector(name, 'failure')}[${w}]))`, '/', `sum by (name) (rate(${selector(name)}[${w}]))`].join('\n'),
      labels: ids,
    },
  ]
  for (const ms of windows) {
    const w = promDuration(ms)
    if (ms === windowMs && optimised) {
      // Sums of the shortest window's recorded increases, one per evaluation:
      // each solve is counted (shortest / evaluation interval) times, in the
      // failures and the solves alike, so the ratio is the volume-weighted one;
      // the counts are scaled back by that factor.
      const s = promDuration(shortest)
      const scale = num(options.evaluationIntervalMs / shortest)
      recordings.push(
        { record: `captcha_budget:solves:increase${w}`, expr: `sum_over_time(captcha_budget:solves:increase${s}${sel}[${w}]) * ${scale}`, labels: ids },
        {
          record: `captcha_budget:solve_failures:increase${w}`,
          expr: `sum_over_time(captcha_budget:solve_failures:increase${s}${sel}[${w}]) * ${scale}`,
          labels: ids,
        },
        {
          record: `captcha_budget:solve_error:ratio_rate${w}`,
          expr: `sum_over_time(captcha_budget:solve_failures:increase${s}${sel}[${w}])\n/\nsum_over_time(captcha_budget:solves:increase${s}${sel}[${w}])`,
          labels: ids,
        },
      )
    } else {
      recordings.push(...raw(w))
    }
    recordings.push({
      record: `captcha_budget:burn_rate:ratio_rate${w}`,
      expr: `captcha_budget:solve_error:ratio_rate${w}${sel} / ${num(budgetOf(targetRate))}`,
      labels: ids,
    })
  }
  // Fixed names, whatever the windows and period: what a dashboard reads.
  for (const ms of alertWindows) {
    const w = promDuration(ms)
    recordings.push({ record: 'captcha_budget:window_burn_rate:ratio', expr: `captcha_budget:burn_rate:ratio_rate${w}${sel}`, labels: { ...ids, window: w } })
  }
  const info = { ...ids, name, objective: num(targetRate), period, ...(slo.labels ?? {}) }
  if (slo.description) info.description = slo.description
  recordings.push(
    { record: 'captcha_budget:slo_info', expr: 'vector(1)', labels: info },
    { record: 'captcha_budget:objective:ratio', expr: `vector(${num(targetRate)})`, labels: { ...ids, name } },
    { record: 'captcha_budget:error_budget:ratio', expr: `vector(${num(budgetOf(targetRate))})`, labels: { ...ids, name } },
    { record: 'captcha_budget:period:seconds', expr: `vector(${num(windowMs / 1000)})`, labels: { ...ids, name } },
    { record: 'captcha_budget:current_burn_rate:ratio', expr: `captcha_budget:burn_rate:ratio_rate${promDuration(shortest)}${sel}`, labels: ids },
    { record: 'captcha_budget:period_burn_rate:ratio', expr: `captcha_budget:burn_rate:ratio_rate${period}${sel}`, labels: ids },
    { record: 'captcha_budget:error_budget_remaining:ratio', expr: `clamp_min(1 - captcha_budget:period_burn_rate:ratio${sel}, 0)`, labels: ids },
  )

  const alertNames = new Set()
  const alerts = []
  for (const pair of policy) {
    const route = alerting[pair.severity]
    if (route?.disable) continue
    const long = promDuration(pair.longWindowMs)
    const short = promDuration(pair.shortWindowMs)
    const alert = `${alerting.name}${pascal(pair.name)}`
    if (alertNames.has(alert) || alert === alerting.name) {
      throw outOfRange(`${WHERE}slo.alerts: the pair '${pair.name}' gives the alert name ${alert}, which is empty or taken: rename the pair`)
    }
    alertNames.add(alert)
    const conditions = [
      `captcha_budget:burn_rate:ratio_rate${long}${sel} > ${num(pair.burnRate)}`,
      `captcha_budget:burn_rate:ratio_rate${short}${sel} > ${num(pair.burnRate)}`,
    ]
    if (minFailures > 0) conditions.push(`captcha_budget:solve_failures:increase${long}${sel} >= ${minFailures}`)
    if (pair.minEvents > 0) conditions.push(`captcha_budget:solves:increase${long}${sel} >= ${pair.minEvents}`)
    if (minEvents > 0) conditions.push(`captcha_budget:solves:increase${period}${sel} >= ${minEvents}`)
    const spent = (100 * pair.burnRate * pair.longWindowMs) / windowMs
    alerts.push({
      alert,
      expr: conditions.join('\nand\n'),
      // `for:` ignores a condition true for less than a fifth of the short
      // window; keep_firing_for holds a firing alert through dips of up to a
      // short window, so one incident is one page (fire/resolve/fire damped).
      for: promDuration(Math.max(ceilSecond(pair.shortWindowMs / 5), 1000)),
      keep_firing_for: short,
      // slo also comes from the expression; on the rule too, two SLOs' alerts on one source differ
      // for promtool's duplicate check and for anyone reading the rule file.
      labels: { slo: id, severity: pair.severity, pair: pair.name, ...alerting.labels, ...(route?.labels ?? {}) },
      annotations: {
        summary: `{{ $labels.slo }}: the CAPTCHA error budget burns {{ $value | humanize }}x the sustainable rate (${pair.name}, threshold ${threeDigits(pair.burnRate)}x)`,
        description:
          `The burn rate of {{ $labels.slo }} (source ${name}, SLO ${threeDigits(targetRate * 100)}% over ${period}) is {{ $value | humanize }} over ${long} ` +
          `and above ${threeDigits(pair.burnRate)} over ${short}, across all instances, with at least ${minFailures} failures in ${long}: ` +
          `at ${threeDigits(pair.burnRate)}x, ${threeDigits(spent)}% of the budget goes in ${long}, all of it in ${approxDuration(windowMs / pair.burnRate)}.`,
        ...alerting.annotations,
        ...(route?.annotations ?? {}),
      },
    })
  }
  const absent = `${alerting.name}SourceAbsent`
  alerts.push({
    alert: absent,
    expr: `absent(${selector(name)})`,
    for: promDuration(ABSENT_FOR_MS),
    labels: { slo: id, severity: 'ticket', ...alerting.labels, ...alerting.ticket.labels },
    annotations: {
      summary: `${id}: no ${selector(name).replace(/"/g, "'")} series for ${promDuration(ABSENT_FOR_MS)}`,
      description: `No instance exposes the solve counter of ${name}: the SLO ${id} cannot be judged (workers down, scrape failing, or a renamed source).`,
      ...alerting.annotations,
      ...alerting.ticket.annotations,
    },
  })

  // One group: its rules run in order at each evaluation, so the alerts read the
  // recordings of the same instant (separate groups run on their own timers).
  const group = { name: `captcha-budget-${id}` }
  // The optimised period counts evaluations: the group's interval is the one they assume.
  if (optimised) group.interval = promDuration(options.evaluationIntervalMs)
  group.rules = [...recordings, ...alerts]
  return { id, group, policy }
}

/** The groups for one SLO or several (distinct ids), and each policy. */
function compile(slos, options) {
  const opts = checkOptions(options)
  const list = Array.isArray(slos) ? slos : [slos]
  if (list.length === 0) throw outOfRange(`${WHERE}no SLO given`)
  const seen = new Set()
  const compiled = list.map((slo) => {
    const one = compileOne(slo, opts)
    if (seen.has(one.id)) throw invalidArgValue(`${WHERE}two SLOs have the id '${one.id}': give each its own slo.id`)
    seen.add(one.id)
    return one
  })
  return { groups: compiled.map((c) => c.group), policies: compiled.map((c) => ({ id: c.id, policy: c.policy })), options: opts }
}

/** The rule groups (as plain objects, `{ groups }`) for the SLO(s): what `prometheusRules` writes as YAML. */
function ruleGroups(slos, options) {
  return { groups: compile(slos, options).groups }
}

/**
 * YAML for plain objects, as Prometheus and promtool read it (the `yaml`
 * package; PromQL with line breaks comes out as literal blocks).
 */
function toYaml(value) {
  // No anchors/aliases for shared label objects: each rule reads whole.
  return YAML.stringify(value, { lineWidth: 0, aliasDuplicateObjects: false }).trimEnd()
}

/**
 * Prometheus rules (YAML) for one SLO or several: recording rules (error
 * ratio, burn rate, solves and failures over each alert window and the whole
 * period, remaining budget, the SLO's info series and fixed-name burn rates),
 * one multiwindow burn-rate alert per pair and one for an absent source, over
 * `captcha_budget_solves_total{name=…}` summed across instances. With
 * `options.format: 'prometheus-operator'`, a PrometheusRule object.
 * @param {object | object[]} slo
 * @param {{ scrapeIntervalMs?: number, evaluationIntervalMs?: number, periodRules?: 'exact' | 'optimised', format?: 'rules' | 'prometheus-operator', namespace?: string }} [options]
 * @returns {string}
 */
function prometheusRules(slo, options) {
  return rulesAndPolicy(slo, options).text
}

/** The YAML of `prometheusRules(slo, options)` and the policies it implements. */
function rulesAndPolicy(slos, options) {
  const { groups, policies, options: opts } = compile(slos, options)
  const ids = policies.map((p) => p.id)
  const head = `# Prometheus rules for the CAPTCHA error budget SLO${ids.length > 1 ? 's' : ''} ${ids.map((i) => JSON.stringify(i)).join(', ')} (captcha-error-budget).\n`
  if (opts.format === 'rules') return { text: `${head}${toYaml({ groups })}\n`, policies }
  const metadata = {
    name: ids.length === 1 ? `captcha-budget-${ids[0]}`.toLowerCase().replace(/[^a-z0-9.-]+/g, '-').slice(0, 253) : 'captcha-budget-slos',
    ...(opts.namespace ? { namespace: opts.namespace } : {}),
    labels: { 'app.kubernetes.io/managed-by': 'captcha-error-budget' },
  }
  const object = { apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule', metadata, spec: { groups } }
  return { text: `${head}${toYaml(object)}\n`, policies }
}

module.exports = { ruleGroups, prometheusRules, rulesAndPolicy, prometheusPolicy, toYaml, defaultId, WHERE, MIN_FAILURES, PROMETHEUS_PAIRS }
