'use strict'
// The contract between the addon and this package's JavaScript, checked when
// the package loads: the registered symbols both sides use, the layout of the
// report buffer (src/fast_path.rs `write_report` ↔ lib/fast-report.js), the
// figure indexes of the getters (src/fast_path.rs `figure` ↔ lib/tracker.js)
// and the status order. The addon says what it does (`seamContract()`); this
// file says what the JavaScript was written against; a difference is an
// error at load, naming it, rather than wrong figures later.
const native = require('./load-native.js')
const { ARGUMENT_NAME } = require('./errors.js')

/** What lib/fast-report.js reads at each index of the report buffer's head. */
const REPORT_FIELDS = Object.freeze([
  'status',
  'currentRate',
  'total',
  'failures',
  'budgetRemainingPct',
  'burnRate',
  'sloTarget',
  'successes',
  'budgetTotal',
  'budgetRemaining',
  'dropped',
  'at',
  'insufficientData',
  'exhaustsInMs',
  'firing',
])
/** What it reads for each firing pair after the head. */
const REPORT_PAIR_FIELDS = Object.freeze(['index', 'burnRateLong', 'burnRateShort'])
/** The getters lib/tracker.js reads through `figure(index)`, by index. */
const FIGURES = Object.freeze([
  'now',
  'total',
  'successes',
  'failures',
  'currentRate',
  'budgetTotal',
  'budgetRemaining',
  'remainingFraction',
  'burnRate',
  'status',
  'lastStatus',
  'closed',
])

const contract = native.seamContract()

/** Throws when the addon's side of the contract differs from this file's. */
function check(what, expected, actual) {
  if (JSON.stringify(expected) !== JSON.stringify(actual)) {
    throw new Error(
      `captcha-error-budget: the addon and the JavaScript disagree on ${what} (addon: ${JSON.stringify(actual)}, JavaScript: ${JSON.stringify(expected)}); rebuild the addon (npm run build)`,
    )
  }
}
check('the report buffer layout', REPORT_FIELDS, contract.reportFields)
check("the report buffer's pair layout", REPORT_PAIR_FIELDS, contract.reportPairFields)
check('the figure indexes', FIGURES, contract.figures)
// lib/errors.js names the symbol itself (it loads without the addon): the same key.
check('the config argument name symbol', Symbol.keyFor(ARGUMENT_NAME), contract.argumentNameSymbol)

module.exports = {
  /** Each tracker's report filler (src/fast_path.rs `report_into`). */
  REPORT_INTO: Symbol.for(contract.reportIntoSymbol),
  /** Each tracker's figure reader (src/fast_path.rs `figure`). */
  FIGURE: Symbol.for(contract.figureSymbol),
  /** The prototype's own `record`, which a subclass's override is told apart from. */
  NATIVE_RECORD: Symbol.for(contract.nativeRecordSymbol),
  /** Values before the firing pairs in the report buffer. */
  REPORT_HEAD: REPORT_FIELDS.length,
  REPORT_PAIR: REPORT_PAIR_FIELDS.length,
  /** The figure index of each getter lib/tracker.js defines, by name. */
  FIGURE_INDEX: Object.freeze(Object.fromEntries(FIGURES.map((name, i) => [name, i]))),
  /** The statuses in the order of the native status index (`Status::ALL`): the one list. */
  STATUSES: Object.freeze(contract.statuses),
}
