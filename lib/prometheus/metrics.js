'use strict'
// Prometheus series of error-budget trackers: the text exposition format
// (`tracker.metrics()`, `renderMetrics()`) and the same series through a
// prom-client Registry (`registerMetrics()`). Both are built from FAMILIES, so
// they cannot drift apart. Counters come from `tracker.recorded` (never reset by
// the window) so that Prometheus can take increase() over any window, less what
// the tracker was restored with (lib/prometheus/counter-start.js); the gauges repeat what
// the tracker itself sees in its window.
// The addon's class: every tracker (the exported class, a subclass, a shared handle) is one of its instances.
const { ErrorBudgetTracker } = require('../native/load-native.js')
const { describe, invalidArgType, invalidArgValue, moduleNotFound, unknownKey } = require('../util/errors.js')
const { LABEL_NAME_RULE, RESERVED_LABELS, isLabelName } = require('../util/labels.js')
const { CHILD_SERIES } = require('./series-source.js')
const { promDuration } = require('../util/duration.js')
const { STATUSES, policyOf } = require('../native/fast-report.js')
const { scrapeState, pairAt, windowAt } = require('../native/fast-state.js')
const { SCRAPE: S, SCRAPE_PAIR: SP, SCRAPE_WINDOW: SW } = require('../native/contract.js')
const { sinceStart } = require('./counter-start.js')
const { STATES } = require('../guard/throttle.js')
const { withGuardFields } = require('../guard/state.js')

/** Content-Type of the text exposition format produced by `metrics()`. */
const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'

// One snapshot of a tracker, read in one call into the addon at one instant
// (lib/native/fast-state.js: one buffer with the report's figures, the counters,
// each pair's firing and each alert window's burn rate), the alert policy
// cached per tracker, and the guard's fields as report() has them (lib/guard/state.js).
function snapshot(tracker) {
  const b = scrapeState(tracker)
  const policy = policyOf(tracker)
  const pairs = b[S.pairs]
  const windowBurn = []
  for (let j = 0; j < b[S.windows]; j++) {
    const w = windowAt(pairs, j)
    windowBurn.push([promDuration(b[w + SW.windowMs]), b[w + SW.burnRate]])
  }
  const report = {
    status: STATUSES[b[S.status]],
    total: b[S.total],
    failures: b[S.failures],
    sloTarget: b[S.sloTarget],
    insufficientData: b[S.insufficientData] === 1,
    at: b[S.at],
  }
  return {
    recorded: sinceStart(tracker, b[S.recordedSuccesses], b[S.recordedFailures]),
    rejected: b[S.rejected],
    report,
    remainingFraction: b[S.remainingFraction],
    burnRate: b[S.burnRate],
    windowBurn,
    alerts: policy.map((r, i) => [r.name, r.severity, b[pairAt(i) + SP.firing]]),
    // guard()'s state (lib/guard/state.js): its throttle, and its attempts outside the window.
    guard: withGuardFields({ at: report.at }, tracker),
  }
}

// Every series: name, HELP, TYPE, the family's own labels, and its samples
// ([label values, value]) from a snapshot.
const FAMILIES = [
  {
    name: 'captcha_budget_solves_total',
    help: 'CAPTCHA solves recorded by the tracker since it was created or restored in this process, by outcome; never reset by the window.',
    type: 'counter',
    labels: ['outcome'],
    samples: (s) => [
      [['success'], s.recorded.successes],
      [['failure'], s.recorded.failures],
    ],
  },
  {
    // A counter never goes down, so a success rejected later stays in the one above:
    // the SLI is (failures + rejections) / solves (docs/when-the-site-says-no.md).
    name: 'captcha_budget_rejections_total',
    help: 'Solves counted as successes that the target site rejected later (reject()) in this process; each is a failure in the window.',
    type: 'counter',
    labels: [],
    samples: (s) => [[[], s.rejected]],
  },
  {
    name: 'captcha_budget_window_solves',
    help: "Solves inside the tracker's rolling window.",
    type: 'gauge',
    labels: [],
    samples: (s) => [[[], s.report.total]],
  },
  {
    name: 'captcha_budget_window_failures',
    help: "Failed solves inside the tracker's rolling window.",
    type: 'gauge',
    labels: [],
    samples: (s) => [[[], s.report.failures]],
  },
  {
    name: 'captcha_budget_objective_ratio',
    help: 'The SLO target: the fraction of solves that must succeed.',
    type: 'gauge',
    labels: [],
    samples: (s) => [[[], s.report.sloTarget]],
  },
  {
    name: 'captcha_budget_remaining_ratio',
    help: "Fraction of the window's error budget left, 0 to 1.",
    type: 'gauge',
    labels: [],
    samples: (s) => [[[], s.remainingFraction]],
  },
  {
    name: 'captcha_budget_burn_rate',
    help: "Burn rate over the tracker's whole window: 1 spends the budget exactly over the window.",
    type: 'gauge',
    labels: [],
    samples: (s) => [[[], s.burnRate]],
  },
  {
    name: 'captcha_budget_alert_window_burn_rate',
    help: 'Burn rate over each window of the alert policy.',
    type: 'gauge',
    labels: ['window'],
    samples: (s) => s.windowBurn.map(([window, burn]) => [[window], burn]),
  },
  {
    name: 'captcha_budget_status',
    help: 'Budget status: 1 for the current one, 0 for the others.',
    type: 'gauge',
    labels: ['status'],
    samples: (s) => STATUSES.map((status) => [[status], s.report.status === status ? 1 : 0]),
  },
  {
    name: 'captcha_budget_alert_firing',
    help: 'Each pair of the alert policy: 1 while it fires.',
    type: 'gauge',
    labels: ['alert', 'severity'],
    samples: (s) => s.alerts.map(([name, severity, firing]) => [[name, severity], firing]),
  },
  {
    name: 'captcha_budget_insufficient_data',
    help: '1 while the tracker has too few events to judge (no alert can fire).',
    type: 'gauge',
    labels: [],
    samples: (s) => [[[], s.report.insufficientData ? 1 : 0]],
  },
  {
    name: 'captcha_budget_guard_attempts_total',
    help: 'Solve attempts tracker.guard() admitted (ran) or refused (while the budget was exhausted: throttled or refused) in this process.',
    type: 'counter',
    labels: ['decision'],
    samples: (s) => [
      [['admitted'], s.guard.throttle?.admitted ?? 0],
      [['refused'], s.guard.throttle?.refused ?? 0],
    ],
  },
  {
    name: 'captcha_budget_throttle_state',
    help: "tracker.guard()'s state: 1 for the current one (open, admitting, throttled, refusing), 0 for the others; all 0 before the first guard().",
    type: 'gauge',
    labels: ['state'],
    samples: (s) => STATES.map((state) => [[state], s.guard.throttle?.state === state ? 1 : 0]),
  },
  {
    name: 'captcha_budget_excluded_total',
    help: "Attempts tracker.guard() ran that were the caller's or the account's problem (outcome excluded: neither a solve nor a failure) in this process.",
    type: 'counter',
    labels: [],
    samples: (s) => [[[], s.guard.excluded]],
  },
  {
    name: 'captcha_budget_capacity_total',
    help: 'Attempts tracker.guard() ran that the provider turned away for want of a free worker, thread or slot (outcome capacity: neither a solve nor a failure) in this process.',
    type: 'counter',
    labels: [],
    samples: (s) => [[[], s.guard.capacity]],
  },
]

/**
 * Checks `{ tracker, name?, labels? }` — or `{ name?, labels? }` when the
 * tracker comes apart, as `[tracker, trackerWhere]` — and returns
 * `{ tracker, labels }` with `name` first, then the user labels sorted. `where`
 * names the object in messages.
 */
function checkSource(source, where, [given, trackerWhere] = []) {
  if (typeof source !== 'object' || source === null || Array.isArray(source)) {
    throw invalidArgType(`${where} must be an object, got ${describe(source)}`)
  }
  const keys = trackerWhere ? ['name', 'labels'] : ['tracker', 'name', 'labels']
  const unknown = Object.keys(source).filter((k) => !keys.includes(k))
  if (unknown.length) throw unknownKey(unknown[0], keys, where)
  const { name = 'default', labels = {} } = source
  const tracker = trackerWhere ? given : source.tracker
  if (!(tracker instanceof ErrorBudgetTracker)) {
    trackerWhere = trackerWhere || `${where}.tracker`
    const either = trackerWhere.startsWith('renderMetrics') ? 'an ErrorBudgetTracker or a BudgetFamily' : 'an ErrorBudgetTracker'
    throw invalidArgType(`${trackerWhere} must be ${either}, got ${describe(tracker)}`)
  }
  if (typeof name !== 'string' || name === '') throw invalidArgType(`${where}.name must be a non-empty string, got ${describe(name)}`)
  if (typeof labels !== 'object' || labels === null || Array.isArray(labels)) {
    throw invalidArgType(`${where}.labels must be an object of strings, got ${describe(labels)}`)
  }
  for (const [key, value] of Object.entries(labels)) {
    if (!isLabelName(key)) throw invalidArgValue(`${where}.labels: '${key}' is not a Prometheus label name (${LABEL_NAME_RULE})`)
    if (RESERVED_LABELS.includes(key)) {
      throw invalidArgValue(`${where}.labels: '${key}' is reserved (${RESERVED_LABELS.join(', ')})`)
    }
    if (typeof value !== 'string') throw invalidArgType(`${where}.labels.${key} must be a string, got ${describe(value)}`)
  }
  const userLabels = Object.keys(labels).sort()
  return { tracker, labels: { name, ...Object.fromEntries(userLabels.map((k) => [k, labels[k]])) } }
}

function escapeLabelValue(v) {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')
}

function formatValue(v) {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Infinity) return '+Inf'
  if (v === -Infinity) return '-Inf'
  return String(v)
}

// Each source checked; a family (`{ tracker: family, labels? }`) as its children now.
function checkSources(sources, where) {
  const seen = new Set()
  return sources.flatMap((source, i) => {
    const family = typeof source === 'object' && source !== null && isFamily(source.tracker) ? source.tracker : null
    let checked
    if (family === null) checked = [checkSource(source, `${where}[${i}]`)]
    else {
      const { tracker, ...options } = source
      checked = family.closed ? [] : familyEntries(family, familySource(family, options, `${where}[${i}]`).constant)
    }
    for (const entry of checked) {
      const key = JSON.stringify(entry.labels)
      if (seen.has(key)) throw invalidArgValue(`${where}[${i}]: another tracker already has the labels ${key}; give each a distinct name`)
      seen.add(key)
    }
    return checked
  })
}

/**
 * The Prometheus text exposition (format 0.0.4) of several trackers sharing
 * one scrape: each metric's HELP and TYPE once, one series per tracker, told apart
 * by `name` (and the user `labels`). A BudgetFamily as `tracker` stands for its
 * children (its `name`, their labels; `labels` adds constant ones).
 * @param {Array<{ tracker: ErrorBudgetTracker | import('./family.js').BudgetFamily, name?: string, labels?: Record<string, string> }>} sources
 * @returns {string}
 */
function renderMetrics(sources) {
  if (!Array.isArray(sources)) throw invalidArgType(`renderMetrics(sources): sources must be an array, got ${describe(sources)}`)
  return render(checkSources(sources, 'renderMetrics(sources): sources'))
}

function render(checked) {
  const snaps = checked.map(({ tracker }) => snapshot(tracker))
  const lines = []
  for (const family of FAMILIES) {
    lines.push(`# HELP ${family.name} ${family.help}`, `# TYPE ${family.name} ${family.type}`)
    checked.forEach(({ labels }, i) => {
      for (const [values, value] of family.samples(snaps[i])) {
        const all = [...Object.entries(labels), ...family.labels.map((l, j) => [l, values[j]])]
        const text = all.map(([k, v]) => `${k}="${escapeLabelValue(v)}"`).join(',')
        lines.push(`${family.name}{${text}} ${formatValue(value)}`)
      }
    })
  }
  return lines.join('\n') + '\n'
}

/**
 * `tracker.metrics(options?)`: this tracker's series in the text exposition
 * format; `options.name` (default `'default'`) and `options.labels` label them.
 * @this {ErrorBudgetTracker}
 * @param {{ name?: string, labels?: Record<string, string> }} [options]
 * @returns {string}
 */
function metrics(options = {}) {
  return render([checkSource(options, 'metrics(options): options', [this, 'metrics(): this'])])
}

/**
 * The entries of a BudgetFamily's children (lib/prometheus/series-source.js): `{ tracker, labels }` with the
 * family's `name`, then its label names and any constant `labels`, sorted. The
 * same entry object for a child from one call to the next (`memo`), so that a
 * registry's scrape reads each child once.
 */
function familyEntries(family, constant, memo) {
  const out = []
  for (const [tracker, entry] of family[CHILD_SERIES]()) {
    let e = memo && memo.get(tracker)
    if (e === undefined) {
      const all = { ...constant, ...entry.labels }
      const sorted = Object.fromEntries(
        Object.keys(all)
          .sort()
          .map((k) => [k, all[k]]),
      )
      e = { tracker, labels: { name: family.name, ...sorted } }
      if (memo) memo.set(tracker, e)
    }
    out.push(e)
  }
  return out
}

/** A source with children: a BudgetFamily (lib/prometheus/series-source.js). */
function isFamily(value) {
  return typeof value?.[CHILD_SERIES] === 'function'
}

/**
 * `family.metrics()`: every child's series in the text exposition format, each
 * labelled with the family's `name` and the child's labels.
 * @param {import('../family/index.js').BudgetFamily} family
 * @returns {string}
 */
function familyMetrics(family, options = {}) {
  // The options registerMetrics(family, …) takes, checked the same way: the constant labels.
  const { constant } = familySource(family, options, 'family.metrics(options): options')
  return render(familyEntries(family, constant))
}

// Per prom-client Registry: the registered metrics and the trackers behind them.
const registries = new WeakMap()

function loadPromClient() {
  try {
    // An optional peer dependency: loaded by the first registerMetrics(), which needs it.
    return require('prom-client')
  } catch (err) {
    if (err.code !== 'MODULE_NOT_FOUND') throw err
    throw moduleNotFound('registerMetrics() needs prom-client (an optional peer dependency): npm install prom-client')
  }
}

// The snapshot one family of a scrape reads: every family of one scrape
// (collected one after the other, in microtasks) sees the same instant. A new
// snapshot is taken when this family already read the current one (the next
// scrape) or after a turn of the event loop.
function cachedSnapshot(entry, family) {
  if (!entry.snap || entry.snap.read.has(family)) {
    const snap = { data: snapshot(entry.tracker), read: new Set() }
    entry.snap = snap
    setImmediate(() => {
      if (entry.snap === snap) entry.snap = null
    }).unref()
  }
  entry.snap.read.add(family)
  return entry.snap.data
}

/**
 * Adds the series of `tracker.metrics()` to a prom-client `registry` through
 * `collect()` (read at each scrape). Several trackers may share a registry
 * (distinct `name`s, the same user label names). Nothing goes to prom-client's
 * global registry unless it is the one passed.
 * @param {ErrorBudgetTracker} tracker
 * @param {import('prom-client').Registry} registry
 * @param {{ name?: string, labels?: Record<string, string> }} [options]
 * @returns {() => void} removes this tracker's series (and the metrics with the last one)
 */
function registerMetrics(tracker, registry, options = {}) {
  if (typeof registry !== 'object' || registry === null || typeof registry.registerMetric !== 'function') {
    throw invalidArgType(
      `registerMetrics(tracker, registry): registry must be a prom-client Registry (new Registry(), or register for the global one), got ${describe(registry)}`,
    )
  }
  const entry = isFamily(tracker)
    ? familySource(tracker, options)
    : checkSource(options, 'registerMetrics(tracker, registry, options): options', [tracker, 'registerMetrics(tracker, registry): tracker'])
  const userLabels = Object.keys(entry.labels).slice(1)
  let state = registries.get(registry)
  if (state) {
    const key = JSON.stringify(entry.labels)
    if (state.entries.some((e) => JSON.stringify(e.labels) === key)) {
      throw invalidArgValue(`registerMetrics: a tracker with the labels ${key} is already registered in this registry`)
    }
    if (JSON.stringify(state.userLabels) !== JSON.stringify(userLabels)) throw labelNamesDiffer(state.userLabels, userLabels)
  } else {
    state = { entries: [], userLabels, names: [] }
    const client = loadPromClient()
    try {
      addFamilies(client, registry, state)
    } catch (err) {
      // e.g. a metric of that name already in the registry: leave it as it was.
      for (const name of state.names) registry.removeSingleMetric(name)
      throw err
    }
    registries.set(registry, state)
  }
  state.entries.push(entry)
  return function unregister() {
    const i = state.entries.indexOf(entry)
    if (i < 0) return
    state.entries.splice(i, 1)
    if (state.entries.length === 0 && registries.get(registry) === state) {
      for (const name of state.names) registry.removeSingleMetric(name)
      registries.delete(registry)
    }
  }
}

/**
 * The error for a tracker whose label names differ from the registry's, with the
 * fix: the labels it lacks, as `labels: { site: 'all', type: 'all' }` (any value
 * that no child has; a plain tracker beside a family: docs/prometheus.md).
 */
function labelNamesDiffer(registered, given) {
  const fill = (names) => `labels: { ${names.map((n) => `${n}: 'all'`).join(', ')} }`
  const lacking = registered.filter((n) => !given.includes(n))
  const extra = given.filter((n) => !registered.includes(n))
  const fixes = []
  if (lacking.length) fixes.push(`give this one ${fill(lacking)}`)
  if (extra.length) fixes.push(`register the ones before with ${fill(extra)}`)
  return invalidArgValue(
    `registerMetrics: trackers in one registry need the same label names; registered: [${registered}], given: [${given}]; ${fixes.join(', and ')} (docs/prometheus.md#several-budgets-in-one-scrape)`,
  )
}

// One prom-client metric per family, reading every tracker of `state` at collect().
function addFamilies(client, registry, state) {
  for (const family of FAMILIES) {
    const Metric = family.type === 'counter' ? client.Counter : client.Gauge
    new Metric({
      name: family.name,
      help: family.help,
      labelNames: ['name', ...state.userLabels, ...family.labels],
      registers: [registry],
      collect() {
        this.reset()
        for (const e of expand(state.entries)) {
          for (const [values, value] of family.samples(cachedSnapshot(e, family))) {
            const labels = { ...e.labels, ...Object.fromEntries(family.labels.map((l, j) => [l, values[j]])) }
            if (family.type === 'counter') this.inc(labels, value)
            else this.set(labels, value)
          }
        }
      },
    })
    state.names.push(family.name)
  }
}

// A family registered whole (`registerMetrics(family, registry, { labels? })`):
// its children are read at each scrape, so a child created later is exported too.
function familySource(family, options, where = 'registerMetrics(family, registry, options): options') {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw invalidArgType(`${where} must be an object, got ${describe(options)}`)
  const unknown = Object.keys(options).filter((k) => k !== 'labels')
  if (unknown.length) throw unknownKey(unknown[0], ['labels'], where, { listed: "labels (the name label is the family's)" })
  const constant = options.labels ?? {}
  if (typeof constant !== 'object' || constant === null || Array.isArray(constant)) {
    throw invalidArgType(`${where}.labels must be an object of strings, got ${describe(constant)}`)
  }
  for (const [key, value] of Object.entries(constant)) {
    if (!isLabelName(key)) throw invalidArgValue(`${where}.labels: '${key}' is not a Prometheus label name (${LABEL_NAME_RULE})`)
    if (RESERVED_LABELS.includes(key)) throw invalidArgValue(`${where}.labels: '${key}' is reserved (${RESERVED_LABELS.join(', ')})`)
    if (family.labelNames.includes(key)) throw invalidArgValue(`${where}.labels: '${key}' is one of the family's label names`)
    if (typeof value !== 'string') throw invalidArgType(`${where}.labels.${key} must be a string, got ${describe(value)}`)
  }
  const names = [...family.labelNames, ...Object.keys(constant)].sort()
  return { family, constant, memo: new WeakMap(), labels: { name: family.name, ...Object.fromEntries(names.map((k) => [k, ''])) } }
}

// The registry's entries with each family replaced by its children now.
function expand(entries) {
  if (!entries.some((e) => e.family)) return entries
  return entries.flatMap((e) => (e.family ? (e.family.closed ? [] : familyEntries(e.family, e.constant, e.memo)) : [e]))
}

module.exports = { METRICS_CONTENT_TYPE, metrics, renderMetrics, registerMetrics, familyMetrics }
