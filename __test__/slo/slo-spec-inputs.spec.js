// Issue 30, items 11 and 19: what `rules --spec` and `--alerts` read. A device,
// a FIFO or a directory is refused at once (`/dev/zero` aborted with
// std::bad_alloc, a FIFO hung), a file over the bound without reading it, stdin
// up to the bound; YAML keys are still unique per map. A key named like an
// Object method (`constructor`, `__proto__`) is refused as any unknown key, and
// a Pyrra label `pyrra.dev/__proto__` as any bad label name (it was dropped).
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { readSpec } = require('../../lib/slo/spec.js')
const { MAX_SPEC_BYTES } = require('../../lib/cli/commands/rules.js')
const { MAX_ALERTS_BYTES } = require('../../lib/cli/values.js')
const { tempDir, cli } = require('../fixtures/prometheus-tools')

const MIB = 1024 * 1024
const SLOTH = `version: prometheus/v1
service: captcha
slos:
  - name: turnstile
    objective: 95
    sli:
      events:
        error_query: sum(rate(captcha_budget_solves_total{name="turnstile",outcome="failure"}[{{.window}}]))
        total_query: sum(rate(captcha_budget_solves_total{name="turnstile"}[{{.window}}]))
    alerting:
      name: TurnstileBudget
`
const pyrra = (label) => `apiVersion: pyrra.dev/v1alpha1
kind: ServiceLevelObjective
metadata:
  name: turnstile
  labels:
    ${label}: x
spec:
  target: "95"
  window: 30d
  indicator:
    ratio:
      errors:
        metric: captcha_budget_solves_total{name="turnstile",outcome="failure"}
      total:
        metric: captcha_budget_solves_total{name="turnstile"}
`
const refusal = (text) => {
  try {
    readSpec(text, { file: 'slo.yaml' })
  } catch (err) {
    return err.message
  }
  return null
}

test('a spec key named like an Object method is refused as an unknown key, not with the method as the reason', (t) => {
  const unknown = refusal(SLOTH.replace('    objective: 95', '    objective: 95\n    unknownKey: 1'))
  t.regex(unknown, /slos\[0\]\.unknownKey is not supported \(known here: /)
  for (const key of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    t.is(refusal(SLOTH.replace('    objective: 95', `    objective: 95\n    ${key}: 1`)), unknown.replace('unknownKey', key), key)
  }
})

test('a Pyrra label pyrra.dev/__proto__ is refused as other bad label names are, not dropped', (t) => {
  t.is(refusal(pyrra('pyrra.dev/team')), null)
  const bad = refusal(pyrra('pyrra.dev/__meta'))
  t.regex(bad, /metadata\.labels\[pyrra\.dev\/\]\.__meta is not a Prometheus label name/)
  t.is(refusal(pyrra('pyrra.dev/__proto__')), bad.replace('__meta', '__proto__'))
})

test('YAML keys must still be unique in each map (the check is linear now)', (t) => {
  const twice = SLOTH.replace('service: captcha\n', 'service: captcha\nservice: other\n')
  t.is(refusal(twice), 'slo.yaml: document 1: not valid YAML: Map keys must be unique at line 3, column 1:')
  // In a nested map, and as a quoted and a plain key of the same text.
  t.regex(
    refusal(SLOTH.replace('    objective: 95', '    objective: 95\n    "objective": 96')),
    /^slo\.yaml: document 1: not valid YAML: Map keys must be unique at line 6, column 5/,
  )
  // The same text as a string and as a number is two keys (1 and '1').
  t.regex(refusal(SLOTH.replace('    objective: 95', "    objective: 95\n    1: a\n    '1': b")), /slos\[0\]\.1 is not supported/)
})

test('rules --spec and --alerts refuse a device, a FIFO and a directory at once (exit 2)', async (t) => {
  const dir = tempDir(t)
  const fifo = path.join(dir, 'fifo')
  execFileSync('mkfifo', [fifo])
  const why = (what) => `is not a regular file (a FIFO, device or directory?): give ${what} file`
  for (const file of ['/dev/zero', fifo, dir]) {
    const spec = await cli(['rules', '--spec', file], { timeout: 20_000 })
    t.is(spec.code, 2, file)
    t.is(spec.stderr, `captcha-budget rules: --spec: cannot read ${file}: ${why('an SLO spec')}, or '-' for stdin\n`)
    const alerts = await cli(['rules', '--name', 'x', '--target', '0.95', '--window', '1d', '--alerts', file], { timeout: 20_000 })
    t.is(alerts.code, 2, file)
    t.is(
      alerts.stderr,
      `captcha-budget rules: --alerts: not 'default', 'none', inline JSON (starting with '[') or a readable file: ${file}: ${why('an alert policy')}\n`,
    )
  }
  // replay reads --alerts the same way.
  const replay = await cli(['replay', '-', '--alerts', '/dev/zero'], { input: '{"ts":0,"ok":true}\n', timeout: 20_000 })
  t.is(replay.code, 2)
  t.is(
    replay.stderr,
    `captcha-budget replay: --alerts: not 'default', 'none', inline JSON (starting with '[') or a readable file: /dev/zero: ${why('an alert policy')}\n`,
  )
})

test('rules --spec and --alerts refuse a file over their bound without reading it, and stdin past it', async (t) => {
  t.is(MAX_SPEC_BYTES, 4 * MIB)
  t.is(MAX_ALERTS_BYTES, 1 * MIB)
  const dir = tempDir(t)
  const big = path.join(dir, 'big.yaml')
  const fd = fs.openSync(big, 'w')
  fs.ftruncateSync(fd, 4 * MIB + 1)
  fs.closeSync(fd)
  const spec = await cli(['rules', '--spec', big])
  t.is(spec.stderr, `captcha-budget rules: --spec: cannot read ${big}: larger than the 4 MiB (4194304 bytes) an SLO spec may hold\n`)
  const alerts = await cli(['rules', '--name', 'x', '--target', '0.95', '--window', '1d', '--alerts', big])
  t.is(
    alerts.stderr,
    `captcha-budget rules: --alerts: not 'default', 'none', inline JSON (starting with '[') or a readable file: ${big}: larger than the 1 MiB (1048576 bytes) an alert policy may hold\n`,
  )
  // Stdin has no size: read up to the bound, then refused.
  const piped = await cli(['rules', '--spec', '-'], { input: `# ${'x'.repeat(4 * MIB)}\n` })
  t.is(piped.code, 2)
  t.is(piped.stderr, 'captcha-budget rules: --spec: cannot read -: larger than the 4 MiB (4194304 bytes) an SLO spec may hold\n')
  // At the bound exactly, a spec is read.
  const exact = path.join(dir, 'exact.yaml')
  fs.writeFileSync(exact, `${SLOTH}#${'x'.repeat(4 * MIB - SLOTH.length - 2)}\n`)
  t.is(fs.statSync(exact).size, 4 * MIB)
  const ok = await cli(['rules', '--spec', exact])
  t.is(ok.code, 0, ok.stderr)
})
