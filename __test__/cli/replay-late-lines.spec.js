// `captcha-budget replay`: a line counts at its own `ts` whatever the order of the
// lines within the window — its verdict too (`--verdict-field`) — and a line too old
// for the window when it comes is reported (count, line numbers), never ignored silently.
const test = require('ava')
const fs = require('node:fs')
const { replayCli, replayJson, tempFiles } = require('../fixtures/replay/cli')

const T = Date.parse('2025-11-30T00:00:00Z')
const ARGS = ['--min-events', '0', '--alerts', 'none', '--verdict-field', 'verdict']
const toJsonl = (lines) => lines.map((l) => JSON.stringify(l)).join('\n') + '\n'

// Worker A: an hour of solves, one a second (3,600 successes). Worker B's log of the
// first 10 minutes (600 solves, every 60th rejected by the site: 10) appended after it.
const workerA = Array.from({ length: 3600 }, (_, i) => ({ ts: T + i * 1000, ok: true }))
const workerB = Array.from({ length: 600 }, (_, i) => ({ ts: T + i * 1000 + 500, ok: true, ...(i % 60 === 0 ? { verdict: 'rejected' } : {}) }))
const appended = toJsonl([...workerA, ...workerB])
const sorted = toJsonl([...workerA, ...workerB].sort((a, b) => a.ts - b.ts))

test('a verdict on a line an hour behind the latest counts where its line was recorded, as in the sorted log', async (t) => {
  const files = tempFiles({ 'appended.jsonl': appended, 'sorted.jsonl': sorted })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  for (const file of [files['sorted.jsonl'], files['appended.jsonl']]) {
    const r = await replayJson([file, ...ARGS])
    // 4,200 solves in the 24 h window, 10 of them rejected.
    t.like(r.trackers[0].final, { successes: 4190, failures: 10, total: 4200 }, file)
    t.is(r.trackers[0].dropped, 0, file)
    // The advice's baseline counts them too: 4,190 / 4,200.
    t.is(r.advice.rows[0].successRate, 4190 / 4200, file)
  }
})

test('a rejected line dropped as too old for the window is still a failure in the baseline', async (t) => {
  // Window 30 min: worker B's lines come 50–60 min behind the latest, all too old.
  const files = tempFiles({ 'appended.jsonl': appended })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const r = await replayJson([files['appended.jsonl'], ...ARGS, '--window', '30m'])
  t.is(r.trackers[0].dropped, 600)
  // Worker B's lines are 3,601–4,200: the first ten are named.
  t.deepEqual(r.trackers[0].droppedLines, [3601, 3602, 3603, 3604, 3605, 3606, 3607, 3608, 3609, 3610])
  t.regex(r.stderr, /\(dropped, not counted\): lines 3601, 3602, 3603, 3604, 3605, 3606, 3607, 3608, 3609, 3610, …\n/)
  t.is(r.advice.rows[0].successRate, 4190 / 4200)
})

test('lines too old for the window are reported with their count and first line numbers', async (t) => {
  // Lines 1–3,600 in order; then 3 lines of the first minute (more than 30 min behind
  // the latest: dropped), then one a minute behind the latest (counted at its ts).
  const lines = [...workerA, { ts: T, ok: false }, { ts: T + 1000, ok: true }, { ts: T + 2000, ok: false }, { ts: T + 3540_000, ok: false }]
  const files = tempFiles({ 'late.jsonl': toJsonl(lines) })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const r = await replayJson([files['late.jsonl'], '--min-events', '0', '--alerts', 'none', '--window', '30m'])
  t.is(r.trackers[0].dropped, 3)
  t.deepEqual(r.trackers[0].droppedLines, [3601, 3602, 3603])
  t.like(r.trackers[0].final, { failures: 1 })
  t.regex(r.stderr, /warning: 3 solves older than the window when they came \(dropped, not counted\): lines 3601, 3602, 3603\b/)
  const text = await replayCli([files['late.jsonl'], '--min-events', '0', '--alerts', 'none', '--window', '30m'])
  t.is(text.code, 0)
  t.regex(text.stdout, /dropped {6}3 solves older than the window when they came \(out of order\): lines 3601, 3602, 3603\n/)
})

test('the line numbers of dropped solves count blank and bad lines, and a CSV header', async (t) => {
  const hour = Array.from({ length: 60 }, (_, i) => `${T + i * 60_000},1`)
  // Line 1 the header, 2–61 an hour of solves, 62 blank, 63 bad, 64 dropped, 65 fine, 66 dropped.
  const csv = ['ts,ok', ...hour, '  ', 'yesterday,1', `${T},0`, `${T + 3_500_000},0`, `${T + 60_000},0`].join('\r\n') + '\r\n'
  const files = tempFiles({ 'late.csv': csv })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const r = await replayJson([files['late.csv'], '--min-events', '0', '--alerts', 'none', '--window', '30m'])
  t.is(r.badLineCount, 1)
  t.deepEqual(r.trackers[0].droppedLines, [64, 66])
  t.like(r.trackers[0].final, { failures: 1 })
})
