// `rules --format prometheus-operator`: the PrometheusRule's metadata.name, made of the
// SLO id, is a name Kubernetes takes (RFC 1123 subdomain), or the command exits 2 naming the id.
const test = require('ava')
const YAML = require('yaml')
const { prometheusRules } = require('../..')
const { cli } = require('../fixtures/prometheus-tools')

const ARGS = ['rules', '--name', 'turnstile', '--target', '0.95', '--window', '30d', '--format', 'prometheus-operator']

// Kubernetes' rule, written out here: at most 253 characters, dot-separated labels of
// 1–63 lower-case alphanumerics and '-', each starting and ending alphanumeric.
function isSubdomain(name) {
  return name.length <= 253 && name.split('.').every((label) => /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(label))
}

const metadataName = (stdout) => YAML.parse(stdout.replace(/^#.*\n/, '')).metadata.name

test('ids Kubernetes would refuse as they are become a valid name', async (t) => {
  const cases = [
    ['checkout_', 'captcha-budget-checkout'],
    ['café', 'captcha-budget-cafe'],
    ['Shop.', 'captcha-budget-shop'],
    ['a..b', 'captcha-budget-a.b'],
    ['a.-b_', 'captcha-budget-a.b'],
    ['turnstile-95-30d', 'captcha-budget-turnstile-95-30d'],
  ]
  for (const [id, expected] of cases) {
    const r = await cli([...ARGS, '--slo', id])
    t.is(r.code, 0, r.stderr)
    t.is(metadataName(r.stdout), expected, id)
  }
})

test('a long id: every label at most 63 characters, the name at most 253', async (t) => {
  // 'captcha-budget-' (15) + 60 x: a first label of 75, cut to 63; then 4 labels of 70 y, each cut to 63.
  const id = `${'x'.repeat(60)}.${Array.from({ length: 4 }, () => 'y'.repeat(70)).join('.')}`
  const r = await cli([...ARGS, '--slo', id])
  t.is(r.code, 0, r.stderr)
  const name = metadataName(r.stdout)
  t.true(isSubdomain(name), name)
  // 63 + 3 × (1 + 63) = 255 > 253: two whole y labels (191), then '.' and 61 y make 253.
  t.is(name, `captcha-budget-${'x'.repeat(48)}.${'y'.repeat(63)}.${'y'.repeat(63)}.${'y'.repeat(61)}`)
})

test('an id of which no character can stand in a name exits 2 naming the id, nothing written', async (t) => {
  const r = await cli([...ARGS, '--slo', '日本'])
  t.is(r.code, 2)
  t.is(r.stdout, '')
  t.regex(r.stderr, /^captcha-budget rules: invalid SLO: slo.id '日本': no Kubernetes object name can be made of it/)
})

test('prometheusRules: the same name from the library; a metadata.name with an empty or dashed label is refused', (t) => {
  const slo = { name: 'turnstile', targetRate: 0.95, windowMs: 30 * 86_400_000 }
  t.regex(prometheusRules({ ...slo, id: 'checkout_' }, { format: 'prometheus-operator' }), /^ {2}name: captcha-budget-checkout$/m)
  for (const name of ['a..b', 'a.-b', 'shop.', `${'a'.repeat(64)}.b`]) {
    const err = t.throws(() => prometheusRules({ ...slo, id: 'x' }, { format: 'prometheus-operator', metadata: { name } }), { instanceOf: TypeError }, name)
    t.is(err.code, 'ERR_INVALID_ARG_VALUE')
    t.regex(err.message, /options\.metadata\.name must be a Kubernetes object name/)
  }
})
