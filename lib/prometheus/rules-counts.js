'use strict'
// The recordings that count an SLO's solves and failures per window, for lib/prometheus/rules.js:
// the one-interval pieces, the hour sums, each window's sums and their shares, the error
// ratio and burn rate, and the copies of the counts a held alert reads. Where each window's
// count comes from (pieces, hour sums, raw counters, a PromQL SLI) is decided here.
const { promDuration } = require('../util/duration.js')
const { budgetOf, num, WINDOW } = require('./rules-slo.js')

/** `expr` labelled `window="<w>"` (label_replace from no label, with an empty regex: set on every series). */
const labelWindow = (expr, w) => `label_replace(${expr},"window","${w}","","")`

/** The copies of the solves and failures per window recorded only while an alert of the SLO fires (what a hold reads). */
const HELD_COUNTS = { solves: 'captcha_budget:held_solves:increase', solve_failures: 'captcha_budget:held_failures:increase' }

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

// The PromQL selector of the SLO's counter (lib/prometheus/metrics.js): its name label, and an outcome.
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
 * The count recordings of one SLO (checked), in the group's order, and what the alerts need
 * to know of them: whether the pieces are recorded (the group then runs at their interval),
 * whether every count the recovery test reads is a whole number (`exact`), whether the held
 * pairs read copies (`whileHeld`), and each window's count as an expression (`countExpr`,
 * for Sloth's windows). `note(comment, rule)` records the comment written above a rule.
 */
function countRecordings({ slo, id, by, policy, alerting, recoverySpansMs, windows, optimised, options, note }) {
  const { name, targetRate, windowMs, minEvents = 0 } = slo
  const period = promDuration(windowMs)
  const sel = `{slo=${JSON.stringify(id)}}`
  const ids = { slo: id }
  const shortest = windows[0]
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
  // The optimised period is summed from the shortest window's counts instead (below).
  const counting = counted.filter((ms) => !(optimised && ms === windowMs))
  // Summed from the hour sums (HOURS_FROM_MS, above): pieces that tile the hour.
  const byHours = (ms) => summed(ms) && HOUR_MS % pieceMs === 0 && ms % HOUR_MS === 0 && ms >= HOURS_FROM_MS
  // Every count the recovery test reads (the spans', the long windows') a sum of pieces or a
  // piece: whole numbers, which it compares unrounded.
  const judgedMs = [...recoverySpansMs, ...policy.map((pair) => pair.longWindowMs)]
  const exact = usesPieces && judgedMs.every((ms) => summed(ms) || ms === pieceMs)

  const recordings = []
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
      note(`Solves per ${piece} piece (one evaluation interval), labelled events: the windows sum these.`, {
        record: pieceName,
        expr: pieceOf(solveEvents(name), by, piece),
        labels: { ...ids, events: 'solves' },
      }),
      note(`Failures per ${piece} piece, as the solves.`, {
        record: pieceName,
        expr: pieceOf(errorEvents(name), by, piece),
        labels: { ...ids, events: 'solve_failures' },
      }),
    )
  }
  const listed = counted.map(promDuration).join(', ')
  // The windows summed from pieces (or a piece): solves and failures in one recording, labelled events and window.
  const fromPieces = (ms) => summed(ms) || (ms === pieceMs && usesPieces)
  const raw = counting.filter((ms) => !fromPieces(ms)).map(promDuration)
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
        note(`This hour's pieces so far: the last value plus this piece, anew each hour.`, {
          record: 'captcha_budget:counts:increase_this_hour',
          expr: `${both} + (${thisHour} offset ${piece} unless ${hourStarts})\nor ${both}`,
          labels: ids,
        }),
        note(`Each hour's sum, once, at the next hour's first evaluation (0 when the rules start): windows from ${promDuration(HOURS_FROM_MS)} sum these.`, {
          record: 'captcha_budget:counts:increase1h',
          expr: `${thisHour} offset ${piece} and ${hourStarts}\nor 0 * ${both} unless ${thisHour} offset ${piece}`,
          labels: ids,
        }),
      )
    }
    recordings.push(
      note(
        `Solves and failures per window (${sums.map(promDuration).join(', ')}), labelled events and window: sums of the ${piece} pieces${sums.some(byHours) ? ` (${sums.filter(byHours).map(promDuration).join(', ')}: of the hours' sums)` : ''}.`,
        {
          record: 'captcha_budget:counts:increase',
          expr: orBlocks(sums.map((ms) => labelWindow(sumOf(ms), promDuration(ms)))),
          labels: ids,
        },
      ),
    )
  }
  // One series per window, labelled window: the sums above without events, and the windows that are not sums.
  const legs = (kind) =>
    orBlocks([
      ...(sums.length > 0 ? [`sum without (events) (captcha_budget:counts:increase{slo=${JSON.stringify(id)},events="${kind}"})`] : []),
      ...counting.filter((ms) => !fromPieces(ms)).map((ms) => labelWindow(countExpr(kind, ms), promDuration(ms))),
    ])
  const countsFrom = slo.sli
    ? "the SLI's rates × the window"
    : !usesPieces
      ? `increase() over the counters (no window of ${promDuration(SUM_FROM_MS)} or more, so no pieces)`
      : `the sums above${raw.length ? ` (${raw.join(', ')}: increase() over the counters, not whole pieces)` : ''}`
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
    note(`The burn rate per window: error ratio / error budget (${num(budgetOf(targetRate))}); 1 spends the budget exactly over the period.`, {
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
        note(`The ${piece} pieces, only while an alert of the SLO fires for the label set.`, {
          record: heldPieces,
          expr: `${pieceName}${sel}\nand on(${by}) ${firing}`,
          labels: ids,
        }),
        note(`Solves and failures per recovery span (${heldSpans.map(promDuration).join(', ')}), labelled events and window: sums of the pieces above.`, {
          record: 'captcha_budget:held_counts:increase',
          expr: orBlocks(heldSpans.map((ms) => labelWindow(`sum_over_time(${heldPieces}${sel}[${rangeDuration(ms - pieceMs / 2)}])`, promDuration(ms)))),
          labels: ids,
        }),
      )
    }
    for (const kind of ['solves', 'solve_failures']) {
      const spans = heldSpans.length > 0 ? `\nor sum without (events) (captcha_budget:held_counts:increase{slo=${JSON.stringify(id)},events="${kind}"})` : ''
      recordings.push(
        note(
          kind === 'solves'
            ? `The solves of the windows a held alert reads (${heldText}), only while an alert fires for the label set.`
            : 'The failures of those windows, as the solves.',
          {
            record: HELD_COUNTS[kind],
            expr: `captcha_budget:${kind}:increase{slo=${JSON.stringify(id)}${notHeld.join('')}}\nand on(${by}) ${firing}${spans}`,
            labels: ids,
          },
        ),
      )
    }
  }
  if (recoverySpansMs.length > 0) {
    recordings.push(
      note(`Each recovery span's length in seconds, per label set: a span judges a page once the page is that old.`, {
        record: 'captcha_budget:recovery_span:seconds',
        // Spread over the label sets here, once, so that each alert compares it with its own age
        // directly; `on(window)` keeps the spans' windows.
        expr: `0 * ${whileHeld ? HELD_COUNTS.solves : 'captcha_budget:solves:increase'}${sel}\n+ on(window) group_left() (\n  ${rows(
          recoverySpansMs.map((ms) => labelWindow(`vector(${num(ms / 1000)})`, promDuration(ms))),
          4,
        )}\n)`,
        labels: ids,
      }),
    )
  }
  return { recordings, usesPieces, exact, whileHeld, countExpr }
}

module.exports = { countRecordings, selector, sliQuery, sliRecordings, HELD_COUNTS }
