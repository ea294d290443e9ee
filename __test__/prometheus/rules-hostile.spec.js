// Issue 20 items 11 and 12: hostile names, ids, label values, descriptions,
// annotations and pair names. Template syntax in a value that is data (a name,
// an id, a label value, a description, a pair name) is refused: Prometheus would
// expand it in the alerts' annotations and labels (`{{ with query "…" }}` runs a
// query when the alert fires). Characters YAML or Prometheus do not take as they
// are (NEL, U+2028/2029, DEL, C0/C1 controls, BOM, U+FFFE/FFFF, lone surrogates)
// are refused too. Whatever is accepted must give a file `promtool check rules`
// accepts: every accepted combination below is written and checked by promtool.
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { prometheusRules } = require('../..')
const { promtool, withPromtoolRules, tempDir, run, cli } = require('../fixtures/prometheus-tools')

const DAY = 86_400_000
const BASE = { name: 'turnstile', targetRate: 0.95, windowMs: 30 * DAY }
const PAIR = { severity: 'page', longWindowMs: 3_600_000, shortWindowMs: 300_000, burnRate: 14.4 }

// Refused wherever they are data.
const HOSTILE_CHARACTERS = {
  NEL: 'a\u0085b',
  'U+2028': 'a\u2028b',
  'U+2029': 'a\u2029b',
  DEL: 'a\u007fb',
  'a C1 control (CSI)': 'a\u009bb',
  'a lone high surrogate': 'a\ud800b',
  'a lone low surrogate': 'a\udfffb',
  NUL: 'a\u0000b',
  ESC: 'a\u001b[31mb',
  TAB: 'a\tb',
  LF: 'a\nb',
  CR: 'a\rb',
  BOM: 'a\ufeffb',
  'U+FFFF': 'a\uffffb',
  // PromQL's lexer reads the replacement character as invalid UTF-8.
  'U+FFFD in a name': 'a\ufffdb',
}
const TEMPLATES = {
  'a query template': 'x{{ with query "sum(up)" }}{{ . | first | value }}{{ end }}',
  'a bare {{': 'a{{b',
  'a bare }}': 'a}}b',
  'a label reference': '{{ $labels.instance }}',
  'a template comment': '{{/* hi */}}',
}
// Printable but awkward for YAML, PromQL strings or Go templates: accepted, and
// the file must still pass promtool.
const AWKWARD = [
  'a"b',
  'a\\b',
  "it's",
  '$value',
  '%s %d',
  '# hash',
  'key: value',
  '- dash',
  '{single}',
  '}{',
  'a{ {b',
  'a} }b',
  '😀',
  'e\u0301',
  'a\u00a0b',
  'a\u202eb',
  'a\u200db',
  '---',
  '...',
  ' lead',
  'trail ',
  '*alias',
  '&anchor',
  '!tag',
  '|',
  '>',
  '@at',
  '`tick`',
  '中文',
  'null',
  'true',
  '0x1F',
  '1e3',
  '~',
  '? q',
  '[a]',
  '{a: b}',
  '<html>',
  'a,b',
  '\\u2028',
]

// Where a value can go, as an SLO built around it.
const POSITIONS = {
  name: (v) => ({ ...BASE, name: v, id: 'fixed-id' }),
  id: (v) => ({ ...BASE, id: v }),
  'SLO label': (v) => ({ ...BASE, labels: { team: v } }),
  'alert label': (v) => ({ ...BASE, alerting: { labels: { team: v } } }),
  'page label': (v) => ({ ...BASE, alerting: { page: { labels: { route: v } } } }),
  description: (v) => ({ ...BASE, description: v }),
  annotation: (v) => ({ ...BASE, alerting: { annotations: { runbook: v } } }),
  'ticket annotation': (v) => ({ ...BASE, alerting: { ticket: { annotations: { runbook: v } } } }),
  'pair name': (v) => ({ ...BASE, alerts: [{ name: `p ${v}`, ...PAIR }] }),
}
const ANNOTATIONS = ['annotation', 'ticket annotation']
// Text fields may hold tabs and line breaks; annotations are the author's templates (balanced ones pass).
const allowedIn = (position, what) => {
  const text = position === 'description' || ANNOTATIONS.includes(position)
  if (text && ['TAB', 'LF', 'U+FFFD in a name'].includes(what)) return true
  if (ANNOTATIONS.includes(position) && ['a query template', 'a label reference', 'a template comment'].includes(what)) return true
  return false
}

function attempt(slo) {
  try {
    return { text: prometheusRules(slo) }
  } catch (error) {
    return { error }
  }
}

for (const [position, build] of Object.entries(POSITIONS)) {
  test(`hostile ${position}: control characters, separators, lone surrogates and template syntax are refused, naming the field`, (t) => {
    for (const [what, value] of [...Object.entries(HOSTILE_CHARACTERS), ...Object.entries(TEMPLATES)]) {
      const { error } = attempt(build(value))
      if (allowedIn(position, what)) {
        t.is(error, undefined, `${position}: ${what} is allowed`)
        continue
      }
      t.truthy(error, `${position}: ${what} must be refused`)
      if (!error) continue
      t.true(error instanceof TypeError, `${position}: ${what}: ${error.message}`)
      t.is(error.code, 'ERR_INVALID_ARG_VALUE', `${position}: ${what}: ${error.message}`)
      t.regex(error.message, /^prometheusRules\(slo\): slo\.[\w.[\]]+ (holds|has) /, `${position}: ${what}`)
      // The message quotes the value with nothing a terminal or log would act on.
      t.notRegex(error.message, /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff\uffff]|[\ud800-\udfff]/u, `${position}: ${what}`)
    }
  })
}

withPromtoolRules(test)('every accepted hostile or awkward value gives rules that promtool check rules accepts', async (t) => {
  t.truthy(promtool, 'promtool is installed (Debian: apt-get install prometheus)')
  const dir = tempDir(t)
  const files = []
  const refused = []
  for (const [position, build] of Object.entries(POSITIONS)) {
    const values = [...AWKWARD.map((v) => [`'${v}'`, v]), ...Object.entries(HOSTILE_CHARACTERS), ...Object.entries(TEMPLATES)]
    for (const [what, value] of values) {
      const { text, error } = attempt(build(value))
      if (error) {
        refused.push(`${position} ${what}`)
        continue
      }
      const file = path.join(dir, `${files.length}.yml`)
      fs.writeFileSync(file, text)
      files.push(file)
    }
  }
  // Awkward printable values are data Prometheus takes: none refused (but a pair
  // name must give an alert name, so only those made of letters or digits count).
  const awkwardRefused = refused.filter((r) => r.includes("'") && !r.startsWith('pair name'))
  t.deepEqual(awkwardRefused, [])
  const out = await run(promtool, ['check', 'rules', ...files], { timeout: 120_000 })
  const failures = `${out.stdout}\n${out.stderr}`.split(/\n(?=Checking )/).filter((part) => !/SUCCESS/.test(part))
  t.is(out.code, 0, failures.join('\n').slice(0, 4000))
  t.regex(out.stdout, new RegExp(`SUCCESS: \\d+ rules found`))
  t.is((out.stdout.match(/SUCCESS/g) ?? []).length, files.length)
})

// The CLI: refused values exit 2 and write nothing; --slo / --name take the same checks.
const cliRefusals = [
  [['--name', 'x{{ with query "sum(up)" }}{{ end }}', '--slo', 'ok'], "slo.name holds '{{' or '}}': Prometheus would expand it as a Go template"],
  [['--name', 'turnstile', '--slo', 'a{{b'], "slo.id holds '{{' or '}}'"],
  [['--name', 'turnstile', '--slo', 'a\u2028b'], 'slo.id holds U+2028 at character 2: names, ids and label values must be printable Unicode'],
  [['--name', 'a\u0085b'], 'slo.name holds U+0085 at character 2'],
  [['--name', 'a\u007fb'], 'slo.name holds U+007F at character 2'],
]
for (const [args, message] of cliRefusals) {
  const title = JSON.stringify(args.join(' ')).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  test(`rules CLI refuses ${title}: exit 2, no file`, async (t) => {
    const dir = tempDir(t)
    const output = path.join(dir, 'rules.yml')
    const out = await cli(['rules', ...args, '--target', '0.95', '--window', '30d', '-o', output])
    t.is(out.code, 2, out.stderr)
    t.true(out.stderr.startsWith(`captcha-budget rules: invalid SLO: ${message}`), out.stderr)
    t.notRegex(out.stderr, /[\u2028\u0085\u007f]/)
    t.false(fs.existsSync(output))
  })
}

test('rules --spec: a hostile Sloth document is refused with a quoted, escaped id; nothing written', async (t) => {
  const dir = tempDir(t)
  const spec = path.join(dir, 'slo.yaml')
  // YAML's escapes give the parser a lone surrogate and a U+2028: neither can be a UTF-8 file's bytes.
  fs.writeFileSync(
    spec,
    [
      'version: prometheus/v1',
      'service: "captcha\\u2028x"',
      'slos:',
      '  - name: "solves\\ud800"',
      '    objective: 95',
      '    sli:',
      '      events:',
      '        error_query: sum(rate(captcha_budget_solves_total{name="recaptcha",outcome="failure"}[{{.window}}]))',
      '        total_query: sum(rate(captcha_budget_solves_total{name="recaptcha"}[{{.window}}]))',
      '',
    ].join('\n'),
  )
  const output = path.join(dir, 'rules.yml')
  const out = await cli(['rules', '--spec', spec, '-o', output])
  t.is(out.code, 2, out.stderr)
  t.true(
    out.stderr.startsWith(
      `captcha-budget rules: ${spec}: document 1 (Sloth service "captcha\\u2028x"): invalid SLO 'captcha\\u2028x-solves\\ud800': slo.id holds U+2028 at character 8`,
    ),
    out.stderr,
  )
  t.false(fs.existsSync(output))
})

withPromtoolRules(test)('rules CLI: awkward but valid --name and --slo are written, and promtool accepts the file', async (t) => {
  t.truthy(promtool)
  const dir = tempDir(t)
  const output = path.join(dir, 'rules.yml')
  const out = await cli(['rules', '--name', 'a"b\\c {x} $v #h', '--slo', "it's: - 😀 { } ---", '--target', '0.95', '--window', '30d', '-o', output])
  t.is(out.code, 0, out.stderr)
  const check = await run(promtool, ['check', 'rules', output])
  t.is(check.code, 0, `${check.stdout}${check.stderr}`)
})
