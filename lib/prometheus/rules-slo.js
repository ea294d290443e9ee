'use strict'
// The SLO and options of prometheusRules() (lib/prometheus/rules.js), checked, and the
// alert policy the Prometheus rules implement: both asked of the core
// (`scrapePolicy`, crates/budget-core/src/alerts.rs), which checks the tracker
// config fields and custom pairs as a tracker does and holds the one table of
// every policy; this file checks what only the rules have (names, routing).
const { scrapePolicy } = require('../native/load-native.js')
const { ARGUMENT_NAME, describe, printable, invalidArgType, outOfRange, invalidArgValue, unknownKey } = require('../util/errors.js')
const { promDuration } = require('../util/duration.js')
const { isObjectName } = require('./k8s-name.js')
const { LABEL_NAME, LABEL_NAME_RULE, RULE_LABELS: RESERVED_LABELS, isLabelName } = require('../util/labels.js')

/** The keys of `slo.alerting.page` and `slo.alerting.ticket`. */
const SEVERITY_KEYS = ['labels', 'annotations', 'disable']

/** The fields of `slo`. */
const SLO_KEYS = [
  'id',
  'name',
  'targetRate',
  'windowMs',
  'alerts',
  'minEvents',
  'minFailures',
  'resolutionMs',
  'labels',
  'alerting',
  'description',
  'grouping',
  'sli',
]
/** The fields of `options`. */
const OPTION_KEYS = ['scrapeIntervalMs', 'periodRules', 'evaluationIntervalMs', 'format', 'namespace', 'compat', 'metadata']
/** The fields of `slo.alerting` (Sloth's `alerting`, our names). */
const ALERTING_KEYS = ['name', 'labels', 'annotations', 'page', 'ticket']
/** What every message about `slo` starts with (the CLI strips it: its own flags name the field). */
const WHERE = 'prometheusRules(slo): '
// (RESERVED_LABELS: the labels the rules set themselves; a user label of that name would break matching or identity.)
// Characters that Prometheus, YAML or promtool will not take in a name, id or label
// value as they are, or that forge a line in a file or a log: the C0 controls,
// DEL, the C1 controls (NEL, U+0085, is a YAML line break), the line and
// paragraph separators U+2028/U+2029, the byte-order mark U+FEFF and the
// noncharacters U+FFFE/U+FFFF (outside YAML's printable set). Lone surrogates are
// checked apart (they are not UTF-8 at all). In names, ids and label values also
// U+FFFD, the replacement character, which PromQL's lexer takes for invalid UTF-8.
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffd-\uffff]/
// The same for annotation text and the description, which may hold tabs and line breaks.
const UNPRINTABLE_TEXT = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/
// A high surrogate not followed by a low one, or a low one not preceded by a high one: not Unicode (nor UTF-8) at all.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
// Go template delimiters: Prometheus expands alert labels and annotations as templates.
const TEMPLATE = /\{\{|\}\}/
const ALLOWED_CHARACTERS = 'no control characters U+0000–001F, DEL, U+0080–009F (NEL), U+2028/U+2029, U+FEFF, U+FFFD–FFFF or lone surrogates'
const ALLOWED_TEXT = 'no control characters but tab and line feed, no DEL, U+0080–009F (NEL), U+2028/U+2029, U+FEFF, U+FFFE/U+FFFF or lone surrogates'

/** A value as quoted in a message: JSON, with what JSON leaves raw but a terminal or log would act on escaped too. */
const shown = (value) => printable(JSON.stringify(value) ?? String(value))

/**
 * What is wrong with `value` as a name, id or label value (or, with `text`, as
 * annotation text, where line breaks are fine), or null: a character that YAML or
 * Prometheus refuse, or (unless `template`) Go template syntax.
 */
function textProblem(value, { text = false, template = false } = {}) {
  // The first offending character, whichever kind it is.
  const bad = [LONE_SURROGATE.exec(value), (text ? UNPRINTABLE_TEXT : UNPRINTABLE).exec(value)].filter(Boolean).sort((x, y) => x.index - y.index)[0]
  if (bad) {
    const code = bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')
    const what = text ? 'annotation text' : 'names, ids and label values'
    return `holds U+${code} at character ${bad.index + 1}: ${what} must be printable Unicode that YAML and Prometheus take as it is (${text ? ALLOWED_TEXT : ALLOWED_CHARACTERS})`
  }
  if (!template && TEMPLATE.test(value)) {
    return "holds '{{' or '}}': Prometheus would expand it as a Go template in the alerts' labels and annotations (template injection); leave the braces out"
  }
  return null
}

/**
 * Checks a name, id or label value; throws a TypeError (ERR_INVALID_ARG_VALUE)
 * naming `field` when textProblem finds something.
 */
function checkText(value, field, options) {
  const problem = textProblem(value, options)
  if (problem) throw invalidArgValue(`${WHERE}${field} ${problem}, got ${shown(value)}`)
  return value
}

/**
 * Checks the template syntax of an annotation the caller wrote (a Prometheus
 * template by design, e.g. `{{ $labels.slo }}`): every `{{` is closed by a `}}`
 * (strings and raw strings inside an action skipped), and no `}}` stands alone,
 * so that promtool can parse it. What the actions do is the author's.
 */
function checkTemplate(value, field) {
  checkText(value, field, { text: true, template: true })
  let i = 0
  for (;;) {
    const open = value.indexOf('{{', i)
    const close = value.indexOf('}}', i)
    if (open === -1) {
      if (close !== -1)
        throw invalidArgValue(`${WHERE}${field} has a '}}' at character ${close + 1} that closes no '{{' (a Prometheus template), got ${shown(value)}`)
      return value
    }
    if (close !== -1 && close < open) {
      throw invalidArgValue(`${WHERE}${field} has a '}}' at character ${close + 1} that closes no '{{' (a Prometheus template), got ${shown(value)}`)
    }
    // Inside the action: skip "…" (with \ escapes), `…` and '…' until the closing }}.
    let j = open + 2
    let end = -1
    while (j < value.length) {
      const c = value[j]
      if (c === '"' || c === "'" || c === '`') {
        j += 1
        while (j < value.length && value[j] !== c) j += c !== '`' && value[j] === '\\' ? 2 : 1
        j += 1
      } else if (c === '}' && value[j + 1] === '}') {
        end = j
        break
      } else if (c === '{' && value[j + 1] === '{') {
        break
      } else {
        j += 1
      }
    }
    if (end === -1)
      throw invalidArgValue(`${WHERE}${field} has a '{{' at character ${open + 1} that is never closed by '}}' (a Prometheus template), got ${shown(value)}`)
    i = end + 2
  }
}

/** How long the source may be absent before CaptchaBudgetSourceAbsent fires. */
const ABSENT_FOR_MS = 600_000

// A number as PromQL/YAML read it back exactly (JS prints the shortest round-trip form).
const num = (x) => String(x)
// 1 − target without float noise (1 − 0.95 is 0.050000000000000044).
const budgetOf = (targetRate) => Number((1 - targetRate).toPrecision(12))

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
    if (labels && !isLabelName(key)) throw invalidArgValue(`${WHERE}${where}: '${key}' is not a Prometheus label name (${LABEL_NAME_RULE})`)
    if (labels && RESERVED_LABELS.includes(key)) {
      throw invalidArgValue(`${WHERE}${where}: '${key}' is set by the rules (reserved: ${RESERVED_LABELS.join(', ')})`)
    }
    if (!labels && !LABEL_NAME.test(key)) throw invalidArgValue(`${WHERE}${where}: '${key}' is not an annotation name ([a-zA-Z_][a-zA-Z0-9_]*)`)
    if (typeof v !== 'string') throw invalidArgType(`${WHERE}${where}.${key} must be a string, got ${describe(v)}`)
    // Label values are data (no template syntax); annotations are the author's templates, which must parse.
    if (labels) checkText(v, `${where}.${key}`)
    else checkTemplate(v, `${where}.${key}`)
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
    if (!ALERTING_KEYS.includes(key)) throw unknownKey(key, ALERTING_KEYS, 'slo.alerting', { prefix: WHERE })
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
      if (!SEVERITY_KEYS.includes(key)) throw unknownKey(key, SEVERITY_KEYS, `slo.alerting.${severity}`, { prefix: WHERE })
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
    if (!SLO_KEYS.includes(key)) throw unknownKey(key, SLO_KEYS, 'slo', { prefix: WHERE })
  }
  const { name, targetRate, windowMs, id, minFailures, description } = slo
  const sli = checkSli(slo.sli)
  if (sli && name === undefined && id === undefined) throw invalidArgValue(`${WHERE}slo.id is required with slo.sli (the default id is made of slo.name)`)
  for (const [field, value] of [
    ['name', name],
    ['id', id],
  ]) {
    if (field === 'id' && value === undefined) continue
    if (field === 'name' && value === undefined && sli) continue
    if (typeof value !== 'string' || value === '') {
      throw invalidArgType(`${WHERE}slo.${field} must be a non-empty string without control characters, got ${shown(value)}`)
    }
    checkText(value, `slo.${field}`)
  }
  for (const [field, value] of [
    ['targetRate', targetRate],
    ['windowMs', windowMs],
  ]) {
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
  // A label of the info series: data, like the name.
  if (description !== undefined) checkText(description, 'slo.description', { text: true })
  checkStringMap(slo.labels, 'slo.labels', { labels: true })
  // Custom pair names go into the `pair` label and the annotations; checked as given (the
  // tracker checks the rest, and would read a lone surrogate as U+FFFD).
  if (Array.isArray(slo.alerts)) {
    slo.alerts.forEach((pair, i) => {
      if (pair !== null && typeof pair === 'object' && typeof pair.name === 'string') checkText(pair.name, `slo.alerts[${i}].name`)
    })
  }
  return checkAlerting(slo.alerting)
}

/** Sloth's one template variable: the range of each window. */
const WINDOW = '{{.window}}'

/**
 * `slo.sli`: any error/total PromQL SLI (Sloth's `events`), instead of the
 * solve counter of `slo.name`: `{ errorQuery, totalQuery }`, each a per-second
 * rate with `{{.window}}` as its range. Checked; undefined without it.
 */
function checkSli(sli) {
  if (sli === undefined) return undefined
  if (sli === null || typeof sli !== 'object' || Array.isArray(sli))
    throw invalidArgType(`${WHERE}slo.sli must be an object { errorQuery, totalQuery }, got ${describe(sli)}`)
  for (const key of Object.keys(sli)) {
    if (key !== 'errorQuery' && key !== 'totalQuery') throw unknownKey(key, ['errorQuery', 'totalQuery'], 'slo.sli', { prefix: WHERE })
  }
  for (const key of ['errorQuery', 'totalQuery']) {
    const q = sli[key]
    if (typeof q !== 'string' || q.trim() === '') throw invalidArgType(`${WHERE}slo.sli.${key} must be a non-empty PromQL string, got ${shown(q)}`)
    checkText(q, `slo.sli.${key}`, { text: true, template: true })
    if (!q.includes(WINDOW)) throw invalidArgValue(`${WHERE}slo.sli.${key} must use ${WINDOW} as its range (each window gets its own rate), got ${shown(q)}`)
    if (TEMPLATE.test(q.split(WINDOW).join(''))) {
      throw invalidArgValue(`${WHERE}slo.sli.${key} may hold no template but ${WINDOW} (Sloth's only variable), got ${shown(q)}`)
    }
    const problem = bracketProblem(q)
    if (problem) throw invalidArgValue(`${WHERE}slo.sli.${key} ${problem} (the query is put inside the rules' own brackets), got ${shown(q)}`)
  }
  return sli
}

/**
 * What keeps a PromQL query from standing inside brackets, or null: an
 * unbalanced (, [ or {, an unclosed string, or a # comment (it would swallow
 * the rest of the rules' line). The PromQL itself is promtool's to check.
 */
function bracketProblem(query) {
  const open = []
  const pairs = { ')': '(', ']': '[', '}': '{' }
  for (let i = 0; i < query.length; i += 1) {
    const c = query[i]
    if (c === '"' || c === "'" || c === '`') {
      let j = i + 1
      while (j < query.length && query[j] !== c) j += c !== '`' && query[j] === '\\' ? 2 : 1
      if (j >= query.length) return `has a string opened at character ${i + 1} that is never closed`
      i = j
    } else if (c === '#') {
      return `has a # comment at character ${i + 1}; leave it out`
    } else if ('([{'.includes(c)) {
      open.push([c, i])
    } else if (c in pairs) {
      const top = open.pop()
      if (!top || top[0] !== pairs[c]) return `has a '${c}' at character ${i + 1} that closes nothing it opened`
    }
  }
  if (open.length) return `has a '${open.at(-1)[0]}' at character ${open.at(-1)[1] + 1} that is never closed`
  return null
}

function checkOptions(options) {
  if (options === undefined) options = {}
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw invalidArgType(`prometheusRules(slo, options): options must be an object, got ${describe(options)}`)
  }
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) throw unknownKey(key, OPTION_KEYS, 'options', { prefix: 'prometheusRules(slo, options): ' })
  }
  const { scrapeIntervalMs = 15_000, evaluationIntervalMs = 60_000, periodRules = 'exact', format = 'rules', namespace } = options
  for (const [key, value] of [
    ['scrapeIntervalMs', scrapeIntervalMs],
    ['evaluationIntervalMs', evaluationIntervalMs],
  ]) {
    if (typeof value !== 'number') throw invalidArgType(`prometheusRules(slo, options): options.${key} must be a number, got ${describe(value)}`)
    if (!Number.isSafeInteger(value) || value < 1000 || value % 1000 !== 0) {
      throw outOfRange(`prometheusRules(slo, options): options.${key} must be a whole number of seconds in ms (≥ 1000), got ${value}`)
    }
  }
  const choices = { periodRules: ['exact', 'optimised'], format: ['rules', 'prometheus-operator'] }
  for (const [key, value] of [
    ['periodRules', periodRules],
    ['format', format],
  ]) {
    if (!choices[key].includes(value)) {
      throw invalidArgValue(`prometheusRules(slo, options): options.${key} must be one of ${choices[key].join(', ')}, got ${JSON.stringify(value)}`)
    }
  }
  if (namespace !== undefined && (typeof namespace !== 'string' || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace))) {
    throw invalidArgValue(`prometheusRules(slo, options): options.namespace must be a Kubernetes namespace name, got ${JSON.stringify(namespace)}`)
  }
  const { compat, metadata } = options
  if (compat !== undefined && compat !== 'sloth') {
    throw invalidArgValue(
      `prometheusRules(slo, options): options.compat must be 'sloth' (also write Sloth's series and info names), got ${JSON.stringify(compat)}`,
    )
  }
  return { scrapeIntervalMs, evaluationIntervalMs, periodRules, format, namespace, compat, metadata: checkMetadata(metadata) }
}

/**
 * `options.metadata`: `{ name, labels }` of the PrometheusRule (the name of the
 * spec it came from, the Kubernetes labels a `ruleSelector` matches). Checked.
 */
function checkMetadata(metadata) {
  if (metadata === undefined) return undefined
  const where = 'prometheusRules(slo, options): options.metadata'
  if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata))
    throw invalidArgType(`${where} must be an object { name, labels }, got ${describe(metadata)}`)
  for (const key of Object.keys(metadata)) {
    if (key !== 'name' && key !== 'labels') throw unknownKey(key, ['name', 'labels'], 'options.metadata', { prefix: 'prometheusRules(slo, options): ' })
  }
  const { name, labels = {} } = metadata
  if (name !== undefined && !isObjectName(name)) {
    throw invalidArgValue(
      `${where}.name must be a Kubernetes object name (lower-case a-z, 0-9, '-' and '.', at most 253; each part between dots 1–63 characters starting and ending with a-z or 0-9), got ${shown(name)}`,
    )
  }
  if (labels === null || typeof labels !== 'object' || Array.isArray(labels))
    throw invalidArgType(`${where}.labels must be an object of strings, got ${describe(labels)}`)
  for (const [key, value] of Object.entries(labels)) {
    if (!/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[a-zA-Z0-9]([-a-zA-Z0-9_.]{0,61}[a-zA-Z0-9])?$/.test(key))
      throw invalidArgValue(`${where}.labels: '${printable(key)}' is not a Kubernetes label key`)
    if (typeof value !== 'string' || !/^([a-zA-Z0-9]([-a-zA-Z0-9_.]{0,61}[a-zA-Z0-9])?)?$/.test(value)) {
      throw invalidArgValue(`${where}.labels.${key} must be a Kubernetes label value (at most 63 of a-z, A-Z, 0-9, '-', '_', '.'), got ${shown(value)}`)
    }
  }
  return { name, labels }
}

/**
 * The alert policy the Prometheus rules implement, from the core: the
 * tracker's policy in force for the SLO, pair for pair — the custom `alerts`
 * as the tracker reads them (a window under 4 scrape intervals refused), or
 * the default policy with its gates (a window under 4 scrape intervals
 * lengthened to 4) — with how each held pair recovers and the recovery spans.
 * The core's errors name the fields as the caller wrote them: `slo.<field>`.
 * @returns {{ pairs: Array<{ name: string, severity: string, longWindowMs: number, shortWindowMs: number, burnRate: number, minEvents: number, minFailures: number, resolveBurnRate: number, warmUpMs: number, minBudgetShare: number }>, recovery: Array<{ minSolves: number, failureSteps: number[], burnAloneFrom: number }>, recoverySpansMs: number[] }}
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
  WINDOW,
  checkText,
  textProblem,
  shown,
  checkOptions,
  prometheusPolicy,
  policyOf,
  defaultId,
  budgetOf,
  num,
  SLO_KEYS,
  WHERE,
  ABSENT_FOR_MS,
}
