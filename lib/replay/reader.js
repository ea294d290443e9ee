'use strict'
// Streams a solve log — JSON Lines or CSV, from a file or stdin — through the
// native line parser, a chunk at a time: the log is never held whole, and a
// line split across chunks waits for the rest of it.
const fs = require('node:fs')
const path = require('node:path')
const { parseLogChunk } = require('../../native.js')
const { UsageError } = require('../cli-values')

const CHUNK_BYTES = 1 << 20
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
  for (const name of [fields.ts, fields.ok]) {
    if (index(name) === -1) {
      throw new UsageError(`the CSV header has no column '${name}' (columns: ${excerpt(names.join(', '))}); see --ts-field, --ok-field`)
    }
  }
  return [index(fields.ts), index(fields.ok), index(fields.type), ...(fields.more ?? []).map(index)]
}

/**
 * Reads `input` (a path, or '-' for stdin) and yields one batch per chunk:
 * `{ ts: Float64Array, ok: Uint8Array, typeIndex: Uint32Array, types: string[],
 * badLines: { line, message }[], lines, bytes }` where `types` are the batch's
 * own (a type is `''` when the line has none), `lines` and `bytes` the totals
 * read so far. The first batch carries `format` too.
 * With `fields.more` (the further `--by` fields), a type is the values of
 * `type` and those, joined by U+001F (see `GROUP_SEPARATOR`).
 * @param {{ input: string, format?: 'jsonl' | 'csv', fields: { ts: string, ok: string, type: string, more?: string[] } }} options
 */
async function* readLog({ input, format, fields }) {
  if (format !== undefined && !FORMATS.includes(format)) throw new UsageError(`--format must be jsonl or csv, got '${format}'`)
  format ??= input === '-' ? undefined : formatOfPath(input)
  const stream = input === '-' ? process.stdin : fs.createReadStream(input, { highWaterMark: CHUNK_BYTES })
  const names = [fields.ts, fields.ok, fields.type, ...(fields.more ?? [])]
  let columns = null
  let carry = null
  let line = 0
  let bytes = 0
  let first = true
  try {
    for await (let chunk of stream) {
      bytes += chunk.length
      if (first) {
        // A UTF-8 byte-order mark is not part of the first line.
        if (chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) chunk = chunk.subarray(3)
        first = false
      }
      let buf = carry && carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk
      if (format === undefined) {
        const start = buf.findIndex((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09)
        if (start === -1) {
          carry = buf
          continue
        }
        format = buf[start] === 0x7b /* { */ ? 'jsonl' : 'csv'
      }
      if (format === 'csv' && columns === null) {
        const header = takeHeader(buf, false)
        if (header === null) {
          carry = buf
          continue
        }
        columns = csvColumns(header.text, fields)
        line += header.lines
        buf = buf.subarray(header.consumed)
      }
      const batch = parseLogChunk(buf, format, names, columns, line + 1, false)
      shortenMessages(batch.badLines)
      line += batch.lines
      carry = buf.subarray(batch.consumed)
      yield Object.assign(batch, { lines: line, bytes, format })
    }
    let buf = carry ?? Buffer.alloc(0)
    format ??= 'jsonl'
    if (format === 'csv' && columns === null) {
      const header = takeHeader(buf, true)
      if (header === null) throw new UsageError('the CSV input is empty: it needs a header line (e.g. ts,ok,type)')
      columns = csvColumns(header.text, fields)
      line += header.lines
      buf = buf.subarray(header.consumed)
    }
    const batch = parseLogChunk(buf, format, names, columns, line + 1, true)
    shortenMessages(batch.badLines)
    yield Object.assign(batch, { lines: line + batch.lines, bytes, format })
  } catch (err) {
    if (err.code === 'ENOENT' || err.code === 'EISDIR' || err.code === 'EACCES') {
      throw new UsageError(`cannot read ${input}: ${err.message}`)
    }
    throw err
  } finally {
    if (stream !== process.stdin) stream.destroy()
  }
}

// The first non-blank line of `buf` (the CSV header), or null if it is not complete yet.
function takeHeader(buf, last) {
  let pos = 0
  let lines = 0
  for (;;) {
    const nl = buf.indexOf(0x0a, pos)
    if (nl === -1 && !last) return null
    const end = nl === -1 ? buf.length : nl
    const text = buf.toString('utf8', pos, end).replace(/\r$/, '')
    lines += 1
    const consumed = nl === -1 ? buf.length : nl + 1
    if (text.trim() !== '') return { text, lines, consumed }
    if (nl === -1) return null
    pos = consumed
  }
}

/** What joins the values of several `--by` fields into one type (the parser's `GROUP_SEPARATOR`). */
const GROUP_SEPARATOR = '\u001f'

module.exports = { GROUP_SEPARATOR, readLog, csvColumns, splitHeader, formatOfPath, shortenMessages }
