// Prometheus counters only ever reset to zero in a new process: a restored
// tracker exports what it recorded since it was restored, not its restored
// lifetime counts. Otherwise the counter goes down but not to zero after a
// crash (the last autosave is older than the last scrape), and rate() counts
// the whole restored value as new solves.
const test = require('ava')
const { spawn } = require('node:child_process')
const path = require('node:path')
const { Registry } = require('prom-client')
const { ErrorBudgetTracker, registerMetrics, renderMetrics } = require('../..')
const { tempFiles } = require('../fixtures/replay/cli')

const value = (text, outcome) => {
  const m = text.match(new RegExp(`^captcha_budget_solves_total\\{name="default",outcome="${outcome}"\\} (\\d+)$`, 'm'))
  return Number(m[1])
}
const counters = (text) => [value(text, 'success'), value(text, 'failure')]

// Before the crash: 10 successes and 2 failures saved, then 5 and 1 more (scraped, never saved).
function crashed() {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  tracker.recordMany(10, 2, 1000)
  const saved = tracker.snapshot()
  tracker.recordMany(5, 1, 2000)
  return { tracker, saved }
}

const restores = {
  'restore()': (json) => ErrorBudgetTracker.restore(json, { clock: 'manual' }),
  'config.snapshot': (json) => new ErrorBudgetTracker({ snapshot: json, clock: 'manual' }),
  'a subclass with config.snapshot': (json) => new (class extends ErrorBudgetTracker {})({ snapshot: json, clock: 'manual' }),
}
for (const [how, restore] of Object.entries(restores)) {
  test(`a tracker restored by ${how} exports its counters from zero`, async (t) => {
    const { tracker, saved } = crashed()
    t.deepEqual(counters(tracker.metrics()), [15, 3]) // the last scrape before the crash
    const restored = restore(saved)
    t.deepEqual(restored.recorded, { successes: 10, failures: 2, excluded: 0, capacity: 0 }) // the tracker's own figure is lifetime
    t.deepEqual(counters(restored.metrics()), [0, 0]) // a reset to zero, not 15 → 10
    restored.recordMany(1, 4, 2500)
    t.deepEqual(counters(restored.metrics()), [1, 4])
    t.deepEqual(counters(renderMetrics([{ tracker: restored }])), [1, 4])
    const registry = new Registry()
    registerMetrics(restored, registry)
    t.deepEqual(counters(await registry.metrics()), [1, 4])
    // The window itself is restored: 10 + 1 successes, 2 + 4 failures in it.
    t.deepEqual([restored.total, restored.failures], [17, 6])
  })
}

test('a fresh tracker and a shared one export every solve they recorded', (t) => {
  const fresh = new ErrorBudgetTracker({ clock: 'manual' })
  fresh.recordMany(7, 2, 0)
  t.deepEqual(counters(fresh.metrics()), [7, 2])
  const a = ErrorBudgetTracker.shared('restart-spec', { clock: 'manual' })
  a.recordMany(3, 1, 0)
  const b = ErrorBudgetTracker.shared('restart-spec') // attached later: the same counters
  b.record(false, 0)
  t.deepEqual(counters(b.metrics()), [3, 2])
  t.deepEqual(counters(a.metrics()), [3, 2])
  a.close()
  b.close()
})

// One worker process: resolves to its first line of output once printed; the child is returned to kill.
function startWorker(file, successes, failures) {
  const child = spawn(process.execPath, [path.join(__dirname, '..', 'fixtures', 'persisted-worker.js'), file, String(successes), String(failures)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const line = new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      if (out.includes('\n')) resolve(JSON.parse(out.split('\n')[0]))
    })
    child.on('exit', (code) => reject(new Error(`worker exited with ${code} before printing`)))
  })
  return { child, line }
}

function kill(child) {
  return new Promise((resolve) => {
    child.on('exit', resolve)
    child.kill('SIGKILL')
  })
}

test('kill -9 and a restart from the persist file: the counter resets to zero, never to the saved value', async (t) => {
  const { dir } = tempFiles({})
  const file = path.join(dir, 'budget.json')
  // Scrapes of one series across three processes, each killed after it printed.
  const scrapes = []
  for (const [successes, failures] of [
    [20, 3],
    [5, 0],
    [8, 2],
  ]) {
    const worker = startWorker(file, successes, failures)
    const out = await worker.line
    await kill(worker.child)
    scrapes.push(out)
  }
  // Each process restored what the previous one saved (its records but the last failure)…
  t.deepEqual(
    scrapes.map((s) => s.restored),
    [
      { successes: 0, failures: 0, excluded: 0, capacity: 0 },
      { successes: 20, failures: 3, excluded: 0, capacity: 0 },
      { successes: 25, failures: 3, excluded: 0, capacity: 0 },
    ],
  )
  // …and exported only its own: the recordMany plus the one failure after the save.
  t.deepEqual(
    scrapes.map((s) => s.exported),
    [
      { successes: 20, failures: 4 },
      { successes: 5, failures: 1 },
      { successes: 8, failures: 3 },
    ],
  )
  // Never down-but-not-to-zero: every drop is a new process counting from zero.
  for (let i = 1; i < scrapes.length; i++) {
    for (const k of ['successes', 'failures']) {
      const [before, after] = [scrapes[i - 1].exported[k], scrapes[i].exported[k]]
      t.true(after >= before || after === scrapes[i].recorded[k] - scrapes[i].restored[k], `${k}: ${before} → ${after}`)
    }
  }
})
