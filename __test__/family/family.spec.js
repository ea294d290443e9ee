const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { BudgetFamily, ErrorBudgetTracker } = require('../..')
const { noMoreDeliveries, waitForCalls } = require('../helpers/deliveries')

const manualFamily = (options = {}) => new BudgetFamily({ labelNames: ['type', 'site'], clock: 'manual', ...options })

// `successes` then `failures` one by one at `at` on the child of `labels`.
function feed(family, labels, successes, failures, at = 1000) {
  for (let i = 0; i < successes; i++) family.record(labels, true, at)
  for (let i = 0; i < failures; i++) family.record(labels, false, at)
}

test('labels(l) creates a child on first use and returns the same object afterwards, whatever the key order', (t) => {
  const family = manualFamily()
  const child = family.labels({ type: 'turnstile', site: 'shop.example' })
  t.true(child instanceof ErrorBudgetTracker)
  t.is(family.labels({ site: 'shop.example', type: 'turnstile' }), child)
  t.is(family.labels({ type: 'turnstile', site: 'shop.example' }), child)
  t.not(family.labels({ type: 'turnstile', site: 'other.example' }), child)
  t.is(family.size, 2)
  t.deepEqual(family.labelNames, ['type', 'site'])
  family.close()
})

test('labels must be exactly labelNames with string values: a TypeError with a code naming the label, nothing created', (t) => {
  const family = manualFamily()
  family.labels({ type: 'image', site: 'a' })
  const cases = [
    [null, TypeError, 'ERR_INVALID_ARG_TYPE', /labels must be an object with the keys type, site, got null/],
    ['type=image', TypeError, 'ERR_INVALID_ARG_TYPE', /got string/],
    [{ type: 'image' }, TypeError, 'ERR_INVALID_ARG_VALUE', /labels\.site is missing; a family's labels are exactly: type, site/],
    [{ type: 'image', site: 7 }, TypeError, 'ERR_INVALID_ARG_TYPE', /labels\.site must be a string, got number/],
    [{ type: 'image', site: 'a', provider: 'x' }, TypeError, 'ERR_INVALID_ARG_VALUE', /labels\.provider is not a label of this family/],
    [Object.assign(Object.create({ site: 'a' }), { type: 'image' }), TypeError, 'ERR_INVALID_ARG_VALUE', /labels\.site is missing/],
  ]
  for (const [labels, Class, code, message] of cases) {
    const err = t.throws(() => family.labels(labels), { instanceOf: Class, message })
    t.is(err.code, code)
    t.throws(() => family.record(labels, true), { instanceOf: Class })
  }
  t.is(family.size, 1)
  family.close()
})

test('the family checks its own options and each tracker option before anything is created', (t) => {
  const bad = [
    [{ labelNames: 'type' }, 'ERR_INVALID_ARG_TYPE', /options\.labelNames must be an array/],
    [{ labelNames: [] }, 'ERR_INVALID_ARG_VALUE', /at least one label/],
    [{ labelNames: ['type', 'type'] }, 'ERR_INVALID_ARG_VALUE', /'type' is given twice/],
    [{ labelNames: ['name'] }, 'ERR_INVALID_ARG_VALUE', /'name' is reserved/],
    [{ labelNames: ['a-b'] }, 'ERR_INVALID_ARG_VALUE', /not a Prometheus label name/],
    [{ labelNames: ['type'], maxChildren: 0 }, 'ERR_OUT_OF_RANGE', /options\.maxChildren must be an integer in \[1, 1000000\], got 0/],
    [{ labelNames: ['type'], childConfig: {} }, 'ERR_INVALID_ARG_TYPE', /childConfig must be a function/],
    [{ labelNames: ['type'], targetRate: 2 }, 'ERR_OUT_OF_RANGE', /new BudgetFamily\(options\): options\.targetRate must be in \(0, 1\], got 2/],
    [{ labelNames: ['type'], windowMs: '1h' }, 'ERR_INVALID_ARG_TYPE', /options\.windowMs/],
    [
      { labelNames: ['type'], colour: 'red' },
      'ERR_INVALID_ARG_VALUE',
      /unknown key 'colour' in new BudgetFamily\(options\): options; known keys: labelNames, childConfig, maxChildren/,
    ],
    [{ labelNames: ['type'], shared: 7 }, 'ERR_INVALID_ARG_TYPE', /options\.shared must be a non-empty string, got number/],
    [{ labelNames: ['type'], snapshot: '{}' }, 'ERR_INVALID_ARG_VALUE', /BudgetFamily\.restore/],
  ]
  for (const [options, code, message] of bad) {
    const err = t.throws(() => new BudgetFamily(options), { message })
    t.is(err.code, code, String(message))
  }
})

test('childConfig(labels) overrides each child; it cannot change a family-wide option, and then nothing is created', (t) => {
  const seen = []
  const family = manualFamily({
    targetRate: 0.95,
    childConfig: (labels) => {
      seen.push(labels)
      if (labels.site === 'bad') return { clock: 'monotonic' }
      if (labels.site === 'worse') return { targetRate: 1.5 }
      return labels.type === 'image' ? { targetRate: 0.9 } : undefined
    },
  })
  t.is(family.labels({ type: 'image', site: 'a' }).report().sloTarget, 0.9)
  t.is(family.labels({ type: 'turnstile', site: 'a' }).report().sloTarget, 0.95)
  t.deepEqual(seen, [
    { type: 'image', site: 'a' },
    { type: 'turnstile', site: 'a' },
  ])
  const err = t.throws(() => family.labels({ type: 'image', site: 'bad' }), {
    message: /childConfig\(\{"type":"image","site":"bad"\}\)\.clock cannot differ per child/,
  })
  t.is(err.code, 'ERR_INVALID_ARG_VALUE')
  const range = t.throws(() => family.labels({ type: 'image', site: 'worse' }), { instanceOf: RangeError })
  t.regex(range.message, /childConfig\(\{"type":"image","site":"worse"\}\)\.targetRate must be in \(0, 1\]/)
  t.is(family.size, 2)
  family.close()
})

test('family.record(labels, ok, atMs) records on the child; bad arguments create no child', (t) => {
  const family = manualFamily()
  feed(family, { type: 'image', site: 'a' }, 3, 1, 5000)
  const child = family.labels({ type: 'image', site: 'a' })
  t.is(child.total, 4)
  t.is(child.failures, 1)
  t.is(child.now, 5000)
  t.is(family.now, 5000)
  t.throws(() => family.record({ type: 'image', site: 'b' }, 'yes'), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_TYPE' })
  t.throws(() => family.record({ type: 'image', site: 'b' }, true, 'soon'), { instanceOf: TypeError })
  t.is(family.size, 1)
  family.close()
})

test('report() lists every child with its labels, worst first: least budget left, then highest burn, then creation order', (t) => {
  // 95 %: 100 solves allow 5 failures. a: 3 failures → 40 % left, burn 0.6; b: 1 → 80 %, 0.2;
  // image at 90 % (childConfig): 100 solves allow 10, 1 failure → 90 %, 0.1; e (empty) 100 %, 0;
  // x and y exhausted (0 % left): x with 10 failures burns 10/100/0.05 = 2, y with 20 burns 4.
  const family = manualFamily({ childConfig: (l) => (l.type === 'image' ? { targetRate: 0.9 } : {}) })
  family.labels({ type: 'turnstile', site: 'e' })
  feed(family, { type: 'turnstile', site: 'b' }, 99, 1)
  feed(family, { type: 'image', site: 'c' }, 99, 1)
  feed(family, { type: 'turnstile', site: 'x' }, 90, 10)
  feed(family, { type: 'turnstile', site: 'a' }, 97, 3)
  feed(family, { type: 'turnstile', site: 'y' }, 80, 20)
  family.labels({ type: 'recaptcha', site: 'f' })
  const rows = family.report()
  t.deepEqual(
    rows.map((r) => [r.labels.type, r.labels.site, r.budgetRemainingPct, r.burnRate, r.status]),
    [
      ['turnstile', 'y', 0, 4, 'exhausted'],
      ['turnstile', 'x', 0, 2, 'exhausted'],
      ['turnstile', 'a', 40, 0.6, 'warning'],
      ['turnstile', 'b', 80, 0.2, 'healthy'],
      ['image', 'c', 90, 0.1, 'healthy'],
      ['turnstile', 'e', 100, 0, 'healthy'],
      ['recaptcha', 'f', 100, 0, 'healthy'],
    ],
  )
  // Each row is the child's own report.
  t.deepEqual({ ...rows[2], labels: undefined }, { ...family.labels({ type: 'turnstile', site: 'a' }).report(), labels: undefined })
  family.close()
})

test('on(event) reaches every child, present and future, with its labels; off() stops it; a child keeps its own listeners', async (t) => {
  const family = manualFamily({ targetRate: 0.9 })
  const early = family.labels({ type: 'turnstile', site: 'a' })
  const calls = []
  const listener = (report, labels) => calls.push([labels, report.status, report.failures])
  family.on('exhausted', listener)
  const own = []
  early.on('exhausted', (report) => own.push(report.failures))
  const alerts = []
  family.on('alert', (event, labels) => alerts.push([labels.site, event.name]))
  // At 90 %, 1 failure among 2 solves is past the budget: exhausted at once.
  feed(family, { type: 'turnstile', site: 'a' }, 1, 1)
  feed(family, { type: 'image', site: 'b' }, 1, 1)
  await waitForCalls(calls, 2)
  await noMoreDeliveries(calls)
  t.deepEqual(
    calls.sort((x, y) => x[0].site.localeCompare(y[0].site)),
    [
      [{ type: 'turnstile', site: 'a' }, 'exhausted', 1],
      [{ type: 'image', site: 'b' }, 'exhausted', 1],
    ],
  )
  t.deepEqual(own, [1])
  t.true(Object.isFrozen(calls[0][0]))
  family.off('exhausted', listener)
  family.advanceTo(10 * 3600_000) // the window empties: both back to healthy
  feed(family, { type: 'recaptcha', site: 'c' }, 1, 1, 10 * 3600_000)
  for (const l of [
    { type: 'turnstile', site: 'a' },
    { type: 'image', site: 'b' },
  ])
    feed(family, l, 1, 1, 10 * 3600_000)
  await noMoreDeliveries(calls)
  t.is(calls.length, 2)
  t.deepEqual(own, [1, 1])
  t.throws(() => family.on('exhaused', listener), {
    code: 'ERR_INVALID_ARG_VALUE',
    message: /unknown event 'exhaused'; known events: healthy, warning, critical, exhausted, alert, resolve/,
  })
  t.throws(() => family.on('exhausted', 'f'), { code: 'ERR_INVALID_ARG_TYPE' })
  family.close()
})

test('maxChildren: an empty child without listeners of its own is evicted first; otherwise a RangeError and nothing is lost', (t) => {
  const family = manualFamily({ maxChildren: 3, windowMs: 60_000 })
  family.on('exhausted', () => {}) // the family's listeners do not keep a child
  feed(family, { type: 'turnstile', site: 'busy' }, 5, 1)
  const listened = family.labels({ type: 'turnstile', site: 'listened' })
  listened.on('warning', () => {})
  const empty = family.labels({ type: 'turnstile', site: 'empty' })
  t.is(family.size, 3)
  const fresh = family.labels({ type: 'turnstile', site: 'fresh' })
  t.is(family.size, 3)
  t.true(empty.closed, 'the evicted child is closed: a record on it throws rather than being lost')
  t.throws(() => empty.record(true), { code: 'ERR_TRACKER_CLOSED' })
  t.deepEqual(
    family.children().map((c) => c.labels.site),
    ['busy', 'listened', 'fresh'],
  )
  fresh.record(true, 2000)
  // busy has solves in its window, listened has a listener, fresh has a solve: none can go.
  const err = t.throws(() => family.labels({ type: 'turnstile', site: 'one-more' }), { instanceOf: RangeError })
  t.is(err.code, 'ERR_OUT_OF_RANGE')
  t.regex(err.message, /maxChildren \(3\).*nothing was created/)
  t.throws(() => family.record({ type: 'turnstile', site: 'one-more' }, false), { code: 'ERR_OUT_OF_RANGE' })
  t.is(family.size, 3)
  const busy = family.labels({ type: 'turnstile', site: 'busy' })
  t.is(busy.total, 6)
  t.is(busy.failures, 1)
  // Once busy's window is empty (60 s after its solves), it may go; listened still may not (until its off()).
  family.advanceTo(1000 + 61_000 + 2000)
  family.labels({ type: 'turnstile', site: 'one-more' })
  t.true(busy.closed)
  t.false(listened.closed)
  family.close()
})

test('a listener taken off again no longer keeps its child from eviction', (t) => {
  const family = manualFamily({ maxChildren: 1 })
  const child = family.labels({ type: 'a', site: 'a' })
  const listener = () => {}
  child.on('warning', listener).on('warning', listener)
  t.throws(() => family.labels({ type: 'b', site: 'b' }), { code: 'ERR_OUT_OF_RANGE' })
  child.off('warning', listener)
  t.throws(() => family.labels({ type: 'b', site: 'b' }), { code: 'ERR_OUT_OF_RANGE' }, 'one registration is left')
  child.off('warning', listener)
  family.labels({ type: 'b', site: 'b' })
  t.true(child.closed)
  family.close()
})

test('children are full trackers: guard() records on the child', async (t) => {
  const family = manualFamily()
  const child = family.labels({ type: 'turnstile', site: 'a' })
  t.is(await child.guard(async () => 'token'), 'token')
  await t.throwsAsync(
    child.guard(async () => Promise.reject(new Error('unsolvable'))),
    { message: 'unsolvable' },
  )
  t.is(child.successes, 1)
  t.is(child.failures, 1)
  family.close()
})

test('advanceTo() moves every child, and a child created later starts at the family time', (t) => {
  const family = manualFamily({ windowMs: 60_000 })
  feed(family, { type: 'a', site: 'a' }, 2, 0, 1000)
  family.advanceTo(30_000)
  t.is(family.labels({ type: 'a', site: 'a' }).now, 30_000)
  t.is(family.labels({ type: 'b', site: 'b' }).now, 30_000)
  family.advanceTo(62_000) // past a's solves (at 1 s) plus the 60 s window
  t.is(family.labels({ type: 'a', site: 'a' }).total, 0)
  t.throws(() => family.advanceTo(1), { instanceOf: RangeError, code: 'ERR_OUT_OF_RANGE' })
  const real = new BudgetFamily({ labelNames: ['type'] })
  t.throws(() => real.advanceTo(5), { code: 'ERR_INVALID_STATE' })
  real.close()
  family.close()
})

test('snapshot() and BudgetFamily.restore() carry every child with its labels and counts', (t) => {
  const family = manualFamily({ targetRate: 0.9, name: 'solves', maxChildren: 50 })
  feed(family, { type: 'turnstile', site: 'a' }, 8, 2, 5000)
  feed(family, { type: 'image', site: 'b' }, 3, 0, 6000)
  const json = family.snapshot()
  const copy = BudgetFamily.restore(json, { clock: 'manual' })
  t.is(copy.size, 2)
  t.is(copy.name, 'solves')
  t.is(copy.maxChildren, 50)
  t.deepEqual(
    copy.report().map((r) => [r.labels, r.total, r.failures, r.sloTarget]),
    [
      [{ type: 'turnstile', site: 'a' }, 10, 2, 0.9],
      [{ type: 'image', site: 'b' }, 3, 0, 0.9],
    ],
  )
  t.is(copy.now, 6000)
  // A new child of the restored family gets the family's options.
  t.is(copy.labels({ type: 'x', site: 'y' }).report().sloTarget, 0.9)
  for (const bad of ['{', '{"format":"x"}', JSON.stringify({ ...JSON.parse(json), version: 9 })]) {
    t.throws(() => BudgetFamily.restore(bad), { code: 'ERR_SNAPSHOT_INVALID' })
  }
  t.throws(() => BudgetFamily.restore(json, { labelNames: ['x'] }), { code: 'ERR_INVALID_ARG_VALUE', message: /unknown key 'labelNames'/ })
  copy.close()
  family.close()
})

test('persist: the family is saved as a whole on close() and restored from its file on start', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'family-'))
  const file = path.join(dir, 'family.json')
  try {
    const family = manualFamily({ persist: { path: file } })
    feed(family, { type: 'turnstile', site: 'a' }, 4, 1, 2000)
    t.false(fs.existsSync(file))
    family.close()
    t.true(fs.existsSync(file))
    const again = manualFamily({ persist: { path: file } })
    t.is(again.size, 1)
    const child = again.labels({ type: 'turnstile', site: 'a' })
    t.is(child.total, 5)
    t.is(child.failures, 1)
    again.record({ type: 'image', site: 'b' }, true, 3000)
    again.save()
    t.is(JSON.parse(fs.readFileSync(file, 'utf8')).children.length, 2)
    again.close()
    t.throws(() => manualFamily({ labelNames: ['other'], persist: { path: file } }), { code: 'ERR_SNAPSHOT_INVALID', message: /labelNames/ })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('close() closes every child; afterwards labels(), record() and on() throw ERR_TRACKER_CLOSED', (t) => {
  const family = manualFamily()
  const child = family.labels({ type: 'a', site: 'a' })
  family.close()
  family.close()
  t.true(child.closed)
  t.true(family.closed)
  t.is(family.size, 0)
  t.throws(() => family.labels({ type: 'a', site: 'a' }), { code: 'ERR_TRACKER_CLOSED' })
  t.throws(() => family.record({ type: 'a', site: 'a' }, true), { code: 'ERR_TRACKER_CLOSED' })
  t.throws(() => family.on('warning', () => {}), { code: 'ERR_TRACKER_CLOSED' })
})

require('../helpers/binding').nativeOnly('WASI has no file locks: a persist path is not locked there')(
  'persist: one family owns a path (an OS lock on <path>.lock, which names its pid); a second owner gets ERR_PERSIST_LOCKED until close()',
  (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'family-'))
    const file = path.join(dir, 'family.json')
    const lock = `${file}.lock`
    try {
      const first = manualFamily({ persist: { path: file } })
      t.is(fs.readFileSync(lock, 'utf8'), `${process.pid} family\n`)
      first.record({ type: 'a', site: 'a' }, true, 1000)
      const err = t.throws(() => manualFamily({ persist: { path: file } }), { code: 'ERR_PERSIST_LOCKED' })
      t.regex(err.message, /another family of this process/)
      t.regex(err.message, /family\.json\.lock/)
      first.close()
      t.false(fs.existsSync(lock))
      const second = manualFamily({ persist: { path: file } })
      t.is(second.labels({ type: 'a', site: 'a' }).total, 1)
      second.close()
      // What a lock file says only names the owner in the message: the OS lock decides, and
      // a file no live owner holds (whatever pid it names) is taken over (family-attacks.spec.js).
      // A constructor that throws releases the lock it took.
      t.throws(() => manualFamily({ labelNames: ['other'], persist: { path: file } }), { code: 'ERR_SNAPSHOT_INVALID' })
      t.false(fs.existsSync(lock))
      manualFamily({ persist: { path: file } }).close()
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  },
)

test('a child with a guard() in flight is not evicted: its outcome is recorded on it', async (t) => {
  const family = manualFamily({ maxChildren: 1 })
  const child = family.labels({ type: 'a', site: 'a' })
  let release
  const pending = child.guard(() => new Promise((resolve) => (release = resolve)))
  const err = t.throws(() => family.labels({ type: 'b', site: 'b' }), { code: 'ERR_OUT_OF_RANGE' })
  t.regex(err.message, /guard\(\) in flight/)
  t.false(child.closed)
  t.is(family.size, 1)
  release('token')
  t.is(await pending, 'token')
  t.is(child.successes, 1)
  // Settled (and, its window emptied, the child idle), it may go.
  family.advanceTo(1000 + 3_600_000 + 1000)
  const next = family.labels({ type: 'b', site: 'b' })
  t.true(child.closed)
  t.is(family.children()[0].tracker, next)
  family.close()
})

test('a guard() that timed out or was rejected no longer keeps its child from eviction', async (t) => {
  const family = manualFamily({ maxChildren: 1 })
  const child = family.labels({ type: 'a', site: 'a' })
  await t.throwsAsync(
    child.guard(async () => Promise.reject(new Error('nope')), { countsAsFailure: () => false }),
    { message: 'nope' },
  )
  t.is(child.total, 0)
  family.labels({ type: 'b', site: 'b' })
  t.true(child.closed)
  family.close()
})

test("labelNames and rules --grouping refuse the same reserved names, the throttle series' decision and state among them", (t) => {
  const { prometheusRules } = require('../..')
  const slo = { name: 'solves', targetRate: 0.95, windowMs: 86_400_000 }
  // Set by the series (tracker, throttle), by the rules and alerts, or by the scrape.
  const reserved = ['name', 'outcome', 'window', 'status', 'alert', 'severity', 'decision', 'state', 'job', 'instance']
  reserved.push('slo', 'pair', 'alertname', 'alertstate', 'objective', 'period', 'description')
  for (const label of reserved) {
    const err = t.throws(() => new BudgetFamily({ labelNames: ['type', label] }), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_VALUE' }, label)
    t.regex(err.message, new RegExp(`'${label}' is reserved`))
    t.throws(
      () => prometheusRules({ ...slo, grouping: ['type', label] }),
      { code: 'ERR_INVALID_ARG_VALUE', message: new RegExp(`'${label}' is set by the rules or the scrape`) },
      label,
    )
  }
  // Others are labels of both.
  const family = new BudgetFamily({ labelNames: ['type', 'site', 'provider'] })
  family.close()
  t.regex(prometheusRules({ ...slo, grouping: ['type', 'site', 'provider'] }), /sum by \(name, type, site, provider\)/)
})

test("a tracker's metrics() labels and registerMetrics(family) labels refuse the same reserved names as labelNames (issue 32: one list)", (t) => {
  const { Registry } = require('prom-client')
  const { registerMetrics } = require('../..')
  // The series' and the scrape's 10, then the 7 the rules and alerts set: a rule's label of that name would overwrite the series'.
  const reserved = ['name', 'outcome', 'window', 'status', 'alert', 'severity', 'decision', 'state', 'job', 'instance']
  reserved.push('slo', 'pair', 'alertname', 'alertstate', 'objective', 'period', 'description')
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const family = new BudgetFamily({ labelNames: ['type'] })
  for (const label of reserved) {
    const mine = t.throws(() => tracker.metrics({ labels: { [label]: 'x' } }), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_VALUE' }, label)
    t.is(mine.message, `metrics(options): options.labels: '${label}' is reserved (${reserved.join(', ')})`)
    t.throws(
      () => registerMetrics(family, new Registry(), { labels: { [label]: 'x' } }),
      { code: 'ERR_INVALID_ARG_VALUE', message: new RegExp(`'${label}' is reserved`) },
      label,
    )
  }
  t.regex(tracker.metrics({ labels: { region: 'eu' } }), /region="eu"/)
  tracker.close()
  family.close()
})

test('the exported BudgetFamily has no internal statics (issue 32)', (t) => {
  t.deepEqual(
    Object.getOwnPropertyNames(BudgetFamily).filter((key) => key.startsWith('_')),
    [],
  )
  t.deepEqual(
    Object.getOwnPropertyNames(Object.getPrototypeOf(BudgetFamily)).filter((key) => key.startsWith('_')),
    [],
  )
})

test('BudgetFamily.restore(): a snapshot with the same labels twice, or a bad value of its own, is ERR_SNAPSHOT_INVALID', (t) => {
  const family = manualFamily({ maxChildren: 5 })
  feed(family, { type: 'a', site: 'a' }, 1, 0)
  feed(family, { type: 'b', site: 'b' }, 0, 1)
  const snap = JSON.parse(family.snapshot())
  family.close()
  const restore = (edit, options) => {
    const copy = structuredClone(snap)
    edit(copy)
    return () => BudgetFamily.restore(JSON.stringify(copy), options)
  }
  const twice = t.throws(
    restore((s) => s.children.push(structuredClone(s.children[1]))),
    { code: 'ERR_SNAPSHOT_INVALID' },
  )
  t.regex(twice.message, /children\[2\]\.labels \{"type":"b","site":"b"\} are those of children\[1\]/)
  for (const [edit, message] of [
    [(s) => (s.options.targetRate = 5), /BudgetFamily\.restore\(json\): the snapshot's options\.targetRate must be in \(0, 1\], got 5/],
    [(s) => (s.options.maxChildren = 0), /the snapshot's options\.maxChildren cannot be there/],
    [(s) => (s.options.name = 'other'), /the snapshot's options\.name cannot be there/],
    [(s) => (s.options.snapshot = '{}'), /the snapshot's options\.snapshot cannot be there/],
    [(s) => (s.maxChildren = 0), /the snapshot's maxChildren must be an integer in \[1, 1000000\], got 0/],
    [(s) => (s.name = 7), /the snapshot's name must be a non-empty string, got number/],
    [
      (s) => {
        s.labelNames = ['name']
        s.children = []
      },
      /the snapshot's labelNames: 'name' is reserved/,
    ],
  ]) {
    const err = t.throws(restore(edit), { code: 'ERR_SNAPSHOT_INVALID', message })
    t.is(err.constructor, Error)
  }
  // The restore's own options are still the caller's: a TypeError naming them.
  t.throws(
    restore(() => {}, { childConfig: 5 }),
    {
      instanceOf: TypeError,
      code: 'ERR_INVALID_ARG_TYPE',
      message: /^BudgetFamily\.restore\(json, options\): options\.childConfig must be a function/,
    },
  )
  const copy = BudgetFamily.restore(JSON.stringify(snap), { clock: 'manual' })
  t.is(copy.size, 2)
  copy.close()
})

test('childConfig(labels) must answer synchronously, and cannot create children itself: clear errors, nothing created', (t) => {
  const asyncFamily = manualFamily({ childConfig: async () => ({ targetRate: 0.5 }) })
  const err = t.throws(() => asyncFamily.labels({ type: 'a', site: 'a' }), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_TYPE' })
  t.regex(err.message, /^childConfig\(\{"type":"a","site":"a"\}\) returned a Promise/)
  t.is(asyncFamily.size, 0)
  asyncFamily.close()

  let family
  family = manualFamily({
    maxChildren: 2,
    childConfig: (labels) => {
      if (labels.site === 'nested') family.labels({ type: labels.type, site: `${labels.site}-again` })
      if (labels.site === 'known') family.labels({ type: 'old', site: 'old' }) // an existing child: fine
      return undefined
    },
  })
  const old = family.labels({ type: 'old', site: 'old' })
  const nested = t.throws(() => family.labels({ type: 'a', site: 'nested' }), { code: 'ERR_INVALID_STATE' })
  t.regex(nested.message, /family\.labels\(\{"type":"a","site":"nested-again"\}\) inside childConfig\(\{"type":"a","site":"nested"\}\)/)
  t.is(family.size, 1)
  t.false(old.closed)
  t.is(family.labels({ type: 'b', site: 'known' }).closed, false)
  t.is(family.size, 2)
  family.close()
})

test("messages: unknown keys list the family's keys, a call without new has a code, record() after close() names record()", (t) => {
  const unknown = t.throws(() => new BudgetFamily({ labelNames: ['s'], labelname: ['x'] }), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_VALUE' })
  t.regex(unknown.message, /^unknown key 'labelname' in new BudgetFamily\(options\): options; known keys: /)
  const known = unknown.message.split('known keys: ')[1].split('; did you mean')[0].split(', ')
  t.true(unknown.message.endsWith("; did you mean 'labelNames'?"))
  for (const key of ['labelNames', 'childConfig', 'maxChildren', 'name', 'persist', 'fleet', 'shared', 'targetRate', 'windowMs', 'alerts', 'clock']) {
    t.true(known.includes(key), key)
  }
  for (const key of ['snapshot', 'now']) t.false(known.includes(key), key)
  t.is(known.length, new Set(known).size, 'each key once')

  for (const call of [() => BudgetFamily({ labelNames: ['s'] }), () => BudgetFamily.call({}, { labelNames: ['s'] })]) {
    const err = t.throws(call, { instanceOf: TypeError, code: 'ERR_CONSTRUCT_CALL_REQUIRED' })
    t.regex(err.message, /new BudgetFamily\(options\)/)
  }
  // new, subclasses and instanceof work as before.
  class Mine extends BudgetFamily {}
  const mine = new Mine({ labelNames: ['s'] })
  t.true(mine instanceof BudgetFamily)
  t.true(mine instanceof Mine)
  t.is(Object.getPrototypeOf(mine.labels({ s: 'a' })), ErrorBudgetTracker.prototype)
  // Mine.restore() makes a Mine (its children stay plain trackers); detached, a BudgetFamily.
  mine.record({ s: 'a' }, false)
  const again = Mine.restore(mine.snapshot())
  t.is(Object.getPrototypeOf(again), Mine.prototype)
  t.is(again.labels({ s: 'a' }).report().failures, 1)
  t.is(Object.getPrototypeOf(again.labels({ s: 'a' })), ErrorBudgetTracker.prototype)
  const { restore } = BudgetFamily
  const plain = restore(mine.snapshot())
  t.is(Object.getPrototypeOf(plain), BudgetFamily.prototype)
  again.close()
  plain.close()
  mine.close()

  const family = manualFamily()
  family.record({ type: 'a', site: 'a' }, true, 1000)
  family.close()
  for (const labels of [
    { type: 'a', site: 'a' },
    { type: 'new', site: 'new' },
  ]) {
    t.throws(() => family.record(labels, true), { code: 'ERR_TRACKER_CLOSED', message: 'record() after close(): the family is closed' })
  }
  t.throws(() => family.labels({ type: 'a', site: 'a' }), { code: 'ERR_TRACKER_CLOSED', message: 'labels() after close(): the family is closed' })
})
