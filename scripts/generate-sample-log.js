#!/usr/bin/env node
'use strict'
// Writes sample/solves.jsonl, the solve log that `npm start` replays: three
// days of mixed Turnstile / reCAPTCHA / image-CAPTCHA traffic with a daily
// rhythm, and one incident — a flash sale on the second afternoon that sends
// fifteen times the usual Turnstile traffic to the solver, which saturates: most
// solves time out for 40 minutes, and Turnstile's error budget is gone until
// the sale leaves the window. Two sites share the solver: the sale is on
// shop.example, whose Turnstile solves make up all of the sale's extra traffic,
// and tickets.example keeps its usual share — but its solves go to the same
// saturated solver. Deterministic (seeded), so the file is stable — which is why
// it is not committed nor shipped (4 MB): `npm start` and `npm test` write it first
// (--if-changed), and a user of the installed package writes it where they like:
//
//   node scripts/generate-sample-log.js [--if-changed] [out.jsonl]   (--help for help)
const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { prng } = require('./prng.js')

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const START = Date.UTC(2026, 2, 2) // Monday 2026-03-02, 00:00 UTC
const DAYS = 3

/** Per type: solves a day, the usual success rate, and how failures say so. */
const TYPES = {
  turnstile: { perDay: 8000, success: 0.992, errors: ['ERROR_CAPTCHA_UNSOLVABLE', 'ERROR_TIMEOUT'] },
  recaptcha: { perDay: 3000, success: 0.986, errors: ['ERROR_CAPTCHA_UNSOLVABLE', 'ERROR_BAD_TOKEN'] },
  image: { perDay: 500, success: 0.982, errors: ['ERROR_CAPTCHA_UNSOLVABLE', 'ERROR_WRONG_ANSWER'] },
}

/** The flash sale: Turnstile only, day 2 from 14:00 UTC; phases of traffic and failure rate. */
const SALE_START = START + DAY + 14 * HOUR
const SALE = [
  { minutes: 20, traffic: 15, failure: 0.1 }, // the queue builds up
  { minutes: 40, traffic: 15, failure: 0.9 }, // the solver is saturated: timeouts
  { minutes: 30, traffic: 15, failure: 0.1 }, // the sale winds down, the queue drains
]

/** The sites and their share of the usual traffic; the flash sale's extra traffic is all the shop's. */
const SITES = [
  ['shop.example', 0.7],
  ['tickets.example', 0.3],
]

/**
 * The site of one solve, drawn from its own seeded sequence so that adding the
 * field left every other field of the file as it was (and `npm start`'s replay by
 * type with it). During the sale a site keeps its usual number of solves: its share
 * of them is its usual share over the sale's traffic multiplier.
 */
function siteOf(random, phase) {
  const draw = random()
  let from = 0
  for (const [site, share] of SITES.slice(1)) {
    from += phase ? share / phase.traffic : share
    if (draw < from) return site
  }
  return SITES[0][0]
}

// Poisson-distributed count with mean `mean` (Knuth; the means here are small).
function poisson(random, mean) {
  const limit = Math.exp(-mean)
  let k = 0
  for (let p = random(); p > limit; p *= random()) k++
  return k
}

// Daily rhythm: quiet at night, busiest mid-afternoon UTC (0.5× … 1.5×).
const rhythm = (ms) => 1 + 0.5 * Math.sin((2 * Math.PI * ((ms % DAY) / HOUR - 9)) / 24)

function salePhase(ms) {
  let from = SALE_START
  for (const phase of SALE) {
    const to = from + phase.minutes * MINUTE
    if (ms >= from && ms < to) return phase
    from = to
  }
  return null
}

function generate() {
  const random = prng(20260302)
  const siteRandom = prng(20260303)
  const events = []
  for (let minute = START; minute < START + DAYS * DAY; minute += MINUTE) {
    for (const [type, spec] of Object.entries(TYPES)) {
      const phase = type === 'turnstile' ? salePhase(minute) : null
      const mean = (spec.perDay / 1440) * rhythm(minute) * (phase ? phase.traffic : 1)
      for (let n = poisson(random, mean); n > 0; n--) {
        const ts = minute + Math.floor(random() * MINUTE)
        const ok = random() >= (phase ? phase.failure : 1 - spec.success)
        const event = { ts: new Date(ts).toISOString(), type, site: siteOf(siteRandom, phase), ok }
        if (!ok) event.error = phase && phase.failure > 0.5 ? 'ERROR_TIMEOUT' : spec.errors[Math.floor(random() * spec.errors.length)]
        events.push([ts, JSON.stringify(event)])
      }
    }
  }
  events.sort((a, b) => a[0] - b[0])
  return events.map(([, line]) => line).join('\n') + '\n'
}

/** Whether `file` holds exactly `text` (false when it does not exist). */
function current(file, text) {
  try {
    return fs.readFileSync(file).equals(Buffer.from(text))
  } catch (err) {
    if (err.code === 'ENOENT') return false
    throw err
  }
}

const USAGE = `Usage: node scripts/generate-sample-log.js [--if-changed] [out.jsonl]

Writes the sample solve log that \`npm start\` replays (default: sample/solves.jsonl).

Options:
  --if-changed  write only when the file is missing or holds other bytes; quiet when it is current
  -h, --help    print this help and write nothing
`

// Options are parsed, not taken as file names: \`--help\` once wrote a 3 MB file called --help.
let parsed
try {
  parsed = parseArgs({ allowPositionals: true, options: { help: { type: 'boolean', short: 'h' }, 'if-changed': { type: 'boolean' } } })
} catch (err) {
  console.error(`generate-sample-log.js: ${err.message}\n\n${USAGE}`)
  process.exit(2)
}
if (parsed.values.help) {
  process.stdout.write(USAGE)
  process.exit(0)
}
if (parsed.positionals.length > 1) {
  console.error(`generate-sample-log.js: one output file at most, got ${parsed.positionals.length}\n\n${USAGE}`)
  process.exit(2)
}
const out = path.resolve(parsed.positionals[0] ?? path.join(__dirname, '..', 'sample', 'solves.jsonl'))
const text = generate()
// `npm start` and `npm test` run this before every run: comparing costs less than
// rewriting 4 MB, and a current file keeps its mtime.
if (parsed.values['if-changed'] && current(out, text)) process.exit(0)
fs.mkdirSync(path.dirname(out), { recursive: true })
fs.writeFileSync(out, text)
console.log(`wrote ${out}: ${text.split('\n').length - 1} solves, ${(text.length / 1e6).toFixed(1)} MB`)
