'use strict'
// The SLO and options of prometheusRules() (lib/rules.js), checked, and the
// alert policy the Prometheus rules implement: both asked of the core
// (`scrapePolicy`, crates/budget-core/src/alerts.rs), which checks the tracker
// config fields and custom pairs as a tracker does and holds the one table of
// every policy; this file checks what only the rules have (names, routing).
const { scrapePolicy } = require('../native.js')
const { ARGUMENT_NAME, describe, invalidArgType, outOfRange, invalidArgValue } = require('./errors')
const { promDuration } = require('./duration')

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
/** How long the source may be absent before CaptchaBudgetSourceAbsent fires. */
const ABSENT_FOR_MS = 600_000

// A number as PromQL/YAML read it back exactly (JS prints the shortest round-trip form).
const num = (x) => String(x)
// 1 − target without float noise (1 − 0.95 is 0.050000000000000044).
const budgetOf = (targetRate) => Number((1 - targetRate).toPrecision(12))
const ceilSecond = (ms) => Math.ceil(ms / 1000) * 1000

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
      throw invalidArgValue(`${WHERE}${where}: '${key}' is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, no leading __)`)
    }
    if (labels && RESERVED_LABELS.includes(key)) {
      throw invalidArgValue(`${WHERE}${where}: '${key}' is set by the rules (reserved: ${RESERVED_LABELS.join(', ')})`)
    }
    if (!labels && !LABEL_NAME.test(key)) throw invalidArgValue(`${WHERE}${where}: '${key}' is not an annotation name ([a-zA-Z_][a-zA-Z0-9_]*)`)
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
    if (!ALERTING_KEYS.includes(key)) throw invalidArgValue(`${WHERE}unknown key '${key}' in slo.alerting; known keys: ${ALERTING_KEYS.join(', ')}`)
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
        throw invalidArgValue(`${WHERE}unknown key '${key}' in slo.alerting.${severity}; known keys: labels, annotations, disable`)
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
    if (!SLO_KEYS.includes(key)) throw invalidArgValue(`${WHERE}unknown key '${key}' in slo; known keys: ${SLO_KEYS.join(', ')}`)
  }
  const { name, targetRate, windowMs, id, minFailures, description } = slo
  for (const [field, value] of [['name', name], ['id', id]]) {
    if (field === 'id' && value === undefined) continue
    if (typeof value !== 'string' || value === '' || /[\u0000-\u001f]/.test(value)) {
      throw invalidArgType(`${WHERE}slo.${field} must be a non-empty string without control characters, got ${JSON.stringify(value) ?? 'undefined'}`)
    }
  }
  for (const [field, value] of [['targetRate', targetRate], ['windowMs', windowMs]]) {
    if (value === undefined) throw invalidArgValue(`${WHERE}slo.${field} is required`)
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
      throw invalidArgValue(`prometheusRules(slo, options): unknown key '${key}' in options; known keys: ${OPTION_KEYS.join(', ')}`)
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
 * The alert pairs the Prometheus rules use and the failures a pair's long
 * window must hold by default, from the core: the custom `alerts` as the
 * tracker reads them (a window under 4 scrape intervals refused), or else the
 * workbook's table for the period made to fire at a scrape (no window under 4
 * scrape intervals: lengthened; no burn rate out of reach, above 1 / (1 −
 * target): lowered to 80 % of it). The core's errors name the fields as the
 * caller wrote them: `slo.<field>`.
 * @returns {{ pairs: Array<{ name: string, severity: string, longWindowMs: number, shortWindowMs: number, burnRate: number, minEvents: number }>, minFailures: number }}
 */
function policyOf({ targetRate, windowMs, alerts, minEvents = 0, resolutionMs }, scrapeIntervalMs) {
  const config = { targetRate, windowMs, minEvents, [ARGUMENT_NAME]: `${WHERE}slo` }
  if (alerts !== undefined) config.alerts = alerts
  if (resolutionMs !== undefined) config.resolutionMs = resolutionMs
  return scrapePolicy(config, scrapeIntervalMs)
}

/** The pairs of `policyOf(slo, scrapeIntervalMs)`. */
function prometheusPolicy(slo, scrapeIntervalMs) {
  return policyOf(slo, scrapeIntervalMs).pairs
}

module.exports = {
  checkSlo,
  checkOptions,
  prometheusPolicy,
  policyOf,
  defaultId,
  budgetOf,
  ceilSecond,
  num,
  SLO_KEYS,
  WHERE,
  ABSENT_FOR_MS,
}
