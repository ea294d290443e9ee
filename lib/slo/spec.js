'use strict'
// SLO documents from the ecosystem, read into the `slo` objects of
// lib/prometheus/rules.js: OpenSLO v1 and v1alpha `SLO` documents (with the v1 `SLI` and
// `DataSource` documents they name), Sloth `prometheus/v1` specs and
// `sloth.slok.dev/v1` PrometheusServiceLevels, Pyrra `ServiceLevelObjective`s,
// any number per YAML stream. An SLI on our counter
// (`captcha_budget_solves_total{name=…}`, lib/prometheus/metrics.js) becomes `slo.name`;
// any other error/total PromQL becomes `slo.sli`. What the rules cannot express
// is refused, never dropped: every problem is an error naming the file, the
// document and the field, and why.
const path = require('node:path')
const YAML = require('yaml')
const { parseDuration } = require('../util/duration.js')
const { LABEL_NAME_RULE, isLabelName } = require('../util/labels.js')
const { WINDOW } = require('../prometheus/rules-slo.js')
// Names quoted in messages with what a terminal or log would act on escaped (a hostile name is refused later, by lib/prometheus/rules-slo.js).
const { printable } = require('../util/errors.js')

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
  const wrapped = new RegExp(
    `^\\s*sum(?:\\s+by\\s*\\([\\w\\s,]*\\))?\\s*\\(\\s*(?:rate|increase)\\s*\\(\\s*${sel}\\s*\\[\\s*\\{\\{\\s*\\.window\\s*\\}\\}\\s*\\]\\s*\\)\\s*\\)\\s*$`,
  ).exec(query)
  const m = bare || wrapped
  if (!m) {
    throw new Error(
      `must select the solve counter, as ${COUNTER}{name="<name>"} (outcome="failure" for errors)` +
        ` or sum(rate(${COUNTER}{…}[{{.window}}])), got ${JSON.stringify(query)}`,
    )
  }
  const labels = {}
  for (const part of m[1]
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
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

/** A label map from a document: OpenSLO allows a list of values per key (joined with commas); numbers and booleans are written as YAML reads them (`tier: 2` is "2"), as Sloth does. */
function readLabels(labels, fail, field) {
  if (labels === undefined || labels === null) return undefined
  if (!isObject(labels)) fail(field, `must be a map of labels, got ${Array.isArray(labels) ? 'a list' : typeof labels}`)
  const out = {}
  for (const [key, value] of Object.entries(labels)) {
    // They become Prometheus labels (of the info series, or of the alerts).
    if (!isLabelName(key)) fail(`${field}.${key}`, `is not a Prometheus label name (${LABEL_NAME_RULE})`)
    const values = Array.isArray(value) ? value : [value]
    if (!values.every((v) => ['string', 'number', 'boolean'].includes(typeof v)))
      fail(`${field}.${key}`, 'must be a string, number or boolean, or a list of them')
    out[key] = values.map(String).join(',')
  }
  return out
}

/** Fails on a key of `map` not in `known`: a field the rules would not honour is refused, not dropped. */
function onlyKnown(map, known, fail, field, why = {}) {
  for (const key of Object.keys(map)) {
    if (known.includes(key)) continue
    const at = field ? `${field}.${key}` : key
    // Own keys of `why` only: a key named like an Object method (`constructor`) is just unknown.
    fail(at, (Object.hasOwn(why, key) ? why[key] : undefined) ?? `is not supported (known here: ${known.join(', ')}); it is refused rather than ignored`)
  }
}

// A series selector alone (`metric{…}` or `{…}`): rate() over each window is taken of it.
const SELECTOR_BODY = String.raw`(?:[a-zA-Z_:][a-zA-Z0-9_:]*\s*(?:\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\})?|\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\})`
const SELECTOR = new RegExp(String.raw`^\s*${SELECTOR_BODY}\s*$`)
// A sum of a selector (`sum(metric{…})`, `sum by (a, b) (metric{…})`, `sum(metric{…}) by (a)`): OpenSLO's own
// ratioMetric example. Of a counter that is the sum of its rates over each window.
const BY = String.raw`by\s*\(\s*([a-zA-Z_][a-zA-Z0-9_]*(?:\s*,\s*[a-zA-Z_][a-zA-Z0-9_]*)*)?\s*,?\s*\)`
const SUM_OF_SELECTOR = new RegExp(String.raw`^\s*sum\s*(?:${BY}\s*)?\(\s*(${SELECTOR_BODY})\s*\)\s*(?:${BY})?\s*$`)

/**
 * An OpenSLO or Pyrra query as a Sloth-style template: a bare selector becomes
 * `sum [by (…)] (rate(<selector>[{{.window}}]))`, and so does a sum of one
 * (`sum by (…) (<selector>)`); PromQL with `{{.window}}` is kept.
 */
function rateTemplate(query, fail, field, grouping = []) {
  if (typeof query !== 'string' || query.trim() === '') fail(field, `must be a PromQL string, got ${query === undefined ? 'nothing' : JSON.stringify(query)}`)
  if (query.includes(WINDOW)) return query.trim()
  let selector = query.trim()
  let by = grouping
  const sum = SUM_OF_SELECTOR.exec(query)
  if (sum) {
    if (grouping.length)
      fail(field, `must be a series selector when the SLO has a grouping (the rules sum it by the grouping labels), got ${printable(JSON.stringify(query))}`)
    selector = sum[2].trim()
    const labels = sum[1] ?? sum[3]
    by =
      labels === undefined
        ? []
        : labels
            .split(',')
            .map((l) => l.trim())
            .filter(Boolean)
  } else if (!SELECTOR.test(query)) {
    fail(
      field,
      `must be a series selector or a sum of one (its rate() over each alert window is taken), or PromQL with ${WINDOW} as its range, got ${printable(JSON.stringify(query))}`,
    )
  }
  return `sum${by.length ? ` by (${by.join(', ')})` : ''} (rate(${selector}[${WINDOW}]))`
}

/**
 * The SLI of an error (or good) and a total query: `{ name }` when both select
 * our counter (the outcome checked), else `{ sli: { errorQuery, totalQuery } }`,
 * any PromQL. `good` queries give errors as total − good.
 */
function readSli({ counted, total, good, countedField, totalField, wrap }, fail) {
  let ours = null
  try {
    ours = [readSelector(counted), readSelector(total)]
  } catch {
    // Not (both) our counter as a plain selector: any PromQL, below.
  }
  if (ours) {
    const [c, t] = ours
    const want = good ? 'success' : 'failure'
    if (c.outcome !== want) fail(countedField, `must select outcome="${want}"`)
    if (t.outcome !== null) fail(totalField, 'must not select an outcome (every solve counts)')
    if (c.name !== t.name)
      fail(
        countedField.replace(/\.[^.]*(\.metricSource\.spec\.query)?$/, ''),
        `${good ? 'good' : 'bad'} and total must select the same name, got "${c.name}" and "${t.name}"`,
      )
    return { name: t.name }
  }
  const c = wrap(counted, countedField)
  const t = wrap(total, totalField)
  return { sli: { errorQuery: good ? `(${t}) - (${c})` : c, totalQuery: t } }
}

/** A Sloth or Pyrra objective in percent (a number, or Pyrra's string), as a target rate. */
function percent(value, fail, field) {
  const n = typeof value === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value
  if (typeof n !== 'number' || !(n > 0 && n < 100)) fail(field, `must be a percentage in (0, 100), got ${JSON.stringify(value)}`)
  return Number((n / 100).toPrecision(12))
}

/** A Kubernetes object name made of `text`, or null. */
function objectName(text) {
  if (typeof text !== 'string') return null
  const name = text
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '')
    .slice(0, 253)
  return name === '' ? null : name
}

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

/** A Kubernetes-style document's `metadata` (with a name) and `spec`. */
function namedDocument(doc, fail) {
  const meta = doc.metadata
  if (!isObject(meta)) fail('metadata', 'is required (with metadata.name)')
  if (typeof meta.name !== 'string' || meta.name === '') fail('metadata.name', 'is required: a non-empty string')
  const spec = doc.spec
  if (!isObject(spec)) fail('spec', 'is required')
  return { meta, spec }
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

const SLOTH_PLUGINS = 'is not supported: Sloth plugins are Go code that rewrites the generated rules, which this tool cannot run'

/**
 * The SLOs of one Sloth spec: `prometheus/v1` (snake_case keys), or the
 * `spec` of a `sloth.slok.dev/v1` PrometheusServiceLevel (camelCase, `k8s`);
 * `windowMs` is the period (Sloth's --default-slo-period).
 */
function readSloth(doc, fail, windowMs, { k8s = false, at = '' } = {}) {
  const key = (snake, camel) => (k8s ? camel : snake)
  onlyKnown(doc, k8s ? ['service', 'labels', 'slos', 'sloPlugins'] : ['version', 'service', 'labels', 'slos', 'slo_plugins'], fail, at)
  if (doc[key('slo_plugins', 'sloPlugins')] !== undefined) fail(`${at}${key('slo_plugins', 'sloPlugins')}`, SLOTH_PLUGINS)
  if (typeof doc.service !== 'string' || doc.service === '') fail(`${at}service`, 'is required: a non-empty string')
  if (!Array.isArray(doc.slos) || doc.slos.length === 0) fail(`${at}slos`, 'must hold at least one SLO')
  const serviceLabels = readLabels(doc.labels, fail, `${at}labels`) ?? {}
  return doc.slos.map((s, i) => {
    const field = `${at}slos[${i}]`
    if (!isObject(s)) fail(field, 'must be a map')
    onlyKnown(s, ['name', 'objective', 'description', 'labels', 'sli', 'alerting', 'plugins'], fail, field)
    if (s.plugins !== undefined) fail(`${field}.plugins`, SLOTH_PLUGINS)
    if (typeof s.name !== 'string' || s.name === '') fail(`${field}.name`, 'is required: a non-empty string')
    const targetRate = percent(s.objective, fail, `${field}.objective`)
    if (!isObject(s.sli)) fail(`${field}.sli`, 'is required (events: error and total queries)')
    if (s.sli.raw !== undefined)
      fail(
        `${field}.sli.raw`,
        'is not supported: a raw error ratio has no event counts, which the rules need (the minimum of failures, volume-weighted period ratios); give events',
      )
    if (s.sli.plugin !== undefined) fail(`${field}.sli.plugin`, SLOTH_PLUGINS)
    onlyKnown(s.sli, ['events'], fail, `${field}.sli`)
    const events = s.sli.events
    if (!isObject(events)) fail(`${field}.sli.events`, 'is required (error and total queries)')
    const [errKey, totalKey] = [key('error_query', 'errorQuery'), key('total_query', 'totalQuery')]
    onlyKnown(events, [errKey, totalKey], fail, `${field}.sli.events`)
    const sloth = (q, f) => {
      if (typeof q !== 'string' || q.trim() === '') fail(f, `must be a PromQL string, got ${q === undefined ? 'nothing' : JSON.stringify(q)}`)
      if (!q.includes(WINDOW)) fail(f, `must use ${WINDOW} as its range, as Sloth requires, got ${printable(JSON.stringify(q))}`)
      return q.trim()
    }
    const errField = `${field}.sli.events.${errKey}`
    const totalField = `${field}.sli.events.${totalKey}`
    for (const [q, f] of [
      [events[errKey], errField],
      [events[totalKey], totalField],
    ]) {
      if (typeof q !== 'string') fail(f, `must be a PromQL string, got ${q === undefined ? 'nothing' : JSON.stringify(q)}`)
    }
    const sli = readSli({ counted: events[errKey], total: events[totalKey], good: false, countedField: errField, totalField, wrap: sloth }, fail)
    const slo = {
      id: `${doc.service}-${s.name}`,
      ...sli,
      targetRate,
      windowMs,
      labels: { service: doc.service, ...serviceLabels, ...(readLabels(s.labels, fail, `${field}.labels`) ?? {}) },
    }
    if (typeof s.description === 'string' && s.description !== '') slo.description = s.description
    const a = s.alerting
    if (a !== undefined) {
      if (!isObject(a)) fail(`${field}.alerting`, 'must be a map')
      const [pageKey, ticketKey] = [key('page_alert', 'pageAlert'), key('ticket_alert', 'ticketAlert')]
      onlyKnown(a, ['name', 'labels', 'annotations', pageKey, ticketKey], fail, `${field}.alerting`)
      const alerting = {}
      if (a.name !== undefined) alerting.name = a.name
      if (a.labels !== undefined) alerting.labels = readLabels(a.labels, fail, `${field}.alerting.labels`)
      if (a.annotations !== undefined) alerting.annotations = a.annotations
      for (const [from, to] of [
        [pageKey, 'page'],
        [ticketKey, 'ticket'],
      ]) {
        if (a[from] === undefined) continue
        const part = a[from]
        if (!isObject(part)) fail(`${field}.alerting.${from}`, 'must be a map')
        alerting[to] = { ...part }
        if (part.labels !== undefined) alerting[to].labels = readLabels(part.labels, fail, `${field}.alerting.${from}.labels`)
      }
      slo.alerting = alerting
    }
    return slo
  })
}

/**
 * The `pyrra.dev/<label>` labels of a Pyrra object, which Pyrra puts on its
 * series and alerts as `<label>`; the others are the object's Kubernetes labels.
 */
function pyrraLabels(labels, fail) {
  if (labels === undefined || labels === null) return { prometheus: undefined, kubernetes: {} }
  if (!isObject(labels)) fail('metadata.labels', 'must be a map of labels')
  // No prototype: a label `pyrra.dev/__proto__` is a key like any other (and refused as a name), not a prototype.
  const prometheus = Object.create(null)
  const kubernetes = {}
  for (const [key, value] of Object.entries(labels)) {
    if (key.startsWith('pyrra.dev/')) prometheus[key.slice('pyrra.dev/'.length)] = value
    else kubernetes[key] = String(value)
  }
  return { prometheus: readLabels(prometheus, fail, 'metadata.labels[pyrra.dev/]'), kubernetes }
}

/**
 * Pyrra's `grouping`: the SLO judged per label set, as `sum by (…)` in the SLI's
 * queries (lib/prometheus/rules.js's slo.grouping does the same for the solve counter).
 */
function pyrraGrouping(grouping, fail, field) {
  if (grouping === undefined || grouping === null) return []
  if (!Array.isArray(grouping) || !grouping.every((l) => typeof l === 'string' && isLabelName(l))) {
    fail(field, `must be a list of Prometheus label names, got ${printable(JSON.stringify(grouping))}`)
  }
  if (grouping.includes('slo')) fail(field, "may not hold 'slo', which the rules set")
  return grouping
}

/**
 * Pyrra's `latencyNative`: a native histogram's requests (histogram_count of its
 * rate) and those faster than `latency` (histogram_fraction from 0 to it, times
 * the count), as Pyrra computes them; errors are the total less those.
 */
function nativeLatencySli(indicator, grouping, fail, at) {
  const metric = indicator.total?.metric
  if (typeof metric !== 'string' || !SELECTOR.test(metric))
    fail(`${at}.total.metric`, `must be a series selector (a native histogram), got ${printable(JSON.stringify(metric))}`)
  let ms
  try {
    ms = parseDuration(indicator.latency, 'latency')
  } catch {
    fail(`${at}.latency`, `must be a duration like 200ms or 1s, got ${printable(JSON.stringify(indicator.latency))}`)
  }
  const summed = `sum${grouping.length ? ` by (${grouping.join(', ')})` : ''} (rate(${metric.trim()}[${WINDOW}]))`
  const total = `histogram_count(${summed})`
  return { sli: { errorQuery: `(${total}) - (histogram_fraction(0, ${ms / 1000}, ${summed}) * ${total})`, totalQuery: total } }
}

/** The SLO of one Pyrra `ServiceLevelObjective` (a ratio, latency or native-histogram latency indicator), and its Kubernetes labels. */
function readPyrra(doc, fail) {
  const { meta, spec } = namedDocument(doc, fail)
  onlyKnown(spec, ['target', 'window', 'description', 'indicator', 'alerting', 'performanceOverAccuracy'], fail, 'spec')
  const targetRate = percent(spec.target, fail, 'spec.target')
  // Pyrra's cheaper period rules (sums of short increases) are this tool's --period-rules optimised.
  const performance = spec.performanceOverAccuracy ?? false
  if (typeof performance !== 'boolean') fail('spec.performanceOverAccuracy', `must be true or false, got ${printable(JSON.stringify(performance))}`)
  let windowMs
  try {
    windowMs = parseDuration(spec.window, 'duration')
  } catch {
    fail('spec.window', `must be a duration like 28d, 2w or 7d, got ${JSON.stringify(spec.window)}`)
  }
  const ind = spec.indicator
  if (!isObject(ind)) fail('spec.indicator', 'is required: a ratio indicator')
  onlyKnown(ind, ['ratio', 'latency', 'latencyNative'], fail, 'spec.indicator', {
    bool_gauge:
      'is not supported: a boolean gauge (probe_success) is sampled, not counted: its ratio is a raw one (the share of samples at 1), with no event counts; the rules need error and total counters',
  })
  // A latency indicator is a ratio too: errors are the total less the requests under the bucket (success).
  const kind = ['ratio', 'latency', 'latencyNative'].find((k) => ind[k] !== undefined) ?? 'ratio'
  const ratio = ind[kind]
  if (!isObject(ratio)) {
    fail(
      `spec.indicator.${kind}`,
      {
        ratio: 'is required: errors and total (or a latency indicator)',
        latency: 'must be a map: success and total',
        latencyNative: 'must be a map: latency and total',
      }[kind],
    )
  }
  const at = `spec.indicator.${kind}`
  const counted = { ratio: 'errors', latency: 'success', latencyNative: 'latency' }[kind]
  onlyKnown(ratio, [counted, 'total', 'grouping'], fail, at)
  const grouping = pyrraGrouping(ratio.grouping, fail, `${at}.grouping`)
  const sli =
    kind === 'latencyNative'
      ? nativeLatencySli(ratio, grouping, fail, at)
      : readSli(
          {
            counted: ratio[counted]?.metric,
            total: ratio.total?.metric,
            good: kind === 'latency',
            countedField: `${at}.${counted}.metric`,
            totalField: `${at}.total.metric`,
            wrap: (q, f) => rateTemplate(q, fail, f, grouping),
          },
          fail,
        )
  if (sli.name && grouping.length) fail(`${at}.grouping`, 'on the solve counter: give the counter with a PromQL SLI, or use rules --grouping')
  const { prometheus, kubernetes } = pyrraLabels(meta.labels, fail)
  const slo = { id: meta.name, ...sli, targetRate, windowMs }
  if (prometheus && Object.keys(prometheus).length) slo.labels = prometheus
  if (typeof spec.description === 'string' && spec.description !== '') slo.description = spec.description
  const a = spec.alerting
  if (a !== undefined && a !== null) {
    if (!isObject(a)) fail('spec.alerting', 'must be a map')
    onlyKnown(a, ['disabled', 'burnrates', 'name'], fail, 'spec.alerting')
    const alerting = {}
    if (a.name !== undefined) alerting.name = a.name
    if (a.disabled === true || a.burnrates === false) alerting.page = alerting.ticket = { disable: true }
    slo.alerting = alerting
  }
  return { slos: [slo], kubernetes, optimised: performance }
}

/**
 * The first key of a document that repeats an earlier key of its map, as the yaml
 * package words it ("Map keys must be unique at line 3, column 1:"), or null. Keys
 * are equal as its default check has them: scalars of the same value (1 and '1'
 * differ), other nodes only as the same node.
 */
function duplicateKey(doc, lineCounter) {
  let found = null
  YAML.visit(doc, {
    Map(_, map) {
      const seen = new Set()
      for (const { key } of map.items) {
        const value = YAML.isScalar(key) ? key.value : key
        if (seen.has(value)) {
          const { line, col } = lineCounter.linePos((key?.range ?? map.range)[0])
          found = `Map keys must be unique at line ${line}, column ${col}:`
          return YAML.visit.BREAK
        }
        seen.add(value)
      }
    },
  })
  return found
}

/**
 * The SLOs of a YAML file, any number of documents separated by `---`:
 * OpenSLO `openslo/v1` and `openslo/v1alpha` `SLO` documents (other kinds,
 * such as Service, are skipped), Sloth `prometheus/v1` specs and
 * `sloth.slok.dev/v1` PrometheusServiceLevels, Pyrra `pyrra.dev/v1alpha1`
 * ServiceLevelObjectives. `windowMs` is the period of Sloth's SLOs (Sloth's
 * files do not carry one). The `slo` objects are then checked by
 * `prometheusRules`, whose messages the caller prefixes with `where[i]`;
 * `metadata` is what the PrometheusRule takes from the file (its name,
 * Kubernetes labels, namespace), and `periodRules: 'optimised'` when a Pyrra
 * document sets `performanceOverAccuracy: true`.
 * @param {string} text
 * @param {{ file?: string, windowMs?: number }} [options]
 * @returns {{ slos: object[], where: string[], metadata: { name?: string, labels: object, namespace?: string, periodRules?: 'optimised' } }}
 */
function readSpec(text, { file = 'spec', windowMs = 30 * 86_400_000 } = {}) {
  const lineCounter = new YAML.LineCounter()
  // The yaml package's own uniqueKeys check compares each key with every earlier key of
  // its map (20 000 keys: 9 s); off, and done here with one Set per map instead.
  const docs = YAML.parseAllDocuments(text, { uniqueKeys: false, lineCounter })
  const slos = []
  const where = []
  const names = []
  const namespaces = new Set()
  const k8sLabels = {}
  // 'optimised' when a Pyrra document asks for performanceOverAccuracy (the rules are one file's: all of them then).
  let periodRules
  const add = (label, list) => {
    for (const slo of list) {
      slos.push(slo)
      where.push(label)
    }
  }
  // Kubernetes objects: their namespace goes to the PrometheusRule (their name and labels too, below).
  const kube = (doc) => {
    if (typeof doc.metadata?.namespace === 'string') namespaces.add(doc.metadata.namespace)
  }
  const parsed = docs.map((d, n) => {
    const duplicate = d.errors.length ? null : duplicateKey(d, lineCounter)
    if (d.errors.length || duplicate) throw new SpecError(`${file}: document ${n + 1}: not valid YAML: ${duplicate ?? d.errors[0].message.split('\n')[0]}`)
    return d.toJS()
  })
  // OpenSLO v1 SLI and DataSource documents, named by an SLO's indicatorRef and metricSourceRef (in any order).
  const refs = { slis: new Map(), dataSources: new Map() }
  for (const doc of parsed) {
    if (!isObject(doc) || doc.apiVersion !== 'openslo/v1' || typeof doc.metadata?.name !== 'string') continue
    if (doc.kind === 'SLI') refs.slis.set(doc.metadata.name, doc.spec)
    if (doc.kind === 'DataSource' && doc.spec?.type !== undefined) refs.dataSources.set(doc.metadata.name, doc.spec.type)
  }
  // A document's kind and name, as far as it has them: `"AlertWindows"`, `"PrometheusServiceLevel" "svc"`.
  const named = (...parts) =>
    parts
      .filter((p) => p !== undefined)
      .map((p) => printable(JSON.stringify(p)))
      .join(' ')
  parsed.forEach((doc, n) => {
    const at = `${file}: document ${n + 1}`
    if (doc === null || doc === undefined) return
    if (!isObject(doc)) throw new SpecError(`${at}: must be a map (an OpenSLO, Sloth or Pyrra document)`)
    const failAt = (label) => (field, message) => {
      throw new SpecError(`${label}: ${field} ${message}`)
    }
    const api = doc.apiVersion
    if (doc.version === 'prometheus/v1') {
      const label = `${at} (Sloth service ${printable(JSON.stringify(doc.service))})`
      add(label, readSloth(doc, failAt(label), windowMs))
      names.push(doc.service)
    } else if (api === 'sloth.slok.dev/v1') {
      const label = `${at} (Sloth ${named(doc.kind, doc.metadata?.name)})`
      const fail = failAt(label)
      if (doc.kind !== 'PrometheusServiceLevel') {
        fail(
          'kind',
          `must be PrometheusServiceLevel: ${JSON.stringify(doc.kind)} is not an SLO (AlertWindows, Sloth's own alert windows, are not supported: the rules use their own policy, see --alerts)`,
        )
      }
      if (!isObject(doc.spec)) fail('spec', 'is required')
      add(label, readSloth(doc.spec, fail, windowMs, { k8s: true, at: 'spec.' }))
      kube(doc)
      names.push(doc.metadata?.name)
      Object.assign(k8sLabels, doc.metadata?.labels ?? {})
    } else if (api === 'openslo/v1' || api === 'openslo/v1alpha') {
      if (doc.kind !== 'SLO') return
      const label = `${at} (OpenSLO ${named('SLO', doc.metadata?.name).replace('"SLO"', 'SLO')})`
      add(label, (api === 'openslo/v1' ? readOpenSlo : readOpenSloAlpha)(doc, failAt(label), { windowMs, refs }))
      names.push(doc.metadata?.name)
    } else if (api === 'pyrra.dev/v1alpha1') {
      const label = `${at} (Pyrra ${named(doc.kind, doc.metadata?.name)})`
      if (doc.kind !== 'ServiceLevelObjective') failAt(label)('kind', `must be ServiceLevelObjective, got ${printable(JSON.stringify(doc.kind))}`)
      const { slos: list, kubernetes, optimised } = readPyrra(doc, failAt(label))
      if (optimised) periodRules = 'optimised'
      add(label, list)
      kube(doc)
      names.push(doc.metadata.name)
      Object.assign(k8sLabels, kubernetes)
    } else {
      throw new SpecError(
        `${at}: neither an OpenSLO document (apiVersion: openslo/v1 or openslo/v1alpha), a Sloth spec (version: prometheus/v1, or apiVersion: sloth.slok.dev/v1) ` +
          `nor a Pyrra ServiceLevelObjective (apiVersion: pyrra.dev/v1alpha1); got apiVersion ${printable(JSON.stringify(doc.apiVersion))}, version ${printable(JSON.stringify(doc.version))}`,
      )
    }
  })
  if (slos.length === 0) throw new SpecError(`${file}: no SLO in it (an OpenSLO kind: SLO document, a Sloth spec or a Pyrra ServiceLevelObjective)`)
  // One name for the file: the documents' own when they agree, else the file's.
  const distinct = [...new Set(names.map(objectName))]
  const base = file === '-' || file === 'spec' ? null : objectName(path.basename(file).replace(/\.[^.]*$/, ''))
  const metadata = { labels: {} }
  const name = distinct.length === 1 && distinct[0] ? distinct[0] : base
  if (name) metadata.name = name
  for (const [key, value] of Object.entries(k8sLabels)) metadata.labels[key] = String(value)
  if (namespaces.size === 1) metadata.namespace = [...namespaces][0]
  if (periodRules) metadata.periodRules = periodRules
  return { slos, where, metadata }
}

module.exports = { readSpec, readSelector, SpecError }
