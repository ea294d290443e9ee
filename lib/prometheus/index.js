'use strict'
// The `captcha-error-budget/prometheus` entry: the Prometheus exposition
// (lib/prometheus/metrics.js) and the rules (lib/prometheus/rules.js), loaded together on purpose by
// those who want them. The main entry exports the same names, loaded on first use.
const { METRICS_CONTENT_TYPE, renderMetrics, registerMetrics } = require('./metrics.js')
const { prometheusRules } = require('./rules.js')

module.exports = { METRICS_CONTENT_TYPE, renderMetrics, registerMetrics, prometheusRules }
