// Issue 21: the JavaScript/Rust seam — one class in one file, no Proxy, the
// contracts between the addon and the JavaScript checked, one road to the class,
// the solve-log parser outside the core.
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { ErrorBudgetTracker } = require('../..')
const native = require('../../native.js')
const { startRedis } = require('../helpers/redis-server')
const { connect } = require('../helpers/fleet')
const withRedis = require('../helpers/external.js').needsFor(test, 'redis-server')
const reloadable = require('../helpers/binding').nativeOnly('the WASI build hands out its per-thread report buffer to one copy of the module')

const root = path.join(__dirname, '..', '..')
const read = (file) => fs.readFileSync(path.join(root, file), 'utf8')

/** Every .js file under lib/, relative to the root. */
function libFiles(dir = 'lib') {
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.posix.join(dir, entry.name)
    if (entry.isDirectory()) return libFiles(file)
    return file.endsWith('.js') ? [file] : []
  })
}

test('no Proxy in index.js or lib/: the class is a plain constructor with its own prototype', (t) => {
  for (const file of ['index.js', ...libFiles()]) t.false(/new Proxy\b/.test(read(file)), file)
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  t.is(tracker.constructor, ErrorBudgetTracker)
  t.true(tracker instanceof ErrorBudgetTracker)
  t.true(tracker instanceof native.ErrorBudgetTracker)
  t.is(Object.getPrototypeOf(tracker), ErrorBudgetTracker.prototype)
  t.is(ErrorBudgetTracker.name, 'ErrorBudgetTracker')
  // The prototype's JavaScript members, like a class's: not enumerable.
  for (const key of ['report', 'guard', 'metrics', 'sync', 'on', 'off', 'close', 'total', 'status']) {
    t.false(Object.getOwnPropertyDescriptor(ErrorBudgetTracker.prototype, key).enumerable, key)
  }
  // restore() and shared() make instances of the same class.
  const restored = ErrorBudgetTracker.restore(tracker.snapshot(), { clock: 'manual' })
  t.is(restored.constructor, ErrorBudgetTracker)
  const shared = ErrorBudgetTracker.shared('i21-seam-constructor')
  t.is(shared.constructor, ErrorBudgetTracker)
  for (const x of [tracker, restored, shared]) x.close()
})

test("a user's subclass is its own constructor; its methods, getters and statics inherit", (t) => {
  class Named extends ErrorBudgetTracker {
    get label() {
      return `${this.status}:${this.total}`
    }
  }
  const tracker = new Named({ clock: 'manual' })
  tracker.record(true, 10)
  t.is(tracker.constructor, Named)
  t.true(tracker instanceof ErrorBudgetTracker)
  t.is(tracker.label, 'healthy:1')
  t.is(tracker.report().total, 1)
  t.is(Named.restore, ErrorBudgetTracker.restore)
  tracker.close()
  t.true(tracker.closed)
})

test('every getter read through the figure reader equals the native glue getter', (t) => {
  // 97 successes and 3 failures at 95 %: budget 5, 2 left (40 %): warning.
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  tracker.recordMany(97, 3, 1000)
  const expected = {
    now: 1000,
    total: 100,
    successes: 97,
    failures: 3,
    currentRate: 0.97,
    status: 'warning',
    lastStatus: 'warning',
    closed: false,
  }
  for (const [name, value] of Object.entries(expected)) t.is(tracker[name], value, name)
  t.is(Math.round(tracker.budgetTotal * 1e9) / 1e9, 5)
  t.is(Math.round(tracker.budgetRemaining * 1e9) / 1e9, 2)
  t.is(Math.round(tracker.remainingFraction * 1e9) / 1e9, 0.4)
  t.is(Math.round(tracker.burnRate * 1e9) / 1e9, 0.6)
  // The same values as the native prototype's getters (the napi-rs glue).
  const nativeProto = native.ErrorBudgetTracker.prototype
  for (const name of Object.keys(expected).concat(['budgetTotal', 'budgetRemaining', 'remainingFraction', 'burnRate'])) {
    t.is(tracker[name], Object.getOwnPropertyDescriptor(nativeProto, name).get.call(tracker), name)
  }
  tracker.close()
  t.is(tracker.closed, true)
})

test('the contract: the addon exports its symbols and layouts, and a difference fails at load', (t) => {
  const contract = native.seamContract()
  const seam = require('../../lib/native/contract.js')
  t.is(seam.REPORT_INTO, Symbol.for(contract.reportIntoSymbol))
  t.is(seam.FIGURE, Symbol.for(contract.figureSymbol))
  t.is(seam.REPORT_HEAD, 15)
  // Each layout is the addon's enum as { name: index } (crates/budget-core/src/layout.rs): every index once.
  t.deepEqual(
    Object.values(contract.reportLayout).sort((a, b) => a - b),
    [...Array(15).keys()],
  )
  t.deepEqual(Object.keys(contract.pairLayout).sort(), ['burnRateLong', 'burnRateShort', 'index'])
  t.deepEqual(
    Object.values(contract.figureLayout).sort((a, b) => a - b),
    [...Array(12).keys()],
  )
  t.deepEqual(seam.STATUSES, ['healthy', 'warning', 'critical', 'exhausted'])
  // The per-instance functions live under the addon's keys.
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  t.is(typeof tracker[Symbol.for(contract.reportIntoSymbol)], 'function')
  t.is(typeof tracker[Symbol.for(contract.figureSymbol)], 'function')
  t.is(typeof ErrorBudgetTracker.prototype[Symbol.for(contract.nativeRecordSymbol)], 'function')
  tracker.close()
  // An addon whose report layout differs: loading lib/native/contract.js against it throws, naming it.
  // lib/ reaches the addon through lib/native/load-native.js: swap what it exports.
  const nativePath = require.resolve('../../lib/native/load-native.js')
  const contractPath = require.resolve('../../lib/native/contract.js')
  const saved = require.cache[nativePath].exports
  const { total, ...renamed } = contract.reportLayout
  require.cache[nativePath].exports = { ...saved, seamContract: () => ({ ...contract, reportLayout: { ...renamed, count: total } }) }
  delete require.cache[contractPath]
  try {
    const err = t.throws(() => require('../../lib/native/contract.js'))
    t.regex(err.message, /disagree on the report buffer layout/)
    t.regex(err.message, /\(the addon has no total; the JavaScript does not read the addon's count\)/)
  } finally {
    require.cache[nativePath].exports = saved
    delete require.cache[contractPath]
    require('../../lib/native/contract.js')
  }
})

test("lib/ takes the class from lib/tracker/tracker.js, never '../..' or the addon directly", (t) => {
  for (const file of libFiles()) {
    const source = read(file)
    t.false(/require\((['"])\.\.\/\.\.\1\)/.test(source), `${file} requires '../..'`)
    t.false(/require\((['"])\.\.\/\.\.\/index(\.js)?\1\)/.test(source), `${file} requires the package entry`)
    // The addon itself only through lib/native/load-native.js (which explains a missing binary).
    const native = /require\((['"])(\.\.\/)+native(\.js)?\1\)/.test(source)
    if (native) t.is(file, 'lib/native/load-native.js', `${file} requires native.js`)
  }
})

test('the core crate depends on no parsing library: the solve-log parser is its own crate', (t) => {
  const core = read('crates/budget-core/Cargo.toml')
  for (const crate of ['memchr', 'csv-core', 'solve-log']) t.false(core.includes(crate), crate)
  t.false(fs.existsSync(path.join(root, 'crates/budget-core/src/logparse.rs')))
  t.true(read('crates/solve-log/Cargo.toml').includes('csv-core'))
  t.regex(read('Cargo.toml'), /members = \[[^\]]*"crates\/solve-log"/)
})

withRedis('a fleet tracker is an ErrorBudgetTracker: constructor, report().fleet, fleet-error listeners, close', async (t) => {
  const server = await startRedis()
  const { redis, close } = await connect('ioredis', server.url)
  t.teardown(async () => {
    close()
    await server.stop()
  })
  const tracker = new ErrorBudgetTracker({ clock: 'manual', fleet: { redis, key: 'i21-seam', syncMs: 0 } })
  // Near the Redis server's time: a fleet refuses a clock off by more than maxSkewMs.
  tracker.advanceTo(Date.now())
  t.is(tracker.constructor, ErrorBudgetTracker)
  t.true(tracker instanceof ErrorBudgetTracker)
  t.deepEqual(Object.keys(tracker), [])
  const listener = () => {}
  t.is(tracker.on('fleet-error', listener), tracker)
  t.is(tracker.off('fleet-error', listener), tracker)
  tracker.record(true)
  await tracker.sync()
  t.like(tracker.report(), { total: 1, fleet: { key: 'i21-seam' } })
  // A tracker without a fleet: no `fleet` field, and sync() rejects.
  const plain = new ErrorBudgetTracker({ clock: 'manual' })
  t.false('fleet' in plain.report())
  await t.throwsAsync(plain.sync(), { code: 'ERR_INVALID_STATE' })
  plain.close()
  tracker.close()
  t.true(tracker.closed)
})

reloadable("lib/native/fast-report.js reads the buffer by the addon's indexes, not by position (issue 32)", (t) => {
  const contract = native.seamContract()
  const nativePath = require.resolve('../../lib/native/load-native.js')
  const contractPath = require.resolve('../../lib/native/contract.js')
  const reportPath = require.resolve('../../lib/native/fast-report.js')
  const saved = require.cache[nativePath].exports
  // An addon that said total and failures trade places: the JavaScript reads them from each other's slots.
  const { total, failures } = contract.reportLayout
  const swapped = { ...contract, reportLayout: { ...contract.reportLayout, total: failures, failures: total } }
  require.cache[nativePath].exports = Object.assign(Object.create(saved), { seamContract: () => swapped })
  delete require.cache[contractPath]
  delete require.cache[reportPath]
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  try {
    tracker.recordMany(97, 3, 0)
    const report = require('../../lib/native/fast-report.js').fastReport(tracker)
    t.is(report.total, 3)
    t.is(report.failures, 100)
  } finally {
    tracker.close()
    require.cache[nativePath].exports = saved
    delete require.cache[contractPath]
    delete require.cache[reportPath]
    require('../../lib/native/fast-report.js')
  }
})
