'use strict'
// The replay's result for people: the timeline, a summary per tracker, the
// baseline advice. Timestamps ISO 8601 UTC, like --json.
const { humanDuration } = require('../../util/duration.js')
const { STATUSES } = require('../../native/fast-report.js')
const { OPTIONS: THROTTLE } = require('./throttle.js')
const { printable } = require('../../util/errors.js')

const pct = (rate, digits = 1) => `${(rate * 100).toFixed(digits)} %`
const int = (n) => Math.round(n).toLocaleString('en-US')
const capital = (s) => s[0].toUpperCase() + s.slice(1)

/** `2d 3h 5m`-style, to the second, for spans of time. */
function span(ms) {
  if (ms < 1000) return `${ms} ms`
  const parts = []
  let rest = Math.round(ms / 1000)
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
    ['s', 1],
  ]) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`)
      rest %= size
    }
  }
  return parts.slice(0, 3).join(' ')
}

// What a throttling guard's state change means (replay --throttle).
const THROTTLE_TO = {
  throttled: (e) => `probes only, one per ${span(THROTTLE.probeIntervalMs)} (recent solves below the SLO)`,
  admitting: (e) => `every solve again: recent solves meet the SLO (${int(e.refused)} refused so far)`,
  open: () => 'the budget governs again',
}

/**
 * A status change less than a window after the tracker's first solve judges a
 * window still filling (its budget is that of the solves so far): said, so that
 * a cold start is not taken for an incident.
 */
function windowFilling(e, tracker) {
  const elapsed = Date.parse(e.at) - Date.parse(tracker.firstEventAt)
  return elapsed < tracker.windowMs ? `  (window filling: ${span(elapsed)} of ${humanDuration(tracker.windowMs)})` : ''
}

function timelineLine(e, width, trackers) {
  const head = `  ${e.at}  ${e.tracker.padEnd(width)}  `
  if (e.kind === 'throttle') return `${head}guard    ${e.from} → ${e.to.padEnd(9)}  ${THROTTLE_TO[e.to](e)}`
  if (e.kind === 'status') {
    const filling = windowFilling(e, trackers.get(e.tracker))
    return `${head}${e.from} → ${e.to.padEnd(9)}  budget left ${String(e.budgetRemainingPct).padStart(5)} %, burn rate ${e.burnRate}${filling}`
  }
  const verb = e.kind === 'alert' ? 'ALERT  ' : 'resolved'
  return `${head}${verb} ${e.name} (${e.severity}): burn ${e.burnRateLong} long, ${e.burnRateShort} short, threshold ${e.threshold}`
}

function trackerLines(t, span0) {
  const f = t.final
  const total = Object.values(t.timeInStatusMs).reduce((a, b) => a + b, 0) || 1
  const statuses = STATUSES.filter((s) => t.timeInStatusMs[s] > 0)
    .map((s) => `${s} ${span(t.timeInStatusMs[s])} (${((t.timeInStatusMs[s] / total) * 100).toFixed(1)} %)`)
    .join(', ')
  const fired = Object.entries(t.alertsFired).map(([name, n]) => `${name} ×${n}`)
  return [
    `  ${t.name}: SLO ${pct(t.targetRate)} over ${humanDuration(t.windowMs)}, ${int(t.events)} solves`,
    `    final        ${f.status} at ${f.at}: ${pct(f.currentRate, 2)} of ${int(f.total)} in the window, budget left ${f.budgetRemainingPct} %, burn rate ${f.burnRate}`,
    ...(f.insufficientData ? [`    no verdict   fewer than ${int(t.minEvents)} solves in the window (--min-events): insufficient data`] : []),
    `    worst burn   ${t.worstBurnRate ? `${t.worstBurnRate.burnRate} at ${t.worstBurnRate.at}` : 'none'}`,
    `    time spent   ${statuses || span0}`,
    `    alerts fired ${fired.length ? fired.join(', ') : 'none'}`,
    ...(t.throttle ? [throttleLine(t.throttle)] : []),
    ...(t.dropped > 0
      ? [`    dropped      ${int(t.dropped)} solves older than the window when they came (out of order): ${linesList(t.dropped, t.droppedLines)}`]
      : []),
  ]
}

/** `lines 3601, 3602, …` for `count` solves of which `lines` are the first. */
function linesList(count, lines) {
  return `line${count === 1 ? '' : 's'} ${lines.join(', ')}${count > lines.length ? ', …' : ''}`
}

function throttleLine(th) {
  const stretches = th.stretches === 0 ? 'never throttled' : `throttled ${span(th.throttledMs)} in ${th.stretches} stretch${th.stretches === 1 ? '' : 'es'}`
  return `    guard        ${stretches}: ${int(th.admitted)} solves admitted (${int(th.probes)} probes), ${int(th.refused)} refused`
}

function adviceLines(advice) {
  // Every UTC day of the log, in order; a type without solves that day shows a dash.
  const allDays = [...new Set(advice.rows.flatMap((r) => r.days.map((d) => d.day)))].sort()
  const manyDays = allDays.length > 7
  const perDay = (r) => {
    if (manyDays) return `${r.days.length} days, worst ${pct(Math.min(...r.days.map((d) => d.successRate)))}`
    const byDay = new Map(r.days.map((d) => [d.day, d.successRate]))
    return allDays.map((day) => (byDay.has(day) ? pct(byDay.get(day)) : '—').padStart(7)).join(' · ')
  }
  const rows = advice.rows.map((r) => [
    r.type,
    int(r.solves),
    pct(r.successRate),
    perDay(r),
    `${pct(r.baseline)} ${r.baselineFrom === 'whole log' ? '(whole log)' : '(median day)'}`,
    r.recommendedSlo === null ? 'n/a' : pct(r.recommendedSlo),
    int(r.solvesPerDay),
    humanDuration(r.recommendedWindowMs),
  ])
  const days = manyDays ? 'per UTC day' : `per UTC day (${allDays.map((d) => d.slice(5)).join(' · ')})`
  const head = ['type', 'solves', 'success', days, 'baseline', 'SLO', 'solves/day', 'window']
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells) => `  ${cells.map((c, i) => (i === 0 || i === 3 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')}`.trimEnd()
  return [
    line(head),
    ...rows.map(line),
    '',
    `  ${capital(advice.rule)}.`,
    `  ${capital(advice.baselineRule)}.`,
    `  Window by volume: ${advice.windowRule.map((w) => (w.belowSolvesPerDay === null ? `more → ${humanDuration(w.windowMs)}` : `under ${int(w.belowSolvesPerDay)}/day → ${humanDuration(w.windowMs)}`)).join('; ')}.`,
    ...(advice.shortLog ? ['  Note: the log covers less than two weeks; the article measures the baseline over a few weeks.'] : []),
  ]
}

/** The whole report as text lines. */
function render(result, chartPath) {
  const width = Math.max(...result.trackers.map((t) => t.name.length))
  const trackers = new Map(result.trackers.map((t) => [t.name, t]))
  // The --by fields, named: `one tracker per site`, `one tracker per type, site combination`.
  const by = result.by ?? ['type']
  const per = by.length > 1 ? `${by.join(', ')} combination` : by[0]
  const kinds = result.byType ? `one tracker per ${per}: ${result.trackers.map((t) => t.name).join(', ')}` : 'one tracker for every solve'
  const out = [
    `Replay of ${result.input} (${result.format === 'csv' ? 'CSV' : 'JSON Lines'}): ${int(result.lines)} lines, ${int(result.events)} solves, ${int(result.badLineCount)} bad lines`,
    `  ${result.from} → ${result.to} (${span(result.durationMs)}), ${kinds}`,
    '',
    `Timeline (${result.timeline.length} status changes and alerts)`,
    ...(result.timeline.length ? result.timeline.map((e) => timelineLine(e, width, trackers)) : ['  (none: every tracker stayed healthy without alerts)']),
    '',
    'Summary',
    ...result.trackers.flatMap((t) => trackerLines(t, `healthy ${span(result.durationMs)}`)),
    '',
    'Baseline and advice',
    ...adviceLines(result.advice),
  ]
  if (chartPath) out.push('', `Chart: ${chartPath}`)
  // Each line with what a terminal would act on escaped: tracker names, labels and the input's name are the log's or the caller's text.
  return out.map(printable).join('\n')
}

module.exports = { render, span, linesList }
