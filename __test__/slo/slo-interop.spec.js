// The public example files of Sloth, OpenSLO and Pyrra (copies under
// fixtures/slo-examples/, with each project's licence) through `rules --spec`
// as written: every one the product claims to accept gives rules promtool
// accepts; every other is refused for its documented reason (the field named).
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const YAML = require('yaml')
const { prometheusRules } = require('../..')
const { promtool, withPromtoolRules, tempDir, run, cli } = require('../fixtures/prometheus-tools')

const EXAMPLES = path.join(__dirname, '..', 'fixtures', 'slo-examples')
const PLUGINS = 'is not supported: Sloth plugins are Go code that rewrites the generated rules'
const TIMESLICES = 'spec.budgetingMethod must be Occurrences (the budget counts solves, not time slices)'

// Every example file, and what the product does with it: the number of SLOs it
// reads, or the refusal (the field and why), as docs/slo-ecosystem.md lists them.
const CLAIMS = {
  'sloth/getting-started.yml': 1,
  'sloth/home-wifi.yml': 2,
  'sloth/k8s-getting-started.yml': 1,
  'sloth/k8s-home-wifi.yml': 2,
  'sloth/k8s-multifile.yml': 2,
  'sloth/kubernetes-apiserver.yml': 2,
  'sloth/multifile.yml': 2,
  'sloth/no-alerts.yml': 1,
  'sloth/openslo-getting-started.yml': 1,
  'sloth/openslo-kubernetes-apiserver.yml': 3,
  'sloth/contrib-denominator-corrected.yaml': `spec.sloPlugins ${PLUGINS}`,
  'sloth/contrib-slo-plugins.yml': `slos[0].plugins ${PLUGINS}`,
  'sloth/plugin-getting-started.yml': `slos[0].sli.plugin ${PLUGINS}`,
  'sloth/plugin-k8s-getting-started.yml': `spec.slos[0].sli.plugin ${PLUGINS}`,
  'sloth/slo-plugin-getting-started.yml': `slo_plugins ${PLUGINS}`,
  'sloth/slo-plugin-k8s-getting-started.yml': `spec.sloPlugins ${PLUGINS}`,
  'sloth/victoria-metrics.yml': `slo_plugins ${PLUGINS}`,
  'sloth/raw-home-wifi.yml': 'slos[0].sli.raw is not supported: a raw error ratio has no event counts',
  'sloth/windows/7d.yaml': 'kind must be PrometheusServiceLevel: "AlertWindows" is not an SLO',
  'sloth/windows/custom-30d.yaml': 'kind must be PrometheusServiceLevel: "AlertWindows" is not an SLO',
  'openslo/README/foo-slo.yaml': 'spec.indicator.spec.ratioMetric.good.metricSource.type must be Prometheus: the rules are PromQL, got "Datadog"',
  'openslo/budgeting-method/occurences-slo.yaml': 'spec.indicator.spec.thresholdMetric is not supported: a threshold (latency) indicator',
  'openslo/budgeting-method/ratio-timeslices.yaml': `${TIMESLICES}, got "RatioTimeslices"`,
  'openslo/budgeting-method/timeslices-slo.yaml': `${TIMESLICES}, got "Timeslices"`,
  'openslo/treat-low-traffic-as-equally-important/timeslices-slo.yaml': `${TIMESLICES}, got "Timeslices"`,
  'pyrra/README/pyrra-api-errors.yaml': 1,
  'pyrra/docs/performance-mode.yaml': 1,
  'pyrra/caddy-response-latency.yaml': 1,
  'pyrra/docker-compose/pyrra/prometheus-http.yaml': 1,
  'pyrra/mimir/example-slo.yaml': 1,
  'pyrra/nginx.yaml': 2,
  'pyrra/parca-grpc-queryrange-errors.yaml': 1,
  'pyrra/prometheus-http.yaml': 1,
  'pyrra/prometheus-operator.yaml': 1,
  'pyrra/prometheus-probe-success.yaml': 'spec.indicator.bool_gauge is not supported: a boolean gauge (probe_success) is sampled, not counted',
  'pyrra/pyrra-connect-errors.yaml': 1,
  'pyrra/pyrra-connect-latency.yaml': 1,
  'pyrra/pyrra-filesystem-errors.yaml': 1,
  'pyrra/pyrra-kubernetes-errors.yaml': 1,
  'pyrra/thanos-grpc.yaml': 1,
  'pyrra/thanos-http.yaml': 1,
}
for (const name of [
  'apiserver-read-cluster-latency',
  'apiserver-read-namespace-latency',
  'apiserver-read-resource-latency',
  'apiserver-read-response-errors',
  'apiserver-write-response-errors',
  'coredns-response-errors',
  'kubelet-request-errors',
  'kubelet-runtime-errors',
  'prometheus-notification-errors',
  'prometheus-operator-http-errors',
  'prometheus-operator-reconcile-errors',
  'prometheus-query-errors',
  'prometheus-rule-evaluation-failures',
  'prometheus-sd-kubernetes-errors',
]) {
  CLAIMS[`pyrra/kubernetes/manifests/slos/slo-${name}.yaml`] = 1
}

const example = (file) => path.join(EXAMPLES, file)
const groupsOf = (text) => YAML.parse(text.replace(/^#.*\n/, '')).groups
/** The first (shortest) window's error ratio: its `or` leg of captcha_budget:solve_error:ratio, and the window. */
function firstRatio(group) {
  const { expr } = group.rules.find((r) => r.record === 'captcha_budget:solve_error:ratio')
  const [, leg, window] = /^label_replace\(\n([\s\S]*?),\n"window", "([^"]+)", "", ""\)/.exec(expr)
  return { leg, window }
}

test("every example file is claimed, with each project's licence beside them", (t) => {
  const files = []
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(full)
      else if (/\.ya?ml$/.test(entry.name)) files.push(path.relative(EXAMPLES, full))
    }
  }
  walk(EXAMPLES)
  t.deepEqual(files.sort(), Object.keys(CLAIMS).sort())
  for (const project of ['sloth', 'openslo', 'pyrra'])
    t.regex(fs.readFileSync(path.join(EXAMPLES, project, 'LICENSE'), 'utf8'), /Apache License\s+Version 2\.0/)
  // Sloth's 20 (2 of them OpenSLO v1alpha); OpenSLO's 4 and its README's SLO; Pyrra's 28 and the SLOs of its README and docs.
  const count = (project) => files.filter((f) => f.startsWith(`${project}/`)).length
  t.deepEqual([count('sloth'), count('openslo'), count('pyrra')], [20, 5, 30])
  // As docs/slo-ecosystem.md counts them: accepted, refused.
  const accepted = (project) => Object.entries(CLAIMS).filter(([f, c]) => f.startsWith(`${project}/`) && typeof c === 'number').length
  t.deepEqual([accepted('sloth'), accepted('openslo'), accepted('pyrra')], [10, 0, 29])
})

test('docs/slo-ecosystem.md lists every example file with the verdict the spec checks, and the counts', (t) => {
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'slo-ecosystem.md'), 'utf8')
  const section = doc.slice(doc.indexOf('### The public examples'), doc.indexOf("## Sloth's series names"))
  const rows = section.split('\n').filter((l) => l.startsWith('| `'))
  for (const [file, claim] of Object.entries(CLAIMS)) {
    const slos = /\/kubernetes\/manifests\/slos\/(slo-[^/]+)\.yaml$/.exec(file)
    const row = rows.find((r) =>
      slos ? r.startsWith('| `pyrra/kubernetes/manifests/slos/`') && r.includes(`\`${slos[1]}\``) : r.startsWith(`| \`${file}\` |`),
    )
    t.truthy(row, file)
    if (!row) continue
    if (typeof claim === 'number') t.regex(row, new RegExp(`\\| accepted: ${claim} SLOs?( each)?\\b`), file)
    else t.true(row.includes(`| refused: \`${claim.split(' ')[0]}\``), `${file}: ${row}`)
  }
  t.is(rows.length, Object.keys(CLAIMS).length - 13, 'one row per file, the 14 Kubernetes SLOs in one')
  for (const [project, name] of [
    ['sloth', 'Sloth'],
    ['openslo', 'OpenSLO'],
    ['pyrra', 'Pyrra'],
  ]) {
    const claims = Object.entries(CLAIMS).filter(([f]) => f.startsWith(`${project}/`))
    const accepted = claims.filter(([, c]) => typeof c === 'number').length
    t.true(section.includes(`| ${name} | ${claims.length} | ${accepted} | ${claims.length - accepted}`), name)
  }
})

withPromtoolRules(test)('rules --spec takes every claimed example as written, and promtool check rules accepts the rules', async (t) => {
  t.truthy(promtool, 'promtool is not installed: apt-get install -y prometheus (.ci/run does)')
  if (!promtool) return
  const dir = tempDir(t)
  const outputs = []
  for (const [file, claim] of Object.entries(CLAIMS)) {
    if (typeof claim !== 'number') continue
    const out = path.join(dir, `${file.replace(/\//g, '_')}.rules.yml`)
    const res = await cli(['rules', '--spec', example(file), '-o', out])
    t.is(res.code, 0, `${file}: ${res.stderr}`)
    if (res.code !== 0) continue
    // One rule group per SLO of the file.
    t.is(groupsOf(fs.readFileSync(out, 'utf8')).length, claim, file)
    outputs.push(out)
  }
  const checked = await run(promtool, ['check', 'rules', ...outputs], { timeout: 120_000 })
  t.is(checked.code, 0, checked.stdout + checked.stderr)
  t.is((checked.stdout.match(/SUCCESS/g) || []).length, outputs.length)
})

test('the examples it does not take are refused for their named reason, with nothing written', async (t) => {
  for (const [file, claim] of Object.entries(CLAIMS)) {
    if (typeof claim === 'number') continue
    const res = await cli(['rules', '--spec', example(file)])
    t.is(res.code, 2, file)
    t.is(res.stdout, '', file)
    t.true(res.stderr.startsWith(`captcha-budget rules: ${example(file)}: document `), res.stderr)
    t.true(res.stderr.includes(`): ${claim}`), `${file}: ${res.stderr}`)
  }
})

test("Sloth's getting-started: the spec's labels reach every alert; the queries are Sloth's own, per window", async (t) => {
  const res = await cli(['rules', '--spec', example('sloth/getting-started.yml')])
  t.is(res.code, 0, res.stderr)
  const [group] = groupsOf(res.stdout)
  const alerts = group.rules.filter((r) => r.alert)
  t.true(alerts.length >= 2)
  t.true(alerts.every((a) => a.alert.startsWith('MyServiceHighErrorRate')))
  t.is(alerts.at(-1).alert, 'MyServiceHighErrorRateSourceAbsent')
  // From the file: service, labels (tier: "2"), alerting.labels, page_alert / ticket_alert labels.
  for (const a of alerts) {
    t.like(
      a.labels,
      { slo: 'myservice-requests-availability', service: 'myservice', owner: 'myteam', repo: 'myorg/myservice', tier: '2', category: 'availability' },
      a.alert,
    )
    t.is(a.annotations.summary, "High error rate on 'myservice' requests responses")
  }
  for (const a of alerts.filter((x) => x.labels.pair)) {
    const page = a.labels.severity === 'pageteam'
    t.like(a.labels, page ? { routing_key: 'myteam' } : { severity: 'slack', slack_channel: '#alerts-myteam' }, a.alert)
  }
  t.true(alerts.some((a) => a.labels.severity === 'pageteam') && alerts.some((a) => a.labels.severity === 'slack'))
  // The shortest window's error ratio (the first recorded), and the absent alert over it.
  const ratio = firstRatio(group)
  const w = ratio.window
  t.is(
    ratio.leg,
    `(sum(rate(http_request_duration_seconds_count{job="myservice",code=~"(5..|429)"}[${w}])))\n/\n(sum(rate(http_request_duration_seconds_count{job="myservice"}[${w}])))`,
  )
  const absent = alerts.at(-1)
  t.is(absent.expr, `absent(sum(rate(http_request_duration_seconds_count{job="myservice"}[${w}])))`)
})

test('label values that are not strings are read as Sloth reads them: tier: 2 is "2", generated: true is "true"', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'sloth.yaml')
  const text = fs.readFileSync(example('sloth/getting-started.yml'), 'utf8').replace('tier: "2"', 'tier: 2\n  generated: true\n  ratio: 0.5')
  fs.writeFileSync(file, text)
  const res = await cli(['rules', '--spec', file])
  t.is(res.code, 0, res.stderr)
  const [group] = groupsOf(res.stdout)
  t.like(group.rules.find((r) => r.record === 'captcha_budget:slo_info').labels, { tier: '2', generated: 'true', ratio: '0.5' })
  t.like(group.rules.find((r) => r.alert).labels, { tier: '2', generated: 'true', ratio: '0.5' })
})

test('no-alerts (page and ticket disabled): no alert at all, not even SourceAbsent', async (t) => {
  const res = await cli(['rules', '--spec', example('sloth/no-alerts.yml')])
  t.is(res.code, 0, res.stderr)
  const [group] = groupsOf(res.stdout)
  t.deepEqual(
    group.rules.filter((r) => r.alert),
    [],
  )
  t.true(group.rules.some((r) => r.record === 'captcha_budget:error_budget_remaining:ratio'))
})

test('a PrometheusRule takes its name, namespace and Kubernetes labels from the spec', async (t) => {
  const sloth = await cli(['rules', '--spec', example('sloth/k8s-home-wifi.yml'), '--format', 'prometheus-operator'])
  t.is(sloth.code, 0, sloth.stderr)
  const object = YAML.parse(sloth.stdout.replace(/^#.*\n/, ''))
  t.deepEqual(object.metadata, {
    name: 'sloth-slo-home-wifi',
    namespace: 'monitoring',
    labels: { prometheus: 'prometheus', role: 'alert-rules', app: 'sloth', 'app.kubernetes.io/managed-by': 'captcha-error-budget' },
  })
  const pyrra = await cli(['rules', '--spec', example('pyrra/prometheus-http.yaml'), '--format', 'prometheus-operator', '--namespace', 'slos'])
  t.is(pyrra.code, 0, pyrra.stderr)
  t.like(YAML.parse(pyrra.stdout.replace(/^#.*\n/, '')).metadata, {
    name: 'prometheus-api-query',
    namespace: 'slos',
    labels: { prometheus: 'k8s', role: 'alert-rules' },
  })
  // A Sloth prometheus/v1 file: its service.
  const plain = await cli(['rules', '--spec', example('sloth/home-wifi.yml'), '--format', 'prometheus-operator'])
  t.regex(plain.stdout, /^ {2}name: home-wifi$/m)
})

test("Pyrra's grouping: the SLI summed by its labels, so each handler is judged (and alerted) on its own", async (t) => {
  const res = await cli(['rules', '--spec', example('pyrra/prometheus-http.yaml')])
  t.is(res.code, 0, res.stderr)
  const [group] = groupsOf(res.stdout)
  // Whatever the policy's windows: the first recorded error ratio, over its own window.
  const ratio = firstRatio(group)
  const w = ratio.window
  t.is(
    ratio.leg,
    `(sum by (handler) (rate(prometheus_http_requests_total{handler=~"/api.*",code=~"5.."}[${w}])))\n/\n(sum by (handler) (rate(prometheus_http_requests_total{handler=~"/api.*"}[${w}])))`,
  )
})

test("Pyrra's latencyNative: requests are the native histogram's count, errors those not under the latency (histogram_fraction), per grouping", async (t) => {
  const res = await cli(['rules', '--spec', example('pyrra/pyrra-connect-latency.yaml')])
  t.is(res.code, 0, res.stderr)
  const [group] = groupsOf(res.stdout)
  const ratio = firstRatio(group)
  const w = ratio.window
  // latency: 200ms is 0.2 s; grouping service, method; the metric as written.
  const rate = `sum by (service, method) (rate(connect_server_requests_duration_seconds{job="pyrra",code="ok"}[${w}]))`
  const total = `histogram_count(${rate})`
  t.is(ratio.leg, `((${total}) - (histogram_fraction(0, 0.2, ${rate}) * ${total}))\n/\n(${total})`)
  t.like(group.rules.find((r) => r.record === 'captcha_budget:slo_info').labels, { slo: 'pyrra-connect-latency' })
  // A latency that is no duration, a metric that is no selector: refused by field.
  const dir = tempDir(t)
  const text = fs.readFileSync(example('pyrra/pyrra-connect-latency.yaml'), 'utf8')
  for (const [from, to, message] of [
    ['latency: 200ms', 'latency: fast', 'spec.indicator.latencyNative.latency must be a duration like 200ms or 1s, got "fast"'],
    ['metric: connect_server', 'metric: sum(connect_server', 'spec.indicator.latencyNative.total.metric must be a series selector (a native histogram)'],
  ]) {
    const file = path.join(dir, 'native.yaml')
    fs.writeFileSync(file, text.replace(from, to))
    const bad = await cli(['rules', '--spec', file])
    t.is(bad.code, 2)
    t.true(bad.stderr.startsWith(`captcha-budget rules: ${file}: document 1 (Pyrra "ServiceLevelObjective" "pyrra-connect-latency"): ${message}`), bad.stderr)
  }
})

test('ids with spaces: an OpenSLO objective named by its displayName gets dashes; a given id with spaces names a valid PrometheusRule', async (t) => {
  const dir = tempDir(t)
  const file = path.join(dir, 'openslo.yaml')
  const text = fs
    .readFileSync(example('sloth/openslo-getting-started.yml'), 'utf8')
    .replace(
      '      target: 0.999',
      '      target: 0.999\n      displayName: Good experience\n    - ratioMetrics:\n        bad:\n          query: sum(rate(errors_total[{{.window}}]))\n        total:\n          query: sum(rate(requests_total[{{.window}}]))\n      target: 0.99\n      displayName: Loose  one',
    )
  fs.writeFileSync(file, text)
  const res = await cli(['rules', '--spec', file])
  t.is(res.code, 0, res.stderr)
  t.deepEqual(
    groupsOf(res.stdout).map((g) => g.name),
    ['captcha-budget-sloth-slo-my-service-Good-experience', 'captcha-budget-sloth-slo-my-service-Loose-one'],
  )
  const operator = prometheusRules({ id: 'my slo', name: 'turnstile', targetRate: 0.99, windowMs: 30 * 86_400_000 }, { format: 'prometheus-operator' })
  t.regex(operator, /^ {2}name: captcha-budget-my-slo$/m)
})

withPromtoolRules(test)("--compat sloth: Sloth's series and info names, with Sloth's labels and values, as promtool test rules evaluates them", async (t) => {
  t.truthy(promtool, 'promtool is not installed: apt-get install -y prometheus (.ci/run does)')
  if (!promtool) return
  const dir = tempDir(t)
  const rules = path.join(dir, 'sloth.rules.yml')
  const res = await cli(['rules', '--spec', example('sloth/getting-started.yml'), '--compat', 'sloth', '-o', rules])
  t.is(res.code, 0, res.stderr)
  const records = new Set(
    groupsOf(fs.readFileSync(rules, 'utf8'))
      .flatMap((g) => g.rules.map((r) => r.record))
      .filter(Boolean),
  )
  // Sloth's own names, from its generated output for this file (examples/_gen/getting-started.yml).
  for (const name of [
    'slo:sli_error:ratio_rate5m',
    'slo:sli_error:ratio_rate30m',
    'slo:sli_error:ratio_rate1h',
    'slo:sli_error:ratio_rate6h',
    'slo:sli_error:ratio_rate3d',
    'slo:sli_error:ratio_rate2h',
    'slo:sli_error:ratio_rate1d',
    'slo:sli_error:ratio_rate30d',
    'slo:objective:ratio',
    'slo:error_budget:ratio',
    'slo:time_period:days',
    'slo:current_burn_rate:ratio',
    'slo:period_burn_rate:ratio',
    'slo:period_error_budget_remaining:ratio',
    'sloth_slo_info',
  ]) {
    t.true(records.has(name), name)
  }
  // 1 request in 100 failing, 100 a minute: error ratio 0.01, burn 0.01 / 0.001 = 10 (hand-worked).
  const sloth = { sloth_id: 'myservice-requests-availability', sloth_service: 'myservice', sloth_slo: 'requests-availability' }
  const labels = (extra) =>
    Object.entries({ ...extra, owner: 'myteam', repo: 'myorg/myservice', service: 'myservice', ...sloth, tier: '2' })
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k}="${v}"`)
      .join(', ')
  const tests = {
    rule_files: [rules],
    evaluation_interval: '1m',
    tests: [
      {
        interval: '1m',
        input_series: [
          { series: 'http_request_duration_seconds_count{job="myservice",code="200"}', values: '0+99x60' },
          { series: 'http_request_duration_seconds_count{job="myservice",code="500"}', values: '0+1x60' },
        ],
        promql_expr_test: [
          {
            expr: 'slo:sli_error:ratio_rate5m',
            eval_time: '30m',
            exp_samples: [{ labels: `slo:sli_error:ratio_rate5m{${labels({ sloth_window: '5m', slo: sloth.sloth_id })}}`, value: 0.01 }],
          },
          {
            expr: 'slo:current_burn_rate:ratio',
            eval_time: '30m',
            exp_samples: [{ labels: `slo:current_burn_rate:ratio{${labels({ slo: sloth.sloth_id })}}`, value: 10 }],
          },
          { expr: 'slo:time_period:days', eval_time: '30m', exp_samples: [{ labels: `slo:time_period:days{${labels({})}}`, value: 30 }] },
          { expr: 'slo:error_budget:ratio', eval_time: '30m', exp_samples: [{ labels: `slo:error_budget:ratio{${labels({})}}`, value: 0.001 }] },
          {
            expr: 'sloth_slo_info',
            eval_time: '30m',
            exp_samples: [
              {
                labels: `sloth_slo_info{${labels({ sloth_mode: 'cli-gen-prom', sloth_objective: '99.9', sloth_spec: 'prometheus/v1', sloth_version: 'captcha-error-budget' })}}`,
                value: 1,
              },
            ],
          },
        ],
      },
    ],
  }
  const testFile = path.join(dir, 'test.yml')
  fs.writeFileSync(testFile, YAML.stringify(tests))
  const tested = await run(promtool, ['test', 'rules', testFile])
  t.is(tested.code, 0, tested.stdout + tested.stderr)
})

test('prometheusRules: a bad slo.sli, compat or metadata is refused with the field named, nothing written', (t) => {
  const sli = { errorQuery: 'sum(rate(errors_total[{{.window}}]))', totalQuery: 'sum(rate(requests_total[{{.window}}]))' }
  const slo = { id: 'api', sli, targetRate: 0.99, windowMs: 30 * 86_400_000 }
  const cases = [
    [
      { ...slo, sli: { ...sli, errorQuery: 'sum(rate(errors_total[5m]))' } },
      undefined,
      'prometheusRules(slo): slo.sli.errorQuery must use {{.window}} as its range (each window gets its own rate), got "sum(rate(errors_total[5m]))"',
    ],
    [
      { ...slo, sli: { ...sli, totalQuery: 'sum(rate(x{a="{{ $labels.b }}"}[{{.window}}]))' } },
      undefined,
      "prometheusRules(slo): slo.sli.totalQuery may hold no template but {{.window}} (Sloth's only variable)",
    ],
    [
      { ...slo, sli: { ...sli, errorQuery: 'sum(rate(errors_total[{{.window}}])' } },
      undefined,
      "prometheusRules(slo): slo.sli.errorQuery has a '(' at character 4 that is never closed",
    ],
    [
      { ...slo, sli: { ...sli, errorQuery: 'sum(rate(errors_total[{{.window}}])) # all' } },
      undefined,
      'prometheusRules(slo): slo.sli.errorQuery has a # comment at character 38; leave it out',
    ],
    [{ ...slo, sli: { ...sli, ratio: 'x' } }, undefined, "prometheusRules(slo): unknown key 'ratio' in slo.sli; known keys: errorQuery, totalQuery"],
    [{ sli, targetRate: 0.99, windowMs: 30 * 86_400_000 }, undefined, 'prometheusRules(slo): slo.id is required with slo.sli'],
    [slo, { compat: 'pyrra' }, "prometheusRules(slo, options): options.compat must be 'sloth'"],
    [slo, { metadata: { name: 'Not A Name' } }, 'prometheusRules(slo, options): options.metadata.name must be a Kubernetes object name'],
  ]
  for (const [s, options, message] of cases) {
    const err = t.throws(() => prometheusRules(s, options))
    t.is(err.code, 'ERR_INVALID_ARG_VALUE', message)
    t.true(err.message.startsWith(message), err.message)
  }
})

// OpenSLO v1 as its specification writes it: a DataSource, an SLI document named
// by the SLO's indicatorRef, metric sources by metricSourceRef, the README's
// ratioMetric queries (a sum of a counter, and a bare counter), and no
// timeWindow or budgetingMethod (the period is --window; Occurrences).
const OPENSLO_V1 = `apiVersion: openslo/v1
kind: DataSource
metadata:
  name: prometheus-datasource
spec:
  type: Prometheus
  connectionDetails:
    url: http://prometheus:9090
---
apiVersion: openslo/v1
kind: SLO
metadata:
  name: localhost-availability
  labels:
    team: web
spec:
  service: localhost
  indicatorRef: localhost-requests
  objectives:
    - displayName: Good requests
      target: 0.99
---
apiVersion: openslo/v1
kind: SLI
metadata:
  name: localhost-requests
spec:
  ratioMetric:
    counter: true
    good:
      metricSource:
        metricSourceRef: prometheus-datasource
        spec:
          query: sum(localhost_server_requests{code=~"2xx|3xx",host="*",instance="127.0.0.1:9090"})
    total:
      metricSource:
        metricSourceRef: prometheus-datasource
        spec:
          query: localhost_server_requests{code="total",host="*",instance="127.0.0.1:9090"}
`

withPromtoolRules(test)(
  'OpenSLO v1 with an SLI document, a DataSource, sums of counters and no timeWindow: read, and promtool accepts the rules',
  async (t) => {
    t.truthy(promtool, 'promtool is not installed: apt-get install -y prometheus (.ci/run does)')
    if (!promtool) return
    const dir = tempDir(t)
    const file = path.join(dir, 'openslo.yaml')
    fs.writeFileSync(file, OPENSLO_V1)
    const out = path.join(dir, 'rules.yml')
    const res = await cli(['rules', '--spec', file, '--window', '10d', '-o', out])
    t.is(res.code, 0, res.stderr)
    const [group] = groupsOf(fs.readFileSync(out, 'utf8'))
    t.is(group.name, 'captcha-budget-localhost-availability')
    const info = group.rules.find((r) => r.record === 'captcha_budget:slo_info')
    t.like(info.labels, { slo: 'localhost-availability', objective: '0.99', period: '10d', team: 'web', service: 'localhost' })
    // spec.service is the service label of every alert too, as Sloth reads OpenSLO.
    for (const a of group.rules.filter((r) => r.alert)) t.like(a.labels, { service: 'localhost', team: 'web' }, a.alert)
    t.is(group.rules.find((r) => r.record === 'captcha_budget:period:seconds').expr, 'vector(864000)')
    // Errors are total − good, each the sum of the counter's rate over the window.
    const ratio = firstRatio(group)
    const w = ratio.window
    const total = `sum (rate(localhost_server_requests{code="total",host="*",instance="127.0.0.1:9090"}[${w}]))`
    const good = `sum (rate(localhost_server_requests{code=~"2xx|3xx",host="*",instance="127.0.0.1:9090"}[${w}]))`
    t.is(ratio.leg, `((${total}) - (${good}))\n/\n(${total})`)
    const checked = await run(promtool, ['check', 'rules', out])
    t.is(checked.code, 0, checked.stdout + checked.stderr)
  },
)

test('OpenSLO v1: what the rules cannot honour is refused with the field named — a DataSource of another type, a missing SLI, alert policies, composites', async (t) => {
  const dir = tempDir(t)
  const cases = [
    [
      OPENSLO_V1.replace('type: Prometheus', 'type: CloudWatch'),
      'document 2 (OpenSLO SLO "localhost-availability"): spec.indicatorRef (SLI "localhost-requests") spec.ratioMetric.good.metricSource.type must be Prometheus (the type of DataSource "prometheus-datasource"): the rules are PromQL, got "CloudWatch"',
    ],
    [
      OPENSLO_V1.replace('indicatorRef: localhost-requests', 'indicatorRef: other'),
      'document 2 (OpenSLO SLO "localhost-availability"): spec.indicatorRef must name an SLI document of this file (kind: SLI, openslo/v1), got "other"',
    ],
    [
      OPENSLO_V1.replace('      target: 0.99\n', '      target: 0.99\n  alertPolicies:\n    - alertPolicyRef: page-on-burn\n'),
      'document 2 (OpenSLO SLO "localhost-availability"): spec.alertPolicies is not supported: the rules alert with their own multiwindow burn-rate pairs (see --alerts)',
    ],
    [
      OPENSLO_V1.replace('      target: 0.99\n', '      target: 0.99\n      indicatorRef: localhost-requests\n      compositeWeight: 2\n'),
      'document 2 (OpenSLO SLO "localhost-availability"): spec.objectives[0].indicatorRef is not supported: a composite SLO\'s combined budget is not computed',
    ],
    [
      OPENSLO_V1.replace('  service: localhost\n', '  service: localhost\n  budgetingMethod: RatioTimeslices\n'),
      'document 2 (OpenSLO SLO "localhost-availability"): spec.budgetingMethod must be Occurrences (the budget counts solves, not time slices), got "RatioTimeslices"',
    ],
    [
      OPENSLO_V1.replace('  service: localhost\n', '  service: localhost\n  sloPolicy: strict\n'),
      'document 2 (OpenSLO SLO "localhost-availability"): spec.sloPolicy is not supported (known here: description, service, indicator, indicatorRef, timeWindow, budgetingMethod, objectives, alertPolicies)',
    ],
  ]
  for (const [text, message] of cases) {
    const file = path.join(dir, 'openslo.yaml')
    fs.writeFileSync(file, text)
    const res = await cli(['rules', '--spec', file])
    t.is(res.code, 2, message)
    t.is(res.stdout, '')
    t.true(res.stderr.startsWith(`captcha-budget rules: ${file}: ${message}`), res.stderr)
  }
})

test("Pyrra's performanceOverAccuracy: true gives the optimised period rules; --period-rules exact still wins", async (t) => {
  const performance = await cli(['rules', '--spec', example('pyrra/docs/performance-mode.yaml')])
  t.is(performance.code, 0, performance.stderr)
  // Optimised period rules sum recorded increases, so the group states the evaluation interval they assume (1m).
  t.is(groupsOf(performance.stdout)[0].interval, '1m')
  const exact = await cli(['rules', '--spec', example('pyrra/docs/performance-mode.yaml'), '--period-rules', 'exact'])
  t.is(exact.code, 0, exact.stderr)
  t.is(groupsOf(exact.stdout)[0].interval, undefined)
  // Without it: exact.
  const plain = await cli(['rules', '--spec', example('pyrra/README/pyrra-api-errors.yaml')])
  t.is(groupsOf(plain.stdout)[0].interval, undefined)
})
