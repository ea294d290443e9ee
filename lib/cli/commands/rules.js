'use strict'
// `captcha-budget rules`: Prometheus recording and alerting rules for SLOs,
// judged across every worker that exposes tracker.metrics({ name }): one SLO
// from the flags, or many from an OpenSLO / Sloth file (--spec).
const { readFileLimited } = require('../../util/read-limited.js')
const { writeOutput, parseTarget, parseCount, parseDurationArg, parseAlerts, onceEach } = require('../values.js')
const { UsageError, SpecError } = require('../../util/errors.js')
const { printable } = require('../../util/errors.js')

const BAD_INPUT = 2
/** The most bytes an SLO spec may hold: ample for hundreds of SLOs, and YAML parses it in seconds. */
const MAX_SPEC_BYTES = 4 * 1024 * 1024
// The flags that describe one SLO, which --spec replaces.
const SLO_FLAGS = ['name', 'target', 'slo']

function register(program) {
  const command = program
    .command('rules')
    .description('write Prometheus recording rules and multiwindow burn-rate alerts for SLOs, fleet-wide (exit 2 on bad input)')
    .option('--spec <file>', "OpenSLO, Sloth or Pyrra SLO files (YAML, '-' for stdin), instead of --name/--target: docs/slo-ecosystem.md")
    .option('--name <name>', 'the name label of the workers: tracker.metrics({ name })')
    .option('--target <rate>', 'the SLO target, as targetRate: e.g. 0.95 or 95%, below 1')
    .option('--window <duration>', "the SLO period, as windowMs: e.g. 30d, 24h, 90m (with --spec: the period of Sloth's SLOs, default 30d)")
    .option('--grouping <labels>', "judge the SLO per label set, e.g. 'type,site' (a BudgetFamily's labelNames): sum by these labels, alerts per set")
    .option('--slo <id>', 'the SLO identity label (default <name>-<target %>-<window>, e.g. turnstile-95-30d)')
    .option('--alerts <spec>', "alert pairs: 'default' (the tracker's default policy), 'none', inline JSON like config.alerts, or a JSON file")
    .option('--min-events <n>', 'as config.minEvents: no alert while the period holds fewer solves', '0')
    .option('--min-failures <n>', "no pair fires with fewer failures in its long window (default: the policy's, as the tracker's)")
    .option('--resolution <duration>', 'as config.resolutionMs, if the workers set it: custom alert windows are rounded to it')
    .option('--scrape-interval <duration>', 'no alert window shorter than 4 scrape intervals (default windows are lengthened, custom ones refused)', '15s')
    .option(
      '--evaluation-interval <duration>',
      "the rule group's interval: the length of the recorded pieces that the windows are summed from when one is 1 h or more",
      '1m',
    )
    .option(
      '--period-rules <mode>',
      "'exact' (the period summed from the pieces; the default) or 'optimised' (sums of recorded short-window increases; the default for a Pyrra spec with performanceOverAccuracy: true)",
    )
    .option('--format <format>', "'rules' (a rule file) or 'prometheus-operator' (a PrometheusRule object)", 'rules')
    .option('--namespace <namespace>', "metadata.namespace of the PrometheusRule (default: the spec's Kubernetes namespace)")
    .option('--compat <tool>', "'sloth': also write Sloth's series and info names (slo:sli_error:ratio_rate5m, sloth_slo_info, …) for its dashboards")
    .option('-o, --output <file>', 'write the rules to this file instead of stdout')
    // Usage errors (unknown option, missing value) exit 2 like any other bad input.
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : BAD_INPUT))
    .action((options) => {
      process.exitCode = rules(options)
    })
  // A single-value flag given twice is a usage error, not the last one silently.
  onceEach(command)
}

/** The SLO described by the command-line options, checked; throws a UsageError. */
function sloOf(options) {
  for (const flag of ['name', 'target', 'window']) {
    if (options[flag] === undefined) throw new UsageError(`--${flag} is required (or --spec <file>)`)
  }
  if (options.name === '') throw new UsageError('--name must not be empty')
  const targetRate = parseTarget(options.target, '--target')
  if (targetRate === 1) throw new UsageError(`--target must be below 1 for rules: a 100% target leaves no error budget to burn, got '${options.target}'`)
  const slo = { name: options.name, targetRate, windowMs: parseDurationArg(options.window, '--window') }
  if (options.slo !== undefined) slo.id = options.slo
  return slo
}

/** The SLOs of --spec, each with where it came from. */
function specSlos(options) {
  for (const flag of SLO_FLAGS) {
    if (options[flag] !== undefined) throw new UsageError(`--${flag} cannot be given with --spec (the file describes the SLOs)`)
  }
  // Required here, not at the top: only --spec reads OpenSLO / Sloth files (and loads yaml).
  const { readSpec } = require('../../slo/spec.js')
  let text
  try {
    text = readFileLimited(options.spec, { maxBytes: MAX_SPEC_BYTES, what: 'an SLO spec' })
  } catch (err) {
    throw new UsageError(`--spec: cannot read ${options.spec}: ${err.message}`)
  }
  const windowMs = options.window === undefined ? undefined : parseDurationArg(options.window, '--window')
  try {
    return readSpec(text, { file: options.spec, windowMs })
  } catch (err) {
    if (err instanceof SpecError) throw new UsageError(err.message)
    throw err
  }
}

/** Runs the command; returns the exit code (0, or 2 on bad input). */
function rules(options) {
  // Required here, not at the top: the CLI's other commands need no addon.
  const { rulesAndPolicy, WHERE } = require('../../prometheus/rules.js')
  let text
  try {
    const { slos, where, metadata } = options.spec !== undefined ? specSlos(options) : { slos: [sloOf(options)], where: [null] }
    const shared = {
      minEvents: parseCount(options.minEvents, '--min-events'),
      ...(options.minFailures !== undefined ? { minFailures: parseCount(options.minFailures, '--min-failures') } : {}),
    }
    const alerts = parseAlerts(options.alerts)
    if (alerts !== undefined) shared.alerts = alerts
    if (options.resolution !== undefined) shared.resolutionMs = parseDurationArg(options.resolution, '--resolution')
    if (options.grouping !== undefined) {
      shared.grouping = options.grouping.split(',').map((l) => l.trim())
      if (shared.grouping.some((l) => l === ''))
        throw new UsageError(`--grouping must list label names separated by commas, e.g. 'type,site', got '${options.grouping}'`)
    }
    const ruleOptions = {
      scrapeIntervalMs: parseDurationArg(options.scrapeInterval, '--scrape-interval'),
      evaluationIntervalMs: parseDurationArg(options.evaluationInterval, '--evaluation-interval'),
      periodRules: options.periodRules ?? metadata?.periodRules ?? 'exact',
      format: options.format,
    }
    for (const [flag, value, choices] of [
      ['--period-rules', ruleOptions.periodRules, ['exact', 'optimised']],
      ['--format', options.format, ['rules', 'prometheus-operator']],
    ]) {
      if (!choices.includes(value)) throw new UsageError(`${flag} must be one of ${choices.join(', ')}, got '${value}'`)
    }
    for (const [flag, ms] of [
      ['--scrape-interval', ruleOptions.scrapeIntervalMs],
      ['--evaluation-interval', ruleOptions.evaluationIntervalMs],
    ]) {
      if (ms % 1000 !== 0)
        throw new UsageError(
          `${flag} must be a whole number of seconds, got '${flag === '--scrape-interval' ? options.scrapeInterval : options.evaluationInterval}'`,
        )
    }
    if (options.namespace !== undefined) ruleOptions.namespace = options.namespace
    else if (metadata?.namespace !== undefined) ruleOptions.namespace = metadata.namespace
    if (options.compat !== undefined) {
      if (options.compat !== 'sloth') throw new UsageError(`--compat must be one of sloth, got '${options.compat}'`)
      ruleOptions.compat = options.compat
    }
    // The PrometheusRule is named after the spec, and keeps its Kubernetes labels (what a ruleSelector matches).
    if (metadata !== undefined) ruleOptions.metadata = { ...(metadata.name ? { name: metadata.name } : {}), labels: metadata.labels }
    const full = slos.map((slo) => ({ ...shared, ...slo }))
    // Each SLO alone first, so that an error says which document it came from.
    full.forEach((slo, i) => {
      try {
        rulesAndPolicy(slo, ruleOptions)
      } catch (err) {
        // The library names the fields slo.<field>; each flag sets the field of its name.
        if (typeof err?.message !== 'string' || !err.message.startsWith('prometheusRules(slo')) throw err
        const detail = err.message.startsWith(WHERE) ? err.message.slice(WHERE.length) : err.message
        throw new UsageError(where[i] ? `${where[i]}: invalid SLO '${printable(slo.id)}': ${detail}` : `invalid SLO: ${detail}`)
      }
    })
    try {
      ;({ text } = rulesAndPolicy(full, ruleOptions))
    } catch (err) {
      if (typeof err?.message !== 'string' || !err.message.startsWith(WHERE)) throw err
      throw new UsageError(err.message.slice(WHERE.length))
    }
  } catch (err) {
    if (!(err instanceof UsageError)) throw err
    console.error(`captcha-budget rules: ${err.message}`)
    return BAD_INPUT
  }
  return writeOutput('rules', options.output, text)
}

module.exports = { register, rules, MAX_SPEC_BYTES }
