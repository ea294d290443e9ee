// The replay's text output says what --json says: a window that ends under
// --min-events gives no verdict ("insufficient data"), not a silent "healthy".
const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { cli } = require('./fixtures/prometheus-tools')

function log(t, lines) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-budget-replay-text-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'solves.jsonl')
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n')
  return file
}

const at = (minute) => new Date(Date.UTC(2026, 2, 2, 0, minute)).toISOString()

test('a window under --min-events at the end: the text says insufficient data, as --json does', async (t) => {
  const file = log(t, Array.from({ length: 20 }, (_, i) => ({ ts: at(i), type: 'image', ok: i % 4 !== 0 })))
  const text = await cli(['replay', file, '--min-events', '50'])
  t.is(text.code, 0, text.stderr)
  t.true(text.stdout.includes('    no verdict   fewer than 50 solves in the window (--min-events): insufficient data\n'), text.stdout)
  const json = JSON.parse((await cli(['replay', file, '--min-events', '50', '--json'])).stdout)
  t.true(json.trackers[0].final.insufficientData)
})

test('with enough solves in the window there is no such line', async (t) => {
  const file = log(t, Array.from({ length: 20 }, (_, i) => ({ ts: at(i), type: 'image', ok: true })))
  const text = await cli(['replay', file, '--min-events', '20'])
  t.is(text.code, 0, text.stderr)
  t.false(text.stdout.includes('no verdict'))
})
