'use strict'
// Pyrra: `pyrra.dev/v1alpha1` ServiceLevelObjectives (a ratio, latency or native-histogram
// latency indicator), read into the `slo` objects of lib/prometheus/rules.js.
const { parseDuration } = require('../util/duration.js')
const { isLabelName } = require('../util/labels.js')
const { WINDOW } = require('../prometheus/rules-slo.js')
const { printable } = require('../util/errors.js')
const { isObject, readLabels, onlyKnown, SELECTOR, rateTemplate, readSli, percent, namedDocument } = require('./common.js')

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

module.exports = { readPyrra }
