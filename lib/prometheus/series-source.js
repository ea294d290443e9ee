'use strict'
// What lib/prometheus/metrics.js reads of a source with children (a BudgetFamily), so that
// it renders what it is given without requiring the family's module.

/**
 * A source's method returning its children, `Iterable<[tracker, { labels }]>`,
 * read afresh at each scrape (a child created later is exported too).
 */
const CHILD_SERIES = Symbol('captcha-error-budget.childSeries')

module.exports = { CHILD_SERIES }
