'use strict'
// SLO documents from the ecosystem, read into the `slo` objects of
// lib/prometheus/rules.js: OpenSLO v1 and v1alpha `SLO` documents (with the v1 `SLI` and
// `DataSource` documents they name), Sloth `prometheus/v1` specs and
// `sloth.slok.dev/v1` PrometheusServiceLevels, Pyrra `ServiceLevelObjective`s,
// any number per YAML stream. An SLI on our counter
// (`captcha_budget_solves_total{name=…}`, lib/prometheus/metrics.js) becomes `slo.name`;
// any other error/total PromQL becomes `slo.sli`. What the rules cannot express
// is refused, never dropped: every problem is an error naming the file, the
// document and the field, and why. This file reads the YAML stream and hands each
// document to its format's reader: openslo.js, sloth.js, pyrra.js (what they share: common.js).
const path = require('node:path')
const YAML = require('yaml')
// Names quoted in messages with what a terminal or log would act on escaped.
const { printable, SpecError } = require('../util/errors.js')
const { isObject, readSelector } = require('./common.js')
const { readOpenSlo, readOpenSloAlpha } = require('./openslo.js')
const { readSloth } = require('./sloth.js')
const { readPyrra } = require('./pyrra.js')

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

module.exports = { readSpec, readSelector }
