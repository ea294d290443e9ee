// Types of `captcha-error-budget/prometheus` (lib/prometheus/index.js): the main entry
// re-exports the same declarations (lib/types/), so that both entries agree.
export { METRICS_CONTENT_TYPE, prometheusRules, registerMetrics, renderMetrics } from '../types/prometheus.js'
export type { MetricsOptions, MetricsSource, PromClientRegistry, PrometheusRulesFormat, PrometheusRulesOptions } from '../types/prometheus.js'
