// Issue 30, item 3: a log's values reach the terminal and the SVG escaped, as spec
// errors already are (lib/util/errors.js printable): a `site` value with ESC sequences
// set the window title and cleared the screen, and C0 characters made the chart
// not well-formed XML.
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { XMLValidator } = require('fast-xml-parser')
const { replayCli, tempFiles } = require('../fixtures/replay/cli')
const { T0 } = require('../fixtures/replay/logs')

// A window title, a screen clear, a C1 CSI, a NUL, a line separator and a byte order mark (a lone surrogate is a bad line).
const HOSTILE = 'a\u001b]0;pwned\u0007\u001b[2J\u009b31m\u0000\u2028\ufeff.example'
const ESCAPED = 'a\\u001b]0;pwned\\u0007\\u001b[2J\\u009b31m\\u0000\\u2028\\ufeff.example'
// What a terminal or an XML parser would act on or refuse: every C0 but line feed, DEL, C1, U+2028/9, lone surrogates.
// oxlint-disable-next-line no-control-regex -- control characters are what this spec looks for
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

function log() {
  let text = ''
  for (let i = 0; i < 200; i++) {
    text += `${JSON.stringify({ ts: T0 + i * 60_000, site: i % 2 ? HOSTILE : 'b.example', ok: i % 4 !== 1 })}\n`
  }
  return text
}

test('replay --by site prints a hostile value escaped, and no control character but line feeds', async (t) => {
  const files = tempFiles({ 'solves.jsonl': log() })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const out = await replayCli([files['solves.jsonl'], '--by', 'site', '--min-events', '0', '--window', '1h', '--no-progress'])
  t.is(out.code, 0, out.stderr)
  t.false(CONTROL.test(out.stdout), JSON.stringify(out.stdout.match(CONTROL)))
  t.false(CONTROL.test(out.stderr))
  // In the header's list of trackers, in the summary and in the advice.
  t.true(out.stdout.includes(`one tracker per site: ${ESCAPED}, b.example`), out.stdout.split('\n')[1])
  t.true(out.stdout.includes(`\n  ${ESCAPED}: SLO 95.0 % over 1h, 100 solves\n`))
  t.regex(out.stdout, new RegExp(`\\n  ${ESCAPED.replace(/[\\[\]().]/g, '\\$&')} +100 `))
})

test('replay --chart writes a hostile value escaped: well-formed XML without C0 characters', async (t) => {
  const files = tempFiles({ 'solves.jsonl': log() })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const chart = path.join(files.dir, 'chart.svg')
  const out = await replayCli([files['solves.jsonl'], '--by', 'site', '--min-events', '0', '--window', '1h', '--no-progress', '--chart', chart])
  t.is(out.code, 0, out.stderr)
  const svg = fs.readFileSync(chart, 'utf8')
  t.false(CONTROL.test(svg.replace(/\n/g, '')), JSON.stringify(svg.match(CONTROL)))
  t.is(XMLValidator.validate(svg), true)
  t.true(svg.includes(`data-tracker="${ESCAPED}"`))
})
