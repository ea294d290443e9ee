'use strict'
// OpenSLO: `openslo/v1` SLO documents (with the v1 `SLI` and `DataSource` documents
// they name) and `openslo/v1alpha` SLO documents, read into the `slo` objects of
// lib/prometheus/rules.js (lib/slo/spec.js picks the reader by apiVersion).
const { parseDuration } = require('../util/duration.js')
const { printable } = require('../util/errors.js')
const { isObject, readLabels, onlyKnown, rateTemplate, readSli, namedDocument } = require('./common.js')

// OpenSLO's units; M, Q and Y are calendar lengths, which a rolling window of fixed length cannot be.
const OPENSLO_DURATION = /^(\d+)([smhdwMQY])$/

/** An id part made valid: whitespace runs become '-' (ids hold none). */
const idPart = (text) => String(text).trim().replace(/\s+/g, '-')

/** An OpenSLO objective's target (`target` or `targetPercent`). */
function openSloTarget(objective, fail, field) {
  let target = objective.target
  if (target === undefined && objective.targetPercent !== undefined) target = objective.targetPercent / 100
  if (typeof target !== 'number' || !(target > 0 && target < 1)) {
    fail(`${field}.target`, `must be a number in (0, 1) (or targetPercent in (0, 100)), got ${JSON.stringify(objective.target ?? objective.targetPercent)}`)
  }
  return target
}

/** OpenSLO's budgeting method: Occurrences (also when left out, as OpenSLO's own SLO example does). */
function occurrences(spec, fail) {
  if (spec.budgetingMethod !== undefined && spec.budgetingMethod !== null && spec.budgetingMethod !== 'Occurrences') {
    fail('spec.budgetingMethod', `must be Occurrences (the budget counts solves, not time slices), got ${printable(JSON.stringify(spec.budgetingMethod))}`)
  }
}

/** OpenSLO's `alertPolicies`: none (left out, empty, or null as in OpenSLO's examples), never ignored. */
function noAlertPolicies(spec, fail) {
  const policies = spec.alertPolicies
  if (policies === undefined || policies === null || (Array.isArray(policies) && policies.length === 0)) return
  fail(
    'spec.alertPolicies',
    "is not supported: the rules alert with their own multiwindow burn-rate pairs (see --alerts), so an AlertPolicy's conditions would not be honoured; leave it out",
  )
}

/**
 * The SLOs of an OpenSLO document's objectives, one each, all with `sli`:
 * `sliOf(objective, field)` for v1alpha's per-objective ratioMetrics.
 */
function openSloObjectives({ meta, spec, windowMs, sli, sliOf }, fail) {
  if (!Array.isArray(spec.objectives) || spec.objectives.length === 0) fail('spec.objectives', 'must hold at least one objective')
  // The SLO's service is a label, as in Sloth's specs (and Sloth's reading of OpenSLO); metadata.labels win.
  if (spec.service !== undefined && (typeof spec.service !== 'string' || spec.service === ''))
    fail('spec.service', `must be a non-empty string, got ${printable(JSON.stringify(spec.service))}`)
  const own = readLabels(meta.labels, fail, 'metadata.labels')
  const labels = spec.service === undefined ? own : { service: spec.service, ...own }
  return spec.objectives.map((objective, i) => {
    const field = `spec.objectives[${i}]`
    if (!isObject(objective)) fail(field, 'must be a map')
    const indicator = sliOf ? sliOf(objective, field) : sli
    const target = openSloTarget(objective, fail, field)
    const suffix = spec.objectives.length > 1 ? `-${idPart(objective.name ?? objective.displayName ?? i)}` : ''
    const slo = { id: `${meta.name}${suffix}`, ...indicator, targetRate: target, windowMs }
    if (labels) slo.labels = labels
    const description = spec.description ?? meta.displayName
    if (typeof description === 'string' && description !== '') slo.description = description
    return slo
  })
}

const OPENSLO_SPEC_KEYS = ['description', 'service', 'indicator', 'indicatorRef', 'timeWindow', 'budgetingMethod', 'objectives', 'alertPolicies']
const OPENSLO_OBJECTIVE_KEYS = [
  'displayName',
  'name',
  'target',
  'targetPercent',
  'op',
  'value',
  'timeSliceTarget',
  'timeSliceWindow',
  'indicator',
  'indicatorRef',
  'compositeWeight',
]

/** An OpenSLO v1 `timeWindow`: its rolling duration, or `windowMs` (the period) when left out. */
function openSloWindow(spec, fail, windowMs) {
  const windows = spec.timeWindow
  if (windows === undefined || windows === null) return windowMs
  if (!Array.isArray(windows) || windows.length !== 1) fail('spec.timeWindow', 'must hold exactly one window')
  const window = windows[0]
  if (!isObject(window)) fail('spec.timeWindow[0]', 'must be a map with duration and isRolling')
  if (window.isRolling !== true) fail('spec.timeWindow[0].isRolling', 'must be true: the budget is a rolling window (calendar windows are not supported)')
  const dm = OPENSLO_DURATION.exec(String(window.duration ?? ''))
  if (!dm) fail('spec.timeWindow[0].duration', `must be a duration like 28d, 24h or 1w, got ${printable(JSON.stringify(window.duration))}`)
  if ('MQY'.includes(dm[2])) fail('spec.timeWindow[0].duration', `${window.duration} is a calendar length; give a fixed one in days, e.g. 30d`)
  try {
    return parseDuration(window.duration, 'duration')
  } catch {
    // The form is right (checked above): zero, or more ms than JavaScript counts exactly.
    fail('spec.timeWindow[0].duration', `must be a positive duration of at most 2^53 − 1 ms, got ${JSON.stringify(window.duration)}`)
  }
}

/**
 * The SLI of an OpenSLO v1 indicator's `spec` (inline, or an SLI document's):
 * a ratioMetric of events whose metric sources are Prometheus (their `type`,
 * or the `type` of the DataSource document their `metricSourceRef` names).
 */
function openSloIndicator(ind, at, fail, dataSources) {
  if (!isObject(ind)) fail(at, 'is required: an indicator with a ratioMetric')
  if (ind.thresholdMetric !== undefined) {
    fail(
      `${at}.thresholdMetric`,
      'is not supported: a threshold (latency) indicator compares values, not error and total events; give a ratioMetric of events (e.g. requests over the latency bucket vs all)',
    )
  }
  onlyKnown(ind, ['ratioMetric', 'description'], fail, at)
  const rf = `${at}.ratioMetric`
  const query = (ratio, part) => {
    const field = `${rf}.${part}.metricSource`
    const ms = ratio[part]?.metricSource
    if (!isObject(ms)) fail(field, 'is required')
    let type = ms.type
    if (type === undefined && ms.metricSourceRef !== undefined && dataSources.has(ms.metricSourceRef)) type = dataSources.get(ms.metricSourceRef)
    const named = ms.type === undefined && type !== undefined ? ` (the type of DataSource ${printable(JSON.stringify(ms.metricSourceRef))})` : ''
    if (type !== undefined && String(type).toLowerCase() !== 'prometheus') {
      fail(`${field}.type`, `must be Prometheus${named}: the rules are PromQL, got ${printable(JSON.stringify(type))}`)
    }
    return ms.spec?.query
  }
  return openSloRatio(ind.ratioMetric, rf, fail, query, (part) => `${rf}.${part}.metricSource.spec.query`)
}

/**
 * An OpenSLO ratio of events (v1's `ratioMetric`, v1alpha's `ratioMetrics`),
 * good or bad with total, as an SLI: `query(ratio, part)` reads a part's query
 * (checking its source), `queryField(part)` names it.
 */
function openSloRatio(ratio, rf, fail, query, queryField) {
  if (!isObject(ratio)) fail(rf, 'is required: a ratio of events (good or bad, and total)')
  if (ratio.raw !== undefined) fail(`${rf}.raw`, 'is not supported: a precomputed ratio has no events to count; give good or bad with total')
  if (ratio.counter === false) fail(`${rf}.counter`, 'false (gauges) is not supported: the rules take rate() of counters')
  onlyKnown(ratio, ['counter', 'good', 'bad', 'total'], fail, rf)
  const hasGood = ratio.good !== undefined
  if (hasGood === (ratio.bad !== undefined)) fail(rf, 'must have exactly one of good and bad, with total')
  const part = hasGood ? 'good' : 'bad'
  return readSli(
    {
      counted: query(ratio, part),
      total: query(ratio, 'total'),
      good: hasGood,
      countedField: queryField(part),
      totalField: queryField('total'),
      wrap: (q, f) => rateTemplate(q, fail, f),
    },
    fail,
  )
}

/**
 * The SLOs of one OpenSLO v1 `SLO` document. `refs` holds the file's SLI
 * documents (for `indicatorRef`) and DataSource types (for `metricSourceRef`);
 * `windowMs` is the period when `timeWindow` is left out.
 */
function readOpenSlo(doc, fail, { windowMs: period, refs }) {
  const { meta, spec } = namedDocument(doc, fail)
  onlyKnown(spec, OPENSLO_SPEC_KEYS, fail, 'spec')
  occurrences(spec, fail)
  const windowMs = openSloWindow(spec, fail, period)
  const objectives = (Array.isArray(spec.objectives) ? spec.objectives : [])
    .map((objective, i) => [objective, `spec.objectives[${i}]`])
    .filter(([o]) => isObject(o))
  // Composite objectives first: they are why a document has no indicator of its own.
  for (const [objective, field] of objectives) {
    onlyKnown(objective, OPENSLO_OBJECTIVE_KEYS, fail, field)
    for (const key of ['indicator', 'indicatorRef', 'compositeWeight']) {
      if (objective[key] !== undefined)
        fail(`${field}.${key}`, "is not supported: a composite SLO's combined budget is not computed; write one SLO per indicator")
    }
  }
  let sli
  if (spec.indicatorRef !== undefined) {
    if (spec.indicator !== undefined) fail('spec.indicatorRef', 'cannot be given with spec.indicator')
    const ref = spec.indicatorRef
    if (!refs.slis.has(ref)) fail('spec.indicatorRef', `must name an SLI document of this file (kind: SLI, openslo/v1), got ${printable(JSON.stringify(ref))}`)
    sli = openSloIndicator(refs.slis.get(ref), `spec.indicatorRef (SLI ${printable(JSON.stringify(ref))}) spec`, fail, refs.dataSources)
  } else {
    sli = openSloIndicator(spec.indicator?.spec, 'spec.indicator.spec', fail, refs.dataSources)
  }
  for (const [objective, field] of objectives) {
    for (const key of ['timeSliceTarget', 'timeSliceWindow', 'op', 'value']) {
      if (objective[key] !== undefined) fail(`${field}.${key}`, 'is not supported: it belongs to time slices or a threshold, the rules count events')
    }
  }
  noAlertPolicies(spec, fail)
  return openSloObjectives({ meta, spec, windowMs, sli }, fail)
}

const V1ALPHA_UNITS = { Second: 1000, Minute: 60_000, Hour: 3_600_000, Day: 86_400_000, Week: 604_800_000 }

/** The SLOs of one OpenSLO v1alpha `SLO` document (per-objective ratioMetrics, timeWindows of count and unit), as Sloth reads it. */
function readOpenSloAlpha(doc, fail, { windowMs: period }) {
  const { meta, spec } = namedDocument(doc, fail)
  occurrences(spec, fail)
  let windowMs = period
  const windows = spec.timeWindows
  if (windows !== undefined && windows !== null) {
    if (!Array.isArray(windows) || windows.length !== 1 || !isObject(windows[0])) fail('spec.timeWindows', 'must hold exactly one window (count and unit)')
    const w = windows[0]
    if (w.isRolling === false || w.calendar !== undefined)
      fail('spec.timeWindows[0].isRolling', 'must be true or left out: the budget is a rolling window (calendar windows are not supported)')
    if (!Object.hasOwn(V1ALPHA_UNITS, w.unit)) {
      fail(
        'spec.timeWindows[0].unit',
        `must be one of ${Object.keys(V1ALPHA_UNITS).join(', ')} (Month, Quarter and Year are calendar lengths), got ${printable(JSON.stringify(w.unit))}`,
      )
    }
    if (!Number.isSafeInteger(w.count) || w.count < 1 || w.count * V1ALPHA_UNITS[w.unit] > Number.MAX_SAFE_INTEGER) {
      fail('spec.timeWindows[0].count', `must be a positive whole number, got ${JSON.stringify(w.count)}`)
    }
    windowMs = w.count * V1ALPHA_UNITS[w.unit]
  }
  noAlertPolicies(spec, fail)
  const sliOf = (objective, field) => {
    onlyKnown(objective, ['ratioMetrics', 'target', 'targetPercent', 'displayName', 'name', 'value', 'op'], fail, field)
    if (objective.op !== undefined) fail(`${field}.op`, 'is not supported: a threshold (latency) objective compares values, not error and total events')
    const query = (ratio, p) => {
      const q = ratio[p]
      if (!isObject(q)) fail(`${field}.ratioMetrics.${p}`, 'is required: source, queryType and query')
      if (q.source !== undefined && String(q.source).toLowerCase() !== 'prometheus') {
        fail(`${field}.ratioMetrics.${p}.source`, `must be prometheus: the rules are PromQL, got ${printable(JSON.stringify(q.source))}`)
      }
      if (q.queryType !== undefined && String(q.queryType).toLowerCase() !== 'promql')
        fail(`${field}.ratioMetrics.${p}.queryType`, `must be promql, got ${printable(JSON.stringify(q.queryType))}`)
      return q.query
    }
    return openSloRatio(objective.ratioMetrics, `${field}.ratioMetrics`, fail, query, (p) => `${field}.ratioMetrics.${p}.query`)
  }
  return openSloObjectives({ meta, spec, windowMs, sliOf }, fail)
}

module.exports = { readOpenSlo, readOpenSloAlpha }
