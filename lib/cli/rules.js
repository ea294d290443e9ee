'use strict'
// `captcha-budget rules`: Prometheus recording and alerting rules for one SLO,
// judged across every worker that exposes tracker.metrics({ name }). The alert
// policy is the tracker's own (default or --alerts), checked by the tracker.
const fs = require('node:fs')

const BAD_INPUT = 2

function register(program) {
  program
    .command('rules')
    .description('write Prometheus recording rules and multiwindow burn-rate alerts for one SLO, fleet-wide (exit 2 on bad input)')
    .option('--name <name>', 'the name label of the workers: tracker.metrics({ name }) (required)')
    .option('--target <ratio>', 'the SLO target, as targetRate: e.g. 0.95 (required)')
    .option('--window <duration>', 'the SLO period, as windowMs: e.g. 30d, 24h, 90m (required)')
    .option('--alerts <json|file>', 'alert pairs in the shape of config.alerts, inline JSON or a file (default: the tracker default policy)')
    .option('--min-events <n>', 'as config.minEvents: no alert while the period holds fewer solves', '0')
    .option('--resolution <duration>', 'as config.resolutionMs, if the workers set it: alert windows are rounded to it')
    .option('--scrape-interval <duration>', 'warn about alert windows shorter than 4 scrape intervals', '15s')
    .option('-o, --output <file>', 'write the rules to this file instead of stdout')
    // Usage errors (unknown option, missing value) exit 2 like any other bad input.
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : BAD_INPUT))
    .action((options) => {
      process.exitCode = rules(options)
    })
}

function usage(message) {
  return Object.assign(new Error(message), { usage: true })
}

function parseAlerts(text) {
  let json = text
  if (!text.trimStart().startsWith('[')) {
    try {
      json = fs.readFileSync(text, 'utf8')
    } catch (err) {
      throw usage(`--alerts: neither inline JSON (starting with '[') nor a readable file: ${err.message}`)
    }
  }
  try {
    return JSON.parse(json)
  } catch (err) {
    throw usage(`--alerts: not valid JSON: ${err.message}`)
  }
}

/** The SLO described by the command-line options, checked; throws a usage error. */
function sloOf(options, parseDuration) {
  const duration = (flag, text) => {
    try {
      return parseDuration(text, flag)
    } catch (err) {
      throw usage(err.message)
    }
  }
  for (const flag of ['name', 'target', 'window']) {
    if (options[flag] === undefined) throw usage(`--${flag} is required`)
  }
  if (options.name === '') throw usage('--name must not be empty')
  const targetRate = /^(0|[1-9]\d*)?\.\d+$|^0$|^1$/.test(options.target) ? Number(options.target) : NaN
  if (!(targetRate > 0 && targetRate < 1)) {
    throw usage(`--target must be a number in (0, 1) such as 0.95 (a 100% target has no budget), got '${options.target}'`)
  }
  if (!/^\d+$/.test(options.minEvents)) throw usage(`--min-events must be a non-negative integer, got '${options.minEvents}'`)
  const slo = { name: options.name, targetRate, windowMs: duration('--window', options.window), minEvents: Number(options.minEvents) }
  if (options.alerts !== undefined) slo.alerts = parseAlerts(options.alerts)
  if (options.resolution !== undefined) slo.resolutionMs = duration('--resolution', options.resolution)
  return slo
}

/** Runs the command; returns the exit code (0, or 2 on bad input). */
function rules(options) {
  // Required here, not at the top: the CLI's other commands need no addon.
  const { parseDuration, policyOf, prometheusRules } = require('../rules.js')
  const { formatDuration } = require('../metrics.js')
  let text
  let policy
  let scrapeMs
  try {
    const slo = sloOf(options, parseDuration)
    scrapeMs = parseDuration(options.scrapeInterval, '--scrape-interval')
    try {
      policy = policyOf(slo)
      text = prometheusRules(slo)
    } catch (err) {
      throw usage(`invalid SLO: ${err.message}`)
    }
  } catch (err) {
    if (!err.usage && !(err instanceof RangeError)) throw err
    console.error(`captcha-budget rules: ${err.message}`)
    return BAD_INPUT
  }
  for (const pair of policy) {
    const ms = pair.shortWindowMs
    if (ms < 4 * scrapeMs) {
      console.error(
        `captcha-budget rules: warning: the ${formatDuration(ms)} window of '${pair.name}' is shorter than 4 scrape intervals ` +
          `(${formatDuration(scrapeMs)}): rate() over it is noisy or empty; use a longer --window or --alerts with longer windows`,
      )
    }
  }
  if (options.output) fs.writeFileSync(options.output, text)
  else process.stdout.write(text)
  return 0
}

module.exports = { register, rules }
