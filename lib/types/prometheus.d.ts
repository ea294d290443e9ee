// Types of the Prometheus exposition and rules (lib/prometheus/metrics.js, lib/prometheus/rules.js).
import type { AlertRuleConfig, ErrorBudgetTracker } from '../../native.js'
import type { BudgetFamily } from './family.js'

/** Labels of a tracker's Prometheus series. */
export interface MetricsOptions {
  /** The `name` label: which tracker (CAPTCHA type) the series describe. Default `'default'`. */
  name?: string
  /**
   * Constant labels on every series, e.g. `{ region: 'eu' }`: Prometheus label
   * names, not `name`, `outcome`, `window`, `status`, `alert`, `severity`, `job`, `instance`.
   */
  labels?: Record<string, string>
}

/**
 * One budget of a shared scrape (`renderMetrics`): a tracker, or a family standing
 * for its children (its own `name`, each child's labels; `labels` adds constant ones).
 */
export interface MetricsSource extends MetricsOptions {
  /** With a family, `name` is refused: the family's own is used. */
  tracker: ErrorBudgetTracker | BudgetFamily<string>
}

/** What `registerMetrics` needs of a prom-client `Registry` (prom-client stays optional). */
export interface PromClientRegistry {
  registerMetric(metric: any): void
  removeSingleMetric(name: string): void
}

/** Labels and annotations for one severity's alerts (`alerting.page`, `alerting.ticket`). */
export interface PrometheusAlertRoute {
  /** Added to the alerts of this severity (may override `severity`). */
  labels?: Record<string, string>
  /** Added to the annotations (Prometheus templates allowed: `{{ $value }}`, `{{ $labels.slo }}`). */
  annotations?: Record<string, string>
  /** Leave this severity's pairs out. */
  disable?: boolean
}

/** Alert routing of one SLO, after Sloth's `alerting`. */
export interface PrometheusAlerting {
  /** The alert name prefix (default `CaptchaBudget`: `CaptchaBudgetFastBurn`, …). */
  name?: string
  /** Added to every alert of the SLO (e.g. `team`). */
  labels?: Record<string, string>
  /** Added to every alert of the SLO (e.g. `runbook_url`). */
  annotations?: Record<string, string>
  page?: PrometheusAlertRoute
  ticket?: PrometheusAlertRoute
}

/** The SLO of `prometheusRules()`: the tracker's config fields plus the `name` label and the SLO's identity. */
export interface PrometheusRulesOptions {
  /** The SLO's identity, the `slo` label of every series and alert. Default `<name>-<target %>-<period>`, e.g. `turnstile-95-30d`. */
  id?: string
  /** The `name` label the workers give `tracker.metrics({ name })`: the source. */
  name: string
  /** The SLO target, in (0, 1). */
  targetRate: number
  /** The SLO period in ms. */
  windowMs: number
  /** Custom alert pairs (default: the tracker's default policy for `windowMs`, with its gates and hold/resolve rule). */
  alerts?: Array<AlertRuleConfig>
  /** No alert while the period holds fewer solves. Default 0. */
  minEvents?: number
  /** No pair fires with fewer failures in its long window. Default: the policy's, as the tracker's (5 for the default pairs but 4 for `budget-spend`, 0 for custom ones). */
  minFailures?: number
  /** The workers' `resolutionMs`, if they set it: custom alert windows are rounded to it. */
  resolutionMs?: number
  /** Labels of the SLO's info series `captcha_budget:slo_info` and of every alert (e.g. `team`, `service`). */
  labels?: Record<string, string>
  /** Alert routing: labels and annotations, per severity. */
  alerting?: PrometheusAlerting
  /** A description, on the info series. */
  description?: string
  /**
   * Judge the SLO per label set (Pyrra's `grouping`; a BudgetFamily's `labelNames`,
   * e.g. `['type', 'site']`): every recording sums `by (name, type, site)`, each alert fires per set.
   * Not a label the series, rules or scrape set, nor `events` (the label of the rules' counts).
   */
  grouping?: string[]
}

/** An SLO of `prometheusRules()` over any PromQL SLI (Sloth's `events`) instead of the solve counter: `id` required, `name` optional. */
export interface PrometheusSliRulesOptions extends Omit<PrometheusRulesOptions, 'id' | 'name'> {
  /** The SLO's identity, the `slo` label of every series and alert. */
  id: string
  /** A source name for the info series, if there is one. */
  name?: string
  /** The error and total queries. */
  sli: PrometheusSli
}

/** An SLI in PromQL: per-second rates of errors and of all events, each with `{{.window}}` as its range. */
export interface PrometheusSli {
  /** The errors, e.g. `sum(rate(http_requests_total{code=~"5.."}[{{.window}}]))`. */
  errorQuery: string
  /** All events, e.g. `sum(rate(http_requests_total[{{.window}}]))`. */
  totalQuery: string
}

/** How `prometheusRules()` writes the rules. */
export interface PrometheusRulesFormat {
  /** The scrape interval in ms (whole seconds): no alert window is shorter than four. Default 15 000. */
  scrapeIntervalMs?: number
  /** The length of the recorded pieces the windows are summed from when one is 1 h or more (the group then runs at it), in ms (whole seconds). Default 60 000. */
  evaluationIntervalMs?: number
  /** `'exact'` (default): the period summed from the pieces, as every long window; `'optimised'`: from the shortest window's recorded increases. */
  periodRules?: 'exact' | 'optimised'
  /** `'rules'` (default): a rule file; `'prometheus-operator'`: a PrometheusRule object. */
  format?: 'rules' | 'prometheus-operator'
  /** `metadata.namespace` of the PrometheusRule. */
  namespace?: string
  /** `'sloth'`: also record Sloth's series and info names (`slo:sli_error:ratio_rate5m`, `sloth_slo_info`, …) for its dashboards. */
  compat?: 'sloth'
  /** The PrometheusRule's `metadata.name` (default `captcha-budget-<id>`, or `captcha-budget-slos`) and extra Kubernetes labels. */
  metadata?: { name?: string; labels?: Record<string, string> }
}

/**
 * The Prometheus text exposition (format 0.0.4) of several trackers and families in one
 * scrape, told apart by their `name` (and `labels`): each metric's HELP and TYPE once.
 */
export declare function renderMetrics(sources: Array<MetricsSource>): string

/**
 * Adds the series of `tracker.metrics()` to a prom-client registry, read at
 * each scrape through `collect()`. Returns a function that removes them.
 */
export declare function registerMetrics(tracker: ErrorBudgetTracker, registry: PromClientRegistry, options?: MetricsOptions): () => void
/** Adds every child of `family` (read at each scrape: children created later too) to a prom-client registry. */
export declare function registerMetrics(family: BudgetFamily, registry: PromClientRegistry, options?: { labels?: Record<string, string> }): () => void

/** The Content-Type of `metrics()` output. */
export declare const METRICS_CONTENT_TYPE: string

/**
 * Prometheus rules (YAML) for one SLO or several across all instances:
 * recording rules labelled with the SLO (`slo`), one multiwindow burn-rate
 * alert per pair and one for an absent source.
 */
export declare function prometheusRules(
  slo: PrometheusRulesOptions | PrometheusSliRulesOptions | Array<PrometheusRulesOptions | PrometheusSliRulesOptions>,
  options?: PrometheusRulesFormat,
): string
