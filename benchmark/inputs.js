#!/usr/bin/env node
'use strict'
// Issue 30, items 11 and 12: inputs whose cost grew faster than their size.
//
//   npm run bench:inputs [-- --keys 16000]
//
// - An SLO spec with many keys in one map: `readSpec` (the yaml package without
//   its pairwise uniqueKeys check, one Set per map instead) against the yaml
//   package's default parse, which compares each key with every earlier one.
//   Doubling the keys should double the time (linear), not quadruple it.
// - `captcha-budget replay --by site --top 3` over a log of 5 solves per site,
//   in a child process (time and peak RSS): from the file, which is ranked first
//   and keeps trackers for the 3 worst sites only, against the same log on stdin,
//   which cannot be read twice and keeps a tracker per site, as every run did
//   before (the baseline of each row).
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const YAML = require('yaml')
const { readSpec } = require('../lib/slo/spec.js')

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : Number(process.argv[i + 1])
}
const KEYS = arg('keys', 40_000)
const BIN = path.join(__dirname, '..', 'bin', 'captcha-budget.js')
const ms = (fn) => {
  const start = process.hrtime.bigint()
  fn()
  return Number(process.hrtime.bigint() - start) / 1e6
}

/** A Sloth spec whose one SLO has `n` extra keys (refused, after the whole file is parsed). */
function wideSpec(n) {
  let text = 'version: prometheus/v1\nservice: captcha\nslos:\n  - name: turnstile\n    objective: 95\n'
  for (let i = 0; i < n; i++) text += `    key${i}: ${i}\n`
  return text
}

function yamlRows() {
  console.log("SLO spec, keys in one map: readSpec vs the yaml package's default parse (its pairwise unique-key check)")
  console.log('  keys      bytes   readSpec   default parse   default / readSpec')
  for (const n of [5000, 10_000, 20_000]) {
    const text = wideSpec(n)
    const ours = ms(() => {
      try {
        readSpec(text, { file: 'wide.yaml' })
      } catch {
        // Refused at its first unknown key: the time to that answer.
      }
    })
    const before = ms(() => YAML.parseAllDocuments(text))
    console.log(
      `  ${String(n).padStart(6)} ${String(text.length).padStart(9)} ${ours.toFixed(0).padStart(8)} ms ${before.toFixed(0).padStart(11)} ms ${(before / ours).toFixed(1).padStart(14)} ×`,
    )
  }
}

function writeLog(file, keys) {
  const t0 = Date.UTC(2026, 2, 2)
  const lines = []
  for (let i = 0; i < keys * 5; i++) lines.push(`{"ts":${t0 + i * 1000},"site":"s${i % keys}.example","ok":${i % 7 !== 0}}`)
  fs.writeFileSync(file, `${lines.join('\n')}\n`)
}

/** One replay in a child, of the file or (`stdin`) of its text on stdin: wall time and peak RSS (the child's own, from resourceUsage). */
function replayRun(file, stdin) {
  const args = [stdin ? '-' : file, '--format', 'jsonl', '--by', 'site', '--top', '3', '--min-events', '0', '--no-progress', '--json']
  const script = `process.argv.splice(1, 0, ${JSON.stringify(BIN)}); process.on('exit', () => process.stderr.write('RSS ' + process.resourceUsage().maxRSS + '\\n')); require(${JSON.stringify(BIN)})`
  const start = process.hrtime.bigint()
  const input = stdin ? fs.readFileSync(file) : undefined
  const r = spawnSync(process.execPath, ['-e', script, 'replay', ...args], { input, encoding: 'utf8', maxBuffer: 1 << 30 })
  const seconds = Number(process.hrtime.bigint() - start) / 1e9
  if (r.status !== 0) throw new Error(`replay exited ${r.status}: ${r.stderr}`)
  return { seconds, mib: Number(/RSS (\d+)/.exec(r.stderr)[1]) / 1024 }
}

function replayRows() {
  console.log('\ncaptcha-budget replay --by site --top 3, 5 solves per site: time and peak RSS')
  console.log('  sites     lines   file (3 trackers)     stdin (a tracker per site)')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'inputs-bench-'))
  try {
    for (const keys of [KEYS / 4, KEYS / 2, KEYS]) {
      const file = path.join(dir, `sites-${keys}.jsonl`)
      writeLog(file, keys)
      const ranked = replayRun(file, false)
      const piped = replayRun(file, true)
      const cell = (r) => `${r.seconds.toFixed(1).padStart(6)} s ${r.mib.toFixed(0).padStart(5)} MiB`
      const ratio = `${(piped.seconds / ranked.seconds).toFixed(1)} × the time, ${(piped.mib / ranked.mib).toFixed(1)} × the memory`
      console.log(`  ${String(keys).padStart(6)} ${String(keys * 5).padStart(9)}   ${cell(ranked)}      ${cell(piped)}  (${ratio})`)
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

console.log(`${os.cpus().length} CPUs, ${os.cpus()[0].model}, Node ${process.version}, load ${os.loadavg()[0].toFixed(1)}`)
yamlRows()
replayRows()
