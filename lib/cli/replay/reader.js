'use strict'
// Streams a solve log — JSON Lines or CSV, from a file or stdin — through the
// native line parser, a chunk at a time: the log is never held whole, and a
// line split across chunks waits for the rest of it.
const fs = require('node:fs')
const path = require('node:path')
const { parseLogChunk } = require('../../native/load-native.js')
const { UsageError } = require('../../util/errors.js')
const { fieldHint } = require('./field-hint.js')

const CHUNK_BYTES = 1 << 20
// The longest line read (MAX_LINE_BYTES in crates/budget-core/src/logparse.rs): a longer one is one bad line.
const MAX_LINE_BYTES = 1 << 20
// The most characters of the input a message quotes: a bad line may be megabytes long.
const QUOTE_MAX = 100
const FORMATS = ['jsonl', 'csv']

/** `text`, or its first QUOTE_MAX characters and how long it is. */
function excerpt(text) {
  return text.length <= QUOTE_MAX ? text : `${text.slice(0, QUOTE_MAX)}… (${text.length} characters)`
}

// Each "…" run of `message` (backslash escapes skipped) as an excerpt. A loop,
// not a regular expression: V8's backtracking overflows its stack on megabytes.
function shortenQuoted(message) {
  let out = ''
  let from = 0
  for (;;) {
    const open = message.indexOf('"', from)
    if (open === -1) break
    let close = open + 1
    while (close < message.length && message[close] !== '"') close += message[close] === '\\' ? 2 : 1
    if (close >= message.length) break
    out += `${message.slice(from, open + 1)}${excerpt(message.slice(open + 1, close))}"`
    from = close + 1
  }
  return out + message.slice(from)
}

// The parser's messages quote the bad value ("bad timestamp \"…\": …"): each
// quoted run cut to an excerpt. Messages are short unless a value is long.
function shortenMessages(badLines) {
  for (const bad of badLines) {
    if (bad.message.length <= 2 * QUOTE_MAX) continue
    bad.message = shortenQuoted(bad.message)
    // Anything else long (never seen): cut, so that stderr stays readable.
    if (bad.message.length > 3 * QUOTE_MAX) bad.message = `${bad.message.slice(0, 3 * QUOTE_MAX)}…`
  }
}

/** The format named by a file extension, if any. */
function formatOfPath(file) {
  const ext = path.extname(file).toLowerCase()
  if (ext === '.csv') return 'csv'
  if (['.jsonl', '.ndjson', '.json'].includes(ext)) return 'jsonl'
  return undefined
}

// CSV header fields: comma-separated, optionally double-quoted (header names never hold newlines).
function splitHeader(line) {
  const names = []
  const re = /\s*(?:"((?:[^"]|"")*)"|([^,]*?))\s*(?:,|$)/y
  let m
  while (re.lastIndex < line.length && (m = re.exec(line)) !== null) {
    names.push(m[1] !== undefined ? m[1].replace(/""/g, '"') : m[2])
    if (m[0] === '') break
  }
  if (line.endsWith(',')) names.push('')
  return names
}

/** Column indices `[ts, ok, type, ...more]` of a CSV header line; type (and each of `fields.more`) -1 when absent. */
function csvColumns(headerLine, fields) {
  const names = splitHeader(headerLine)
  const index = (name) => names.indexOf(name)
  const missing = [fields.ts, fields.ok].filter((name) => index(name) === -1)
  if (missing.length > 0) {
    // Guessed from the column names alone (undefined: no value is known yet).
    const hint = fieldHint(new Map(names.map((name) => [name, undefined])), fields, missing) ?? 'see --ts-field, --ok-field'
    throw new UsageError(`the CSV header has no column '${missing[0]}' (columns: ${excerpt(names.join(', '))}); ${hint}`)
  }
  return [index(fields.ts), index(fields.ok), index(fields.type), ...(fields.more ?? []).map(index)]
}

/**
 * Reads `input` (a path, or '-' for stdin) and yields one batch per chunk:
 * `{ ts: Float64Array, ok: Uint8Array, typeIndex: Uint32Array, types: string[],
 * badLines: { line, message }[], lines, bytes, lineNumbers }` where `types` are the batch's
 * own (a type is `''` when the line has none), `lines` and `bytes` the totals
 * read so far, and `lineNumbers()` the line number of each event (worked out when
 * first called). The first batch carries `format` too.
 *
 * Linear in the input: each byte is copied at most once (into the buffer of the
 * lines it ends) and handed to the parser once; no more than MAX_LINE_BYTES of an
 * unfinished line is held, and a longer line is dropped as it streams by and
 * reported as one bad line. `stream` (a readable of Buffers) replaces `input`'s,
 * and `stats`, when given, counts `{ copied, parsed, maxHeld }` bytes (for the specs).
 * With `fields.more` (the further `--by` fields), a type is the values of
 * `type` and those, joined by U+001F (see `GROUP_SEPARATOR`).
 * @param {{ input: string, format?: 'jsonl' | 'csv', fields: { ts: string, ok: string, type: string, more?: string[] }, stream?: AsyncIterable<Buffer>, stats?: { copied: number, parsed: number, maxHeld: number } }} options
 */
async function* readLog({ input, format, fields, stream: given, stats = { copied: 0, parsed: 0, maxHeld: 0 } }) {
  if (format !== undefined && !FORMATS.includes(format)) throw new UsageError(`--format must be jsonl or csv, got '${format}'`)
  format ??= input === '-' ? undefined : formatOfPath(input)
  const stream = given ?? (input === '-' ? process.stdin : fs.createReadStream(input, { highWaterMark: CHUNK_BYTES }))
  const names = [fields.ts, fields.ok, fields.type, ...(fields.more ?? [])]
  let columns = null
  // The unfinished line: pieces with no newline among them, at most MAX_LINE_BYTES in all.
  let pending = []
  let pendingBytes = 0
  // Inside a line over MAX_LINE_BYTES: its bytes so far (dropped), else -1.
  let skipped = -1
  // Bad lines of lines too long, for the next batch (they precede its lines).
  let tooLong = []
  let line = 0
  let bytes = 0
  let first = true
  // The latest timestamp so far: one far after it is a bad line (MAX_JUMP_MS in logparse.rs).
  let latestMs = -Infinity
  // JSON Lines: the first non-blank line, `{ line, text }`, to name the fields a log has when none replays.
  let sample = null

  // The complete lines in `buf` (it ends with a newline, or the input does): a batch, or null when
  // they are only blank lines before the format or the CSV header is known (they are counted).
  const parse = (buf, last) => {
    if (format === undefined) {
      const start = buf.findIndex((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09)
      if (start === -1 && !last) {
        line += countNewlines(buf)
        return null
      }
      format = start !== -1 && buf[start] !== 0x7b /* { */ ? 'csv' : 'jsonl'
    }
    if (format === 'csv' && columns === null) {
      const header = takeHeader(buf, last)
      line += header.lines
      if (header.text === null) {
        if (last) throw new UsageError('the CSV input is empty: it needs a header line (e.g. ts,ok,type)')
        return null
      }
      columns = csvColumns(header.text, fields)
      buf = buf.subarray(header.consumed)
    }
    if (format === 'jsonl' && sample === null) sample = firstLine(buf, line + 1)
    stats.parsed += buf.length
    const batch = parseLogChunk(buf, format, names, columns, line + 1, last, latestMs)
    latestMs = batch.latestMs
    batch.lineNumbers = lazyLineNumbers(buf, line + 1, batch.badLines)
    shortenMessages(batch.badLines)
    line += batch.lines
    if (tooLong.length > 0) {
      batch.badLines = [...tooLong, ...batch.badLines]
      tooLong = []
    }
    return Object.assign(batch, { lines: line, bytes, format, sample })
  }

  try {
    for await (let chunk of stream) {
      bytes += chunk.length
      if (first) {
        // A UTF-8 byte-order mark is not part of the first line.
        if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3)
        first = false
      }
      if (skipped !== -1) {
        const nl = chunk.indexOf(0x0a)
        if (nl === -1) {
          skipped += chunk.length
          continue
        }
        line += 1
        tooLong.push({ line, message: lineTooLong(skipped + nl - (chunk[nl - 1] === 0x0d ? 1 : 0)) })
        skipped = -1
        chunk = chunk.subarray(nl + 1)
      }
      const nl = chunk.lastIndexOf(0x0a)
      if (nl === -1) {
        pending.push(chunk)
        pendingBytes += chunk.length
        if (pendingBytes > MAX_LINE_BYTES) {
          skipped = pendingBytes
          pending = []
          pendingBytes = 0
        }
        stats.maxHeld = Math.max(stats.maxHeld, pendingBytes)
        continue
      }
      let buf = chunk.subarray(0, nl + 1)
      if (pending.length > 0) {
        buf = Buffer.concat([...pending, buf])
        stats.copied += buf.length
      }
      const rest = chunk.subarray(nl + 1)
      pending = rest.length > 0 ? [rest] : []
      pendingBytes = rest.length
      // A rest over the maximum (a chunk larger than it) is left to the parser's own check.
      stats.maxHeld = Math.max(stats.maxHeld, pendingBytes)
      const batch = parse(buf, false)
      if (batch !== null) yield batch
    }
    if (skipped !== -1) {
      line += 1
      tooLong.push({ line, message: lineTooLong(skipped) })
      skipped = -1
    }
    const buf = pending.length > 1 ? Buffer.concat(pending) : (pending[0] ?? Buffer.alloc(0))
    yield parse(buf, true)
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'EISDIR' || err.code === 'EACCES') {
      throw new UsageError(`cannot read ${input}: ${err.message}`)
    }
    throw err
  } finally {
    if (stream !== process.stdin && typeof stream.destroy === 'function') stream.destroy()
  }
}

/** The bad-line message of a line of `bytes` bytes: as the parser's (MAX_LINE_BYTES in logparse.rs). */
function lineTooLong(bytes) {
  return `line too long: ${bytes} bytes, over the 1 MiB (${MAX_LINE_BYTES} bytes) a line may hold`
}

// The first non-blank line of `buf` (its first line numbered `number`), at most QUOTE_MAX × 640 bytes of it.
function firstLine(buf, number) {
  for (let start = 0; start < buf.length; number++) {
    const nl = buf.indexOf(0x0a, start)
    const end = nl === -1 ? buf.length : nl
    const text = buf.toString('utf8', start, Math.min(end, start + QUOTE_MAX * 640))
    if (text.trim() !== '') return { line: number, text }
    start = end + 1
  }
  return null
}

// The bytes the parser counts as blank (Rust's is_ascii_whitespace): a line of only these is no event.
const BLANK = new Set([0x20, 0x09, 0x0a, 0x0c, 0x0d])

/**
 * The line number of each event of a batch, worked out on first call only (the parser does
 * not return them: only an event the replay reports, such as one too old for the window,
 * needs its line). An event is each line of `buf` that is neither blank nor one of `badLines`,
 * the parser's own (a line too long is one of them), in order from `firstLine`.
 */
function lazyLineNumbers(buf, firstLine, badLines) {
  let numbers = null
  return () => {
    if (numbers !== null) return numbers
    const bad = new Set(badLines.map((b) => b.line))
    numbers = []
    for (let start = 0, number = firstLine; start < buf.length; number++) {
      const nl = buf.indexOf(0x0a, start)
      const end = nl === -1 ? buf.length : nl
      let blank = true
      for (let i = start; i < end && blank; i++) blank = BLANK.has(buf[i])
      if (!blank && !bad.has(number)) numbers.push(number)
      start = end + 1
    }
    return numbers
  }
}

function countNewlines(buf) {
  let n = 0
  for (let i = buf.indexOf(0x0a); i !== -1; i = buf.indexOf(0x0a, i + 1)) n++
  return n
}

// The first non-blank line of `buf` (the CSV header): `{ text, lines, consumed }`, where
// `lines` counts it and the blank lines before it; `text` is null when there is none (all blank).
function takeHeader(buf, last) {
  let pos = 0
  let lines = 0
  for (;;) {
    const nl = buf.indexOf(0x0a, pos)
    if (nl === -1 && (!last || pos >= buf.length)) return { text: null, lines, consumed: pos }
    const end = nl === -1 ? buf.length : nl
    const consumed = nl === -1 ? buf.length : nl + 1
    lines += 1
    const blank = buf.subarray(pos, end).every((b) => b === 0x20 || b === 0x0d || b === 0x09)
    if (!blank) return { text: buf.toString('utf8', pos, end).replace(/\r$/, ''), lines, consumed }
    pos = consumed
  }
}

/** What joins the values of several `--by` fields into one type (the parser's `GROUP_SEPARATOR`). */
const GROUP_SEPARATOR = '\u001f'

module.exports = { GROUP_SEPARATOR, readLog, csvColumns, splitHeader, formatOfPath, shortenMessages, MAX_LINE_BYTES }
