'use strict'
// Prometheus recording and alerting rules for SLOs over the counters of
// lib/metrics.js, summed over every instance (the fleet is judged as one).
// Shaped after Sloth's output: error ratios per window, burn rates, remaining
// budget, fixed-name series for dashboards, then one multiwindow burn-rate
// alert per pair and an alert on an absent source. Every series and alert
// carries the SLO's identity (`slo`) next to its source (`name`), so two SLOs
// on one counter stay apart. The SLO checks and the alert policy (built for
// scrapes) are in lib/rules-slo.js.
const YAML = require('yaml')
const { outOfRange, invalidArgValue } = require('./errors')
const { promDuration, approxDuration, threeDigits } = require('./duration')
const { checkSlo, checkOptions, prometheusPolicy, policyOf, defaultId, budgetOf, ceilSecond, num, WHERE, ABSENT_FOR_MS } = require('./rules-slo')

/** The longest a page may keep firing after an incident's end (issue 25): one hour. */
const PAGE_RESET_MS = 3_600_000

// The PromQL selector of the SLO's counter (lib/metrics.js): its name label, and an outcome.
function selector(name, outcome) {
  return `captcha_budget_solves_total{name=${JSON.stringify(name)}${outcome ? `,outcome="${outcome}"` : ''}}`
}

function pascal(name) {
  return name
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')
}

/**
 * The rule group (a plain object) of one SLO, and the policy its alerts implement.
 */
function compileOne(slo, options) {
  const alerting = checkSlo(slo)
  const { pairs: policy, minFailures: defaultMinFailures } = policyOf(slo, options.scrapeIntervalMs)
  const { name, targetRate, windowMs, minEvents = 0, minFailures = defaultMinFailures } = slo
  const id = slo.id ?? defaultId(slo)
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
      throw invalidArgValue(`${WHERE}slo.alerts: the pair '${pair.name}' gives the alert name ${alert}, which is empty or taken: rename the pair`)
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
    // A page resolves at most a short window after the incident (the window
    // empties) plus keep_firing_for: capped so that the two stay within
    // PAGE_RESET_MS, the tracker's reset goal (docs/alert-policy.md).
    const keepMs = pair.severity === 'page' ? Math.min(pair.shortWindowMs, PAGE_RESET_MS - pair.shortWindowMs) : pair.shortWindowMs
    alerts.push({
      alert,
      expr: conditions.join('\nand\n'),
      // `for:` ignores a condition true for less than a fifth of the short
      // window; keep_firing_for holds a firing alert through dips of up to a
      // short window, so one incident is one page (fire/resolve/fire damped).
      for: promDuration(Math.max(ceilSecond(pair.shortWindowMs / 5), 1000)),
      ...(keepMs >= 1000 ? { keep_firing_for: promDuration(ceilSecond(keepMs)) } : {}),
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
  if (list.length === 0) throw invalidArgValue(`${WHERE}no SLO given`)
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

module.exports = { ruleGroups, prometheusRules, rulesAndPolicy, prometheusPolicy, toYaml, defaultId, WHERE }
