'use strict'
// What the SLO readers of lib/slo/ share: the error they throw, the checks of a
// document's maps and labels, and the SLI read from a query (a selector of our
// counter, `captcha_budget_solves_total{name=…}` of lib/prometheus/metrics.js, becomes
// `slo.name`; any other error/total PromQL becomes `slo.sli`).
const { LABEL_NAME_RULE, isLabelName } = require('../util/labels.js')
const { WINDOW } = require('../prometheus/rules-slo.js')
// Names quoted in messages with what a terminal or log would act on escaped (a hostile name is refused later, by lib/prometheus/rules-slo.js).
const { printable } = require('../util/errors.js')

const COUNTER = 'captcha_budget_solves_total'

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

/** A Kubernetes-style document's `metadata` (with a name) and `spec`. */
function namedDocument(doc, fail) {
  const meta = doc.metadata
  if (!isObject(meta)) fail('metadata', 'is required (with metadata.name)')
  if (typeof meta.name !== 'string' || meta.name === '') fail('metadata.name', 'is required: a non-empty string')
  const spec = doc.spec
  if (!isObject(spec)) fail('spec', 'is required')
  return { meta, spec }
}

module.exports = { isObject, readSelector, readLabels, onlyKnown, SELECTOR, rateTemplate, readSli, percent, namedDocument }
