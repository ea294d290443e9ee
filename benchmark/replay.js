#!/usr/bin/env node
'use strict'
// Throughput of `captcha-budget replay` on a generated JSON Lines log of
// 2,000,000 solves (three types, 3 % failing, one solve every 40 ms: 22 hours),
// written to a temp dir and removed afterwards. The target is ≥ 1 M lines/s.
//
//   npm run bench:replay [-- --lines 5000000] [-- --runs 5]
//
// Prints lines per second for
//   - the whole command, as a user runs it (process start-up included), --by type;
//   - the replay in-process (reader + trackers + summary), --by type and without;
//   - parsing alone: the native parser, and JSON.parse per line for comparison
//     (why the parser is in Rust).
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}
const LINES = arg('lines', 2_000_000)
const RUNS = arg('runs', 3)
const TARGET = 1_000_000
const BIN = path.join(__dirname, '..', 'bin', 'captcha-budget.js')

function writeLog(file) {
  const types = ['turnstile', 'recaptcha', 'image']
  const fd = fs.openSync(file, 'w')
  let t = Date.UTC(2026, 2, 1)
  let chunk = ''
  // A fixed pseudo-random sequence (LCG), so every run replays the same log.
  let seed = 1
  for (let i = 0; i < LINES; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    t += 40
    chunk += `{"ts":${t},"ok":${seed % 100 >= 3},"type":"${types[i % 3]}"}\n`
    if (chunk.length > 1 << 20) {
      fs.writeSync(fd, chunk)
      chunk = ''
    }
  }
  fs.writeSync(fd, chunk)
  fs.closeSync(fd)
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]

async function timeRuns(fn) {
  const ms = []
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint()
    await fn()
    ms.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  return median(ms)
}

async function parseOnly(file, parse) {
  let carry = null
  let lines = 0
  for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) {
    const buf = carry && carry.length ? Buffer.concat([carry, chunk]) : chunk
    const consumed = parse(buf)
    lines += consumed.lines
    carry = buf.subarray(consumed.bytes)
  }
  return lines
}

function nativeParse(buf) {
  const { parseLogChunk } = require('../native.js')
  const r = parseLogChunk(buf, 'jsonl', ['ts', 'ok', 'type'], null, 1, false)
  return { lines: r.lines, bytes: r.consumed }
}

function jsonParse(buf) {
  const text = buf.toString('utf8', 0, buf.lastIndexOf(0x0a) + 1)
  let lines = 0
  let start = 0
  for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
    const o = JSON.parse(text.slice(start, nl))
    if (typeof o.ts !== 'number' || typeof o.ok !== 'boolean') throw new Error('unexpected line')
    start = nl + 1
    lines++
  }
  return { lines, bytes: Buffer.byteLength(text) }
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'replay-bench-'))
  const file = path.join(dir, 'solves.jsonl')
  try {
    writeLog(file)
    const mb = fs.statSync(file).size / 1e6
    console.log(`replay throughput: ${LINES.toLocaleString('en-US')} JSON Lines (${mb.toFixed(0)} MB), median of ${RUNS} runs, ${os.cpus().length} CPUs`)
    const { replay } = require('../lib/cli/replay/run')
    const fields = { ts: 'ts', ok: 'ok', type: 'type' }
    const rows = [
      [
        'captcha-budget replay --by type --json (CLI)',
        () => {
          const r = spawnSync(process.execPath, [BIN, 'replay', file, '--by', 'type', '--json'], { stdio: ['ignore', 'ignore', 'inherit'] })
          if (r.status !== 0) throw new Error(`replay exited ${r.status}`)
        },
      ],
      ['replay(), --by type (in-process)', () => replay({ input: file, fields, byType: true })],
      ['replay(), one tracker (in-process)', () => replay({ input: file, fields })],
      ['parsing only: native parser', () => parseOnly(file, nativeParse)],
      ['parsing only: JSON.parse per line', () => parseOnly(file, jsonParse)],
    ]
    const width = Math.max(...rows.map(([name]) => name.length))
    const rates = []
    for (const [name, fn] of rows) {
      const ms = await timeRuns(fn)
      const perSecond = (LINES / ms) * 1000
      rates.push(perSecond)
      // Whole replays against the target; the native parser against JSON.parse.
      const note = name.startsWith('parsing') ? '' : `  (${(perSecond / TARGET).toFixed(2)}× the 1 M target)`
      console.log(`  ${name.padEnd(width)}  ${(perSecond / 1e6).toFixed(2).padStart(6)} M lines/s${note}`)
    }
    console.log(`  native parser / JSON.parse: ${(rates[3] / rates[4]).toFixed(2)}×`)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
