#!/usr/bin/env node
'use strict'
// Stress: 50 rounds of 4 worker threads recording into one shared tracker at
// full speed, each holding status and alert listeners while transitions fire,
// terminated mid-stream. Nothing may crash or hang, the main thread's handle
// must stay right, and memory must come back to its baseline. Run with
// --expose-gc (`npm test` runs it through __test__/tracker/shared.spec.js).
//
// Memory is judged against a control: the same rounds of workers, started and
// terminated the same way, that do not load the addon, in a fresh process
// (STRESS_CONTROL=1; a fresh process, so that neither run reuses memory the
// other freed). Workers alone grow the RSS by a few MiB (V8 and the allocator
// keep some of what each isolate used); the addon's own share is the difference.
const { spawn } = require('node:child_process')
const { Worker } = require('node:worker_threads')
const { ErrorBudgetTracker } = require('..')

const ROUNDS = Number(process.env.STRESS_ROUNDS ?? 50)
const CONTROL = process.env.STRESS_CONTROL === '1'
// STRESS_PROGRESS=1: a line on stderr per round, for a watchdog (the spec's) that
// tells a hang (no round finishes) from a slow, loaded machine.
const PROGRESS = process.env.STRESS_PROGRESS === '1'
const WORKERS = 4

// 1 s window of 10 ms buckets at 90 %: bursts of failures and successes flip
// the status and the alert pairs many times a second.
const CONFIG = { targetRate: 0.9, windowMs: 1000, resolutionMs: 10 }
const worker = `
const { workerData, parentPort } = require('node:worker_threads')
const { ErrorBudgetTracker } = require(${JSON.stringify(require.resolve('..'))})
const tracker = ErrorBudgetTracker.shared('stress')
const counts = new Int32Array(workerData.counts)
let delivered = 0
for (const event of ['healthy', 'warning', 'critical', 'exhausted', 'alert', 'resolve']) tracker.on(event, () => delivered++)
parentPort.postMessage('ready')
function burst(round) {
  // 2 000 records a turn: 300 failures then 1 700 successes, so that each turn
  // crosses thresholds; the loop yields so that listeners get delivered.
  for (let i = 0; i < 2000; i++) {
    tracker.record(i >= 300)
    Atomics.add(counts, workerData.slot, 1)
  }
  Atomics.add(counts, workerData.slot + ${WORKERS}, delivered)
  delivered = 0
  setImmediate(burst, round + 1)
}
burst(0)
`
// The control's workers: the same loop and messages, no addon.
const controlWorker = `
const { workerData, parentPort } = require('node:worker_threads')
const counts = new Int32Array(workerData.counts)
let failures = 0
parentPort.postMessage('ready')
function burst(round) {
  for (let i = 0; i < 2000; i++) {
    if (i < 300) failures++
    Atomics.add(counts, workerData.slot, 1)
  }
  setImmediate(burst, round + 1)
}
burst(0)
`

function rss() {
  global.gc?.()
  global.gc?.()
  return process.memoryUsage().rss
}

async function round(index, handle) {
  const counts = new SharedArrayBuffer(4 * WORKERS * 2)
  const code = CONTROL ? controlWorker : worker
  const workers = Array.from({ length: WORKERS }, (_, slot) => new Worker(code, { eval: true, workerData: { counts, slot } }))
  await Promise.all(
    workers.map(
      (w) =>
        new Promise((resolve, reject) => {
          w.once('message', resolve)
          w.once('error', reject)
        }),
    ),
  )
  // The main thread records too, and reads, while the workers run.
  let mine = 0
  const until = Date.now() + 20 + (index % 5) * 10
  while (Date.now() < until) {
    handle.record(true)
    mine++
    await new Promise((resolve) => setImmediate(resolve))
  }
  await Promise.all(workers.map((w) => w.terminate())) // mid-stream, listeners held, events queued
  const recorded = new Int32Array(counts)
  return { theirs: recorded.slice(0, WORKERS).reduce((a, b) => a + b, 0), delivered: recorded.slice(WORKERS).reduce((a, b) => a + b, 0), mine }
}

// The control run, in a fresh process started beside this one (memory is per
// process; the two only share the CPU): resolves to its JSON line.
function startControl() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', __filename], {
      env: { ...process.env, STRESS_CONTROL: '1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.on('error', reject)
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`the control run exited with ${code}`))))
  })
}

async function main() {
  const control = CONTROL ? null : startControl()
  control?.catch(() => {}) // awaited below
  const handle = ErrorBudgetTracker.shared('stress', CONFIG)
  await round(-1, handle) // warm-up: code paths, worker machinery
  const baseline = rss()
  const before = handle.recorded
  let expected = 0
  let delivered = 0
  const started = Date.now()
  for (let i = 0; i < ROUNDS; i++) {
    const r = await round(i, handle)
    expected += CONTROL ? r.mine : r.theirs + r.mine
    delivered += r.delivered
    if (PROGRESS) process.stderr.write(`round ${i + 1}${CONTROL ? ' control' : ''}\n`)
  }
  const after = handle.recorded
  const got = after.successes + after.failures - (before.successes + before.failures)
  const grown = (rss() - baseline) / 2 ** 20
  const memory = { seconds: (Date.now() - started) / 1000, baselineMiB: +(baseline / 2 ** 20).toFixed(1), rssGrowthMiB: +grown.toFixed(1) }
  handle.close()
  if (CONTROL) {
    console.log(JSON.stringify({ rounds: ROUNDS, workers: WORKERS, ...memory }))
    return
  }
  // A worker terminated between its record() and its Atomics.add has recorded
  // one solve more than it counted: at most one per worker and round.
  const slack = got - expected
  const ok = slack >= 0 && slack <= ROUNDS * WORKERS && handle.total <= got
  const { baselineMiB, rssGrowthMiB, seconds } = await control
  console.log(
    JSON.stringify({
      rounds: ROUNDS,
      workers: WORKERS,
      recorded: got,
      counted: expected,
      slack,
      listenerCalls: delivered,
      status: handle.status,
      ...memory,
      control: { baselineMiB, rssGrowthMiB, seconds },
    }),
  )
  if (!ok) {
    console.error('stress: the shared tracker lost or invented records')
    process.exitCode = 1
  }
}

main().catch((err) => {
  console.error(err)
  process.exitCode = 1
})
