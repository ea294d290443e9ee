// OpenSLO v1 and Sloth prometheus/v1 input (lib/slo/spec.js, `rules --spec`):
// what each document becomes, the rules promtool accepts, and bad documents
// refused with the document and field named.
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { readSpec } = require('../../lib/slo/spec.js')
const { prometheusRules } = require('../..')
const { promtool, withPromtoolRules, tempDir, run, cli } = require('../fixtures/prometheus-tools')

const DAY = 86_400_000

const OPENSLO = `apiVersion: openslo/v1
kind: SLO
metadata:
  name: turnstile-availability
  displayName: Turnstile solves
  labels:
    team: captcha
spec:
  description: Turnstile solves that succeed
  service: captcha-workers
  indicator:
    metadata:
      name: turnstile-solves
    spec:
      ratioMetric:
        counter: true
        bad:
          metricSource:
            type: Prometheus
            spec:
              query: captcha_budget_solves_total{name="turnstile",outcome="failure"}
        total:
          metricSource:
            type: Prometheus
            spec:
              query: captcha_budget_solves_total{name="turnstile"}
  timeWindow:
    - duration: 28d
      isRolling: true
  budgetingMethod: Occurrences
  objectives:
    - displayName: Turnstile solves succeed
      target: 0.99
---
apiVersion: openslo/v1
kind: Service
metadata:
  name: captcha-workers
spec:
  description: a Service, skipped
---
apiVersion: openslo/v1
kind: SLO
metadata:
  name: image
spec:
  indicator:
    spec:
      ratioMetric:
        counter: true
        good:
          metricSource:
            spec:
              query: captcha_budget_solves_total{name="image",outcome="success"}
        total:
          metricSource:
            spec:
              query: captcha_budget_solves_total{name="image"}
  timeWindow:
    - duration: 7d
      isRolling: true
  budgetingMethod: Occurrences
  objectives:
    - name: tight
      target: 0.97
    - name: loose
      targetPercent: 90
`

const SLOTH = `version: prometheus/v1
service: captcha
labels:
  owner: captcha-team
slos:
  - name: recaptcha-solves
    objective: 96.2
    description: reCAPTCHA solves that succeed
    sli:
      events:
        error_query: sum(rate(captcha_budget_solves_total{name="recaptcha",outcome="failure"}[{{.window}}]))
        total_query: sum(rate(captcha_budget_solves_total{name="recaptcha"}[{{.window}}]))
    alerting:
      name: RecaptchaSolves
      labels:
        category: availability
      annotations:
        runbook_url: https://runbooks.example/recaptcha
      page_alert:
        labels:
          severity: pageteam
      ticket_alert:
        labels:
          severity: slack
`

test('OpenSLO: one SLO per objective, Service documents skipped, the counter read from the queries', (t) => {
  const { slos, where } = readSpec(OPENSLO, { file: 'slo.yaml' })
  t.deepEqual(slos, [
    {
      id: 'turnstile-availability',
      name: 'turnstile',
      targetRate: 0.99,
      windowMs: 28 * DAY,
      labels: { service: 'captcha-workers', team: 'captcha' },
      description: 'Turnstile solves that succeed',
    },
    { id: 'image-tight', name: 'image', targetRate: 0.97, windowMs: 7 * DAY },
    { id: 'image-loose', name: 'image', targetRate: 0.9, windowMs: 7 * DAY },
  ])
  t.deepEqual(where, [
    'slo.yaml: document 1 (OpenSLO SLO "turnstile-availability")',
    'slo.yaml: document 3 (OpenSLO SLO "image")',
    'slo.yaml: document 3 (OpenSLO SLO "image")',
  ])
})

test("Sloth: service-slo ids, the objective in percent, the period from the caller (Sloth's default 30 d), alerting mapped", (t) => {
  const { slos } = readSpec(SLOTH)
  t.deepEqual(slos, [
    {
      id: 'captcha-recaptcha-solves',
      name: 'recaptcha',
      targetRate: 0.962,
      windowMs: 30 * DAY,
      labels: { service: 'captcha', owner: 'captcha-team' },
      description: 'reCAPTCHA solves that succeed',
      alerting: {
        name: 'RecaptchaSolves',
        labels: { category: 'availability' },
        annotations: { runbook_url: 'https://runbooks.example/recaptcha' },
        page: { labels: { severity: 'pageteam' } },
        ticket: { labels: { severity: 'slack' } },
      },
    },
  ])
  t.is(readSpec(SLOTH, { windowMs: 7 * DAY }).slos[0].windowMs, 7 * DAY)
  const alerts = prometheusRules(slos).match(/alert: \w+/g)
  t.deepEqual(alerts, [
    'alert: RecaptchaSolvesFastBurn',
    'alert: RecaptchaSolvesBudgetSpend',
    'alert: RecaptchaSolvesSlowBurn',
    'alert: RecaptchaSolvesBudgetLeak',
    'alert: RecaptchaSolvesSourceAbsent',
  ])
})

withPromtoolRules(test)('rules --spec: OpenSLO and Sloth files give rules promtool accepts, in both formats', async (t) => {
  t.truthy(promtool, 'promtool is not installed: apt-get install -y prometheus (.ci/run does)')
  if (!promtool) return
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'openslo.yaml'), OPENSLO)
  fs.writeFileSync(path.join(dir, 'sloth.yaml'), SLOTH)
  const openslo = await cli(['rules', '--spec', path.join(dir, 'openslo.yaml'), '-o', path.join(dir, 'openslo.rules.yml')])
  t.is(openslo.code, 0, openslo.stderr)
  const sloth = await cli(['rules', '--spec', path.join(dir, 'sloth.yaml'), '--window', '28d', '-o', path.join(dir, 'sloth.rules.yml')])
  t.is(sloth.code, 0, sloth.stderr)
  const text = fs.readFileSync(path.join(dir, 'openslo.rules.yml'), 'utf8')
  t.is(text, prometheusRules(readSpec(OPENSLO).slos))
  t.deepEqual(text.match(/- name: captcha-budget-.*/g), [
    '- name: captcha-budget-turnstile-availability',
    '- name: captcha-budget-image-tight',
    '- name: captcha-budget-image-loose',
  ])
  t.regex(fs.readFileSync(path.join(dir, 'sloth.rules.yml'), 'utf8'), /period: 4w/)
  const checked = await run(promtool, ['check', 'rules', path.join(dir, 'openslo.rules.yml'), path.join(dir, 'sloth.rules.yml')])
  t.is(checked.code, 0, checked.stdout + checked.stderr)
  t.is((checked.stdout.match(/SUCCESS/g) || []).length, 2)
  const operator = await cli(['rules', '--spec', path.join(dir, 'openslo.yaml'), '--format', 'prometheus-operator'])
  t.is(operator.code, 0, operator.stderr)
  t.regex(operator.stdout, /^kind: PrometheusRule$/m)
  // Named after the spec: its documents' names differ, so the file's.
  t.regex(operator.stdout, /^ {2}name: openslo$/m)
})

// Bad documents: exit 2, the file, the document and the field named.
const bad = [
  [
    OPENSLO.replace('budgetingMethod: Occurrences', 'budgetingMethod: Timeslices'),
    'document 1 (OpenSLO SLO "turnstile-availability"): spec.budgetingMethod must be Occurrences (the budget counts solves, not time slices), got "Timeslices"',
  ],
  [
    OPENSLO.replace('duration: 28d', 'duration: 1M'),
    'document 1 (OpenSLO SLO "turnstile-availability"): spec.timeWindow[0].duration 1M is a calendar length; give a fixed one in days, e.g. 30d',
  ],
  [
    OPENSLO.replace('duration: 28d', 'duration: 0d'),
    'document 1 (OpenSLO SLO "turnstile-availability"): spec.timeWindow[0].duration must be a positive duration of at most 2^53 − 1 ms, got "0d"',
  ],
  [OPENSLO.replace('isRolling: true', 'isRolling: false'), 'document 1 (OpenSLO SLO "turnstile-availability"): spec.timeWindow[0].isRolling must be true'],
  [
    OPENSLO.replace('target: 0.99', 'target: 99'),
    'document 1 (OpenSLO SLO "turnstile-availability"): spec.objectives[0].target must be a number in (0, 1) (or targetPercent in (0, 100)), got 99',
  ],
  [
    OPENSLO.replace('{name="turnstile",outcome="failure"}', '{name="turnstile"}'),
    'document 1 (OpenSLO SLO "turnstile-availability"): spec.indicator.spec.ratioMetric.bad.metricSource.spec.query must select outcome="failure"',
  ],
  // A sum of a selector is taken (sum(rate(…)) over each window), a rate over a fixed range is not.
  [
    OPENSLO.replace('query: captcha_budget_solves_total{name="turnstile"}', 'query: sum(rate(http_requests_total{job="api"}[5m]))'),
    'document 1 (OpenSLO SLO "turnstile-availability"): spec.indicator.spec.ratioMetric.total.metricSource.spec.query must be a series selector or a sum of one (its rate() over each alert window is taken), or PromQL with {{.window}} as its range, got "sum(rate(http_requests_total{job=\\"api\\"}[5m]))"',
  ],
  [
    OPENSLO.replace('{name="image"}', '{name="images"}'),
    'document 3 (OpenSLO SLO "image"): spec.indicator.spec.ratioMetric good and total must select the same name, got "image" and "images"',
  ],
  [
    OPENSLO.replace('counter: true', 'counter: false'),
    'document 1 (OpenSLO SLO "turnstile-availability"): spec.indicator.spec.ratioMetric.counter false (gauges) is not supported: the rules take rate() of counters',
  ],
  [
    OPENSLO.replace('type: Prometheus', 'type: Datadog'),
    'document 1 (OpenSLO SLO "turnstile-availability"): spec.indicator.spec.ratioMetric.bad.metricSource.type must be Prometheus: the rules are PromQL, got "Datadog"',
  ],
  [OPENSLO.replace('metadata:\n  name: image\n', 'metadata:\n  displayName: Image\n'), 'document 3 (OpenSLO SLO): metadata.name is required'],
  [
    OPENSLO.replace('    team: captcha', '    app.kubernetes.io/team: captcha'),
    'document 1 (OpenSLO SLO "turnstile-availability"): metadata.labels.app.kubernetes.io/team is not a Prometheus label name',
  ],
  [
    SLOTH.replace('objective: 96.2', 'objective: 0.962x'),
    'document 1 (Sloth service "captcha"): slos[0].objective must be a percentage in (0, 100), got "0.962x"',
  ],
  [
    SLOTH.replace('outcome="failure"', 'outcome="success"'),
    'document 1 (Sloth service "captcha"): slos[0].sli.events.error_query must select outcome="failure"',
  ],
  [
    SLOTH.replace('page_alert:\n        labels:\n          severity: pageteam', 'page_alert:\n        labels:\n          slo: x'),
    "document 1 (Sloth service \"captcha\"): invalid SLO 'captcha-recaptcha-solves': slo.alerting.page.labels: 'slo' is set by the rules",
  ],
  [
    'apiVersion: openslo/v2alpha\nkind: SLO\n',
    'document 1: neither an OpenSLO document (apiVersion: openslo/v1 or openslo/v1alpha), a Sloth spec (version: prometheus/v1, or apiVersion: sloth.slok.dev/v1) nor a Pyrra ServiceLevelObjective',
  ],
  ['apiVersion: openslo/v1\nkind: Service\nmetadata:\n  name: x\n', 'no SLO in it'],
  ['slos: [\n', 'document 1: not valid YAML'],
  [`${OPENSLO}---\n${OPENSLO.split('---')[0]}`, "two SLOs have the id 'turnstile-availability': give each its own slo.id"],
]
for (const [text, message] of bad) {
  test(`rules --spec refuses: ${message.replace(/^document \d+ \([^)]*\): /, '').slice(0, 110)}`, async (t) => {
    const dir = tempDir(t)
    const file = path.join(dir, 'slo.yaml')
    fs.writeFileSync(file, text)
    const out = await cli(['rules', '--spec', file])
    t.is(out.code, 2, out.stdout)
    t.is(out.stdout, '')
    const expected = message.startsWith('two SLOs') ? message : `${file}: ${message}`
    t.true(out.stderr.startsWith(`captcha-budget rules: ${expected}`), out.stderr)
  })
}

test('rules --spec: an unreadable file and flags that the file replaces exit 2', async (t) => {
  const missing = await cli(['rules', '--spec', '/nonexistent/slo.yaml'])
  t.is(missing.code, 2)
  t.regex(missing.stderr, /^captcha-budget rules: --spec: cannot read \/nonexistent\/slo\.yaml: ENOENT/)
  const both = await cli(['rules', '--spec', '/nonexistent/slo.yaml', '--target', '0.9'])
  t.is(both.code, 2)
  t.regex(both.stderr, /--target cannot be given with --spec/)
})

withPromtoolRules(test)('the OpenSLO and Sloth files of docs/slo-ecosystem.md give rules promtool accepts', async (t) => {
  t.truthy(promtool, 'promtool is not installed: apt-get install -y prometheus (.ci/run does)')
  if (!promtool) return
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'slo-ecosystem.md'), 'utf8')
  const files = [...doc.matchAll(/```yaml\n# (\S+\.yaml) — (?:OpenSLO v1|Sloth prometheus\/v1)\n([\s\S]*?)```/g)]
  t.deepEqual(
    files.map((f) => f[1]),
    ['slo.yaml', 'sloth.yaml'],
  )
  const dir = tempDir(t)
  for (const [, name, text] of files) {
    fs.writeFileSync(path.join(dir, name), text)
    const out = await cli(['rules', '--spec', path.join(dir, name), '-o', path.join(dir, `${name}.rules.yml`)])
    t.is(out.code, 0, out.stderr)
  }
  const checked = await run(promtool, ['check', 'rules', ...files.map((f) => path.join(dir, `${f[1]}.rules.yml`))])
  t.is(checked.code, 0, checked.stdout + checked.stderr)
  // One 30 d SLO each: the 1 m pieces (2) + this hour's and the hours' sums of them (2) + their
  // sums per window (1) + solves, failures, error ratio and burn rate, each one rule over every
  // window (label window) + the pieces while an alert fires and the recovery spans' sums of them
  // (2) + the held copies of solves and failures (2) + the recovery spans' lengths + 7 per SLO +
  // 4 pair alerts + absent (26).
  const count = 2 + 2 + 1 + 4 + 2 + 2 + 1 + 7 + 5
  t.is((checked.stdout.match(new RegExp(`SUCCESS: ${count} rules found`, 'g')) || []).length, 2, checked.stdout)
})
