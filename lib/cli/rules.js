'use strict'
// `captcha-budget rules`: Prometheus recording and alerting rules for one SLO,
// judged across every worker that exposes tracker.metrics({ name }). The alert
// policy is the tracker's own (default or --alerts), checked by the tracker.
const fs = require('node:fs')
const { UsageError, parseTarget, parseCount, parseDurationArg, parseAlerts } = require('../cli-values')
const { promDuration } = require('../duration')

const BAD_INPUT = 2

function register(program) {
  program
    .command('rules')
    .description('write Prometheus recording rules and multiwindow burn-rate alerts for one SLO, fleet-wide (exit 2 on bad input)')
    .option('--name <name>', 'the name label of the workers: tracker.metrics({ name }) (required)')
    .option('--target <rate>', 'the SLO target, as targetRate: e.g. 0.95 or 95%, below 1 (required)')
    .option('--window <duration>', 'the SLO period, as windowMs: e.g. 30d, 24h, 90m (required)')
    .option('--alerts <spec>', "alert pairs: 'default' (the tracker's default policy), 'none', inline JSON like config.alerts, or a JSON file")
    .option('--min-events <n>', 'as config.minEvents: no alert while the period holds fewer solves', '0')
    .option('--resolution <duration>', 'as config.resolutionMs, if the workers set it: alert windows are rounded to it')
    .option('--scrape-interval <duration>', 'warn about alert windows (long or short) shorter than 4 scrape intervals', '15s')
    .option('-o, --output <file>', 'write the rules to this file instead of stdout')
    // Usage errors (unknown option, missing value) exit 2 like any other bad input.
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : BAD_INPUT))
    .action((options) => {
      process.exitCode = rules(options)
    })
}

/** The SLO described by the command-line options, checked; throws a UsageError. */
function sloOf(options) {
  for (const flag of ['name', 'target', 'window']) {
    if (options[flag] === undefined) throw new UsageError(`--${flag} is required`)
  }
  if (options.name === '') throw new UsageError('--name must not be empty')
  const targetRate = parseTarget(options.target, '--target')
  if (targetRate === 1) throw new UsageError(`--target must be below 1 for rules: a 100% target leaves no error budget to burn, got '${options.target}'`)
  const slo = {
    name: options.name,
    targetRate,
    windowMs: parseDurationArg(options.window, '--window'),
    minEvents: parseCount(options.minEvents, '--min-events'),
  }
  const alerts = parseAlerts(options.alerts)
  if (alerts !== undefined) slo.alerts = alerts
  if (options.resolution !== undefined) slo.resolutionMs = parseDurationArg(options.resolution, '--resolution')
  return slo
}

/** Runs the command; returns the exit code (0, or 2 on bad input). */
function rules(options) {
  // Required here, not at the top: the CLI's other commands need no addon.
  const { rulesAndPolicy, WHERE } = require('../rules.js')
  let text
  let policy
  let scrapeMs
  try {
    const slo = sloOf(options)
    scrapeMs = parseDurationArg(options.scrapeInterval, '--scrape-interval')
    try {
      ;({ text, policy } = rulesAndPolicy(slo))
    } catch (err) {
      // The library names the fields slo.<field>; each flag sets the field of its name.
      if (typeof err?.message !== 'string' || !err.message.startsWith(WHERE)) throw err
      throw new UsageError(`invalid SLO: ${err.message.slice(WHERE.length)}`)
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    console.error(`captcha-budget rules: ${err.message}`)
    return BAD_INPUT
  }
  for (const pair of policy) {
    // Both windows of a pair: rate() over either is noisy or empty below 4 scrapes.
    const short = [...new Set([pair.longWindowMs, pair.shortWindowMs])].filter((ms) => ms < 4 * scrapeMs)
    if (short.length > 0) {
      const [windows, are, them] = short.length === 1 ? ['window', 'is', 'it'] : ['windows', 'are', 'them']
      console.error(
        `captcha-budget rules: warning: the ${short.map(promDuration).join(' and ')} ${windows} of '${pair.name}' ${are} shorter than ` +
          `4 scrape intervals (${promDuration(scrapeMs)}): rate() over ${them} is noisy or empty; use a longer --window or --alerts with longer windows`,
      )
    }
  }
  if (!options.output) {
    process.stdout.write(text)
    return 0
  }
  try {
    fs.writeFileSync(options.output, text)
  } catch (err) {
    // Node's message ("ENOENT: no such file or directory, open '…'") does not say which option.
    const why = err.code ? `${err.message.replace(/^\w+: /, '').replace(/, \w+ '.*'$/s, '')} (${err.code})` : err.message
    console.error(`captcha-budget rules: cannot write --output ${options.output}: ${why}`)
    return BAD_INPUT
  }
  return 0
}

module.exports = { register, rules }
