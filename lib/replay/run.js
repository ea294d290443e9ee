'use strict'
// The replay itself: streams the log's events into manual-clock trackers (one,
// or one per type), sampling them for the chart and counting the baseline,
// then waits for the listeners and summarises.
const { readLog } = require('./reader')
const { ReplayTrackers } = require('./trackers')
const { Series } = require('./series')
const { Baseline } = require('./baseline')
const { summarize } = require('./summary')
const { UsageError } = require('../cli-values')
const { DEFAULTS } = require('./options')

/** What lines without a type are called. */
const UNTYPED = 'untyped'

/** Bad input met with `strict`: the first bad line. */
class BadLineError extends Error {
  constructor({ line, message }) {
    super(`line ${line}: ${message}`)
    this.name = 'BadLineError'
    this.code = 'ERR_BAD_LINE'
    this.line = line
  }
}

/**
 * The tracker config for a tracker name, from the per-name and default values.
 * @returns {(name: string) => object}
 */
function settings({ targets, windows, alerts, minEvents, hysteresis }) {
  return (name) => {
    const config = {
      targetRate: targets.byName.get(name) ?? targets.fallback ?? DEFAULTS.targetRate,
      windowMs: windows.byName.get(name) ?? windows.fallback ?? DEFAULTS.windowMs,
      minEvents: minEvents ?? DEFAULTS.minEvents,
    }
    if (alerts !== undefined) config.alerts = alerts
    if (hysteresis) config.hysteresis = hysteresis
    return config
  }
}

/**
 * Replays a solve log. Options: `input` (path or '-'), `format`, `fields`,
 * `byType`, `targets` / `windows` (`{ fallback, byName: Map }`), `alerts`,
 * `minEvents`, `strict`, and the callbacks `onBadLine(bad)`, `onProgress({ bytes, lines })`.
 * Resolves to the summary (see summary.js) plus `series` for the chart.
 */
async function replay(options) {
  const { byType = false, strict = false, onBadLine = () => {}, onProgress = () => {} } = options
  const targets = options.targets ?? { byName: new Map() }
  const windows = options.windows ?? { byName: new Map() }
  if (!byType && (targets.byName.size > 0 || windows.byName.size > 0)) {
    throw new UsageError('per-type --target or --window (name=value) needs --by type')
  }
  const settingsFor = settings({ targets, windows, alerts: options.alerts, minEvents: options.minEvents, hysteresis: options.hysteresis })
  checkSettings(settingsFor, [...targets.byName.keys(), ...windows.byName.keys(), '(default)'])

  const trackers = new ReplayTrackers({ byType, settingsFor })
  const series = new Series(trackers)
  const baseline = new Baseline()
  const bad = { count: 0, first: [] }
  let format = options.format
  let lines = 0
  let events = 0
  let end = -Infinity
  let first = Infinity
  try {
    for await (const batch of readLog({ input: options.input, format: options.format, fields: options.fields })) {
      format = batch.format
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
        const types = batch.types.map((t) => (t === '' ? UNTYPED : t))
        const slots = types.map((t) => trackers.slotFor(t))
        const counts = types.map((t) => baseline.counts(t))
        // The chart starts at the first line; the summary's span at the earliest event.
        if (series.start === null) series.begin(ts[0])
        // The hot loop: a few array reads, one record() and a counter per event.
        for (let i = 0; i < n; i++) {
          const t = ts[i]
          if (t > end) {
            if (t >= series.next) series.sampleUpTo(t)
            end = t
          }
          if (t < first) first = t
          const k = typeIndex[i]
          const good = ok[i] === 1
          const slot = slots[k]
          slot.tracker.record(good, t)
          slot.events++
          counts[k].add(t, good)
          if (!good) slot.checkWorst(end)
        }
        events += n
      }
      onProgress({ bytes: batch.bytes, lines })
    }
    if (events === 0) throw new UsageError(`nothing to replay: no valid event in ${lines} line(s)`)
    series.finish(end)
    await trackers.settle()
    const summary = summarize({ input: options.input, format, lines, events, bad, end, first, trackers, baseline })
    return Object.assign(summary, { series })
  } finally {
    trackers.close()
  }
}

// Every configured tracker must be valid before the replay starts, not at its first event.
function checkSettings(settingsFor, names) {
  const { ErrorBudgetTracker } = require('../tracker.js')
  for (const name of names) {
    try {
      new ErrorBudgetTracker({ ...settingsFor(name), clock: 'manual' }).close()
    } catch (err) {
      const which = name === '(default)' ? '' : ` for '${name}'`
      throw new UsageError(`invalid tracker settings${which}: ${err.message}`)
    }
  }
}

module.exports = { replay, BadLineError, UNTYPED, DEFAULTS }
