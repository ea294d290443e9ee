'use strict'
// The contract between the addon and this package's JavaScript, checked when
// the package loads: the registered symbols both sides use, the layout of the
// report buffer (src/fast_path.rs `write_report` ↔ lib/native/fast-report.js), the
// figure indexes of the getters (src/fast_path.rs `figure` ↔ lib/tracker/tracker.js)
// and the status order. Each layout is one Rust enum (crates/budget-core/src/layout.rs), which the
// addon exports as `{ name: index }`: the JavaScript reads by those indexes
// (`b[R.total]`), and this file checks that the addon has exactly the names the
// JavaScript reads; a difference is an error at load, naming it, rather than
// wrong figures later.
const native = require('./load-native.js')
const { ARGUMENT_NAME } = require('../util/errors.js')

/** What lib/native/fast-report.js reads of the report buffer's head. */
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
/** What lib/native/fast-state.js reads of a guard decision's buffer (`guardStateInto`). */
const GUARD_FIELDS = Object.freeze(['closed', 'now', 'status', 'total', 'sloTarget', 'recentBurnRate'])
/** What it reads of a scrape's buffer (`scrapeInto`): the head, then a pair's values per pair, then a window's per window. */
const SCRAPE_FIELDS = Object.freeze([
  'status',
  'total',
  'failures',
  'sloTarget',
  'insufficientData',
  'at',
  'remainingFraction',
  'burnRate',
  'recordedSuccesses',
  'recordedFailures',
  'rejected',
  'pairs',
  'windows',
])
const SCRAPE_PAIR_FIELDS = Object.freeze(['firing'])
const SCRAPE_WINDOW_FIELDS = Object.freeze(['windowMs', 'burnRate'])
/** The getters lib/tracker/tracker.js reads through `figure(index)`. */
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
/**
 * The addon's layout `{ name: index }`, checked: exactly the names the JavaScript reads
 * (`names`), at the indexes 0 to n − 1. Returned frozen, for reading by name.
 */
function layout(what, names, given) {
  const byIndex = []
  for (const [name, index] of Object.entries(given ?? {})) byIndex[index] = name
  const unwritten = names.filter((name) => !Object.hasOwn(given ?? {}, name))
  const unread = Object.keys(given ?? {}).filter((name) => !names.includes(name))
  if (unwritten.length > 0 || unread.length > 0) {
    const parts = [...unwritten.map((name) => `the addon has no ${name}`), ...unread.map((name) => `the JavaScript does not read the addon's ${name}`)]
    throw new Error(`captcha-error-budget: the addon and the JavaScript disagree on ${what} (${parts.join('; ')}); rebuild the addon (npm run build)`)
  }
  if (byIndex.length !== names.length || byIndex.some((name) => name === undefined))
    check(
      `${what} indexes`,
      names.map((_, i) => i),
      Object.values(given),
    )
  return Object.freeze({ ...given })
}
const REPORT = layout('the report buffer layout', REPORT_FIELDS, contract.reportLayout)
const PAIR = layout("the report buffer's pair layout", REPORT_PAIR_FIELDS, contract.pairLayout)
const FIGURE_INDEX = layout('the figure indexes', FIGURES, contract.figureLayout)
const GUARD = layout("the guard state buffer's layout", GUARD_FIELDS, contract.guardLayout)
const SCRAPE = layout("the scrape buffer's layout", SCRAPE_FIELDS, contract.scrapeLayout)
const SCRAPE_PAIR = layout("the scrape buffer's pair layout", SCRAPE_PAIR_FIELDS, contract.scrapePairLayout)
const SCRAPE_WINDOW = layout("the scrape buffer's window layout", SCRAPE_WINDOW_FIELDS, contract.scrapeWindowLayout)
// lib/util/errors.js names the symbol itself (it loads without the addon): the same key.
check('the config argument name symbol', Symbol.keyFor(ARGUMENT_NAME), contract.argumentNameSymbol)

module.exports = {
  /** Each tracker's report filler (src/fast_path.rs `report_into`). */
  REPORT_INTO: Symbol.for(contract.reportIntoSymbol),
  /** Each tracker's figure reader (src/fast_path.rs `figure`). */
  FIGURE: Symbol.for(contract.figureSymbol),
  /** The prototype's own `record`, which a subclass's override is told apart from. */
  NATIVE_RECORD: Symbol.for(contract.nativeRecordSymbol),
  /** The index of each field of the report buffer's head, by name. */
  REPORT,
  /** The index of each value of a firing pair (after the head), by name. */
  PAIR,
  /** Values before the firing pairs in the report buffer. */
  REPORT_HEAD: REPORT_FIELDS.length,
  /** Values of each firing pair. */
  REPORT_PAIR: REPORT_PAIR_FIELDS.length,
  /** The index of each value of the guard state buffer, by name. */
  GUARD,
  /** The index of each value of the scrape buffer's head, by name. */
  SCRAPE,
  /** The index of each value of a scrape pair (after the head), by name. */
  SCRAPE_PAIR,
  /** The index of each value of a scrape window (after the pairs), by name. */
  SCRAPE_WINDOW,
  /** Values before the pairs, of each pair and of each window in the scrape buffer. */
  SCRAPE_HEAD: SCRAPE_FIELDS.length,
  SCRAPE_PAIR_SIZE: SCRAPE_PAIR_FIELDS.length,
  SCRAPE_WINDOW_SIZE: SCRAPE_WINDOW_FIELDS.length,
  /** The figure index of each getter lib/tracker/tracker.js defines, by name. */
  FIGURE_INDEX,
  /** The statuses in the order of the native status index (`Status::ALL`): the one list. */
  STATUSES: Object.freeze(contract.statuses),
}
