'use strict'
// A Grafana dashboard (JSON model, schemaVersion 39) for the series the rules
// of lib/prometheus/rules.js record and the workers expose (lib/prometheus/metrics.js): one page per
// SLO, the SLO chosen with the `slo` variable (from captcha_budget:slo_info),
// its source with `source`. Every query names only those series and ALERTS
// (__test__/prometheus/dashboard.spec.js checks both, and the JSON against @grafana/schema).
const { describe, invalidArgType, invalidArgValue, checkOptionsObject } = require('../util/errors.js')

/** Grafana's dashboard uid: at most 40 characters of these. */
const UID = /^[A-Za-z0-9_-]{1,40}$/

const DATASOURCE = { type: 'prometheus', uid: '${datasource}' }
const SLO = 'slo="$slo"'

/** A panel of `type` at grid position [x, y, w, h] with PromQL `targets` ([expr, legend]). */
function panel(id, type, title, [x, y, w, h], targets, { unit, min, max, description, options = {}, transformations } = {}) {
  // No thresholds/colour modes: the schema types them as string enums, which a
  // JSON string cannot be checked against; Grafana's defaults apply.
  const defaults = {}
  if (unit) defaults.unit = unit
  if (min !== undefined) defaults.min = min
  if (max !== undefined) defaults.max = max
  return {
    id,
    type,
    title,
    ...(description ? { description } : {}),
    datasource: DATASOURCE,
    gridPos: { x, y, w, h },
    fieldConfig: { defaults, overrides: [] },
    options,
    ...(transformations ? { transformations } : {}),
    targets: targets.map(([expr, legendFormat], i) => ({
      refId: String.fromCharCode(65 + i),
      datasource: DATASOURCE,
      expr,
      legendFormat,
      ...(type === 'stat' || type === 'piechart' || type === 'table' ? { instant: true } : {}),
      ...(type === 'table' ? { format: 'table' } : {}),
    })),
  }
}

/**
 * The dashboard: an overview table of every SLO and label set, worst first;
 * then per SLO (variable `slo`), the budget left, burn rates now,
 * over the period and over each alert window, time per status, firing alerts
 * and solves per type.
 * @param {{ title?: string, uid?: string, slo?: string }} [options] `slo` is the SLO selected when the dashboard opens
 * @returns {object} Grafana's dashboard JSON model
 */
function grafanaDashboard(options) {
  const {
    title = 'CAPTCHA error budgets',
    uid = 'captcha-error-budget',
    slo,
  } = checkOptionsObject(options, ['title', 'uid', 'slo'], 'grafanaDashboard(options): options')
  for (const [key, value] of [
    ['title', title],
    ['uid', uid],
    ['slo', slo],
  ]) {
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw invalidArgType(`grafanaDashboard(options): options.${key} must be a non-empty string, got ${describe(value)}`)
    }
  }
  if (!UID.test(uid)) {
    throw invalidArgValue(
      `grafanaDashboard(options): options.uid must be at most 40 characters of A-Z, a-z, 0-9, '_' and '-' (Grafana's uid), got ${JSON.stringify(uid)}`,
    )
  }
  if (slo !== undefined) {
    // The SLO id as the rules take it: printable, no Go template syntax. Required
    // here, not at the top: lib/prometheus/rules-slo.js loads the addon, which the dashboard otherwise needs not.
    const { textProblem, shown } = require('./rules-slo.js')
    const problem = textProblem(slo)
    if (problem) throw invalidArgValue(`grafanaDashboard(options): options.slo ${problem}, got ${shown(slo)}`)
  }
  const panels = [
    panel(1, 'stat', 'Error budget left', [0, 0, 6, 5], [[`captcha_budget:error_budget_remaining:ratio{${SLO}}`, '{{slo}}']], {
      unit: 'percentunit',
      min: 0,
      max: 1,
      description: "The fleet's budget left over the SLO period (all workers): 1 − the burn rate over the period.",
    }),
    panel(2, 'stat', 'Burn rate now', [6, 0, 6, 5], [[`captcha_budget:current_burn_rate:ratio{${SLO}}`, 'now']], {
      unit: 'none',
      description: 'Over the shortest alert window. 1 spends the budget exactly over the period.',
    }),
    panel(3, 'stat', 'Burn rate over the period', [12, 0, 6, 5], [[`captcha_budget:period_burn_rate:ratio{${SLO}}`, 'period']], { unit: 'none' }),
    panel(4, 'stat', 'Objective', [18, 0, 6, 5], [[`captcha_budget:objective:ratio{${SLO}}`, '{{slo}}']], { unit: 'percentunit' }),
    panel(5, 'timeseries', 'Error budget left', [0, 5, 12, 8], [[`captcha_budget:error_budget_remaining:ratio{${SLO}}`, 'fleet']], {
      unit: 'percentunit',
      min: 0,
      max: 1,
    }),
    panel(
      6,
      'timeseries',
      'Burn rate over the alert windows',
      [12, 5, 12, 8],
      [
        [`captcha_budget:burn_rate:ratio{${SLO}}`, '{{window}}'],
        [`captcha_budget:period_burn_rate:ratio{${SLO}}`, 'period'],
      ],
      { unit: 'none', min: 0, description: 'Each pair fires while both its windows are above its threshold (see the alert rules).' },
    ),
    panel(
      7,
      'piechart',
      "Time per status (each worker's own view)",
      [0, 13, 8, 8],
      [['avg by (status) (avg_over_time(captcha_budget_status{name="$source"}[$__range]))', '{{status}}']],
      { unit: 'percentunit', options: { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false }, pieType: 'pie' } },
    ),
    panel(
      8,
      'timeseries',
      'Alerts firing',
      [8, 13, 16, 8],
      [
        [`sum by (alertname, severity) (ALERTS{${SLO},alertstate="firing"})`, 'Prometheus: {{alertname}} ({{severity}})'],
        ['max by (alert, severity) (captcha_budget_alert_firing{name="$source"})', 'in process: {{alert}} ({{severity}})'],
      ],
      { min: 0, max: 1 },
    ),
    panel(
      9,
      'timeseries',
      'Solves per type',
      [0, 21, 24, 8],
      [
        ['sum by (name, outcome) (rate(captcha_budget_solves_total[$__rate_interval]))', '{{name}} {{outcome}}'],
        // Solves the site rejected after they counted as successes (reject()): failures too.
        ['sum by (name, outcome) (rate(captcha_budget_rejections_total[$__rate_interval]))', '{{name}} rejected by the site'],
      ],
      { unit: 'reqps', min: 0 },
    ),
  ]
  // On top: every SLO and every label set of a grouped SLO (a BudgetFamily's
  // rules, slo.grouping), worst first — what Sloth's and Pyrra's list views show.
  const OVERVIEW_HEIGHT = 8
  for (const p of panels) p.gridPos.y += OVERVIEW_HEIGHT
  panels.unshift(
    panel(
      10,
      'table',
      'All SLOs and label sets, worst first',
      [0, 0, 24, OVERVIEW_HEIGHT],
      [
        ['sort(captcha_budget:error_budget_remaining:ratio)', ''],
        ['captcha_budget:period_burn_rate:ratio', ''],
        ['captcha_budget:current_burn_rate:ratio', ''],
      ],
      {
        description:
          'One row per SLO, and per label set of an SLO with grouping (captcha-budget rules --grouping): least budget left first, then the burn rates.',
        transformations: [
          { id: 'merge', options: {} },
          {
            id: 'organize',
            options: {
              excludeByName: { Time: true },
              renameByName: { 'Value #A': 'Budget left', 'Value #B': 'Burn rate (period)', 'Value #C': 'Burn rate (now)' },
            },
          },
        ],
        options: { showHeader: true, sortBy: [{ displayName: 'Budget left', desc: false }] },
      },
    ),
  )
  const variable = (name, label, query) => ({
    name,
    label,
    type: 'query',
    datasource: DATASOURCE,
    query: { query, refId: `${name}-variable` },
    refresh: 2,
    sort: 1,
    hide: 0,
    includeAll: false,
    multi: false,
  })
  const sloVariable = variable('slo', 'SLO', 'label_values(captcha_budget:slo_info, slo)')
  if (slo !== undefined) sloVariable.current = { text: slo, value: slo }
  return {
    uid,
    title,
    tags: ['captcha-error-budget', 'slo'],
    editable: true,
    schemaVersion: 39,
    time: { from: 'now-24h', to: 'now' },
    refresh: '1m',
    templating: {
      list: [
        { name: 'datasource', label: 'Prometheus', type: 'datasource', query: 'prometheus', hide: 0 },
        sloVariable,
        { ...variable('source', 'Source', 'label_values(captcha_budget:slo_info{slo="$slo"}, name)'), hide: 2 },
      ],
    },
    panels,
  }
}

module.exports = { grafanaDashboard }
