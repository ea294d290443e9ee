'use strict'
// Prometheus recording and alerting rules for SLOs over the counters of
// lib/metrics.js, summed over every instance (the fleet is judged as one).
// Shaped after Sloth's output: error ratios per window, burn rates, remaining
// budget, fixed-name series for dashboards, then one multiwindow burn-rate
// alert per pair and an alert on an absent source. Every series and alert
// carries the SLO's identity (`slo`) next to its source (`name`), so two SLOs
// on one counter stay apart. The alerts are the tracker's policy (pairs, gates,
// the hold/resolve rule: pairExpr), asked of the core by lib/rules-slo.js,
// which also checks the SLO.
const YAML = require('yaml')
const { invalidArgValue, invalidArgType, describe } = require('./errors.js')
const { promDuration, approxDuration, threeDigits } = require('./duration.js')
const { checkSlo, checkOptions, prometheusPolicy, policyOf, defaultId, budgetOf, num, WHERE, ABSENT_FOR_MS } = require('./rules-slo.js')
const { WINDOW } = require('./rules-slo.js')
const { recoveryCondition } = require('./recovery-curve.js')

// A window this long is summed from recorded one-evaluation increases (Sloth's and
// Pyrra's optimisation): a long range over raw counters is what costs a Prometheus
// most (docs/prometheus.md, "How the windows are computed"). Once the pieces are
// recorded, the shorter windows are summed from them too.
const SUM_FROM_MS = 3_600_000
// A window of whole hours, HOURS_FROM_MS or longer, is summed from hourly sums of the pieces
// instead (an hour's pieces recorded once an hour), plus the pieces of this hour so far, less
// those of the hour its far edge falls in: exact, and it reads a sample an hour instead of one
// a piece, which is what a Prometheus over many label sets spends its time on. Shorter windows
// read at most 2 880 pieces; for them the extra selectors cost about what they save in promtool
// (a 30 d SLO's 10 h and 15 h), and a 24 h SLO needs no hour sums at all (1.1 KB less).
const HOUR_MS = 3_600_000
const HOURS_FROM_MS = 48 * HOUR_MS
/** A range in hours, minutes, seconds and ms (`1h59m30s`): a summed window's range, half an evaluation short. */
function rangeDuration(ms) {
  const parts = [
    ['h', 3_600_000, Infinity],
    ['m', 60_000, 60],
    ['s', 1000, 60],
    ['ms', 1, 1000],
  ].map(([unit, size, of]) => [Math.floor(ms / size) % of, unit])
  return (
    parts
      .filter(([n]) => n > 0)
      .map(([n, unit]) => `${n}${unit}`)
      .join('') || '0s'
  )
}

// The comment written above each rule and group (by object).
const RULE_COMMENTS = new WeakMap()

// The PromQL selector of the SLO's counter (lib/metrics.js): its name label, and an outcome.
function selector(name, outcome) {
  return `captcha_budget_solves_total{name=${JSON.stringify(name)}${outcome ? `,outcome="${outcome}"` : ''}}`
}

// The SLI's events as counter selectors, a list whose series add up: every solve,
// and the errors. This is the one place the error events are written: every
// window, piece and ratio of the rules reads them through these.
const solveEvents = (name) => [selector(name)]
// The errors: the failed solves and the solves the site rejected later
// (captcha_budget_rejections_total, counted among the successes: a counter never
// goes down; it has no outcome label). Two selectors, not one regex over both
// names: Prometheus compiles a regex matcher again at every evaluation, which
// costs more than a second selector.
const errorEvents = (name) => [selector(name, 'failure'), `captcha_budget_rejections_total{name=${JSON.stringify(name)}}`]

/** The series of every selector of `events`, each with `suffix` (an offset), as one expression. */
const either = (events, suffix = '') => (events.length === 1 ? `${events[0]}${suffix}` : `(${events.map((e) => `${e}${suffix}`).join(' or ')})`)

/** The events of `events` in a window `w`, summed `by` the grouping: increase() over the raw counters. */
const increaseOf = (events, by, w) => `sum by (${by}) (${events.map((e) => `increase(${e}[${w}])`).join(' or ')})`

/**
 * The events of `events` in the last evaluation interval `w` (a piece), summed
 * `by` the grouping: each counter now less its sample `w` ago, exactly (no
 * extrapolation, so pieces add up to the counters' change over a window); after
 * a restart (the counter went down), the counter itself, as increase() counts
 * it; a counter not yet there `w` ago adds nothing, as with increase().
 */
const pieceOf = (events, by, w) => {
  const [now, then] = [either(events), either(events, ` offset ${w}`)]
  return `sum by (${by}) (\n  (${now} - ${then}) >= 0\n  or (${now} and ${then})\n)`
}

/** `list` cut into pieces of `size`. */
const chunks = (list, size) => Array.from({ length: Math.ceil(list.length / size) }, (_, i) => list.slice(i * size, (i + 1) * size))

/**
 * Expressions joined by `or`, a few to a bracket: a long chain of `or` costs
 * PromQL more than the same terms in brackets (each `or` indexes everything on
 * its left), and an `or` in brackets reads as one block.
 */
function orBlocks(terms, size = 6) {
  if (terms.length <= size) return terms.join('\nor ')
  return chunks(terms, size)
    .map((block) => `(\n  ${block.join('\n  or ')}\n)`)
    .join('\nor ')
}

/** Table entries joined by `or` as orBlocks does, `size` to a line. */
const rows = (entries, size) =>
  chunks(entries, size)
    .map((line) => `(${line.join(' or ')})`)
    .join('\n  or ')

function pascal(name) {
  return name
    .split(/[^a-zA-Z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('')
}

// Labels the series, the rules or the scrape set themselves: a grouping label of that name would clash.
// The package's one list (a grouping is a BudgetFamily's labelNames): one accepts what the other does.
const { RESERVED_LABELS: NOT_GROUPING, LABEL_NAME_RULE, isLabelName } = require('./labels.js')

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

/** `slo.sli`'s query for one window: Sloth's `{{.window}}` replaced by its range. */
const sliQuery = (query, w) => query.trim().split(WINDOW).join(w)

/**
 * The recordings of one window for an SLO whose SLI is PromQL (`slo.sli`):
 * the error ratio of the two queries, and counts taken as rate × window (the
 * queries are per-second rates, as Sloth's are).
 */
function sliRecordings(sli, w, ms, ids) {
  const seconds = num(ms / 1000)
  return [
    { record: `captcha_budget:solves:increase${w}`, expr: `(${sliQuery(sli.totalQuery, w)}) * ${seconds}`, labels: ids },
    { record: `captcha_budget:solve_failures:increase${w}`, expr: `(${sliQuery(sli.errorQuery, w)}) * ${seconds}`, labels: ids },
    { record: `captcha_budget:solve_error:ratio_rate${w}`, expr: `(${sliQuery(sli.errorQuery, w)})\n/\n(${sliQuery(sli.totalQuery, w)})`, labels: ids },
  ]
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
  // windowed term joins it ignoring(window).
  const value = `sum without (window) (${burn(long)})`
  const held = pair.resolveBurnRate < pair.burnRate
  // Held, the value is taken once around both branches (below), and this term keeps the window label.
  const fire = [`${held ? burn(long) : value} > ${num(pair.burnRate)}`, `ignoring(window) ${burn(short)} > ${num(pair.burnRate)}`]
  if (minFailures > 0) fire.push(`ignoring(window) ${failures(long)} >= ${minFailures}`)
  if (pair.minEvents > 0) fire.push(`ignoring(window) ${solves(long)} >= ${pair.minEvents}`)
  if (minEvents > 0) fire.push(`ignoring(window) ${solves(period)} >= ${minEvents}`)
  // failures ≥ share × the period's allowed failures (solves × (1 − target)), as the tracker's budgetTotal.
  if (pair.minBudgetShare > 0)
    fire.push(`ignoring(window) ${failures(long)} >= ignoring(window) ${num(pair.minBudgetShare)} * ${num(budgetOf(slo.targetRate))} * ${solves(period)}`)
  // The warm-up: some instance exposed the counter warmUpMs ago.
  if (pair.warmUpMs > 0 && !slo.sli) fire.push(`on(${by}) sum by (${by}) (${selector(slo.name)} offset ${promDuration(pair.warmUpMs)})`)
  if (!held) return fire.join('\nand\n')

  // The alert's own series, matched to the recordings on the SLO and label set (the labels a
  // recording over the package's counter has); a PromQL SLI's may have more, so there every
  // label but those the rule adds.
  const firing = `ALERTS{alertname=${JSON.stringify(alert)},alertstate="firing",${slo_}}`
  const added = slo.sli ? `ignoring(${['alertname', 'alertstate', 'window', ...Object.keys(labels).filter((l) => l !== 'slo')].join(', ')})` : `on(slo, ${by})`
  const rearm = [
    `unless ${added} present_over_time(${firing}[${short}])`,
    `unless ${added} (present_over_time(${firing}[${long}]) unless ${added} ${failures(short)} >= ${2 * minFailures})`,
  ]
  const resolveBudget = num(Number((pair.resolveBurnRate * budgetOf(slo.targetRate)).toPrecision(12)))
  // The recovery test, once over the long window and every recovery span (label window): a
  // window of n solves holding f failures passes when its burn is at or below the resolve
  // rate and n reaches the fewest solves its failure count needs (the binomial test, never
  // under minSolves, as a curve: lib/recovery-curve.js) or, from burnAloneFrom solves, at
  // once. Counts summed from pieces are whole numbers; others (increase(), a PromQL SLI) are
  // rounded first. A span judges only once this firing episode is at least its length old
  // (ALERTS_FOR_STATE: when the alert became active, the tracker's fired_at); the long window
  // always. Any window that passes ends the page.
  // The held branch reads the counts recorded only while a page of the SLO fires (whileHeld).
  const heldName = (kind) => `captcha_budget:${whileHeld ? 'held_' : ''}${kind}:increase`
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
    // The fewest solves its failures need: a piecewise-linear curve of them (lib/recovery-curve.js).
    terms.push(recoveryCondition(recovery, n, f))
  } else {
    terms.push(`${heldName('solves')}{${slo_}} >= ${recovery.minSolves}`)
  }
  if (recoverySpansMs.length > 0) {
    const activeSince = `ALERTS_FOR_STATE{alertname=${JSON.stringify(alert)},${slo_}}`
    terms.push(`(\n  captcha_budget:recovery_span:seconds{${slo_}} <= on(slo, ${by}) group_left() (time() - ${activeSince})\n  or ${heldSolves(long)}\n)`)
  }
  // Any window that passes, matched on the label set alone (`unless` takes many on either side).
  const recovered = [
    `(\n${terms.join('\nand ')}\n)`,
    `(${heldFailures(long)} < ${minFailures} and ignoring(window) ${heldFailures(short)} == 0 and ignoring(window) ${heldSolves(short)} > 0)`,
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
  // A window of a whole number of evaluation intervals is summed from recorded
  // one-interval increases (the pieces) instead of read from the raw counters, when
  // some window is SUM_FROM_MS or more: only then are pieces recorded, and the group
  // run at their interval (a 10 min SLO keeps the interval Prometheus gives it).
  const pieceMs = options.evaluationIntervalMs
  const piece = promDuration(pieceMs)
  const pieceName = `captcha_budget:counts:increase${piece}`
  const whole = (ms) => !slo.sli && ms > pieceMs && ms % pieceMs === 0
  // Every window counted, each once: the pairs' windows, the period and the recovery spans.
  const allWindows = [...new Set([...windows, ...recoverySpansMs])].sort((a, b) => a - b)
  // The optimised period is summed from the shortest window's counts instead (below).
  const usesPieces = allWindows.some((ms) => !(optimised && ms === windowMs) && whole(ms) && ms >= SUM_FROM_MS)
  const summed = (ms) => usesPieces && whole(ms)
  // The held pairs' alerts read their counts, while they fire, from copies recorded only while
  // some alert of the SLO fires for that label set (below); a PromQL SLI's label sets are its
  // own: it reads the counts themselves.
  const heldPairs = policy.filter((pair) => pair.resolveBurnRate < pair.burnRate && !alerting[pair.severity]?.disable)
  const whileHeld = heldPairs.length > 0 && !slo.sli
  // A span judges a page only once the page is as old as the span, so it never reads a piece
  // from before the page: the spans that are sums of pieces (and no pair's window or the
  // period) sum pieces recorded only while an alert fires. Between pages they read nothing.
  const heldSpans = whileHeld ? recoverySpansMs.filter((ms) => summed(ms) && !windows.includes(ms)) : []
  const counted = allWindows.filter((ms) => !heldSpans.includes(ms))
  const fromCounters = counted.filter((ms) => !(optimised && ms === windowMs))
  // Summed from the hour sums (HOURS_FROM_MS, above): pieces that tile the hour.
  const byHours = (ms) => summed(ms) && HOUR_MS % pieceMs === 0 && ms % HOUR_MS === 0 && ms >= HOURS_FROM_MS
  // Every count the recovery test reads (the spans', the long windows') a sum of pieces or a
  // piece: whole numbers, which it compares unrounded.
  const judgedMs = [...recoverySpansMs, ...policy.map((pair) => pair.longWindowMs)]
  const exact = usesPieces && judgedMs.every((ms) => summed(ms) || ms === pieceMs)

  const recordings = []
  // What each recording is for, written above it in the YAML.
  const note = (comment, rule) => {
    RULE_COMMENTS.set(rule, comment)
    return rule
  }
  // The solves (kind 'solves') or failures of a window, as an expression: summed pieces, the piece itself, or the raw counters.
  const countExpr = (kind, ms) => {
    const w = promDuration(ms)
    // (Without the pieces' label events, which tells them apart in the sums of both.)
    const pieces = `${pieceName}{slo=${JSON.stringify(id)},events="${kind}"}`
    if (summed(ms)) return `sum without (events) (sum_over_time(${pieces}[${rangeDuration(ms - pieceMs / 2)}]))`
    if (slo.sli) return sliRecordings(slo.sli, w, ms, ids)[kind === 'solves' ? 0 : 1].expr
    if (ms === pieceMs && usesPieces) return `sum without (events) (${pieces})`
    return increaseOf(kind === 'solves' ? solveEvents(name) : errorEvents(name), by, w)
  }
  if (usesPieces) {
    // One name, labelled events, so that one sum over time counts both in each window
    // (below), through a selector with no regex.
    recordings.push(
      note(`Solves in each ${piece} (one evaluation interval, a piece), labelled events: summed into the windows.`, {
        record: pieceName,
        expr: pieceOf(solveEvents(name), by, piece),
        labels: { ...ids, events: 'solves' },
      }),
      note(`Failures in each ${piece}, as the solves.`, {
        record: pieceName,
        expr: pieceOf(errorEvents(name), by, piece),
        labels: { ...ids, events: 'solve_failures' },
      }),
    )
  }
  const counting = counted.filter((ms) => !(optimised && ms === windowMs))
  const listed = counted.map(promDuration).join(', ')
  // The windows summed from pieces (or a piece): solves and failures in one recording, labelled events and window.
  const fromPieces = (ms) => summed(ms) || (ms === pieceMs && usesPieces)
  const raw = fromCounters.filter((ms) => !fromPieces(ms)).map(promDuration)
  const sums = counting.filter(fromPieces)
  if (sums.length > 0) {
    const both = `${pieceName}{slo=${JSON.stringify(id)}}`
    const thisHour = `captcha_budget:counts:increase_this_hour{slo=${JSON.stringify(id)}}`
    const hours = `captcha_budget:counts:increase1h{slo=${JSON.stringify(id)}}`
    // The hours whose sums were recorded in the window's range, plus this hour so far, less the
    // pieces of the far edge's hour up to that edge (this hour so far, a window ago; nothing if
    // the rules are younger than the window).
    const sumOf = (ms) =>
      byHours(ms)
        ? `sum_over_time(${hours}[${rangeDuration(ms - pieceMs / 2)}]) + (${thisHour} - ${thisHour} offset ${promDuration(ms)} or ${thisHour})`
        : summed(ms)
          ? `sum_over_time(${both}[${rangeDuration(ms - pieceMs / 2)}])`
          : both
    if (sums.some(byHours)) {
      // The first evaluation of an hour: the one less than a piece after its start.
      const hourStarts = `on() (vector(time() % 3600) < ${num(pieceMs / 1000)})`
      recordings.push(
        note(`The pieces of this hour so far, labelled events: each piece added to the last value, from the hour's first.`, {
          record: 'captcha_budget:counts:increase_this_hour',
          expr: `${both} + (${thisHour} offset ${piece} unless ${hourStarts})\nor ${both}`,
          labels: ids,
        }),
        note(
          `Each hour's pieces, recorded once, at the next hour's first evaluation (0 when the rules start): the windows of ${promDuration(HOURS_FROM_MS)} and more sum these.`,
          {
            record: 'captcha_budget:counts:increase1h',
            expr: `${thisHour} offset ${piece} and ${hourStarts}\nor 0 * ${both} unless ${thisHour} offset ${piece}`,
            labels: ids,
          },
        ),
      )
    }
    recordings.push(
      note(
        `Solves and failures per window (${sums.map(promDuration).join(', ')}), labelled events and window: sums of the ${piece} pieces${sums.some(byHours) ? ` (${sums.filter(byHours).map(promDuration).join(', ')}: of the hours' sums)` : ''}.`,
        {
          record: 'captcha_budget:counts:increase',
          expr: orBlocks(sums.map((ms) => `label_replace(${sumOf(ms)}, "window", "${promDuration(ms)}", "", "")`)),
          labels: ids,
        },
      ),
    )
  }
  // One series per window, labelled window: the sums above without events, and the windows that are not sums.
  const legs = (kind) =>
    orBlocks([
      ...(sums.length > 0 ? [`sum without (events) (captcha_budget:counts:increase{slo=${JSON.stringify(id)},events="${kind}"})`] : []),
      ...counting.filter((ms) => !fromPieces(ms)).map((ms) => `label_replace(${countExpr(kind, ms)}, "window", "${promDuration(ms)}", "", "")`),
    ])
  const countsFrom = slo.sli
    ? "the SLI's rates × the window"
    : !usesPieces
      ? `increase() over the counters (no window of ${promDuration(SUM_FROM_MS)} or more, so no pieces)`
      : `the sums above${raw.length ? ` (${raw.join(', ')}: increase() over the counters, not a whole number of pieces)` : ''}`
  recordings.push(
    // (The windows listed once: above, when the sums are all of them.)
    note(`Solves per window${raw.length === 0 && sums.length === counting.length && !slo.sli ? '' : ` (${listed})`}, labelled window: ${countsFrom}.`, {
      record: 'captcha_budget:solves:increase',
      expr: legs('solves'),
      labels: ids,
    }),
    note('Failures per window, as the solves.', { record: 'captcha_budget:solve_failures:increase', expr: legs('solve_failures'), labels: ids }),
  )
  if (optimised) {
    // Sums of the shortest window's recorded increases, one per evaluation:
    // each solve is counted (shortest / evaluation interval) times, in the
    // failures and the solves alike, so the ratio is the volume-weighted one;
    // the counts are scaled back by that factor.
    const s = promDuration(shortest)
    const scale = num(options.evaluationIntervalMs / shortest)
    for (const kind of ['solves', 'solve_failures']) {
      recordings.push(
        note(`${kind === 'solves' ? 'Solves' : 'Failures'} over the period (${period}): the ${s} counts summed, scaled by ${scale} (periodRules: optimised).`, {
          record: `captcha_budget:${kind}:increase`,
          expr: `sum without (window) (sum_over_time(captcha_budget:${kind}:increase{slo=${JSON.stringify(id)},window="${s}"}[${period}])) * ${scale}`,
          labels: { ...ids, window: period },
        }),
      )
    }
  }
  // The ratio and the burn rate: one division over the pairs' windows and the period (the
  // windows picked once, where the counts hold other windows too: the division keeps the left
  // side's; one regex matcher, not two).
  const rated = counted.every((ms) => windows.includes(ms)) ? sel : `{slo=${JSON.stringify(id)},window=~"${windows.map(promDuration).join('|')}"}`
  recordings.push(
    note(`The error ratio per window${rated === sel ? '' : ` (${windows.map(promDuration).join(', ')})`}: failures / solves.`, {
      record: 'captcha_budget:solve_error:ratio',
      // A PromQL SLI's ratio is its two queries' (rates, as Sloth's), window by window.
      expr: slo.sli
        ? windows
            .map((ms) => `label_replace(\n${sliRecordings(slo.sli, promDuration(ms), ms, ids)[2].expr},\n"window", "${promDuration(ms)}", "", "")`)
            .join('\nor\n')
        : `captcha_budget:solve_failures:increase${rated}\n/\ncaptcha_budget:solves:increase${sel}`,
      labels: ids,
    }),
    note(`The burn rate per window: the error ratio / the error budget (${num(budgetOf(targetRate))}); 1 spends the budget exactly over the period.`, {
      record: 'captcha_budget:burn_rate:ratio',
      expr: `captcha_budget:solve_error:ratio${sel} / ${num(budgetOf(targetRate))}`,
      labels: ids,
    }),
  )
  // Between pages the recovery tests read nothing, which is most of what they would cost.
  if (whileHeld) {
    const heldMs = [...recoverySpansMs, ...heldPairs.flatMap((pair) => [pair.longWindowMs, pair.shortWindowMs]), ...(minEvents > 0 ? [windowMs] : [])]
    const heldWindows = allWindows.filter((ms) => heldMs.includes(ms)).map(promDuration)
    const leftOut = counted.filter((ms) => !heldMs.includes(ms)).map(promDuration)
    // The windows left out, as `!=` matchers: a regex matcher would cost more (above).
    const notHeld = leftOut.map((w) => `,window!="${w}"`)
    // (In the comment, whichever list is shorter.)
    const heldText =
      leftOut.length === 0 ? 'every window' : heldWindows.length > leftOut.length ? `every window but ${leftOut.join(', ')}` : heldWindows.join(', ')
    const firing = `ALERTS{alertstate="firing",slo=${JSON.stringify(id)}}`
    const heldPieces = `captcha_budget:held_counts:increase${piece}`
    if (heldSpans.length > 0) {
      recordings.push(
        note(`The ${piece} pieces, recorded only while an alert of the SLO fires for the label set.`, {
          record: heldPieces,
          expr: `${pieceName}${sel}\nand on(slo, ${by}) ${firing}`,
          labels: ids,
        }),
        note(`Solves and failures per recovery span (${heldSpans.map(promDuration).join(', ')}), labelled events and window: sums of the pieces above.`, {
          record: 'captcha_budget:held_counts:increase',
          expr: orBlocks(
            heldSpans.map(
              (ms) => `label_replace(sum_over_time(${heldPieces}${sel}[${rangeDuration(ms - pieceMs / 2)}]), "window", "${promDuration(ms)}", "", "")`,
            ),
          ),
          labels: ids,
        }),
      )
    }
    for (const kind of ['solves', 'solve_failures']) {
      const spans = heldSpans.length > 0 ? `\nor sum without (events) (captcha_budget:held_counts:increase{slo=${JSON.stringify(id)},events="${kind}"})` : ''
      recordings.push(
        note(
          kind === 'solves'
            ? `The solves of the windows a held alert reads (${heldText}), recorded only while an alert of the SLO fires for the label set.`
            : 'The failures of those windows, as the solves.',
          {
            record: `captcha_budget:held_${kind}:increase`,
            expr: `captcha_budget:${kind}:increase{slo=${JSON.stringify(id)}${notHeld.join('')}}\nand on(slo, ${by}) ${firing}${spans}`,
            labels: ids,
          },
        ),
      )
    }
  }
  if (recoverySpansMs.length > 0) {
    recordings.push(
      note(`Each recovery span's length in seconds, per label set and window: a span judges a page only once the page is that old.`, {
        record: 'captcha_budget:recovery_span:seconds',
        // Spread over the label sets here, once, so that each alert compares it with its own age
        // directly; `on(window)` keeps the spans' windows.
        expr: `0 * captcha_budget:${whileHeld ? 'held_' : ''}solves:increase${sel}\n+ on(window) group_left() (\n  ${rows(
          recoverySpansMs.map((ms) => `label_replace(vector(${num(ms / 1000)}),"window","${promDuration(ms)}","","")`),
          4,
        )}\n)`,
        labels: ids,
      }),
    )
  }
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
    const gates = [minFailures > 0 ? `${minFailures} failures` : '', pair.minEvents > 0 ? `${pair.minEvents} solves` : ''].filter(Boolean).join(' and ')
    alerts.push(
      note(
        `${pair.name} (${pair.severity}): burn rate above ${num(pair.burnRate)} over ${long} and ${short}` +
          (gates ? `, with ${gates} in ${long}` : '') +
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
    `The SLO ${id}: ${num(targetRate * 100)}% of solves succeed over ${period}. Recordings first (counts, ratios and burn rates per window), then one alert per pair of the policy.`,
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
    name:
      opts.metadata?.name ??
      (ids.length === 1
        ? `captcha-budget-${ids[0]}`
            .toLowerCase()
            .replace(/[^a-z0-9.-]+/g, '-')
            .slice(0, 253)
        : 'captcha-budget-slos'),
    ...(opts.namespace ? { namespace: opts.namespace } : {}),
    labels: { ...(opts.metadata?.labels ?? {}), 'app.kubernetes.io/managed-by': 'captcha-error-budget' },
  }
  const object = { apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule', metadata, spec: { groups } }
  return { text: `${head}${toYaml(object)}\n`, policies }
}

module.exports = { ruleGroups, prometheusRules, rulesAndPolicy, prometheusPolicy, toYaml, defaultId, WHERE }
