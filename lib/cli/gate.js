'use strict'
// `captcha-budget gate <snapshot.json>`: the deploy gate. Restores a tracker
// snapshot aged to now, prints its report and answers with the exit code.
const fs = require('node:fs')

/** Exit codes of `gate`, documented in the README. */
const EXIT = { proceed: 0, badInput: 2, stop: 3 }

function register(program) {
  program
    .command('gate')
    .description('exit 0 when deploys may proceed, 3 when the error budget is exhausted (or critical with --strict), 2 on bad input')
    .argument('[snapshot]', "a tracker snapshot file (tracker.snapshot() or persist: { path }), or '-' for stdin")
    .option('--strict', 'also stop deploys while the budget is critical')
    .option('--json', 'print the report and the decision as JSON')
    // Asking the fleet's Prometheus instead of a snapshot: lib/gate-prometheus.js.
    .option('--prometheus <url>', 'ask this Prometheus (the rules of `captcha-budget rules` loaded) instead of reading a snapshot')
    .option('--slo <id>', 'with --prometheus: the slo label of the SLO to judge')
    .option('--max-burn-rate <x>', 'with --prometheus: also stop while the current burn rate is above x')
    .option('--warning-threshold <f>', 'with --prometheus: as config.warningThreshold', '0.5')
    .option('--critical-threshold <f>', 'with --prometheus: as config.criticalThreshold', '0.1')
    .option('--timeout <duration>', 'with --prometheus: per query', '10s')
    // Usage errors (no snapshot, unknown option) are bad input too: exit 2, not commander's 1.
    .exitOverride((err) => process.exit(err.exitCode === 0 ? EXIT.proceed : EXIT.badInput))
    .action(async (file, options) => {
      if (options.prometheus !== undefined) {
        if (file !== undefined) return usage(`give a snapshot or --prometheus, not both`)
        process.exitCode = await require('../gate-prometheus.js').gatePrometheus(options)
        return
      }
      const only = ['slo', 'maxBurnRate'].find((key) => options[key] !== undefined)
      if (only) return usage(`--${only === 'slo' ? 'slo' : 'max-burn-rate'} needs --prometheus <url>`)
      if (file === undefined) return usage("missing argument 'snapshot' (or --prometheus <url> --slo <id>)")
      process.exitCode = gate(file, options)
    })
}

function usage(message) {
  console.error(`captcha-budget gate: ${message}`)
  process.exitCode = EXIT.badInput
}

function gate(file, { strict = false, json = false }) {
  // Required here, not at the top: the CLI's other commands need no addon.
  const { ErrorBudgetTracker } = require('../..')
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
