// The replay's text output says what --json says: a window that ends under
// --min-events gives no verdict ("insufficient data"), not a silent "healthy".
const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { cli } = require('../fixtures/prometheus-tools')

function log(t, lines) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-budget-replay-text-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'solves.jsonl')
  fs.writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n')
  return file
}

const at = (minute) => new Date(Date.UTC(2026, 2, 2, 0, minute)).toISOString()

test('a window under --min-events at the end: the text says insufficient data, as --json does', async (t) => {
  const file = log(
    t,
    Array.from({ length: 20 }, (_, i) => ({ ts: at(i), type: 'image', ok: i % 4 !== 0 })),
  )
  const text = await cli(['replay', file, '--min-events', '50'])
  t.is(text.code, 0, text.stderr)
  t.true(text.stdout.includes('    no verdict   fewer than 50 solves in the window (--min-events): insufficient data\n'), text.stdout)
  const json = JSON.parse((await cli(['replay', file, '--min-events', '50', '--json'])).stdout)
  t.true(json.trackers[0].final.insufficientData)
})

test('with enough solves in the window there is no such line', async (t) => {
  const file = log(
    t,
    Array.from({ length: 20 }, (_, i) => ({ ts: at(i), type: 'image', ok: true })),
  )
  const text = await cli(['replay', file, '--min-events', '20'])
  t.is(text.code, 0, text.stderr)
  t.false(text.stdout.includes('no verdict'))
})

test('a status change less than a window after the first solve says the window is still filling; one after a window does not', async (t) => {
  // 1 h window, 95 %: 100 good solves a minute apart from 00:00, failures at 00:20 …,
  // then good solves until 02:00 and a second burst of failures at 02:30.
  const lines = []
  for (let m = 0; m < 20; m++) lines.push({ ts: at(m), type: 'image', ok: true })
  for (let m = 20; m < 26; m++) lines.push({ ts: at(m), type: 'image', ok: false })
  for (let m = 26; m < 150; m++) lines.push({ ts: at(m), type: 'image', ok: true })
  for (let m = 150; m < 160; m++) lines.push({ ts: at(m), type: 'image', ok: false })
  const file = log(t, lines)
  const text = await cli(['replay', file, '--window', '1h', '--min-events', '10'])
  t.is(text.code, 0, text.stderr)
  const changes = text.stdout.split('\n').filter((l) => / (healthy|warning|critical|exhausted) → /.test(l))
  const early = changes.filter((l) => l.includes('T00:'))
  const late = changes.filter((l) => l.includes('T02:'))
  t.true(early.length > 0 && late.length > 0, text.stdout)
  // The first failure at 00:20 turns the status: 20 min into the 1 h window.
  t.regex(early[0], /^  2026-03-02T00:20:00\.000Z  all  healthy → \w+ +budget left .*  \(window filling: 20m of 1h\)$/)
  for (const l of late) t.false(l.includes('window filling'), l)
  const json = JSON.parse((await cli(['replay', file, '--window', '1h', '--min-events', '10', '--json'])).stdout)
  t.is(json.trackers[0].firstEventAt, '2026-03-02T00:00:00.000Z')
})
