'use strict'
// `captcha-budget dashboard`: a Grafana dashboard (JSON) for the rules of
// `captcha-budget rules`, the SLO chosen in a variable (lib/prometheus/dashboard.js).
const cliValues = require('../values.js')

const BAD_INPUT = 2

function register(program) {
  const command = program
    .command('dashboard')
    .description('write a Grafana dashboard (JSON) for the SLOs of `captcha-budget rules`, the SLO as a variable (exit 2 on bad input)')
    .option('--title <title>', 'the dashboard title', 'CAPTCHA error budgets')
    .option('--uid <uid>', "the dashboard uid (Grafana's: at most 40 of A-Z a-z 0-9 _ -)", 'captcha-error-budget')
    .option('--slo <id>', 'the SLO selected when the dashboard opens')
    .option('-o, --output <file>', 'write the dashboard to this file instead of stdout')
    .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : BAD_INPUT))
    .action((options) => {
      process.exitCode = dashboard(options)
    })
  // A single-value flag given twice is a usage error, not the last one silently.
  cliValues.onceEach(command)
}

/** Runs the command; returns the exit code (0, or 2 on bad input). */
function dashboard(options) {
  // Required here, not at the top: the CLI loads every command's module; only this one needs the dashboard.
  const { grafanaDashboard } = require('../../prometheus/dashboard.js')
  let json
  try {
    json = `${JSON.stringify(grafanaDashboard({ title: options.title, uid: options.uid, slo: options.slo }), null, 2)}\n`
  } catch (err) {
    if (err?.code !== 'ERR_INVALID_ARG_TYPE' && err?.code !== 'ERR_INVALID_ARG_VALUE') throw err
    console.error(`captcha-budget dashboard: ${err.message.replace(/^grafanaDashboard\(options\): options\.(\w+)/, '--$1')}`)
    return BAD_INPUT
  }
  return cliValues.writeOutput('dashboard', options.output, json)
}

module.exports = { register, dashboard }
