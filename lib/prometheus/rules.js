'use strict'
// Prometheus recording and alerting rules for SLOs over the counters of
// lib/prometheus/metrics.js, summed over every instance (the fleet is judged as one).
// Shaped after Sloth's output: error ratios per window, burn rates, remaining
// budget, fixed-name series for dashboards, then one multiwindow burn-rate
// alert per pair and an alert on an absent source. Every series and alert
// carries the SLO's identity (`slo`) next to its source (`name`), so two SLOs
// on one counter stay apart. The alerts are the tracker's policy (pairs, gates,
// the hold/resolve rule: pairExpr), asked of the core by lib/prometheus/rules-slo.js,
// which also checks the SLO; the recordings that count each window are
// lib/prometheus/rules-counts.js's.
const YAML = require('yaml')
const { invalidArgValue, invalidArgType, describe, printable } = require('../util/errors.js')
const { objectNameOf } = require('./k8s-name.js')
const { promDuration, approxDuration, threeDigits } = require('../util/duration.js')
const { checkSlo, checkOptions, prometheusPolicy, policyOf, defaultId, budgetOf, num, WHERE, ABSENT_FOR_MS } = require('./rules-slo.js')
const { recoveryCondition } = require('./recovery-curve.js')
const { countRecordings, selector, sliQuery, sliRecordings, HELD_COUNTS } = require('./rules-counts.js')

// The comment written above each rule and group (by object).
const RULE_COMMENTS = new WeakMap()

function pascal(name) {
  return name
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')
}

// Labels the series, the rules or the scrape set themselves: a grouping label of that name would clash.
// The package's one list (a grouping is a BudgetFamily's labelNames): one accepts what the other does.
const { RESERVED_LABELS: NOT_GROUPING, LABEL_NAME_RULE, isLabelName } = require('../util/labels.js')

// The label that tells the solves from the failures in the pieces and their sums: a grouping
// label of that name would be overwritten by it.
const COUNT_LABELS = ['events']

/**
 * `slo.grouping` (Pyrra's): the label names the SLO is judged per set of, a
 * BudgetFamily's `labelNames` — `['type', 'site']`. Checked; `[]` without it.
 */
function checkGrouping(grouping) {
  if (grouping === undefined) return []
  if (!Array.isArray(grouping)) throw invalidArgType(`${WHERE}slo.grouping must be an array of label names, got ${describe(grouping)}`)
  const seen = new Set()
  for (const label of grouping) {
    if (typeof label !== 'string') throw invalidArgType(`${WHERE}slo.grouping: each label name must be a string, got ${describe(label)}`)
    if (!isLabelName(label)) throw invalidArgValue(`${WHERE}slo.grouping: '${label}' is not a Prometheus label name (${LABEL_NAME_RULE})`)
    if (NOT_GROUPING.includes(label))
      throw invalidArgValue(`${WHERE}slo.grouping: '${label}' is set by the rules or the scrape (reserved: ${NOT_GROUPING.join(', ')})`)
    if (COUNT_LABELS.includes(label)) throw invalidArgValue(`${WHERE}slo.grouping: '${label}' labels the rules' counts (reserved: ${COUNT_LABELS.join(', ')})`)
    if (seen.has(label)) throw invalidArgValue(`${WHERE}slo.grouping: '${label}' is given twice`)
    seen.add(label)
  }
  return grouping
}

/**
 * With `compat: 'sloth'`: Sloth's series and info names over this SLO's
 * recordings (`slo:sli_error:ratio_rate<w>`, `slo:objective:ratio`, …,
 * `sloth_slo_info`, labelled `sloth_id`, `sloth_service`, `sloth_slo`), so
 * that dashboards made for Sloth (Grafana 14348) show it.
 */
// The windows Sloth records for a 30 d period, whatever the policy's windows.
const SLOTH_WINDOWS = [300_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 86_400_000, 259_200_000]

function slothRecordings({ id, slo, windows, sel, ratioOf }) {
  const service = slo.labels?.service ?? slo.name ?? id
  const sloth = {
    ...(slo.labels ?? {}),
    sloth_id: id,
    sloth_service: service,
    sloth_slo: id.startsWith(`${service}-`) && id.length > service.length + 1 ? id.slice(service.length + 1) : id,
  }
  // The policy's windows read from its recordings; Sloth's others computed (a window longer than the period left out).
  const all = [...new Set([...windows, ...SLOTH_WINDOWS.filter((ms) => ms <= slo.windowMs)])].sort((a, b) => a - b)
  const out = all.map((ms) => {
    const w = promDuration(ms)
    const expr = windows.includes(ms) ? `sum without (window) (captcha_budget:solve_error:ratio{slo=${JSON.stringify(id)},window="${w}"})` : ratioOf(w, ms)
    return { record: `slo:sli_error:ratio_rate${w}`, expr, labels: { ...sloth, sloth_window: w } }
  })
  out.push(
    { record: 'slo:objective:ratio', expr: `vector(${num(slo.targetRate)})`, labels: sloth },
    { record: 'slo:error_budget:ratio', expr: `vector(${num(budgetOf(slo.targetRate))})`, labels: sloth },
    { record: 'slo:time_period:days', expr: `vector(${num(slo.windowMs / 86_400_000)})`, labels: sloth },
    { record: 'slo:current_burn_rate:ratio', expr: `captcha_budget:current_burn_rate:ratio${sel}`, labels: sloth },
    { record: 'slo:period_burn_rate:ratio', expr: `captcha_budget:period_burn_rate:ratio${sel}`, labels: sloth },
    // Sloth's is not clamped at 0: an overspent budget shows negative.
    { record: 'slo:period_error_budget_remaining:ratio', expr: `1 - captcha_budget:period_burn_rate:ratio${sel}`, labels: sloth },
    {
      record: 'sloth_slo_info',
      expr: 'vector(1)',
      labels: {
        ...sloth,
        sloth_mode: 'cli-gen-prom',
        sloth_objective: num(Number((slo.targetRate * 100).toPrecision(12))),
        sloth_spec: 'prometheus/v1',
        sloth_version: 'captcha-error-budget',
      },
    },
  )
  return out
}

/**
 * The expression of one pair's alert: the tracker's firing condition and its
 * hold/resolve rule (crates/budget-core/src/tracker.rs, `fires`), every figure
 * from the core's policy (`scrapePolicy`):
 * - fires when both burn rates are above the threshold, the long window holds
 *   `minFailures` failures and `minEvents` solves, the period `slo.minEvents`,
 *   the long window's failures are `minBudgetShare` of the period's budget, and
 *   the source has been scraped for `warmUpMs` (not expressed for a PromQL SLI);
 * - a held pair (`resolveBurnRate` below the threshold) that resolved fires
 *   again only after its short window, and until its long window has passed
 *   only on `2 × minFailures` failures in its short window;
 * - a firing held pair (ALERTS) keeps firing until recovered: its long window
 *   passing the recovery test over `recovery.minSolves` solves or more (burn at
 *   or below `resolveBurnRate`, and below `recovery.burnAloneFrom` solves no
 *   more failures than `recovery.failureSteps` allows), or its long window under `minFailures`
 *   failures with a clean short window, or any recovery span that is no
 *   longer than the time since it fired (ALERTS_FOR_STATE) and holds `recovery.minSolves`
 *   solves passing it.
 * Its value is the long window's burn rate.
 */
function pairExpr({ pair, recovery, recoverySpansMs, alert, labels, minFailures, minEvents, slo, by, period, exact, whileHeld }) {
  const long = promDuration(pair.longWindowMs)
  const short = promDuration(pair.shortWindowMs)
  const slo_ = `slo=${JSON.stringify(labels.slo)}`
  const at = (w) => `{${slo_},window="${w}"}`
  const burn = (w) => `captcha_budget:burn_rate:ratio${at(w)}`
  const solves = (w) => `captcha_budget:solves:increase${at(w)}`
  const failures = (w) => `captcha_budget:solve_failures:increase${at(w)}`
  // The alert's value, the long window's burn rate, without the window label; every other
  // windowed term joins it on the label set (a PromQL SLI's series may have more labels: there,
  // on every label but window).
  const value = `sum without (window) (${burn(long)})`
  const joined = slo.sli ? 'ignoring(window)' : `on(${by})`
  const held = pair.resolveBurnRate < pair.burnRate
  // Held, the value is taken once around both branches (below), and this term keeps the window label.
  const fire = [`${held ? burn(long) : value} > ${num(pair.burnRate)}`, `${joined} ${burn(short)} > ${num(pair.burnRate)}`]
  if (minFailures > 0) fire.push(`${joined} ${failures(long)} >= ${minFailures}`)
  if (pair.minEvents > 0) fire.push(`${joined} ${solves(long)} >= ${pair.minEvents}`)
  if (minEvents > 0) fire.push(`${joined} ${solves(period)} >= ${minEvents}`)
  // failures ≥ share × the period's allowed failures (solves × (1 − target)), as the tracker's budgetTotal.
  if (pair.minBudgetShare > 0)
    fire.push(`${joined} ${failures(long)} >= ${joined} ${num(pair.minBudgetShare)} * ${num(budgetOf(slo.targetRate))} * ${solves(period)}`)
  // The warm-up: some instance exposed the counter warmUpMs ago (any of its series: `and` takes many).
  if (pair.warmUpMs > 0 && !slo.sli) fire.push(`on(${by}) ${selector(slo.name)} offset ${promDuration(pair.warmUpMs)}`)
  if (!held) return fire.join('\nand\n')

  // The alert's own series, matched to the recordings on the label set (the labels a recording
  // over the package's counter has; every selector picks this SLO's series, so not on slo); a
  // PromQL SLI's may have more, so there every label but those the rule adds.
  // (No alertstate="firing": a rule without `for:` is never pending, so its ALERTS series fire.)
  const firing = `ALERTS{alertname=${JSON.stringify(alert)},${slo_}}`
  const added = slo.sli ? `ignoring(${['alertname', 'alertstate', 'window', ...Object.keys(labels).filter((l) => l !== 'slo')].join(', ')})` : `on(${by})`
  const rearm = [
    `unless ${added} present_over_time(${firing}[${short}])`,
    `unless ${added} (present_over_time(${firing}[${long}]) unless ${added} ${failures(short)} >= ${2 * minFailures})`,
  ]
  const resolveBudget = num(Number((pair.resolveBurnRate * budgetOf(slo.targetRate)).toPrecision(12)))
  // The recovery test, once over the long window and every recovery span (label window): a
  // window of n solves holding f failures passes when its burn is at or below the resolve
  // rate and n reaches the fewest solves its failure count needs (the binomial test, never
  // under minSolves, as a curve: lib/prometheus/recovery-curve.js) or, from burnAloneFrom solves, at
  // once. Counts summed from pieces are whole numbers; others (increase(), a PromQL SLI) are
  // rounded first. A span judges only once this firing episode is at least its length old
  // (ALERTS_FOR_STATE: when the alert became active, the tracker's fired_at); the long window
  // always. Any window that passes ends the page.
  // The held branch reads the counts recorded only while a page of the SLO fires (whileHeld).
  const heldName = (kind) => (whileHeld ? HELD_COUNTS[kind] : `captcha_budget:${kind}:increase`)
  const heldSolves = (w) => `${heldName('solves')}${at(w)}`
  const heldFailures = (w) => `${heldName('solve_failures')}${at(w)}`
  const count = (kind) => (exact ? `${heldName(kind)}{${slo_}}` : `round(${heldName(kind)}{${slo_}})`)
  const n = count('solves')
  const f = count('solve_failures')
  // The burn test, on the counts as they are. Every term reads every window: the span term
  // (last) keeps the judged ones, since the spans' lengths are recorded for the spans only (a
  // regex matcher listing them would cost more: Prometheus compiles it at every evaluation).
  const judging = recoverySpansMs.length > 0 ? '' : `,window="${long}"`
  const terms = [`${heldName('solve_failures')}{${slo_}${judging}} <= ${resolveBudget} * ${heldName('solves')}{${slo_}}`]
  if (recovery.burnAloneFrom > recovery.minSolves) {
    // The fewest solves its failures need: a piecewise-linear curve of them (lib/prometheus/recovery-curve.js).
    terms.push(recoveryCondition(recovery, n, f))
  } else {
    terms.push(`${heldName('solves')}{${slo_}} >= ${recovery.minSolves}`)
  }
  if (recoverySpansMs.length > 0) {
    const activeSince = `ALERTS_FOR_STATE{alertname=${JSON.stringify(alert)},${slo_}}`
    terms.push(`(\n  captcha_budget:recovery_span:seconds{${slo_}} <= ${added} group_left() (time() - ${activeSince})\n  or ${heldSolves(long)}\n)`)
  }
  // Any window that passes, matched on the label set alone (`unless` takes many on either side).
  const recovered = [
    `(\n${terms.join('\nand ')}\n)`,
    `(${heldFailures(long)} < ${minFailures} and ${joined} ${heldFailures(short)} == 0 and ${joined} ${heldSolves(short)} > 0)`,
  ].join('\nor\n')
  const holds = [firing, ...(minEvents > 0 ? [`and ${added} ${heldSolves(period)} >= ${minEvents}`] : []), `unless ${added} (\n${recovered}\n)`].join('\n')
  // The value once, the long window's burn rate, kept while the pair fires (the burn rates
  // above its threshold, the gates, not re-armed too soon) or holds (its page unrecovered).
  return `${value}\nand ${added} (\n(\n${fire.join('\nand ')}\n${rearm.join('\n')}\n)\nor\n(\n${holds}\n)\n)`
}

/**
 * The rule group (a plain object) of one SLO, and the policy its alerts implement.
 * With `slo.grouping`, every recording sums `by (name, <grouping>)`: each label
 * set is judged on its own, and each alert fires per label set.
 */
function compileOne(slo, options) {
  const alerting = checkSlo(slo)
  const grouping = checkGrouping(slo.grouping)
  // A PromQL SLI is summed as its queries say; grouping applies to this package's counter.
  if (slo.sli !== undefined && grouping.length > 0) {
    throw invalidArgValue(`${WHERE}slo.grouping cannot be given with slo.sli: group inside its queries (sum by (…) …)`)
  }
  // Sloth's fixed labels (sloth_id, sloth_service, …) would overwrite a grouping label of that name.
  const slothLabel = options.compat === 'sloth' ? grouping.find((l) => l.startsWith('sloth_')) : undefined
  if (slothLabel !== undefined) {
    throw invalidArgValue(
      `${WHERE}slo.grouping: '${slothLabel}' clashes with compat 'sloth', whose series set their own sloth_* labels: rename the label or drop compat`,
    )
  }
  const by = ['name', ...grouping].join(', ')
  // In the alerts' text: which label set burns.
  const which = grouping.length ? ` (${grouping.map((l) => `${l}={{ $labels.${l} }}`).join(', ')})` : ''
  const { pairs: policy, recovery, recoverySpansMs } = policyOf(slo, options.scrapeIntervalMs)
  const { name, targetRate, windowMs, minEvents = 0 } = slo
  const id = slo.id ?? defaultId(slo)
  const period = promDuration(windowMs)
  const sel = `{slo=${JSON.stringify(id)}}`
  const ids = { slo: id }
  const alertWindows = [...new Set(policy.flatMap((r) => [r.shortWindowMs, r.longWindowMs]))].sort((a, b) => a - b)
  // The windows recorded by name (what the alerts, dashboards and Sloth read): the pairs' and the period.
  const windows = [...new Set([...alertWindows, windowMs])].sort((a, b) => a - b)
  const shortest = windows[0]
  const optimised = options.periodRules === 'optimised' && windowMs !== shortest
  const recordings = []
  // What each recording is for, written above it in the YAML.
  const note = (comment, rule) => {
    RULE_COMMENTS.set(rule, comment)
    return rule
  }
  const counts = countRecordings({ slo, id, by, policy, alerting, recoverySpansMs, windows, optimised, options, note })
  recordings.push(...counts.recordings)
  const { usesPieces, exact, whileHeld, countExpr } = counts
  // Fixed names, whatever the windows and period: what a dashboard reads.
  // With a PromQL SLI there may be no source name.
  const named = name === undefined ? ids : { ...ids, name }
  const info = { ...named, objective: num(targetRate), period, ...(slo.labels ?? {}) }
  if (slo.description) info.description = slo.description
  recordings.push(
    note('The SLO itself: objective, period and labels (value 1).', { record: 'captcha_budget:slo_info', expr: 'vector(1)', labels: info }),
    note('The objective.', { record: 'captcha_budget:objective:ratio', expr: `vector(${num(targetRate)})`, labels: named }),
    note('The error budget: 1 - objective.', { record: 'captcha_budget:error_budget:ratio', expr: `vector(${num(budgetOf(targetRate))})`, labels: named }),
    note('The period in seconds.', { record: 'captcha_budget:period:seconds', expr: `vector(${num(windowMs / 1000)})`, labels: named }),
    note(`The burn rate now: over the shortest window (${promDuration(shortest)}).`, {
      record: 'captcha_budget:current_burn_rate:ratio',
      expr: `sum without (window) (captcha_budget:burn_rate:ratio{slo=${JSON.stringify(id)},window="${promDuration(shortest)}"})`,
      labels: ids,
    }),
    note(`The burn rate over the whole period (${period}).`, {
      record: 'captcha_budget:period_burn_rate:ratio',
      expr: `sum without (window) (captcha_budget:burn_rate:ratio{slo=${JSON.stringify(id)},window="${period}"})`,
      labels: ids,
    }),
    note('The share of the error budget left (0 when overspent).', {
      record: 'captcha_budget:error_budget_remaining:ratio',
      expr: `clamp_min(1 - captcha_budget:period_burn_rate:ratio${sel}, 0)`,
      labels: ids,
    }),
  )

  // The error ratio of a window (Sloth's windows that are not recorded by name).
  const ratioOf = (w, ms) => (slo.sli ? sliRecordings(slo.sli, w, ms, ids)[2].expr : `${countExpr('solve_failures', ms)}\n/\n${countExpr('solves', ms)}`)
  if (options.compat === 'sloth')
    recordings.push(
      ...slothRecordings({ id, slo, windows, sel, ratioOf }).map((r) => note(`Sloth's name (compat: sloth) for ${r.record.replace(/^slo:|^sloth_/, '')}.`, r)),
    )

  // The SLO's own labels (owner, tier, cluster, …) on every alert, so that routes and silences keep matching.
  const sloLabels = slo.labels ?? {}
  const source = slo.sli ? 'PromQL SLI' : `source ${name}`
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
    // The tracker's gate, unless the SLO sets its own failure minimum.
    const minFailures = slo.minFailures ?? pair.minFailures
    const labels = { slo: id, severity: pair.severity, pair: pair.name, ...sloLabels, ...alerting.labels, ...(route?.labels ?? {}) }
    const expr = pairExpr({
      pair,
      recovery: recovery[policy.indexOf(pair)],
      recoverySpansMs,
      alert,
      labels,
      minFailures,
      minEvents,
      slo,
      by,
      period,
      exact,
      whileHeld,
    })
    const spent = (100 * pair.burnRate * pair.longWindowMs) / windowMs
    const failuresText = minFailures > 0 ? `, with at least ${minFailures} failures in ${long}` : ''
    const held = pair.resolveBurnRate < pair.burnRate
    alerts.push(
      note(
        // (Its gates are in the expression, one a line.)
        `${pair.name} (${pair.severity}): burn rate above ${num(pair.burnRate)} over ${long} and ${short}` +
          (held ? `; held until recovered (burn at most ${num(pair.resolveBurnRate)}).` : '.'),
        {
          alert,
          // No `for:` and no keep_firing_for: the tracker fires at once and holds a
          // page until it has recovered (pairExpr), and so do the rules.
          expr,
          // slo also comes from the expression; on the rule too, two SLOs' alerts on one source differ
          // for promtool's duplicate check and for anyone reading the rule file.
          labels,
          annotations: {
            summary: `{{ $labels.slo }}${which}: the CAPTCHA error budget burns {{ $value | humanize }}x the sustainable rate (${pair.name}, threshold ${threeDigits(pair.burnRate)}x)`,
            description:
              `The burn rate of {{ $labels.slo }}${which} (${source}, SLO ${threeDigits(targetRate * 100)}% over ${period}) is {{ $value | humanize }} over ${long} ` +
              `and above ${threeDigits(pair.burnRate)} over ${short}, across all instances${failuresText}: ` +
              `at ${threeDigits(pair.burnRate)}x, ${threeDigits(spent)}% of the budget goes in ${long}, all of it in ${approxDuration(windowMs / pair.burnRate)}.`,
            ...alerting.annotations,
            ...(route?.annotations ?? {}),
          },
        },
      ),
    )
  }
  // No alert at all when both kinds are disabled (Sloth's no-alerts), not even this one.
  if (!(alerting.page.disable && alerting.ticket.disable)) {
    const absent = `${alerting.name}SourceAbsent`
    const watched = slo.sli ? sliQuery(slo.sli.totalQuery, promDuration(shortest)) : selector(name)
    alerts.push(
      note(`The source has been absent for ${promDuration(ABSENT_FOR_MS)}: the SLO cannot be judged.`, {
        alert: absent,
        expr: `absent(${watched})`,
        for: promDuration(ABSENT_FOR_MS),
        labels: { slo: id, severity: 'ticket', ...sloLabels, ...alerting.labels, ...alerting.ticket.labels },
        annotations: {
          summary: slo.sli
            ? `${id}: the SLI's total query has had no value for ${promDuration(ABSENT_FOR_MS)}`
            : `${id}: no ${selector(name).replace(/"/g, "'")} series for ${promDuration(ABSENT_FOR_MS)}`,
          description: slo.sli
            ? `The total query of ${id} has no value: the SLO cannot be judged (its series absent, scrape failing, or renamed).`
            : `No instance exposes the solve counter of ${name}: the SLO ${id} cannot be judged (workers down, scrape failing, or a renamed source).`,
          ...alerting.annotations,
          ...alerting.ticket.annotations,
        },
      }),
    )
  }

  // One group: its rules run in order at each evaluation, so the alerts read the
  // recordings of the same instant (separate groups run on their own timers).
  const group = note(
    `The SLO ${id}: ${num(targetRate * 100)}% of solves succeed over ${period}. Recordings first, then the alerts: one per pair of the policy, one for an absent source.`,
    { name: `captcha-budget-${id}` },
  )
  // The optimised period counts evaluations: the group's interval is the one they assume.
  if (optimised || usesPieces) group.interval = promDuration(options.evaluationIntervalMs)
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
  const doc = new YAML.Document(value, { aliasDuplicateObjects: false })
  // Each group and rule with its comment (what it is for) above it.
  const groups = value?.groups ?? value?.spec?.groups
  const at = value?.groups ? ['groups'] : ['spec', 'groups']
  if (Array.isArray(groups)) {
    groups.forEach((group, i) => {
      if (RULE_COMMENTS.has(group)) doc.getIn([...at, i], true).commentBefore = commentText(RULE_COMMENTS.get(group))
      group.rules?.forEach((rule, j) => {
        if (RULE_COMMENTS.has(rule)) doc.getIn([...at, i, 'rules', j], true).commentBefore = commentText(RULE_COMMENTS.get(rule))
      })
    })
  }
  return doc.toString({ lineWidth: 0, indentSeq: false }).trimEnd()
}

/** A comment for YAML: each line after a space, wrapped at about 100 characters. */
function commentText(text) {
  const lines = []
  for (const word of text.split(' ')) {
    if (lines.length && lines.at(-1).length + word.length < 100) lines[lines.length - 1] += ` ${word}`
    else lines.push(` ${word}`)
  }
  return lines.join('\n')
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
    // The spec's own name when it has one (options.metadata.name, from rules --spec).
    name: opts.metadata?.name ?? (ids.length === 1 ? objectNameFor(ids[0]) : 'captcha-budget-slos'),
    ...(opts.namespace ? { namespace: opts.namespace } : {}),
    labels: { ...(opts.metadata?.labels ?? {}), 'app.kubernetes.io/managed-by': 'captcha-error-budget' },
  }
  const object = { apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule', metadata, spec: { groups } }
  return { text: `${head}${toYaml(object)}\n`, policies }
}

/**
 * The PrometheusRule's name for one SLO: `captcha-budget-<id>` made a name Kubernetes takes
 * (`checkout_` → `captcha-budget-checkout`, `a..b` → `captcha-budget-a.b`); an id none of
 * whose characters can stand in one is refused, naming it, rather than named by the prefix alone.
 */
function objectNameFor(id) {
  if (objectNameOf(id) === '') {
    throw invalidArgValue(
      `${WHERE}slo.id '${printable(id)}': no Kubernetes object name can be made of it (metadata.name takes a-z, 0-9, '-' and '.'); give an id with some of them (or options.metadata.name)`,
    )
  }
  return objectNameOf(`captcha-budget-${id}`)
}

module.exports = { ruleGroups, prometheusRules, rulesAndPolicy, prometheusPolicy, toYaml, defaultId, WHERE }
