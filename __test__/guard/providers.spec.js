// The provider profiles (lib/guard/profiles.js) and their page (docs/providers.md): the
// page's tables are the data, row for row.
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { PROVIDERS } = require('../../lib/guard/profiles')

const page = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'providers.md'), 'utf8')

/** The page's table of each provider: name → [[code, outcome, back-off, why], …], and its doc link. */
function pageTables() {
  const tables = {}
  for (const part of page.split(/^### /m).slice(1)) {
    const section = part.split(/^## /m)[0] // the last profile ends where the next part begins
    const heading = /^.*\(`([a-z0-9]+)`\)/.exec(section)
    if (heading === null) continue
    const rows = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split(' | ').map((cell) => cell.replace(/^\| |\s*\|$/g, '').replace(/`/g, '')))
    const doc = /Codes: \[[^\]]+\]\(([^)]+)\)/.exec(section)?.[1]
    tables[heading[1]] = { rows, doc }
  }
  return tables
}

// The back-off as the page writes it, from ms.
const backoffText = (ms) => (ms === 0 ? '—' : ms % 60_000 === 0 ? `${ms / 60_000} min` : `${ms / 1000} s`)

test('docs/providers.md has one table per profile, row for row the data', (t) => {
  const tables = pageTables()
  t.deepEqual(Object.keys(tables), Object.keys(PROVIDERS))
  for (const [name, profile] of Object.entries(PROVIDERS)) {
    const expected = Object.entries(profile.codes).map(([code, [outcome, why, backoffMs]]) => [code, outcome, backoffText(backoffMs), why])
    t.deepEqual(tables[name].rows, expected, name)
    t.is(tables[name].doc, profile.doc, name)
  }
})

test('every row: an outcome of the four (success is never a code), a reason, a back-off in whole ms', (t) => {
  for (const [name, profile] of Object.entries(PROVIDERS)) {
    for (const [code, [outcome, why, backoffMs]] of Object.entries(profile.codes)) {
      t.true(['failure', 'excluded', 'capacity'].includes(outcome), `${name} ${code}`)
      t.true(typeof why === 'string' && why.length > 0, `${name} ${code}`)
      t.true(Number.isInteger(backoffMs) && backoffMs >= 0, `${name} ${code}`)
    }
  }
})

test("the issue's examples: the same code, different meanings", (t) => {
  const outcome = (provider, code) => PROVIDERS[provider].codes[code][0]
  t.is(outcome('2captcha', 'ERROR_ZERO_BALANCE'), 'excluded')
  t.is(outcome('anticaptcha', 'ERROR_ZERO_BALANCE'), 'excluded')
  t.is(outcome('captchaai', 'ERROR_ZERO_BALANCE'), 'capacity') // "NO AVAILABLE THREADS"
  t.is(outcome('2captcha', 'ERROR_NO_SLOT_AVAILABLE'), 'capacity')
  t.is(outcome('anticaptcha', 'ERROR_NO_SLOT_AVAILABLE'), 'capacity')
  // 2Captcha's published waits: 5 s after NO_SLOT, 60 s after ZERO_BALANCE.
  t.is(PROVIDERS['2captcha'].codes.ERROR_NO_SLOT_AVAILABLE[2], 5000)
  t.is(PROVIDERS['2captcha'].codes.ERROR_ZERO_BALANCE[2], 60_000)
  // The caller-side codes the yes/no classifier missed are excluded at 2Captcha.
  for (const code of [
    'ERROR_WRONG_GOOGLEKEY',
    'ERROR_DOMAIN_NOT_ALLOWED',
    'ERROR_EMPTY_ACTION',
    'ERROR_TOKEN_EXPIRED',
    'ERROR_IP_ADDRES',
    'ERROR_PROXY_CONNECTION_FAILED',
    'MAX_USER_TURN',
    'ERROR: 1001',
    'ERROR: 1005',
  ]) {
    t.is(outcome('2captcha', code), 'excluded', code)
  }
})
