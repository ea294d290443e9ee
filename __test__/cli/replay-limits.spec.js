// `captcha-budget replay` on hostile input: timestamps in the wrong unit, lines
// longer than the reader's chunk or than the 1 MiB a line may hold, input that
// is nothing but blank lines. Work is counted in bytes (the reader's `stats`) and
// memory bounded by a child's peak RSS, never by timing.
const test = require('ava')
const { spawnSync } = require('node:child_process')
const path = require('node:path')
const { Readable } = require('node:stream')
const { replayCli, replayJson, tempFiles } = require('../fixtures/replay/cli')
const { T0 } = require('../fixtures/replay/logs')

const { readLog, MAX_LINE_BYTES } = require('../../lib/cli/replay/reader')

const FIELDS = { ts: 'ts', ok: 'ok', type: 'type' }
const ARGS = ['--window', '12h', '--min-events', '0']
const KIB = 1024
const MIB = 1024 * KIB

/** Every batch of `readLog` over `chunks` (Buffers, as a stream delivers them), and the reader's stats. */
async function readAll(chunks, options = {}) {
  const stats = { copied: 0, parsed: 0, maxHeld: 0 }
  const batches = []
  for await (const batch of readLog({ input: '-', fields: FIELDS, stream: Readable.from(chunks), stats, ...options })) batches.push(batch)
  const events = batches.flatMap((b) => [...b.ts])
  const badLines = batches.flatMap((b) => b.badLines)
  return { stats, events, badLines, lines: batches.at(-1).lines, bytes: batches.at(-1).bytes, format: batches.at(-1).format }
}

/** `text` cut into Buffers of `size` bytes (the last one shorter). */
function chunked(text, size) {
  const buf = Buffer.from(text)
  const out = []
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size))
  return out
}

// 1000 solves 10 s apart from T0, every tenth failed: 100 failures, 900 successes.
function tenSecondLog(stamp = (ts) => ts) {
  let text = ''
  for (let i = 0; i < 1000; i++) text += `${JSON.stringify({ ts: stamp(T0 + i * 10_000, i), ok: i % 10 !== 0 })}\n`
  return text
}

test('one epoch-µs timestamp is one bad line, counted and reported; the other 999 solves count', async (t) => {
  // Line 501 (i = 500, a failure) in µs: read as ms it is the year 58 000-odd, and
  // every later solve fell out of the window as old (499 of 999 counted, 0 bad lines).
  const files = tempFiles({ 'us.jsonl': tenSecondLog((ts, i) => (i === 500 ? ts * 1000 : ts)) })
  const r = await replayJson([files['us.jsonl'], ...ARGS])
  t.is(r.badLineCount, 1)
  t.is(r.badLines[0].line, 501)
  // T0 + 5000 s = 2026-03-01T01:23:20Z.
  t.is(
    r.badLines[0].message,
    'bad timestamp 1772328200000000: looks like epoch microseconds (2026-03-01T01:23:20Z if so); timestamps are epoch ms: divide by 1000, or write ISO 8601',
  )
  t.is(r.events, 999)
  const final = r.trackers[0].final
  t.deepEqual([final.total, final.failures, final.dropped], [999, 99, 0])
  t.is(r.to, new Date(T0 + 999 * 10_000).toISOString())
})

test('epoch seconds are refused with a hint, not read as January 1970', async (t) => {
  const files = tempFiles({ 's.jsonl': tenSecondLog((ts) => ts / 1000), 'mixed.csv': `ts,ok\n${T0},true\n${T0 / 1000 + 1},false\n${T0 + 2000},false\n` })
  const r = await replayCli([files['s.jsonl'], ...ARGS])
  t.is(r.code, 2)
  const lines = r.stderr.trim().split('\n')
  // The first 20 bad lines are printed (as for any bad line), then why nothing was replayed.
  t.is(lines.length, 20 + 1)
  t.is(
    lines[0],
    'captcha-budget replay: line 1: bad timestamp 1772323200: looks like epoch seconds (2026-03-01T00:00:00Z if so); timestamps are epoch ms: multiply by 1000, or write ISO 8601 (skipped)',
  )
  t.is(lines.at(-1), 'captcha-budget replay: nothing to replay: no valid event in 1000 line(s)')
  // In CSV alike; the lines around it count.
  const mixed = await replayJson([files['mixed.csv'], ...ARGS])
  t.deepEqual(mixed.badLines, [
    {
      line: 3,
      message: 'bad timestamp 1772323201: looks like epoch seconds (2026-03-01T00:00:01Z if so); timestamps are epoch ms: multiply by 1000, or write ISO 8601',
    },
  ])
  t.deepEqual([mixed.events, mixed.trackers[0].final.failures], [2, 1])
})

test('a bad value is quoted as written: 9007199254740993, not its float …992', async (t) => {
  const files = tempFiles({ 'big.jsonl': `{"ts":${T0},"ok":true}\n{"ts":9007199254740993,"ok":true}\n{"ts":${T0},"ok":9007199254740993}\n` })
  const r = await replayJson([files['big.jsonl'], ...ARGS])
  t.deepEqual(
    r.badLines.map((b) => b.message.split(':')[0]),
    ['bad timestamp 9007199254740993', 'bad ok 9007199254740993'],
  )
})

test('a line longer than the read chunk is copied once, not once per chunk', async (t) => {
  // 900 KiB (under the maximum) arriving in 64 KiB chunks: 15 chunks of one line.
  const long = `{"ts":${T0},"ok":true,"pad":"${'x'.repeat(900 * KIB)}"}\n{"ts":${T0 + 1000},"ok":false}\n`
  const r = await readAll(chunked(long, 64 * KIB))
  t.deepEqual(r.events, [T0, T0 + 1000])
  t.deepEqual(r.badLines, [])
  // Every byte copied at most once and parsed once (a copy per chunk: 15 × 450 KiB on average ≈ 7.5 × the input).
  t.true(r.stats.copied <= r.bytes, `copied ${r.stats.copied} of ${r.bytes}`)
  t.true(r.stats.parsed <= r.bytes, `parsed ${r.stats.parsed} of ${r.bytes}`)
})

test('a line over 1 MiB is one bad line; the reader holds at most 1 MiB of it, and the lines after it count', async (t) => {
  t.is(MAX_LINE_BYTES, MIB)
  const head = `{"ts":${T0},"ok":true}\n`
  const long = `{"ts":${T0},"ok":true,"pad":"${'x'.repeat(8 * MIB)}"}`
  const tail = `\n{"ts":${T0 + 1000},"ok":false}\n{"ts":${T0 + 2000},"ok":true}`
  const r = await readAll(chunked(head + long + tail, 64 * KIB))
  t.deepEqual(r.badLines, [{ line: 2, message: `line too long: ${long.length} bytes, over the 1 MiB (1048576 bytes) a line may hold` }])
  t.deepEqual(r.events, [T0, T0 + 1000, T0 + 2000])
  t.is(r.lines, 4)
  // Held: below the maximum plus one chunk; nothing of the long line copied or parsed beyond that.
  t.true(r.stats.maxHeld <= MIB + 64 * KIB, `held ${r.stats.maxHeld}`)
  t.true(r.stats.copied + r.stats.parsed <= 2 * (MIB + 64 * KIB), `copied ${r.stats.copied}, parsed ${r.stats.parsed}`)
  // The same line inside one big chunk: the parser's own check, the same message.
  const whole = await readAll([Buffer.from(head + long + tail)])
  t.deepEqual(whole.badLines, r.badLines)
  t.deepEqual(whole.events, r.events)
  // An unfinished last line over the maximum too.
  const last = await readAll(chunked(head + long, 64 * KIB))
  t.deepEqual(last.badLines, [{ line: 2, message: `line too long: ${long.length} bytes, over the 1 MiB (1048576 bytes) a line may hold` }])
})

test('input that opens with many blank lines is read in one pass, and the line numbers hold', async (t) => {
  const blanks = '\n'.repeat(4 * MIB)
  for (const [format, body] of [
    ['jsonl', `{"ts":${T0},"ok":true}\n{"ts":"soon","ok":true}\n`],
    ['csv', `ts,ok\n${T0},true\nsoon,true\n`],
  ]) {
    const r = await readAll(chunked(blanks + body, 64 * KIB))
    t.is(r.format, format)
    t.deepEqual(r.events, [T0])
    const badLine = format === 'csv' ? 4 * MIB + 3 : 4 * MIB + 2
    t.deepEqual(
      r.badLines.map((b) => b.line),
      [badLine],
    )
    t.true(r.stats.copied + r.stats.parsed <= 2 * r.bytes, `${format}: copied ${r.stats.copied}, parsed ${r.stats.parsed} of ${r.bytes}`)
    // Blank lines after the format is known too.
    const after = await readAll(chunked(body + blanks + body, 64 * KIB))
    t.deepEqual(after.events, [T0, T0])
    t.true(after.stats.copied + after.stats.parsed <= 2 * after.bytes)
  }
})

test('a 1 GiB line through the reader: one bad line, and the process stays far below the line in memory', (t) => {
  // A child streams the line into readLog from one reused 64 KiB buffer and prints its peak RSS.
  const script = `
    const { Readable } = require('node:stream')
    const { readLog } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'cli', 'replay', 'reader.js'))})
    const piece = Buffer.alloc(64 * 1024, 0x78)
    function* chunks() {
      yield Buffer.from('{"ts":${T0},"ok":true}\\n')
      for (let i = 0; i < 16384; i++) yield piece
      yield Buffer.from('\\n{"ts":${T0 + 1000},"ok":false}\\n')
    }
    ;(async () => {
      const bad = []
      let events = 0
      for await (const b of readLog({ input: '-', fields: { ts: 'ts', ok: 'ok', type: 'type' }, stream: Readable.from(chunks()) })) {
        bad.push(...b.badLines)
        events += b.ts.length
      }
      console.log(JSON.stringify({ bad, events, maxRssKiB: process.resourceUsage().maxRSS }))
    })()
  `
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
  t.is(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  t.deepEqual(out.bad, [{ line: 2, message: 'line too long: 1073741824 bytes, over the 1 MiB (1048576 bytes) a line may hold' }])
  t.is(out.events, 2)
  // Holding the line (or a copy of it) would take ≥ 1 GiB; node itself needs ~50 MiB, and
  // the garbage of the dropped pieces, which a loaded machine collects late, ~200 MiB at most.
  t.true(out.maxRssKiB < 512 * 1024, `peak RSS ${out.maxRssKiB} KiB`)
})

test('a timestamp over 366 days after the latest before it is a bad line, not a jump that drops the rest', async (t) => {
  // Line 501 (a failure) written 2062 for 2026: read as is, the 499 solves after it were
  // older than the window and dropped. 2062-03-01 is 13 149 days (36 × 365 + 9 leap days)
  // after 2026-03-01, T0; the latest before line 501 is T0 + 4990 s.
  const files = tempFiles({ 'typo.jsonl': tenSecondLog((ts, i) => (i === 500 ? new Date(ts).toISOString().replace('2026', '2062') : ts)) })
  const r = await replayJson([files['typo.jsonl'], ...ARGS])
  t.deepEqual(r.badLines, [
    {
      line: 501,
      message:
        "bad timestamp 2062-03-01T01:23:20Z: 13149 days after the latest before it (2026-03-01T01:23:10Z), far outside the log's range (at most 366 days ahead)",
    },
  ])
  const final = r.trackers[0].final
  t.deepEqual([r.events, final.total, final.failures, final.dropped], [999, 999, 99, 0])
})
