'use strict'
// SLO documents from the ecosystem, read into the `slo` objects of
// lib/rules.js: OpenSLO v1 `SLO` documents (one or many per YAML stream) and
// Sloth `prometheus/v1` specs. Both must measure our counter
// (`captcha_budget_solves_total{name=…}`, lib/metrics.js); every problem is an
// error naming the file, the document and the field.
const YAML = require('yaml')
const { parseDuration } = require('../duration')
// Names quoted in messages with what a terminal or log would act on escaped (a hostile name is refused later, by lib/rules-slo.js).
const { printable } = require('../errors')

const COUNTER = 'captcha_budget_solves_total'
// OpenSLO's units; M, Q and Y are calendar lengths, which a rolling window of fixed length cannot be.
const OPENSLO_DURATION = /^(\d+)([smhdwMQY])$/

/** A document that cannot be read: `message` names the file, document and field. Code ERR_INVALID_ARG_VALUE. */
class SpecError extends Error {
  constructor(message) {
    super(message)
    this.name = 'SpecError'
    this.code = 'ERR_INVALID_ARG_VALUE'
  }
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v)

/**
 * The `name` label a query selects on our counter, with its `outcome` (or
 * null): a bare selector, or Sloth's `sum(rate(<selector>[{{.window}}]))`.
 * Throws a plain message (the caller adds where).
 */
function readSelector(query) {
  if (typeof query !== 'string') throw new Error(`must be a PromQL string, got ${query === null ? 'null' : typeof query}`)
  const sel = `${COUNTER}\\s*\\{([^}]*)\\}`
  const bare = new RegExp(`^\\s*${sel}\\s*$`).exec(query)
  const wrapped = new RegExp(`^\\s*sum(?:\\s+by\\s*\\([\\w\\s,]*\\))?\\s*\\(\\s*(?:rate|increase)\\s*\\(\\s*${sel}\\s*\\[\\s*\\{\\{\\s*\\.window\\s*\\}\\}\\s*\\]\\s*\\)\\s*\\)\\s*$`).exec(query)
  const m = bare || wrapped
  if (!m) {
    throw new Error(
      `must select the solve counter, as ${COUNTER}{name="<name>"} (outcome="failure" for errors)` +
        ` or sum(rate(${COUNTER}{…}[{{.window}}])), got ${JSON.stringify(query)}`,
    )
  }
  const labels = {}
  for (const part of m[1].split(',').map((s) => s.trim()).filter(Boolean)) {
    const lm = /^([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"$/.exec(part)
    if (!lm) throw new Error(`may only use equality matchers (label="value"), got '${part}'`)
    labels[lm[1]] = JSON.parse(`"${lm[2]}"`)
  }
  const { name, outcome = null, ...rest } = labels
  if (name === undefined) throw new Error(`must select one source with name="<name>", got ${JSON.stringify(query)}`)
  if (Object.keys(rest).length) throw new Error(`may only match name and outcome (the rules sum over every instance), got ${Object.keys(rest).join(', ')}`)
  if (outcome !== null && outcome !== 'success' && outcome !== 'failure') throw new Error(`outcome must be "success" or "failure", got "${outcome}"`)
  return { name, outcome }
}

/** A label map from a document: OpenSLO allows a list of values per key (joined with commas). */
function readLabels(labels, fail, field) {
  if (labels === undefined || labels === null) return undefined
  if (!isObject(labels)) fail(field, `must be a map of labels, got ${Array.isArray(labels) ? 'a list' : typeof labels}`)
  const out = {}
  for (const [key, value] of Object.entries(labels)) {
    // They become Prometheus labels (of the info series, or of the alerts).
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(key) || key.startsWith('__')) fail(`${field}.${key}`, 'is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*, no leading __)')
    const values = Array.isArray(value) ? value : [value]
    if (!values.every((v) => typeof v === 'string')) fail(`${field}.${key}`, 'must be a string or a list of strings')
    out[key] = values.join(',')
  }
  return out
}

/** The SLOs of one OpenSLO v1 `SLO` document. */
function readOpenSlo(doc, fail) {
  const meta = doc.metadata
  if (!isObject(meta)) fail('metadata', 'is required (with metadata.name)')
  if (typeof meta.name !== 'string' || meta.name === '') fail('metadata.name', 'is required: a non-empty string')
  const spec = doc.spec
  if (!isObject(spec)) fail('spec', 'is required')
  if (spec.budgetingMethod !== 'Occurrences') {
    fail('spec.budgetingMethod', `must be Occurrences (the budget counts solves, not time slices), got ${JSON.stringify(spec.budgetingMethod)}`)
  }
  const windows = spec.timeWindow
  if (!Array.isArray(windows) || windows.length !== 1) fail('spec.timeWindow', 'must hold exactly one window')
  const window = windows[0]
  if (!isObject(window)) fail('spec.timeWindow[0]', 'must be a map with duration and isRolling')
  if (window.isRolling !== true) fail('spec.timeWindow[0].isRolling', 'must be true: the budget is a rolling window (calendar windows are not supported)')
  const dm = OPENSLO_DURATION.exec(String(window.duration ?? ''))
  if (!dm) fail('spec.timeWindow[0].duration', `must be a duration like 28d, 24h or 1w, got ${JSON.stringify(window.duration)}`)
  if ('MQY'.includes(dm[2])) fail('spec.timeWindow[0].duration', `${window.duration} is a calendar length; give a fixed one in days, e.g. 30d`)
  let windowMs
  try {
    windowMs = parseDuration(window.duration, 'duration')
  } catch {
    // The form is right (checked above): zero, or more ms than JavaScript counts exactly.
    fail('spec.timeWindow[0].duration', `must be a positive duration of at most 2^53 − 1 ms, got ${JSON.stringify(window.duration)}`)
  }
  if (spec.indicatorRef !== undefined) fail('spec.indicatorRef', 'is not supported: give the indicator inline (spec.indicator)')
  const ratio = spec.indicator?.spec?.ratioMetric
  if (!isObject(ratio)) fail('spec.indicator.spec.ratioMetric', 'is required: a ratio metric over the solve counter')
  if (ratio.counter !== true) fail('spec.indicator.spec.ratioMetric.counter', 'must be true (the solve counter is a counter)')
  const source = (part) => {
    const field = `spec.indicator.spec.ratioMetric.${part}.metricSource`
    const ms = ratio[part]?.metricSource
    if (!isObject(ms)) fail(field, 'is required')
    if (ms.type !== undefined && ms.type !== 'Prometheus') fail(`${field}.type`, `must be Prometheus, got ${JSON.stringify(ms.type)}`)
    try {
      return readSelector(ms.spec?.query)
    } catch (err) {
      fail(`${field}.spec.query`, err.message)
    }
  }
  const hasGood = ratio.good !== undefined
  if (hasGood === (ratio.bad !== undefined)) fail('spec.indicator.spec.ratioMetric', 'must have exactly one of good and bad, with total')
  const part = hasGood ? 'good' : 'bad'
  const counted = source(part)
  const total = source('total')
  const want = hasGood ? 'success' : 'failure'
  if (counted.outcome !== want) fail(`spec.indicator.spec.ratioMetric.${part}.metricSource.spec.query`, `must select outcome="${want}"`)
  if (total.outcome !== null) fail('spec.indicator.spec.ratioMetric.total.metricSource.spec.query', 'must not select an outcome (every solve counts)')
  if (counted.name !== total.name) {
    fail('spec.indicator.spec.ratioMetric', `${part} and total must select the same name, got "${counted.name}" and "${total.name}"`)
  }
  if (!Array.isArray(spec.objectives) || spec.objectives.length === 0) fail('spec.objectives', 'must hold at least one objective')
  const labels = readLabels(meta.labels, fail, 'metadata.labels')
  return spec.objectives.map((objective, i) => {
    const field = `spec.objectives[${i}]`
    if (!isObject(objective)) fail(field, 'must be a map')
    let target = objective.target
    if (target === undefined && objective.targetPercent !== undefined) target = objective.targetPercent / 100
    if (typeof target !== 'number' || !(target > 0 && target < 1)) {
      fail(`${field}.target`, `must be a number in (0, 1) (or targetPercent in (0, 100)), got ${JSON.stringify(objective.target ?? objective.targetPercent)}`)
    }
    const suffix = spec.objectives.length > 1 ? `-${objective.name ?? objective.displayName ?? i}` : ''
    const slo = { id: `${meta.name}${suffix}`, name: total.name, targetRate: target, windowMs }
    if (labels) slo.labels = labels
    const description = spec.description ?? meta.displayName
    if (typeof description === 'string') slo.description = description
    return slo
  })
}

/** The SLOs of one Sloth `prometheus/v1` spec; `windowMs` is the period (Sloth's --default-slo-period). */
function readSloth(doc, fail, windowMs) {
  if (typeof doc.service !== 'string' || doc.service === '') fail('service', 'is required: a non-empty string')
  if (!Array.isArray(doc.slos) || doc.slos.length === 0) fail('slos', 'must hold at least one SLO')
  const serviceLabels = readLabels(doc.labels, fail, 'labels') ?? {}
  return doc.slos.map((s, i) => {
    const field = `slos[${i}]`
    if (!isObject(s)) fail(field, 'must be a map')
    if (typeof s.name !== 'string' || s.name === '') fail(`${field}.name`, 'is required: a non-empty string')
    if (typeof s.objective !== 'number' || !(s.objective > 0 && s.objective < 100)) {
      fail(`${field}.objective`, `must be a percentage in (0, 100), got ${JSON.stringify(s.objective)}`)
    }
    const events = s.sli?.events
    if (!isObject(events)) fail(`${field}.sli.events`, 'is required (error_query and total_query over the solve counter; raw and plugin SLIs are not supported)')
    const read = (key) => {
      try {
        return readSelector(events[key])
      } catch (err) {
        fail(`${field}.sli.events.${key}`, err.message)
      }
    }
    const errors = read('error_query')
    const total = read('total_query')
    if (errors.outcome !== 'failure') fail(`${field}.sli.events.error_query`, 'must select outcome="failure"')
    if (total.outcome !== null) fail(`${field}.sli.events.total_query`, 'must not select an outcome (every solve counts)')
    if (errors.name !== total.name) fail(`${field}.sli.events`, `error_query and total_query must select the same name, got "${errors.name}" and "${total.name}"`)
    const slo = {
      id: `${doc.service}-${s.name}`,
      name: total.name,
      targetRate: Number((s.objective / 100).toPrecision(12)),
      windowMs,
      labels: { service: doc.service, ...serviceLabels, ...(readLabels(s.labels, fail, `${field}.labels`) ?? {}) },
    }
    if (typeof s.description === 'string') slo.description = s.description
    const a = s.alerting
    if (a !== undefined) {
      if (!isObject(a)) fail(`${field}.alerting`, 'must be a map')
      const alerting = {}
      if (a.name !== undefined) alerting.name = a.name
      if (a.labels !== undefined) alerting.labels = a.labels
      if (a.annotations !== undefined) alerting.annotations = a.annotations
      for (const [from, to] of [['page_alert', 'page'], ['ticket_alert', 'ticket']]) {
        if (a[from] !== undefined) alerting[to] = a[from]
      }
      slo.alerting = alerting
    }
    return slo
  })
}

/**
 * The SLOs of a YAML file: OpenSLO v1 `SLO` documents and Sloth
 * `prometheus/v1` specs, any number, separated by `---`. OpenSLO documents of
 * other kinds (Service, …) are skipped. `windowMs` is the period of Sloth's
 * SLOs (Sloth's files do not carry one). The `slo` objects are then checked
 * by `prometheusRules`, whose messages the caller prefixes with `sloWhere[i]`.
 * @param {string} text
 * @param {{ file?: string, windowMs?: number }} [options]
 * @returns {{ slos: object[], where: string[] }}
 */
function readSpec(text, { file = 'spec', windowMs = 30 * 86_400_000 } = {}) {
  const docs = YAML.parseAllDocuments(text)
  const slos = []
  const where = []
  docs.forEach((d, n) => {
    const at = `${file}: document ${n + 1}`
    if (d.errors.length) throw new SpecError(`${at}: not valid YAML: ${d.errors[0].message.split('\n')[0]}`)
    const doc = d.toJS()
    if (doc === null || doc === undefined) return
    if (!isObject(doc)) throw new SpecError(`${at}: must be a map (an OpenSLO document or a Sloth spec)`)
    if (doc.version === 'prometheus/v1') {
      const label = `${at} (Sloth service ${printable(JSON.stringify(doc.service))})`
      const fail = (field, message) => {
        throw new SpecError(`${label}: ${field} ${message}`)
      }
      for (const slo of readSloth(doc, fail, windowMs)) {
        slos.push(slo)
        where.push(label)
      }
    } else if (doc.apiVersion === 'openslo/v1') {
      if (doc.kind !== 'SLO') return
      const label = `${at} (OpenSLO SLO ${printable(JSON.stringify(doc.metadata?.name))})`
      const fail = (field, message) => {
        throw new SpecError(`${label}: ${field} ${message}`)
      }
      for (const slo of readOpenSlo(doc, fail)) {
        slos.push(slo)
        where.push(label)
      }
    } else {
      throw new SpecError(
        `${at}: neither an OpenSLO v1 document (apiVersion: openslo/v1) nor a Sloth spec (version: prometheus/v1); ` +
          `got apiVersion ${JSON.stringify(doc.apiVersion)}, version ${JSON.stringify(doc.version)}`,
      )
    }
  })
  if (slos.length === 0) throw new SpecError(`${file}: no SLO in it (an OpenSLO kind: SLO document or a Sloth prometheus/v1 spec)`)
  return { slos, where }
}

module.exports = { readSpec, readSelector, SpecError }
