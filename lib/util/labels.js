'use strict'
// Prometheus label names: the rule every label name given to the package
// follows, and the one list of names the package keeps for itself.

/** A Prometheus label name; a name starting with `__` is Prometheus's own. */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
/** The rule, as the messages state it. */
const LABEL_NAME_RULE = '[a-zA-Z_][a-zA-Z0-9_]*, no leading __'

/** The labels the series set (lib/prometheus/metrics.js: the tracker's and the throttle's series), then the scrape's. */
const SERIES_LABELS = ['name', 'outcome', 'window', 'status', 'alert', 'severity', 'decision', 'state', 'job', 'instance']
/** The labels the recording and alerting rules set (lib/prometheus/rules.js): `slo.labels` may not take them. */
const RULE_LABELS = Object.freeze(['slo', 'name', 'pair', 'window', 'outcome', 'alertname', 'alertstate', 'objective', 'period', 'description'])

/**
 * Label names no user label of the series may take: the series', the scrape's and the rules' (17). All 17 are
 * right for every such label, not only a family's `labelNames`: a user label of the series (`metrics({ labels })`,
 * a family's label names, `slo.grouping`) reaches the rules through the series, and a rule's label of the same
 * name would overwrite it. The older list of 10 in lib/prometheus/metrics.js (the series' and the scrape's) forgot the
 * rules'. One list for `labelNames`, the series' `labels` and `slo.grouping` (`rules --grouping`), so that each
 * accepts what the others do.
 */
const RESERVED_LABELS = Object.freeze([...new Set([...SERIES_LABELS, ...RULE_LABELS])])

/** True for a label name a user may give: a Prometheus one, not one starting with `__`. */
function isLabelName(name) {
  return LABEL_NAME.test(name) && !name.startsWith('__')
}

module.exports = { LABEL_NAME, LABEL_NAME_RULE, RESERVED_LABELS, RULE_LABELS, isLabelName }
