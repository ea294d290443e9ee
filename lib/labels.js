'use strict'
// Prometheus label names: the rule every label name given to the package
// follows, and the one list of names the package keeps for itself.

/** A Prometheus label name; a name starting with `__` is Prometheus's own. */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
/** The rule, as the messages state it. */
const LABEL_NAME_RULE = '[a-zA-Z_][a-zA-Z0-9_]*, no leading __'

/**
 * Label names no user label may take: the series set `name`, `outcome`, `window`, `status`, `alert`, `severity`,
 * `decision`, `state` (lib/metrics.js: the tracker's and the throttle's series), the scrape sets `job` and
 * `instance`, and the recording and alerting rules set `slo`, `pair`, `alertname`, `alertstate`, `objective`,
 * `period`, `description` (lib/rules.js). All 17 are right for every user label, not only a family's `labelNames`:
 * a user label of the series (`metrics({ labels })`, a family's label names) reaches the rules through the series,
 * and a rule's label of the same name would overwrite it. The older list of 10 in lib/metrics.js forgot the rules'.
 * One list for `labelNames`, the series' `labels` and `slo.grouping` (`rules --grouping`), so that each accepts
 * what the others do.
 */
const RESERVED_LABELS = Object.freeze([
  'name', 'outcome', 'window', 'status', 'alert', 'severity', 'decision', 'state', 'job', 'instance',
  'slo', 'pair', 'alertname', 'alertstate', 'objective', 'period', 'description',
])

/** True for a label name a user may give: a Prometheus one, not one starting with `__`. */
function isLabelName(name) {
  return LABEL_NAME.test(name) && !name.startsWith('__')
}

module.exports = { LABEL_NAME, LABEL_NAME_RULE, RESERVED_LABELS, isLabelName }
