'use strict'
// npm run bench:family — issue 30's timed BudgetFamily items, each as a ratio
// against a baseline measured in the same run (docs/performance.md):
//   10  a full family (every child with a solve in its window) refusing a stream
//       of new label sets, at 10 000 and 100 000 children: µs per refusal, against
//       one labels() lookup of an existing child, and against one read of every
//       child's `total` (what each refusal cost before: a scan of every child).
//   11  restore() of a snapshot with more children than its maxChildren (100 000
//       children, maxChildren 10 000): the refusal, against JSON.parse of the text.
// Issue 44:
//   10  family.blame() of one child in a family with attribution, at 1 000 and
//       40 000 children (createFailover(family) asks it per provider before each
//       solve): µs per call, against one labels() lookup of an existing child;
//       blame() after a record into one child; and the first blame() after every
//       child's solves left the window (each child is read again once).
// `SIZES=10000,100000` picks the family sizes, `BLAME_SIZES=1000,40000` blame()'s.
const os = require('node:os')
const { BudgetFamily } = require('..')

const SIZES = (process.env.SIZES ?? '10000,100000').split(',').map(Number)
const BLAME_SIZES = (process.env.BLAME_SIZES ?? '1000,40000').split(',').map(Number)
const LABELS = ['type', 'site']

/** ns per call of `fn(i)`, the best of `rounds` runs of `n` calls. */
function timePerCall(fn, n, rounds = 5) {
  let best = Infinity
  for (let r = 0; r < rounds; r++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < n; i++) fn(i)
    best = Math.min(best, Number(process.hrtime.bigint() - start) / n)
  }
  return best
}

/** A manual-clock family holding `size` children, each with one solve in its window. */
function fullFamily(size) {
  const family = new BudgetFamily({ labelNames: LABELS, clock: 'manual', maxChildren: size, windowMs: 3_600_000, resolutionMs: 60_000 })
  for (let i = 0; i < size; i++) family.record({ type: 'image', site: `s${i}.example` }, true, 1000)
  return family
}

function refusals(size) {
  const family = fullFamily(size)
  const children = family.children().map((c) => c.tracker)
  let next = 0
  const refuse = () => {
    try {
      family.labels({ type: 'image', site: `hostile-${next++}.example` })
    } catch (err) {
      if (err.code !== 'ERR_OUT_OF_RANGE') throw err
      return
    }
    throw new Error('a full family accepted a new label set')
  }
  const lookup = (i) => family.labels({ type: 'image', site: `s${i % size}.example` })
  let sink = 0
  const scanAll = () => {
    for (const child of children) sink += child.total
  }
  // The first refusal looks at every child once (each is then set aside until its window may have emptied).
  const first = timePerCall(refuse, 1, 1)
  const refusal = timePerCall(refuse, 2000)
  const hit = timePerCall(lookup, 20_000)
  const scan = timePerCall(scanAll, 3, 3)
  family.close()
  if (sink < 0) console.log(sink)
  return { first, refusal, hit, scan }
}

function restoreOverMax() {
  const family = fullFamily(100_000)
  const snap = JSON.parse(family.snapshot())
  family.close()
  snap.maxChildren = 10_000
  const json = JSON.stringify(snap)
  const refuse = () => {
    try {
      BudgetFamily.restore(json)
    } catch (err) {
      if (err.code !== 'ERR_SNAPSHOT_INVALID') throw err
      return
    }
    throw new Error('restore() accepted 100 000 children over maxChildren 10 000')
  }
  const refusal = timePerCall(refuse, 1, 3)
  const parse = timePerCall(() => JSON.parse(json), 1, 3)
  return { refusal, parse, bytes: json.length }
}

/** blame() in a family of `size` children: 4 providers × size / 4 sites, each child with 20 solves, 1 failed. */
function blameCost(size) {
  const family = new BudgetFamily({
    labelNames: ['provider', 'site'],
    attribution: { provider: 'provider', site: 'site' },
    clock: 'manual',
    maxChildren: size,
    windowMs: 3_600_000,
    resolutionMs: 60_000,
    alerts: [],
  })
  const sites = size / 4
  for (let i = 0; i < size; i++) family.labels({ provider: `p${i % 4}`, site: `s${Math.floor(i / 4)}.example` }).recordMany(19, 1, 1000)
  const blame = (i) => family.blame({ provider: `p${i % 4}`, site: `s${i % sites}.example` })
  const lookup = (i) => family.labels({ provider: `p${i % 4}`, site: `s${i % sites}.example` })
  // The first blame() reads each child once (each was recorded into after it joined).
  blame(0)
  const perBlame = timePerCall(blame, 20_000)
  const hit = timePerCall(lookup, 20_000)
  const afterRecord = timePerCall((i) => {
    family.labels({ provider: `p${i % 4}`, site: `s${i % sites}.example` }).record(i % 20 !== 0)
    blame(i)
  }, 20_000)
  // Every child's solves leave the window at once: the next blame() reads each child again.
  family.advanceTo(1000 + 3_600_000)
  const afterExpiry = timePerCall(blame, 1, 1)
  family.close()
  return { perBlame, hit, afterRecord, afterExpiry }
}

const us = (ns) => `${(ns / 1000).toFixed(2)} µs`
const ms = (ns) => `${(ns / 1e6).toFixed(1)} ms`

function main() {
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU'
  console.log(`Node ${process.version}, ${os.platform()} ${os.arch()}, ${os.cpus().length} × ${cpu}, load ${os.loadavg()[0].toFixed(1)}`)
  console.log('')
  console.log(
    '| full family, children | first refusal | each next refusal | lookup of a child | refusal ÷ lookup | one scan of every child (each refusal before) | scan ÷ refusal |',
  )
  console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const size of SIZES) {
    const { first, refusal, hit, scan } = refusals(size)
    console.log(`| ${size} | ${ms(first)} | ${us(refusal)} | ${us(hit)} | ${(refusal / hit).toFixed(1)} × | ${ms(scan)} | ${Math.round(scan / refusal)} × |`)
  }
  console.log('')
  console.log(
    '| family with attribution, children | one blame() | lookup of a child | blame() ÷ lookup | record into a child + blame() | first blame() after every child changed |',
  )
  console.log('| ---: | ---: | ---: | ---: | ---: | ---: |')
  for (const size of BLAME_SIZES) {
    const { perBlame, hit, afterRecord, afterExpiry } = blameCost(size)
    console.log(`| ${size} | ${us(perBlame)} | ${us(hit)} | ${(perBlame / hit).toFixed(1)} × | ${us(afterRecord)} | ${ms(afterExpiry)} |`)
  }
  const { refusal, parse, bytes } = restoreOverMax()
  console.log('')
  console.log('| restore(), 100 000 children over maxChildren 10 000 | refused in | JSON.parse of the text | refusal ÷ parse |')
  console.log('| --- | ---: | ---: | ---: |')
  console.log(`| ${(bytes / 2 ** 20).toFixed(1)} MiB of JSON | ${ms(refusal)} | ${ms(parse)} | ${(refusal / parse).toFixed(2)} × |`)
}

main()
