// Issue 44, item 10: family.blame() does not read every child on every call
// (createFailover(family) asks it per provider before each solve). What it reads is
// counted here through the tracker's count getters, the only way JavaScript reads a
// child's window counts; the speed itself is `npm run bench:family`'s.
const test = require('ava')
const { BudgetFamily, ErrorBudgetTracker } = require('../..')

// Counts the calls of each count getter of the tracker's prototypes while `fn` runs.
function countReads(fn) {
  const restore = []
  const reads = { n: 0 }
  for (let proto = ErrorBudgetTracker.prototype; proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of ['successes', 'failures', 'total']) {
      const own = Object.getOwnPropertyDescriptor(proto, key)
      if (own?.get === undefined) continue
      const get = own.get
      Object.defineProperty(proto, key, {
        ...own,
        get() {
          reads.n++
          return get.call(this)
        },
      })
      restore.push(() => Object.defineProperty(proto, key, own))
    }
  }
  try {
    fn()
  } finally {
    for (const undo of restore) undo()
  }
  return reads.n
}

test('10. blame() in a family of 2 000 children reads no child’s counts, before and after records', (t) => {
  const family = new BudgetFamily({
    labelNames: ['provider', 'site'],
    attribution: { provider: 'provider', site: 'site' },
    clock: 'manual',
    windowMs: 3_600_000,
    resolutionMs: 60_000,
    maxChildren: 2000,
    alerts: [],
  })
  t.teardown(() => family.close())
  // 4 providers × 500 sites; p0 fails half its solves, the others 1 in 20.
  for (let i = 0; i < 2000; i++) {
    const provider = `p${i % 4}`
    family.labels({ provider, site: `s${Math.floor(i / 4)}` }).recordMany(provider === 'p0' ? 10 : 19, provider === 'p0' ? 10 : 1, 1000)
  }
  let answer
  const reads = countReads(() => {
    answer = family.blame({ provider: 'p0', site: 's7' })
    family.labels({ provider: 'p1', site: 's3' }).record(false, 2000)
    family.blame({ provider: 'p1', site: 's3' })
  })
  t.is(reads, 0)
  // And still the right answer: p0 fails 10 in 20 on every other site, the others 1 in 20.
  t.deepEqual(answer, { label: 'provider', value: 'p0' })
})
