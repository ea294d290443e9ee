'use strict'
// `captcha-budget replay [file]`: replays a solve log (JSON Lines or CSV, a file
// or stdin) through manual-clock trackers — one, or one per CAPTCHA type — and
// prints every status change and alert, a summary per tracker, the measured
// baseline with a recommended SLO and window, and optionally an SVG chart.
const fs = require('node:fs')
const path = require('node:path')
const { Option } = require('commander')
const { DEFAULTS } = require('../replay/options.js')
const { humanDuration } = require('../../util/duration.js')
const { printable, UsageError, BadLineError } = require('../../util/errors.js')
const cliValues = require('../values.js')

/** Exit codes of `replay`, documented in the README. */
const EXIT = { ok: 0, badInput: 2 }
/** A message on stderr, with what a terminal would act on escaped (a bad line or a --by field quotes the log or the caller). */
const say = (message) => console.error(printable(`captcha-budget replay: ${message}`))
/** Bad lines printed one by one on stderr; the rest are counted. */
const SHOWN_BAD_LINES = 20

const collect = (value, previous) => previous.concat(value)

function register(program) {
  const command = program
    .command('replay')
    .description('replay a solve log through error-budget trackers: transitions, alerts, summary, baseline advice, chart (exit 2 on bad input)')
    .argument('[file]', "a JSON Lines or CSV solve log; '-' or nothing for stdin")
    .option('--format <format>', 'jsonl or csv (default: from the file extension, else from the first line)')
    .option('--by <fields>', "one tracker per value of a field, or per combination of several: 'type', 'type,site' (type is --type-field)")
    .option('--top <n>', 'summarise only the n worst trackers, worst first (least budget left, then highest burn rate)')
    // Repeatable: the value collected is a list, so the help states the default the list falls back to.
    .addOption(
      new Option('--target <rate>', 'SLO target, e.g. 0.95 or 95%; repeat with type=rate for one type (e.g. turnstile=0.97)')
        .argParser(collect)
        .default([], String(DEFAULTS.targetRate)),
    )
    .addOption(
      new Option('--window <duration>', 'SLO window, e.g. 24h, 12h, 7d; repeat with type=duration for one type')
        .argParser(collect)
        .default([], humanDuration(DEFAULTS.windowMs)),
    )
    .option('--alerts <spec>', "alert pairs: 'default' (derived from the window), 'none', inline JSON like config.alerts, or a JSON file")
    .option('--min-events <n>', 'no judgement below this many solves in the window (as config.minEvents)', '100')
    .option('--hysteresis <fraction>', 'status hysteresis in [0, 1) (as config.hysteresis): better only past a threshold by this much', '0')
    .option('--throttle', "also show what guard()'s throttle (whenExhausted: 'throttle', its defaults) would have admitted and refused")
    .option('--ts-field <name>', 'timestamp field: epoch ms or ISO 8601 (no offset means UTC)', 'ts')
    .option('--ok-field <name>', 'outcome field: true/false or 1/0', 'ok')
    .option('--type-field <name>', 'CAPTCHA type field (optional in each line)', 'type')
    .option(
      '--verdict-field <name>',
      "the site's verdict field (optional in each line): 'rejected' (any case) turns the line's success into a failure, 'accepted' leaves it",
    )
    .option('--strict', 'stop at the first bad line with exit code 2 (default: report it and skip it)')
    .option('--json', 'print the result as JSON')
    .option('--chart <file>', 'write an SVG chart of budget left and burn rate over time')
    .option('--no-progress', 'no progress bar on stderr (shown only when stderr is a terminal)')
    // Usage errors (unknown option, missing value) exit 2 like any other bad input.
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : EXIT.badInput))
    .action(async (file, options) => {
      process.exitCode = await replayCommand(file, options)
    })
  // A single-value flag given twice is a usage error, not the last one silently (--target and --window collect theirs).
  cliValues.onceEach(command)
}

/** Runs the command; resolves to its exit code. */
async function replayCommand(file, options) {
  // Required here, not at the top: the CLI's other commands need no addon.
  const { perName, checkFields } = require('../replay/options.js')
  const { replay } = require('../replay/run.js')
  const { progressBar } = require('../replay/progress.js')
  const input = file ?? '-'
  const fail = (message) => {
    say(message)
    return EXIT.badInput
  }
  let bar = { update() {}, stop() {} }
  let shown = 0
  try {
    if (input === '-' && process.stdin.isTTY) throw new UsageError('no input: give a log file, or pipe one to stdin')
    const fields = checkFields({ ts: options.tsField, ok: options.okField, type: options.typeField })
    const by = options.by === undefined ? undefined : parseBy(options.by, fields, UsageError)
    const settings = {
      input,
      format: options.format,
      fields,
      verdictField: options.verdictField,
      by,
      byFields: by && by.map((f) => (f === 'type' ? fields.type : f)),
      top: options.top === undefined ? undefined : parseTop(options.top, cliValues),
      targets: perName(options.target, cliValues.parseTarget, '--target'),
      windows: perName(options.window, cliValues.parseDurationArg, '--window'),
      alerts: cliValues.parseAlerts(options.alerts),
      minEvents: cliValues.parseCount(options.minEvents, '--min-events'),
      hysteresis: cliValues.parseHysteresis(options.hysteresis, '--hysteresis'),
      throttle: Boolean(options.throttle),
      chart: Boolean(options.chart),
      strict: Boolean(options.strict),
      onBadLine({ line, message }) {
        if (++shown <= SHOWN_BAD_LINES) say(`line ${line}: ${message} (skipped)`)
      },
    }
    bar = progressBar(input, options.progress)
    settings.onProgress = bar.update
    const result = await quietPinned(() => replay(settings))
    bar.stop()
    if (shown > SHOWN_BAD_LINES) {
      say(`… and ${shown - SHOWN_BAD_LINES} more bad lines (skipped; --json lists the first 1000)`)
    }
    const { series, unvalued, warnings, ...summary } = result
    for (const warning of warnings) say(`warning: ${warning}`)
    // A --by field that no line has is most likely a typo too ('type' is --type-field, whose absence shows as 'untyped').
    for (const field of unvalued) {
      if (field !== 'type') say(`warning: --by ${field}: no line has a value for field '${field}' (every solve grouped under an empty one)`)
    }
    // Solves too old for the window when they came count nowhere: said even with --json.
    const { linesList } = require('../replay/text.js')
    for (const t of summary.trackers) {
      if (t.dropped === 0) continue
      const which = summary.byType ? `${t.name}: ` : ''
      say(`warning: ${which}${t.dropped} solves older than the window when they came (dropped, not counted): ${linesList(t.dropped, t.droppedLines)}`)
    }
    // A per-type setting for a type the log never mentions is most likely a typo.
    const seen = new Set(summary.trackers.map((t) => t.name))
    for (const [flag, values] of [
      ['--target', settings.targets],
      ['--window', settings.windows],
    ]) {
      for (const name of values.byName.keys()) {
        const used = seen.has(name) || summary.trackers.some((t) => t.labels && Object.values(t.labels).includes(name))
        if (!used && summary.trackerCount === undefined) {
          say(`warning: ${flag} ${name}=…: no solve of type '${name}' in the log`)
        }
      }
    }
    let chartPath = null
    if (options.chart) {
      // Each output's writer only when asked for (the CLI loads every command's module).
      const { chartSvg } = require('../replay/chart.js')
      chartPath = path.resolve(options.chart)
      fs.writeFileSync(chartPath, chartSvg(summary, series))
    }
    if (options.json) {
      console.log(JSON.stringify({ ...summary, chart: chartPath }, null, 2))
    } else {
      const { render } = require('../replay/text.js') // (as the chart's)
      // The chart's path as typed when it is under the working directory, else absolute.
      const shown = chartPath && (path.relative(process.cwd(), chartPath).startsWith('..') ? chartPath : path.relative(process.cwd(), chartPath))
      console.log(render(summary, shown))
    }
    return EXIT.ok
  } catch (err) {
    bar.stop()
    if (err instanceof UsageError || err instanceof BadLineError) return fail(err.message)
    if (err.code === 'ENOENT' || err.code === 'EACCES' || err.code === 'EISDIR') return fail(err.message)
    throw err
  }
}

/**
 * Runs `fn` without the library's PinnedTrackersWarning: a replay keeps a
 * tracker with listeners per key by design and closes them all at its end, so
 * the warning about trackers left open is for library users, not for it.
 */
async function quietPinned(fn) {
  const emitWarning = process.emitWarning
  process.emitWarning = function (warning, type, ...rest) {
    if (type === 'PinnedTrackersWarning' || type?.type === 'PinnedTrackersWarning') return
    return emitWarning.call(this, warning, type, ...rest)
  }
  try {
    return await fn()
  } finally {
    process.emitWarning = emitWarning
  }
}

/**
 * `--by type,site`: distinct non-empty field names; `type` stands for
 * --type-field. Returns the fields as given.
 */
function parseBy(text, fields, UsageError) {
  const by = text.split(',').map((f) => f.trim())
  if (by.some((f) => f === '')) throw new UsageError(`--by must list field names separated by commas, e.g. 'type,site', got '${text}'`)
  if (new Set(by).size !== by.length) throw new UsageError(`--by names a field twice: '${text}'`)
  for (const f of by) {
    if (f === fields.ts || f === fields.ok) throw new UsageError(`--by ${f}: that is the timestamp or outcome field`)
  }
  return by
}

/** `--top n`: a positive integer (`0` and `-1` get the same message). */
function parseTop(text, cliValues) {
  const n = /^\d+$/.test(text) ? Number(text) : NaN
  if (!(Number.isSafeInteger(n) && n >= 1)) throw new UsageError(`--top must be a positive integer (at least 1), got '${text}'`)
  return n
}

module.exports = { register, replayCommand, EXIT }
