// Types of `captcha-error-budget/prometheus` (lib/prometheus.js): the same
// declarations as the main entry's, so that both entries agree.
export { METRICS_CONTENT_TYPE, prometheusRules, registerMetrics, renderMetrics } from '../index'
export type { MetricsOptions, MetricsSource, PromClientRegistry, PrometheusRulesFormat, PrometheusRulesOptions } from '../index'
