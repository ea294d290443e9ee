'use strict'
// Command-line values shared by the subcommands (`rules`, `replay`), read one way
// for both: a target rate, a count, a duration, an alert policy. Every problem
// is a UsageError, which a command turns into exit code 2.
const { parseDuration } = require('../util/duration.js')
const { readFileLimited } = require('../util/read-limited.js')

/** The most bytes an --alerts file may hold (a policy is a few pairs). */
const MAX_ALERTS_BYTES = 1024 * 1024
const fs = require('node:fs')
const { UsageError } = require('../util/errors.js')

const DECIMAL = /^(\d+(\.\d+)?|\.\d+)$/

/**
 * A target rate in (0, 1]: a decimal (`0.95`, `.95`, `1`) or a percentage
 * (`95%`, `97.5%`). Exponents, signs and anything else are refused.
 * @param {string} text
 * @param {string} what names the value in the error (`--target`)
 * @returns {number}
 */
function parseTarget(text, what) {
  const percent = text.endsWith('%')
  const digits = percent ? text.slice(0, -1) : text
  const number = DECIMAL.test(digits) ? Number(digits) : NaN
  const rate = percent ? number / 100 : number
  if (!(rate > 0 && rate <= 1)) throw new UsageError(`${what} must be a rate in (0, 1] such as 0.95 or 95%, got '${text}'`)
  return rate
}

/** A status hysteresis in [0, 1) (`0.1`), as config.hysteresis. */
function parseHysteresis(text, what) {
  const number = DECIMAL.test(text) ? Number(text) : NaN
  if (!(number >= 0 && number < 1)) throw new UsageError(`${what} must be a fraction in [0, 1) such as 0.1, got '${text}'`)
  return number
}

/** A non-negative integer (`0`, `100`). */
function parseCount(text, what) {
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`${what} must be a non-negative integer, got '${text}'`)
  }
  return Number(text)
}

/** A duration as `lib/util/duration.js` reads it (`30d`, `24h`, `1h30m`); a bad one is a UsageError. */
function parseDurationArg(text, what) {
  try {
    return parseDuration(text, what)
  } catch (err) {
    throw new UsageError(err.message)
  }
}

/**
 * `--alerts`: `default` (the tracker's default policy; returns undefined),
 * `none` (no alerts; `[]`), an inline JSON array of alert pairs in the shape of
 * config.alerts (starting with `[`), or a JSON file holding one. The pairs
 * themselves are checked by the tracker.
 * @param {string | undefined} text
 * @returns {object[] | undefined}
 */
function parseAlerts(text) {
  if (text === undefined || text === 'default') return undefined
  if (text === 'none') return []
  let json = text
  if (!text.trimStart().startsWith('[')) {
    try {
      json = readFileLimited(text, { maxBytes: MAX_ALERTS_BYTES, what: 'an alert policy', stdin: false })
    } catch (err) {
      // fs's messages name the file; ours say what is wrong with it.
      const named = err.code === undefined ? `${text}: ` : ''
      throw new UsageError(`--alerts: not 'default', 'none', inline JSON (starting with '[') or a readable file: ${named}${err.message}`)
    }
  }
  let alerts
  try {
    alerts = JSON.parse(json)
  } catch (err) {
    throw new UsageError(`--alerts: not valid JSON: ${err.message}`)
  }
  if (!Array.isArray(alerts)) throw new UsageError('--alerts: expected a JSON array of alert pairs')
  return alerts
}

/**
 * Writes a command's `text` to stdout, or to `--output <file>`; returns the exit
 * code: 0, or 2 with a message naming the path when the file cannot be written.
 */
function writeOutput(command, file, text) {
  if (!file) {
    process.stdout.write(text)
    return 0
  }
  try {
    fs.writeFileSync(file, text)
  } catch (err) {
    // Node's message ("ENOENT: no such file or directory, open '…'") does not say which option.
    const why = err.code ? `${err.message.replace(/^\w+: /, '').replace(/, \w+ '.*'$/s, '')} (${err.code})` : err.message
    console.error(`captcha-budget ${command}: cannot write --output ${file}: ${why}`)
    return 2
  }
  return 0
}

/**
 * Refuses a single-value option given twice (`--target 0.9 --target 0.95`):
 * commander would keep the last one silently. A usage error naming the option,
 * exit 2 (the command's exitOverride). Options that collect repeats (their own
 * argParser, e.g. replay's `--target type=rate`) and flags are left as they are.
 * Call it once every option of `command` is declared.
 * @param {import('commander').Command} command
 */
function onceEach(command) {
  for (const option of command.options) {
    if (!(option.required || option.optional) || option.variadic || option.parseArg) continue
    const key = option.attributeName()
    option.argParser((value) => {
      // The values are not quoted: a URL may hold credentials (--prometheus, --redis).
      if (command.getOptionValueSource(key) === 'cli')
        command.error(`error: option '${option.flags}' given twice: give it once`, { exitCode: 2, code: 'captcha-budget.repeatedOption' })
      return value
    })
  }
  return command
}

module.exports = { writeOutput, parseTarget, parseHysteresis, parseCount, parseDurationArg, parseAlerts, onceEach, MAX_ALERTS_BYTES }
