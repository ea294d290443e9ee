// Issue 12, items 9 and 10: one saving thread for every persisted tracker, a
// thread that cannot start is a JavaScript error, and the timer thread's work
// follows the trackers that have something due. Counts from /proc/self/task.
const test = require('ava')
const { nativeOnly } = require('../helpers/binding')
const path = require('node:path')
const { execFile } = require('node:child_process')

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'load-counts.js')

function measure(what, options = {}) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [FIXTURE, what], { timeout: 170_000, ...options }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`))
      else resolve(JSON.parse(stdout))
    })
  })
}

nativeOnly("the WASI runtime's threads are workers of its own: thread counts, limits and the timer's CPU are the native addon's")(
  '500 persisted trackers share one saving thread',
  async (t) => {
    const { before, after, saved } = await measure('threads')
    t.is(after, before, `${before} threads before, ${after} after`)
    t.is(saved, 501)
  },
)

const nobody = process.getuid?.() === 0
;(nobody ? nativeOnly("the WASI runtime's threads are workers of its own: thread counts, limits and the timer's CPU are the native addon's") : test.skip)(
  'a thread that cannot start is an ERR_THREAD_SPAWN error, and the process lives on',
  async (t) => {
    // An unprivileged child lowers its own thread limit (RLIMIT_NPROC) to the
    // threads it has; root ignores that limit, so the spec needs root to switch user.
    const result = await measure('spawn-failure', { uid: 65534, gid: 65534 })
    t.deepEqual(result, {
      persist:
        'Error ERR_THREAD_SPAWN: cannot start the autosave thread: Resource temporarily unavailable (os error 11) (a thread or process limit?); nothing was created',
      listener:
        'Error ERR_THREAD_SPAWN: cannot start the timer thread: Resource temporarily unavailable (os error 11) (a thread or process limit?); the listener was not added',
      alive: true,
    })
  },
)

nativeOnly("the WASI runtime's threads are workers of its own: thread counts, limits and the timer's CPU are the native addon's")(
  '50 000 idle listening trackers and a busy one: the timer thread uses at most 2 % of a CPU',
  async (t) => {
    t.timeout(180_000) // a heavy child process; slow on a loaded machine, its bar is not about time
    // Before, every wake-up (one per expiring bucket of the busy tracker) moved
    // all 50 000 trackers: about half a CPU for 10 000.
    const result = await measure('timer')
    t.log(result)
    // The busy tracker's buckets expire every 20 ms once its 2 s window is full: the timer did work.
    t.true(result.timerWakes >= 10, `${result.timerWakes} wake-ups`)
    t.true(result.timerCpuShare <= 0.02, `timer thread at ${(result.timerCpuShare * 100).toFixed(2)} % of a CPU`)
  },
)

// Issue 32: the timer thread names itself when it first runs, which a loaded machine delays; the fixture waits for it.
nativeOnly("the WASI runtime's threads are workers of its own: thread counts, limits and the timer's CPU are the native addon's")(
  'the measurements find the timer thread right after the first listener, before it has run',
  async (t) => {
    t.deepEqual(await measure('named'), { name: 'budget-timer' })
  },
)

nativeOnly("the WASI runtime's threads are workers of its own: thread counts, limits and the timer's CPU are the native addon's")(
  'the timer does not wake for trackers after their last off()',
  async (t) => {
    // 200 trackers whose events expire at 200 different moments, all off()'d,
    // then one tracker watched until its own expiry: a handful of wake-ups for
    // that one (its record, its expiry), not one per tracker let go.
    const { wakes, goneTotals } = await measure('off')
    t.is(goneTotals, 0, 'their events did expire meanwhile')
    t.true(wakes <= 20, `${wakes} wake-ups`)
  },
)
