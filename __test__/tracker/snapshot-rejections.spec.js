// Snapshots after a rejection (issue 44, item 2): reject() and attempt.reject()
// turn a recorded success into a failure in its bucket, so the window may hold
// more failures than `recorded` counts (it counts what was recorded). Such a
// snapshot was refused ("recorded counts are smaller than the counts in the
// window") by restore(), a persisted tracker's or family's restart,
// BudgetFamily.restore() and the gate. Every public mutation here, then each of those.
// The fixtures in fixtures/snapshots/ were written by the release before the fix.
const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { ErrorBudgetTracker, BudgetFamily } = require('../..')
const { gateCli } = require('../helpers/gate-cli.js')

const HOUR = 3_600_000
const OPTIONS = { targetRate: 0.8, windowMs: HOUR, resolutionMs: 1000, alerts: [], clock: 'manual' }
// Now, on a whole second: the gate restores on the real clock, aged to now, and an
// hour's window keeps every solve below (a snapshot a few seconds ahead is taken as saved now).
const T0 = Math.floor(Date.now() / 1000) * 1000
const FIXTURES = path.join(__dirname, '..', 'fixtures', 'snapshots')

/**
 * Every public mutation of a tracker, from T0 to T0 + 3 s: the window ends with
 * 30 successes and 3 failures (33), `recorded` 32 and 1, since two successes
 * were rejected. Budget 33 × 0.2 = 6.6 failures, 3 spent: 3.6 / 6.6 = 0.55 left, healthy.
 */
async function everyMutation(t, tracker) {
  tracker.advanceTo(T0)
  tracker.record(true, T0)
  tracker.record(false, T0)
  tracker.recordMany(30, 0, T0 + 1000)
  t.true(tracker.reject(T0 + 1000))
  tracker.advanceTo(T0 + 2000)
  let attempt
  await tracker.guard(async (signal, handle) => {
    attempt = handle
    return 'token'
  })
  t.true(attempt.reject('incorrect-captcha-sol'))
  // Neither outcome reaches the window or a snapshot (lib/guard/outcomes.js).
  for (const outcome of ['excluded', 'capacity']) {
    await t.throwsAsync(tracker.guard(() => Promise.reject(new Error(outcome)), { countsAsFailure: () => outcome }))
  }
  tracker.advanceTo(T0 + 3000)
  t.like(tracker.recorded, { successes: 32, failures: 1, excluded: 1, capacity: 1 })
}

/** The window's figures that must survive a restore, worked out above. */
const AFTER_EVERY_MUTATION = { status: 'healthy', successes: 30, failures: 3, total: 33 }

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rejections-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

test('restore() takes a snapshot after every public mutation, rejections included, and gives it back unchanged', async (t) => {
  const tracker = new ErrorBudgetTracker(OPTIONS)
  await everyMutation(t, tracker)
  const json = tracker.snapshot()
  t.like(JSON.parse(json), { recorded: { successes: 32, failures: 1 }, totals: { successes: 30, failures: 3 } })
  const restored = ErrorBudgetTracker.restore(json, { clock: 'manual' })
  t.is(restored.now, T0 + 3000)
  t.like(restored.report(), AFTER_EVERY_MUTATION)
  t.like(restored.recorded, { successes: 32, failures: 1, excluded: 0, capacity: 0 })
  t.is(restored.snapshot(), json)
  // Restored, the rejected solves' bucket (T0 + 1 s: 29 successes, 1 failure) takes another verdict.
  t.true(restored.reject(T0 + 1000))
  t.like(ErrorBudgetTracker.restore(restored.snapshot(), { clock: 'manual' }).report(), { successes: 29, failures: 4 })
  tracker.close()
  restored.close()
})

test('a persisted tracker restarts from a file saved after rejections, twice', async (t) => {
  const file = path.join(tempDir(t), 'budget.json')
  const tracker = new ErrorBudgetTracker({ ...OPTIONS, persist: { path: file } })
  await everyMutation(t, tracker)
  tracker.close()
  const restarted = new ErrorBudgetTracker({ ...OPTIONS, persist: { path: file } })
  t.like(restarted.report(), AFTER_EVERY_MUTATION)
  t.like(restarted.recorded, { successes: 32, failures: 1 })
  // Bucket T0 + 1 s (29 successes, 1 failure) takes one more.
  t.true(restarted.reject(T0 + 1000))
  restarted.close()
  const again = new ErrorBudgetTracker({ ...OPTIONS, persist: { path: file } })
  t.like(again.report(), { successes: 29, failures: 4, total: 33 })
  again.close()
})

/**
 * A family of at most 2 children: 'empty' (created first), 'a.example' (every
 * mutation), then 'b.example', which evicts 'empty': 8 successes and 4 failures,
 * budget 12 × 0.2 = 2.4 failures, exhausted.
 */
async function familyAfterEveryMutation(t, extra = {}) {
  const family = new BudgetFamily({ labelNames: ['site'], maxChildren: 2, ...OPTIONS, ...extra })
  family.advanceTo(T0)
  const empty = family.labels({ site: 'empty' })
  await everyMutation(t, family.labels({ site: 'a.example' }))
  family.record({ site: 'b.example' }, true, T0)
  family.labels({ site: 'b.example' }).recordMany(7, 4, T0 + 1000)
  t.true(empty.closed, 'evicted')
  // Every child at the family's time (the family's manual clock moves them all; a.example's moved alone).
  family.advanceTo(T0 + 3000)
  return family
}

/** The family's report() worst first, as the figures worked out above. */
function checkFamily(t, family) {
  const rows = family.report().map(({ labels, status, successes, failures }) => ({ site: labels.site, status, successes, failures }))
  t.deepEqual(rows, [
    { site: 'b.example', status: 'exhausted', successes: 8, failures: 4 },
    { site: 'a.example', status: 'healthy', successes: 30, failures: 3 },
  ])
}

test('BudgetFamily.restore(), a persisted family restart and the gate take a child with rejections, after an eviction', async (t) => {
  const family = await familyAfterEveryMutation(t)
  const restored = BudgetFamily.restore(family.snapshot())
  checkFamily(t, restored)
  t.is(restored.snapshot(), family.snapshot())
  restored.close()
  // The gate too: b.example exhausted stops deploys, a.example (30 and 3) healthy.
  const dir = tempDir(t)
  fs.writeFileSync(path.join(dir, 'snapshot.json'), family.snapshot())
  family.close()
  const gate = await gateCli([path.join(dir, 'snapshot.json')])
  t.is(gate.code, 3, gate.stderr)
  t.regex(gate.stdout, /^labels {12}site=a\.example\nstatus {12}healthy\n.*\nsolves in window {2}33 \(3 failed\)$/m)
  t.regex(gate.stdout, /\n\ndeploys stop: the budget of site=b\.example is exhausted\n$/)
  const file = path.join(dir, 'family.json')
  const persisted = await familyAfterEveryMutation(t, { persist: { path: file } })
  persisted.close()
  const restarted = new BudgetFamily({ labelNames: ['site'], maxChildren: 2, ...OPTIONS, persist: { path: file } })
  checkFamily(t, restarted)
  restarted.close()
})

test('the gate judges a tracker snapshot taken after rejections: 33 solves, 3 failed, healthy', async (t) => {
  const tracker = new ErrorBudgetTracker(OPTIONS)
  await everyMutation(t, tracker)
  const file = path.join(tempDir(t), 'budget.json')
  fs.writeFileSync(file, tracker.snapshot())
  tracker.close()
  const out = await gateCli([file])
  t.is(out.stderr, '')
  t.is(out.code, 0)
  t.regex(out.stdout, /^status {12}healthy$/m)
  t.regex(out.stdout, /^solves in window {2}33 \(3 failed\)$/m)
})

/** A fixture's text with its times moved by `ms` (a whole number of seconds), so that the gate finds it in the window. */
function moved(text, ms) {
  const snapshot = JSON.parse(text)
  snapshot.savedAt += ms
  for (const bucket of snapshot.buckets) bucket.startMs += ms
  return JSON.stringify(snapshot)
}

test('a tracker snapshot the release before the fix wrote after a reject() restores, and the gate judges it', async (t) => {
  // 20 successes at 1 700 000 000 000, a failure 5 s later, one success rejected:
  // 19 and 2 in the window, 20 and 1 recorded; budget 21 × 0.2 = 4.2, 2.2 / 4.2 = 0.52 left, healthy.
  const text = fs.readFileSync(path.join(FIXTURES, 'rejected-tracker.json'), 'utf8').trim()
  const restored = ErrorBudgetTracker.restore(text, { clock: 'manual' })
  t.is(restored.now, 1_700_000_010_000)
  t.like(restored.report(), { status: 'healthy', successes: 19, failures: 2 })
  t.like(restored.recorded, { successes: 20, failures: 1 })
  t.is(restored.snapshot(), text)
  restored.close()
  const file = path.join(tempDir(t), 'old.json')
  fs.writeFileSync(file, moved(text, T0 - 1_700_000_010_000))
  const out = await gateCli([file])
  t.is(out.code, 0, out.stderr)
  t.regex(out.stdout, /^solves in window {2}21 \(2 failed\)$/m)
})

test('a family snapshot the release before the fix wrote after a reject() restores', (t) => {
  // a.example: 20 successes, one rejected (19 and 1); b.example: 8 and 4, exhausted.
  const text = fs.readFileSync(path.join(FIXTURES, 'rejected-family.json'), 'utf8').trim()
  const family = BudgetFamily.restore(text)
  const rows = family.report().map(({ labels, status, successes, failures }) => [labels.site, status, successes, failures])
  t.deepEqual(rows, [
    ['b.example', 'exhausted', 8, 4],
    ['a.example', 'healthy', 19, 1],
  ])
  t.is(family.snapshot(), text)
  family.close()
})
