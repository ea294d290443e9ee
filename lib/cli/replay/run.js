'use strict'
// The replay itself: streams the log's events into manual-clock trackers (one,
// or one per type; with `top` over a file, one per key of the `top` worst only),
// sampling them for the chart (only with `chart`) and counting the baseline,
// then waits for the listeners and summarises.
const { ErrorBudgetTracker } = require('../../tracker/tracker.js')
const { readLog } = require('./reader.js')
const { ReplayTrackers } = require('./trackers.js')
const { Series } = require('./series.js')
const { Baseline, TypeCounts } = require('./baseline.js')
const { summarize } = require('./summary.js')
const { UsageError, BadLineError } = require('../../util/errors.js')
const { DEFAULTS } = require('./options.js')
const { GROUP_SEPARATOR } = require('./reader.js')
const { rankKeys, rereadable } = require('./ranking.js')
// Label values in a tracker name escaped as the gate prints them, so that no two label sets share a name.
const { escapeValue } = require('../../util/label-text.js')
const { splitVerdict, VerdictCounts, REJECTED } = require('./verdicts.js')
const { jsonLinesHint } = require('./field-hint.js')

/** What lines without a type are called. */
const UNTYPED = 'untyped'

/**
 * A per-name value for a tracker: its whole name, else (several `--by` fields)
 * the first of its label values that has one (`--target turnstile=0.97` sets
 * every turnstile site).
 */
function byName(map, name, labels) {
  if (map.has(name)) return map.get(name)
  if (labels) for (const value of Object.values(labels)) if (map.has(value)) return map.get(value)
  return undefined
}

/**
 * The tracker config for a tracker name, from the per-name and default values.
 * @returns {(name: string, labels?: Record<string, string>) => object}
 */
function settings({ targets, windows, alerts, minEvents, hysteresis }) {
  return (name, labels) => {
    const config = {
      targetRate: byName(targets.byName, name, labels) ?? targets.fallback ?? DEFAULTS.targetRate,
      windowMs: byName(windows.byName, name, labels) ?? windows.fallback ?? DEFAULTS.windowMs,
      minEvents: minEvents ?? DEFAULTS.minEvents,
      // A line's verdict comes with the line, however late the line is read: it counts
      // wherever the solve is still in the window (reject() refuses it once out of it).
      verdictWindowMs: Number.MAX_SAFE_INTEGER,
    }
    if (alerts !== undefined) config.alerts = alerts
    if (hysteresis) config.hysteresis = hysteresis
    return config
  }
}

/**
 * The tracker name and labels of a parsed type: with several `--by` fields
 * (`by`), `type=turnstile,site=a.example` from the values joined by U+001F.
 * The name keys the tracker: its values are escaped (`type=a\,site\=b,site=`),
 * so two label sets never merge into one tracker.
 */
function grouping(by) {
  if (by === undefined || by.length < 2) return (t) => ({ name: t === '' ? UNTYPED : t, labels: undefined })
  return (t) => {
    const values = t.split(GROUP_SEPARATOR)
    const labels = Object.fromEntries(by.map((field, i) => [field, values[i] ?? '']))
    return { name: by.map((field, i) => `${field}=${escapeValue(values[i] ?? '')}`).join(','), labels }
  }
}

/**
 * Replays a solve log. Options: `input` (path or '-'), `format`, `fields`,
 * `verdictField` (an optional string field: 'rejected', in any case, makes the line's success a
 * failure found later, `tracker.reject()`; anything else leaves it: verdicts.js),
 * `byType` (or `by`: the labels to group by, `['type', 'site']`, and `byFields`
 * the log's field of each, default `by`), `top` (the summary keeps the N worst), `targets` / `windows` (`{ fallback, byName: Map }`), `alerts`,
 * `minEvents`, `strict`, `chart` (sample every tracker for the chart), and the callbacks
 * `onBadLine(bad)`, `onProgress({ bytes, lines })`.
 * Resolves to the summary (see summary.js) plus `series` for the chart (null
 * without `chart`), `unvalued`, the `by` fields that no line gave a value, and
 * `warnings` about the verdict field (never seen, values not known).
 */
async function replay(options) {
  const { strict = false, onBadLine = () => {}, onProgress = () => {} } = options
  const by = options.by
  const byType = by !== undefined || Boolean(options.byType)
  const group = grouping(by)
  // The log's field of each --by label (`type` is fields.type): the first is the parser's type, the rest join it.
  const byFields = options.byFields ?? by
  const grouped = by === undefined ? options.fields : { ...options.fields, type: byFields[0], more: byFields.slice(1) }
  const verdictField = options.verdictField
  if (verdictField !== undefined && [grouped.ts, grouped.ok, grouped.type, ...(grouped.more ?? [])].includes(verdictField)) {
    throw new UsageError(`--verdict-field must differ from the other fields, got ${verdictField}`)
  }
  const fields = verdictField === undefined ? grouped : { ...grouped, more: [...(grouped.more ?? []), verdictField] }
  const targets = options.targets ?? { byName: new Map() }
  const windows = options.windows ?? { byName: new Map() }
  if (!byType && (targets.byName.size > 0 || windows.byName.size > 0)) {
    throw new UsageError('per-type --target or --window (name=value) needs --by type')
  }
  const settingsFor = settings({ targets, windows, alerts: options.alerts, minEvents: options.minEvents, hysteresis: options.hysteresis })
  checkSettings(settingsFor, [...targets.byName.keys(), ...windows.byName.keys(), '(default)'])

  // `top` without a chart over a regular file: trackers only for the `top` worst keys, found
  // beforehand from two numbers per key (ranking.js), so memory is bounded by `top`, not by the keys.
  const open = byType && options.top !== undefined && options.chart !== true ? rereadable(options.input) : null
  const ranked =
    open === null
      ? null
      : await rankKeys({
          input: options.input,
          open,
          format: options.format,
          fields,
          // With a verdict field, each type ends in its verdict: split off, a rejected success ranks as a failure.
          group: verdictField === undefined ? group : (t) => group(splitVerdict(t)[0]),
          rejectedOf: verdictField === undefined ? null : (t) => splitVerdict(t)[1] === REJECTED,
          settingsFor,
          top: options.top,
        })
  // Then the advice's '(all)' row is counted apart, from every key's solves.
  const pooled = ranked === null ? null : new TypeCounts('(all)')
  // `throttle`: also simulate a throttling guard (lib/cli/replay/throttle.js).
  const trackers = new ReplayTrackers({ byType, settingsFor, throttle: options.throttle === true })
  // Only for the chart: sampling every tracker at every step costs trackers × samples in time and memory.
  const series = options.chart === true ? new Series(trackers) : null
  const baseline = new Baseline()
  const bad = { count: 0, first: [] }
  // Which --by fields some line gave a value (a field that none does is most likely a typo).
  const valued = by === undefined ? [] : by.map(() => false)
  // The verdicts seen (a field no line has is most likely a typo too; unknown values are reported).
  const verdicts = verdictField === undefined ? null : new VerdictCounts(verdictField)
  let format = options.format
  let sample = null
  let lines = 0
  let events = 0
  let end = -Infinity
  let first = Infinity
  try {
    for await (const batch of readLog({ input: options.input, format: options.format, fields, stream: open?.() })) {
      format = batch.format
      sample = batch.sample
      lines = batch.lines
      for (const badLine of batch.badLines) {
        if (strict) throw new BadLineError(badLine)
        bad.count++
        if (bad.first.length < 1000) bad.first.push(badLine)
        onBadLine(badLine)
      }
      const { ts, ok, typeIndex } = batch
      const n = ts.length
      if (n > 0) {
        const split = verdicts === null ? null : verdicts.batch(batch.types, typeIndex)
        const batchTypes = split === null ? batch.types : split.map(([t]) => t)
        const rejected = split === null ? null : split.map(([, r]) => r)
        const groups = batchTypes.map(group)
        if (by !== undefined) {
          for (const t of batchTypes) (by.length < 2 ? [t] : t.split(GROUP_SEPARATOR)).forEach((v, i) => (valued[i] ||= v !== ''))
        }
        const types = groups.map((g) => g.name)
        const kept = ranked === null ? null : types.map((name) => ranked.top.has(name))
        const slots = groups.map((g, k) => (kept === null || kept[k] ? trackers.slotFor(g.name, g.labels) : null))
        const counts = types.map((t, k) => (kept === null || kept[k] ? baseline.counts(t) : null))
        // The chart starts at the first line; the summary's span at the earliest event.
        if (series !== null && series.start === null) series.begin(ts[0])
        // The hot loop: a few array reads, one record() and a counter per event.
        for (let i = 0; i < n; i++) {
          const t = ts[i]
          if (t > end) {
            if (series !== null && t >= series.next) series.sampleUpTo(t)
            end = t
          }
          if (t < first) first = t
          const k = typeIndex[i]
          const slot = slots[k]
          const solved = ok[i] === 1
          // The site rejected the solved token: a failure where it was recorded (reject()).
          const rejectedHere = solved && rejected !== null && rejected[k]
          const good = solved && !rejectedHere
          if (pooled !== null) {
            pooled.add(t, good)
            if (slot === null) continue
          }
          slot.tracker.record(solved, t)
          if (rejectedHere) slot.tracker.reject(t)
          // Only a line at least half a window behind can be too old (the replay's buckets are
          // far shorter): the dropped count is read for those only, to name the line.
          if (end - t > slot.halfWindowMs) slot.noteDropped(batch.lineNumbers, i)
          if (slot.throttle !== null) slot.throttle.step(t, good)
          if (t < slot.firstAt) slot.firstAt = t
          slot.events++
          counts[k].add(t, good)
          if (!good) slot.checkWorst(end)
        }
        events += n
      }
      onProgress({ bytes: batch.bytes, lines })
    }
    if (events === 0) {
      // Most often a log whose fields have other names: say which it has, and the options.
      const hint = format === 'jsonl' && sample !== null ? jsonLinesHint(sample, fields) : null
      throw new UsageError(`nothing to replay: no valid event in ${lines} line(s)${hint === null ? '' : `: ${hint}`}`)
    }
    if (series !== null) series.finish(end)
    else trackers.finish(end)
    await trackers.settle()
    const summary = summarize({
      input: options.input,
      format,
      lines,
      events,
      bad,
      end,
      first,
      trackers,
      baseline,
      by,
      top: options.top,
      ...(ranked === null ? {} : { trackerCount: ranked.keyCount, pooled: { days: pooled.days, types: ranked.keyCount } }),
    })
    // `unvalued`: the --by fields no line gave a value; `warnings`: about the verdicts (neither is part of the summary).
    const unvalued = by === undefined ? [] : by.filter((_, i) => !valued[i])
    return Object.assign(summary, { series, unvalued, warnings: verdicts === null ? [] : verdicts.warnings() })
  } finally {
    trackers.close()
  }
}

// Every configured tracker must be valid before the replay starts, not at its first event.
function checkSettings(settingsFor, names) {
  for (const name of names) {
    try {
      new ErrorBudgetTracker({ ...settingsFor(name), clock: 'manual' }).close()
    } catch (err) {
      const which = name === '(default)' ? '' : ` for '${name}'`
      throw new UsageError(`invalid tracker settings${which}: ${err.message}`)
    }
  }
}

module.exports = { replay, UNTYPED, DEFAULTS }
