// npm run bench — the cost of record(), report() and friends, side by side in
// one run and as ratios to a floor measured in the same run: the cheapest
// possible Node-API call (benchmark/floor, built here, never shipped).
//
// Each tinybench sample runs an inner loop of `inner` operations (a single
// operation is too short to time), so a row's figure is the median of
// (sample time / inner). Every row is measured right after a fresh measure of
// the floor, and its ratio is taken to that floor; the whole suite runs
// `ROUNDS` times and each row reports the median time and the median ratio
// over the rounds, so a noisy neighbour on a shared machine skews neither.

import { execFileSync } from 'node:child_process'
import { readFileSync, statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { createRequire } from 'node:module'
import { Bench } from 'tinybench'

const require = createRequire(import.meta.url)
const here = path.dirname(fileURLToPath(import.meta.url))
const { ErrorBudgetTracker, BudgetFamily } = require('../index.js')
const { BaselineTracker } = require('./baseline-tracker.js')
const { BucketedTracker } = require('./bucketed-tracker.js')
const { fleetRecordTracker, fleetFigures, familyFleetFigures } = await import('./fleet.mjs')

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const TIME_MS = Number(process.env.BENCH_TIME_MS ?? 150)

// --- the floor: built with cargo on first use ---------------------------------
function loadFloor() {
  const dir = path.join(here, 'floor')
  const lib = path.join(dir, 'target', 'release', 'libcaptcha_budget_floor.so')
  const source = path.join(dir, 'src', 'lib.rs')
  let fresh = false
  try {
    fresh = statSync(lib).mtimeMs >= statSync(source).mtimeMs
  } catch {}
  if (!fresh) {
    console.error('building the floor addon (benchmark/floor) …')
    execFileSync('cargo', ['build', '--release', '--quiet', '--manifest-path', path.join(dir, 'Cargo.toml')], { stdio: 'inherit' })
  }
  const module = { exports: {} }
  process.dlopen(module, lib)
  return module.exports
}

// --- the rows -------------------------------------------------------------------
// A failure every 32nd event (96.9 % success at a 95 % target): the budget is
// steadily part-spent ("warning"), as in a healthy-ish production worker.
const ok = (i) => (i & 31) !== 0
const HOUR = 3_600_000
/** The getters issue 21 holds to ≤ 3 × the floor (budgetRemainingPct is a report field; its getter is remainingFraction). */
const GETTERS = ['status', 'total', 'failures', 'burnRate', 'remainingFraction']

function addonTracker(events, { listeners = false } = {}) {
  const tracker = new ErrorBudgetTracker({ targetRate: 0.95, windowMs: HOUR })
  tracker.recordMany(events - Math.floor(events / 32), Math.floor(events / 32))
  if (listeners) for (const e of ['healthy', 'warning', 'critical', 'exhausted', 'alert', 'resolve']) tracker.on(e, () => {})
  return tracker
}

// The reference with exactly `events` in its window: its clock moves 1 ms per
// record and its window is `events` ms long.
function referenceTracker(events) {
  let now = 0
  const tracker = new BaselineTracker({ targetRate: 0.95, windowMs: events }, () => now++)
  for (let i = 0; i < events; i++) tracker.record(ok(i))
  return tracker
}

// A fresh function per row, with inline caches of its own: closures made from
// one function literal share V8's call feedback, and so do functions compiled
// from the same source text, which would turn each row's call site
// polymorphic (see the "cycling through 3 trackers" row). Hence the unique
// comment in each source.
let rowNumber = 0
function loop(body, vars) {
  const names = Object.keys(vars)
  const source = `/* row ${++rowNumber} */ return function loop(n) { for (let i = 0; i < n; i++) { ${body} } }`
  const make = new Function(...names, source)
  return make(...Object.values(vars))
}

function rows(floor, fleet) {
  const list = []
  // `inner`: operations per sample; `units`: events per operation (recordMany).
  const add = (name, inner, body, vars, units = 1) => list.push({ name, inner, units, loop: loop(body, { ok, ...vars }) })
  add('floor: bare Node-API call reading one boolean', 1000, 'f(ok(i))', { f: floor.readBool })
  add('floor, with callback data and argc 2 (the shape of record)', 1000, 'f(ok(i))', { f: floor.readBoolData })
  for (const events of [1_000, 10_000, 100_000]) {
    add(`addon record(ok), ${events / 1000} k events in the window`, 1000, 't.record(ok(i))', { t: addonTracker(events) })
  }
  add('addon record(ok), 100 k events, 6 listeners', 1000, 't.record(ok(i))', {
    t: addonTracker(100_000, { listeners: true }),
  })
  // config.fleet: record() stays local; the sync runs every second in the background (benchmark/fleet.mjs).
  add('addon record(ok), 100 k events, fleet on (Redis sync every 1 s)', 1000, 't.record(ok(i))', { t: fleet.tracker })
  add('addon record taken off its tracker: const r = t.record', 1000, 'r(ok(i))', { r: addonTracker(100_000).record })
  // Worst case: 1 failure in 20 at a 95 % target keeps the budget at exactly 0,
  // so the status flips between critical and exhausted and no record can skip
  // the full re-evaluation.
  const edge = new ErrorBudgetTracker({ targetRate: 0.95, windowMs: HOUR })
  edge.recordMany(95_000, 5_000)
  add('addon record, budget at exactly 0 (status flipping: every record re-evaluated)', 1000, 't.record(i % 20 !== 0)', { t: edge })
  const replay = new ErrorBudgetTracker({ targetRate: 0.95, windowMs: HOUR, clock: 'manual' })
  add('addon record(ok, atMs), manual clock (log replay)', 1000, 't.record(ok(i), c.at++)', { t: replay, c: { at: 0 } })
  add('floor, one call site cycling through 3 functions', 1000, 'fs[i % 3](ok(i))', {
    fs: [floor.readBool, floor.readBool2, floor.readBool3],
  })
  add('addon record(ok), one call site cycling through 3 trackers', 1000, 'ts[i % 3].record(ok(i))', {
    ts: [addonTracker(100_000), addonTracker(100_000), addonTracker(100_000)],
  })
  add('addon record via the #[napi] method glue (for scale)', 1000, 'p.call(t, ok(i))', {
    p: ErrorBudgetTracker.prototype.record,
    t: addonTracker(100_000),
  })
  add('addon recordMany(968, 32), per event', 100, 't.recordMany(968, 32)', { t: addonTracker(100_000) }, 1000)
  const reads = addonTracker(100_000)
  add('addon report()', 100, 't.report()', { t: reads })
  // The getters: each one raw Node-API call through the tracker's figure reader (lib/tracker/tracker.js).
  for (const getter of GETTERS) add(`addon .${getter} getter`, 100, `t.${getter}`, { t: reads })
  // One scrape's text, the default policy (issue 45: its figures from one native buffer).
  add('addon metrics(), default policy', 10, 't.metrics()', { t: reads })
  for (const events of [1_000, 10_000, 100_000]) {
    add(`reference JS (scan per record), ${events / 1000} k events`, events >= 100_000 ? 1 : 10, 't.record(ok(i))', {
      t: referenceTracker(events),
    })
  }
  add('pure-JS bucketed tracker record(ok)', 1000, 't.record(ok(i))', {
    t: new BucketedTracker({ targetRate: 0.95, windowMs: HOUR }),
  })
  add('performance.now() (for scale)', 1000, 'performance.now()', {})
  familyRows(add)
  return list
}

// BudgetFamily with 10 000 children (4 types × 2 500 sites), one-minute buckets
// (the children's memory stays small whatever the window): the lookup of
// family.labels(l) beside a child held in a variable, for one hot label set and
// cycling through all 10 000 (where every record reaches another tracker's memory).
const FAMILY_CHILDREN = 10_000
let family = null
function familyRows(add) {
  family = new BudgetFamily({ labelNames: ['type', 'site'], maxChildren: FAMILY_CHILDREN, windowMs: HOUR, resolutionMs: 60_000 })
  const types = ['turnstile', 'recaptcha', 'image', 'hcaptcha']
  const sets = Array.from({ length: FAMILY_CHILDREN }, (_, i) => ({ type: types[i % 4], site: `site-${i >> 2}.example` }))
  for (const l of sets) family.labels(l).recordMany(968, 32)
  const children = sets.map((l) => family.labels(l))
  const hot = sets[4242]
  add('family: a cached child record(ok), 10 k children', 1000, 'c.record(ok(i))', { c: family.labels(hot) })
  add('family.labels(l).record(ok), 10 k children, the same l', 1000, 'f.labels(l).record(ok(i))', { f: family, l: hot })
  add('family: cached children record(ok), cycling through 10 k', 1000, 'cs[i % n].record(ok(i))', { cs: children, n: FAMILY_CHILDREN })
  add('family.labels(l).record(ok), cycling through 10 k label sets', 1000, 'f.labels(ls[i % n]).record(ok(i))', {
    f: family,
    ls: sets,
    n: FAMILY_CHILDREN,
  })
}

// --- measuring ---------------------------------------------------------------
// One round: each row preceded by the floor; returns per row [ns per op, ratio].
async function measureRound(list) {
  const floor = list[0]
  const bench = new Bench({ time: TIME_MS, warmupTime: 50 })
  for (const row of list.slice(1)) {
    bench.add(`floor before ${row.name}`, () => floor.loop(floor.inner))
    bench.add(row.name, () => row.loop(row.inner))
  }
  await bench.run()
  // ms per sample → ns per operation (per event for batches)
  const perOp = (name, row) => (bench.getTask(name).result.latency.p50 * 1e6) / (row.inner * row.units)
  const out = new Map()
  const floors = []
  for (const row of list.slice(1)) {
    const floorNs = perOp(`floor before ${row.name}`, floor)
    const ns = perOp(row.name, row)
    floors.push(floorNs)
    out.set(row.name, [ns, ns / floorNs])
  }
  out.set(floor.name, [median(floors), 1])
  return out
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}

function machine() {
  const cpu = readFileSync('/proc/cpuinfo', 'utf8').match(/^model name\s*:\s*(.*)$/m)?.[1] ?? os.cpus()[0]?.model
  let rustc = 'unknown'
  try {
    rustc = execFileSync('rustc', ['--version'], { encoding: 'utf8' }).trim()
  } catch {}
  return `${cpu}, ${os.cpus().length} cores, Linux ${os.release()}; Node ${process.version}; ${rustc}`
}

function format(ns) {
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`
  if (ns >= 1e4) return `${(ns / 1e3).toFixed(1)} µs`
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(2)} µs`
  return `${ns.toFixed(ns < 10 ? 2 : 1)} ns`
}

async function main() {
  const floor = loadFloor()
  console.error(`${ROUNDS} rounds × ${TIME_MS} ms per row …`)
  const fleet = await fleetRecordTracker(100_000)
  const list = rows(floor, fleet)
  const samples = new Map(list.map((r) => [r.name, { ns: [], ratio: [] }]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, [ns, ratio]] of await measureRound(list)) {
      samples.get(name).ns.push(ns)
      samples.get(name).ratio.push(ratio)
    }
    console.error(`  round ${round + 1}/${ROUNDS} done`)
  }
  const ns = new Map([...samples].map(([name, s]) => [name, median(s.ns)]))
  const ratio = new Map([...samples].map(([name, s]) => [name, median(s.ratio)]))
  const named = (prefix) => list.find((r) => r.name.startsWith(prefix)).name
  const get = (prefix) => ns.get(named(prefix))

  console.log(`\nMachine: ${machine()}\n`)
  console.log('| operation | time per op | × floor |')
  console.log('| --- | ---: | ---: |')
  for (const row of list) {
    const r = ratio.get(row.name)
    console.log(`| ${row.name} | ${format(ns.get(row.name))} | ${r.toFixed(r >= 100 ? 0 : 2)} |`)
  }

  const oneSite = list.filter((r) => r.name.startsWith('addon record(ok)') && !r.name.includes('cycling'))
  const record = Math.max(...oneSite.map((r) => ratio.get(r.name)))
  const polymorphic = get('addon record(ok), one call site cycling') / get('floor, one call site cycling')
  const getters = Math.max(...GETTERS.map((g) => ratio.get(`addon .${g} getter`)))
  const targets = [
    ['record(success) ≤ 1.8 × floor, any window size, with listeners (worst of those rows)', record, 1.8, '×'],
    ['… stretch: ≤ 1.5 × floor (the same rows)', record, 1.5, '×'],
    ['… at a call site cycling through 3 trackers, against the floor cycling through 3 functions', polymorphic, 2, '×'],
    ['recordMany: ≤ 2 ns per event', get('addon recordMany'), 2, 'ns'],
    ['report() ≤ 100 ns', get('addon report()'), 100, 'ns'],
    [`getters (${GETTERS.join(', ')}) ≤ 3 × floor (worst)`, getters, 3, '×'],
    [
      'family.labels(l).record(ok) ÷ a cached child, 10 k children, the same l',
      get('family.labels(l).record(ok), 10 k children, the same') / get('family: a cached child'),
      3,
      '×',
    ],
    [
      '… cycling through 10 k label sets ÷ cycling through 10 k cached children',
      get('family.labels(l).record(ok), cycling') / get('family: cached children'),
      3,
      '×',
    ],
    [
      'reference ÷ addon record at 100 k events ≥ 1000',
      get('reference JS (scan per record), 100 k') / get('addon record(ok), 100 k events in'),
      1000,
      '×',
      true,
    ],
  ]
  console.log('\n| target | measured | |')
  console.log('| --- | ---: | --- |')
  for (const [what, value, limit, unit, atLeast] of targets) {
    const met = atLeast ? value >= limit : value <= limit
    // A value that rounds to its limit shows a third decimal, so that "NOT met" never reads 1.50 against 1.5.
    const shown = value >= 100 ? value.toFixed(0) : Number(value.toFixed(2)) === limit ? value.toFixed(3) : value.toFixed(2)
    console.log(`| ${what} | ${shown} ${unit} | ${met ? 'met' : 'NOT met'} |`)
  }
  family.close()
  await fleet.stop()
  await fleetFigures()
  await familyFleetFigures()
}

await main()
