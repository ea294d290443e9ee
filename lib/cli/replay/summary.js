'use strict'
// The replay's result, as --json prints it: the timeline of every tracker
// merged in time order, a summary per tracker, and the baseline advice.
// Timestamps are ISO 8601 UTC; durations and windows are ms.
const { STATUSES } = require('../../native/fast-report.js')

const iso = (ms) => new Date(ms).toISOString()
const round2 = (x) => Math.round(x * 100) / 100

/** Time spent in each status between `start` and `end`, from the status changes in order. */
function timeInStatus(timeline, start, end) {
  const spent = Object.fromEntries(STATUSES.map((s) => [s, 0]))
  let status = 'healthy'
  let since = start
  for (const e of timeline) {
    if (e.kind !== 'status') continue
    const at = Math.min(Math.max(e.at, start), end)
    spent[status] += at - since
    status = e.to
    since = at
  }
  spent[status] += end - since
  return spent
}

function trackerSummary(slot, start, end) {
  const report = slot.tracker.report()
  const alertsFired = {}
  for (const e of slot.timeline) if (e.kind === 'alert') alertsFired[e.name] = (alertsFired[e.name] ?? 0) + 1
  return {
    name: slot.name,
    ...(slot.labels ? { labels: slot.labels } : {}),
    targetRate: slot.config.targetRate,
    windowMs: slot.config.windowMs,
    minEvents: slot.config.minEvents,
    alertPolicy: slot.tracker.alertPolicy,
    events: slot.events,
    firstEventAt: slot.events > 0 ? iso(slot.firstAt) : null,
    dropped: report.dropped,
    droppedLines: slot.droppedLines,
    final: { ...report, at: iso(report.at) },
    worstBurnRate: slot.worst.at === null ? null : { burnRate: round2(slot.worst.burnRate), at: iso(slot.worst.at) },
    timeInStatusMs: timeInStatus(slot.timeline, start, end),
    alertsFired,
    ...(slot.throttle === null ? {} : { throttle: slot.throttle.summary(end) }),
  }
}

/**
 * The result of a replay. `first` and `end` are the earliest and the latest
 * event: the log's span, whatever the order of its lines (the first line need
 * not be the earliest).
 * Trackers are in name order; with several `--by` fields or `top`, worst first
 * (least budget left at the end, then highest burn rate, then name), and only
 * the `top` worst are kept (the timeline and the advice with them).
 * `trackerCount` and `pooled` (`{ days, types }`, the '(all)' row's counts) stand for the keys
 * that have no tracker when only the `top` worst got one (ranking.js).
 * @param {object} r `{ input, format, lines, events, bad, end, first, trackers, baseline, by?, top?, trackerCount?, pooled? }`
 */
function summarize({ input, format, lines, events, bad, end, first, trackers, baseline, by, top, trackerCount, pooled }) {
  const byName = (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  let slots = [...trackers.slots.values()].sort(byName)
  const worstFirst = (by !== undefined && by.length > 1) || top !== undefined
  if (worstFirst) {
    const key = new Map(slots.map((s) => [s, [s.tracker.remainingFraction, s.tracker.burnRate]]))
    slots.sort((a, b) => key.get(a)[0] - key.get(b)[0] || key.get(b)[1] - key.get(a)[1] || byName(a, b))
  }
  const all = trackerCount ?? slots.length
  if (top !== undefined) slots = slots.slice(0, top)
  const kept = new Set(slots.map((s) => s.name))
  // Concatenated in tracker order, then a stable sort by time: ties keep tracker order,
  // and each tracker's own order (a status change before the alerts of the same instant).
  const timeline = slots
    .flatMap((slot) => slot.timeline.map((e) => ({ ...e, tracker: slot.name })))
    .sort((a, b) => a.at - b.at)
    .map(({ at, tracker, ...rest }) => ({ at: iso(at), tracker, ...rest }))
  return {
    input: input === '-' ? 'stdin' : input,
    format,
    lines,
    events,
    badLineCount: bad.count,
    badLines: bad.first,
    from: iso(first),
    to: iso(end),
    durationMs: end - first,
    byType: trackers.byType,
    ...(by !== undefined ? { by } : {}),
    ...(worstFirst ? { order: 'worst first', trackerCount: all } : {}),
    trackers: slots.map((slot) => trackerSummary(slot, first, end)),
    timeline,
    advice: keptAdvice(baseline.advice(end - first, pooled), top === undefined ? null : kept),
  }
}

// The advice for the trackers kept by `top` only (all of them without it).
function keptAdvice(advice, kept) {
  if (kept === null) return advice
  return { ...advice, rows: advice.rows.filter((r) => kept.has(r.type) || r.type === '(all)') }
}

module.exports = { summarize, timeInStatus, iso }
