'use strict'
// Sloth: `prometheus/v1` specs and the `spec` of a `sloth.slok.dev/v1`
// PrometheusServiceLevel, read into the `slo` objects of lib/prometheus/rules.js.
const { WINDOW } = require('../prometheus/rules-slo.js')
const { printable } = require('../util/errors.js')
const { isObject, readLabels, onlyKnown, readSli, percent } = require('./common.js')

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

module.exports = { readSloth }
