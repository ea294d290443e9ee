'use strict'
// `captcha-budget gate <snapshot.json>`: the deploy gate. Restores a tracker
// snapshot aged to now, prints its report and answers with the exit code; with
// --prometheus, asks the fleet's Prometheus instead (lib/gate-prometheus.js); with
// --redis, reads the fleet budget in Redis (lib/fleet/gate.js).
const fs = require('node:fs')
const prometheusGate = require('../gate-prometheus.js')

/** Exit codes of `gate`, documented in the README. */
const EXIT = { proceed: 0, badInput: 2, stop: 3 }

function register(program) {
  const command = program
    .command('gate')
    .description('exit 0 when deploys may proceed, 3 when the error budget is exhausted (or critical with --strict), 2 on bad input')
    .argument('[snapshot]', "a tracker snapshot file (tracker.snapshot() or persist: { path }), or '-' for stdin")
    .usage('[options] <snapshot> | --prometheus <url> --slo <id> | --redis <url> --key <key>')
    .option('--redis <url>', 'answer for a fleet budget in Redis (config.fleet) instead of a snapshot')
    .option('--key <key>', "the fleet budget's key (config.fleet.key), with --redis")
    .option('--strict', 'also stop deploys while the budget is critical')
    .option('--json', 'print the report and the decision as JSON')
  // --prometheus <url> --slo <id>: ask the fleet's Prometheus instead (lib/gate-prometheus.js).
  prometheusGate.addOptions(command)
  command
    // Usage errors (no snapshot, unknown option) are bad input too: exit 2, not commander's 1.
    .exitOverride((err) => process.exit(err.exitCode === 0 ? EXIT.proceed : EXIT.badInput))
    .action(async (file, options) => {
      const usesRedis = options.redis !== undefined || options.key !== undefined
      if (usesRedis && options.prometheus !== undefined) {
        console.error('captcha-budget gate: give --prometheus or --redis, not both')
        process.exitCode = EXIT.badInput
        return
      }
      const fromPrometheus = prometheusGate.fromOptions(file, options)
      if (fromPrometheus) {
        process.exitCode = await fromPrometheus
      } else if (usesRedis) {
        process.exitCode = await require('../fleet/gate.js').gateRedis(file, options, { answer, EXIT })
      } else if (file === undefined) {
        console.error("captcha-budget gate: missing argument 'snapshot' (or --prometheus <url> --slo <id>, or --redis <url> --key <key>)")
        process.exitCode = EXIT.badInput
      } else {
        process.exitCode = gate(file, options)
      }
    })
}

function gate(file, options) {
  // Required here, not at the top: the CLI's other commands need no addon.
  const { ErrorBudgetTracker } = require('../tracker.js')
  let report
  try {
    const text = fs.readFileSync(file === '-' ? 0 : file, 'utf8')
    const tracker = ErrorBudgetTracker.restore(text)
    report = tracker.report()
    tracker.close()
  } catch (err) {
    console.error(`captcha-budget gate: ${file}: ${err.message}`)
    return EXIT.badInput
  }
  return answer(report, options)
}

/** Prints the report and the decision; returns the exit code. */
function answer(report, { strict = false, json = false }) {
  const stopOn = strict ? ['exhausted', 'critical'] : ['exhausted']
  const proceed = !stopOn.includes(report.status)
  if (json) {
    console.log(JSON.stringify({ proceed, strict, report }, null, 2))
  } else {
    console.log(
      [
        `status            ${report.status}`,
        `success rate      ${(report.currentRate * 100).toFixed(2)} % (SLO ${(report.sloTarget * 100).toFixed(2)} %)`,
        `solves in window  ${report.total} (${report.failures} failed)`,
        `budget left       ${report.budgetRemainingPct} % (${report.budgetRemaining} of ${report.budgetTotal} failures)`,
        `burn rate         ${report.burnRate}`,
        `alerts firing     ${report.alerts.map((a) => `${a.name} (${a.severity})`).join(', ') || 'none'}`,
        proceed ? 'deploys may proceed' : `deploys stop: the budget is ${report.status}`,
      ].join('\n'),
    )
  }
  return proceed ? EXIT.proceed : EXIT.stop
}

module.exports = { register, gate, EXIT }
