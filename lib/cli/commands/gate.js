'use strict'
// `captcha-budget gate <snapshot.json>`: the deploy gate. Restores a tracker
// snapshot aged to now, prints its report and answers with the exit code (a
// family's snapshot: every child's, the worst deciding; lib/cli/gate/snapshot-file.js); with
// --prometheus, asks the fleet's Prometheus instead (lib/cli/gate/prometheus.js); with
// --redis, reads the fleet budget in Redis (lib/cli/gate/redis.js).
const cliValues = require('../values.js')
const prometheusGate = require('../gate/prometheus.js')
const { readFileLimited } = require('../../util/read-limited.js')
// A BudgetFamily child's labels as --labels takes them, escaped (`site=b\=x\,y`): what is printed can be pasted.
const { labelText } = require('../../util/label-text.js')

/** Exit codes of `gate`, documented in the README. */
const EXIT = { proceed: 0, badInput: 2, stop: 3 }

function register(program) {
  const command = program
    .command('gate')
    .description('exit 0 when deploys may proceed, 3 when the error budget is exhausted (or critical with --strict), 2 on bad input')
    .argument('[snapshot]', "a snapshot file of a tracker or a BudgetFamily (snapshot() or persist: { path }), or '-' for stdin")
    .usage('[options] <snapshot> | --prometheus <url> --slo <id> | --redis <url> --key <key>')
    .option('--redis <url>', 'answer for a fleet budget in Redis (config.fleet) instead of a snapshot')
    .option('--key <key>', "the fleet budget's key (config.fleet.key), with --redis")
    .option('--labels <labels>', 'one child of a BudgetFamily snapshot or fleet (--redis), e.g. type=turnstile,site=shop.example')
    .option('--family', 'a BudgetFamily snapshot or fleet (--redis), answering for its worst child')
    .option('--strict', 'also stop deploys while the budget is critical')
    .option('--json', 'print the report and the decision as JSON')
  // --prometheus <url> --slo <id>: ask the fleet's Prometheus instead (lib/cli/gate/prometheus.js).
  prometheusGate.addOptions(command)
  command
    // Usage errors (no snapshot, unknown option) are bad input too: exit 2, not commander's 1.
    .exitOverride((err) => process.exit(err.exitCode === 0 ? EXIT.proceed : EXIT.badInput))
    .action(async (file, options) => {
      const usesRedis = options.redis !== undefined || options.key !== undefined
      const usage = (message) => {
        console.error(`captcha-budget gate: ${message}`)
        process.exitCode = EXIT.badInput
      }
      if (usesRedis && options.prometheus !== undefined) return usage('give --prometheus or --redis, not both')
      // A family's child or its worst: only a family fleet in Redis has them, never a snapshot.
      if (options.labels !== undefined && options.family) return usage('give --labels (one child) or --family (the worst child), not both')
      if (options.prometheus !== undefined && (options.labels !== undefined || options.family)) {
        return usage(
          `${options.family ? '--family' : '--labels'} needs a BudgetFamily snapshot or --redis <url> --key <key> (a BudgetFamily fleet); --prometheus has no children`,
        )
      }
      const fromPrometheus = prometheusGate.fromOptions(file, options)
      if (fromPrometheus) {
        process.exitCode = await fromPrometheus
      } else if (usesRedis) {
        // The Redis gate (and its client) only for --redis, as the tracker below: the CLI's other commands need neither.
        process.exitCode = await require('../gate/redis.js').gateRedis(file, options, { answer, EXIT })
      } else if (file === undefined) {
        console.error("captcha-budget gate: missing argument 'snapshot' (or --prometheus <url> --slo <id>, or --redis <url> --key <key>)")
        process.exitCode = EXIT.badInput
      } else {
        process.exitCode = gate(file, options)
      }
    })
  // A single-value flag given twice is a usage error, not the last one silently.
  cliValues.onceEach(command)
}

function gate(file, options) {
  let judged
  try {
    const text = readSnapshot(file)
    // Required here, not at the top: the CLI's other commands need no addon.
    judged = require('../gate/snapshot-file.js').judgeSnapshot(text, options)
  } catch (err) {
    console.error(`captcha-budget gate: ${file}: ${err.message}`)
    return EXIT.badInput
  }
  return judged.report ? answer(judged.report, options) : answerFamily(judged, options)
}

/** The most bytes a snapshot may hold, as for a persist file (MAX_SNAPSHOT_BYTES in crates/budget-core/src/persist/file.rs). */
const MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024

/** The snapshot's text: a regular file or stdin ('-'), at most MAX_SNAPSHOT_BYTES. */
function readSnapshot(file) {
  return readFileLimited(file, { maxBytes: MAX_SNAPSHOT_BYTES, what: 'a snapshot' })
}

/** Whether a budget of `report` lets deploys proceed: not exhausted (with --strict, not critical either). */
function proceeds(report, strict) {
  return !(strict ? ['exhausted', 'critical'] : ['exhausted']).includes(report.status)
}

/** The report as the gate prints it, one line a figure. */
function reportLines(report) {
  return [
    // A BudgetFamily child (a family's snapshot, gate --redis --labels / --family): which one.
    ...(report.labels ? [`labels            ${labelText(report.labels)}`] : []),
    `status            ${report.status}`,
    `success rate      ${(report.currentRate * 100).toFixed(2)} % (SLO ${(report.sloTarget * 100).toFixed(2)} %)`,
    `solves in window  ${report.total} (${report.failures} failed)`,
    `budget left       ${report.budgetRemainingPct} % (${report.budgetRemaining} of ${report.budgetTotal} failures)`,
    `burn rate         ${report.burnRate}`,
    `alerts firing     ${report.alerts.map((a) => `${a.name} (${a.severity})`).join(', ') || 'none'}`,
  ]
}

/** Prints the report and the decision; returns the exit code. */
function answer(report, { strict = false, json = false }) {
  const proceed = proceeds(report, strict)
  if (json) {
    console.log(JSON.stringify({ proceed, strict, report }, null, 2))
  } else {
    console.log([...reportLines(report), proceed ? 'deploys may proceed' : `deploys stop: the budget is ${report.status}`].join('\n'))
  }
  return proceed ? EXIT.proceed : EXIT.stop
}

/**
 * Prints a family snapshot's children (worst first), each with its verdict, and
 * the decision, which is the worst child's; returns the exit code.
 */
function answerFamily({ family, children }, { strict = false, json = false }) {
  const verdicts = children.map((report) => ({ proceed: proceeds(report, strict), report }))
  const worst = verdicts.find((v) => !v.proceed)
  const proceed = worst === undefined
  if (json) {
    console.log(JSON.stringify({ proceed, strict, family, report: children[0] ?? null, children: verdicts }, null, 2))
  } else {
    const blocks = verdicts.map((v) => [...reportLines(v.report), `verdict           ${v.proceed ? 'proceed' : 'stop'}`].join('\n'))
    const decision = proceed ? 'deploys may proceed' : `deploys stop: the budget of ${labelText(worst.report.labels)} is ${worst.report.status}`
    console.log([...blocks, decision].join('\n\n'))
  }
  return proceed ? EXIT.proceed : EXIT.stop
}

module.exports = { register, gate, EXIT, MAX_SNAPSHOT_BYTES }
