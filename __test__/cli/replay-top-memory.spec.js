// Issue 30, item 12: `replay --by … --top N` holds trackers for the N worst keys
// only, ranked beforehand from two counts per key, not one tracker per key:
// a tracker is ≈17 KiB with a 24 h window, so 1 000 000 keys needed ≈35 GB.
// The trackers alive at once are counted by a subclass put in the tracker
// module's place before the replay loads it. (Time and memory: npm run bench:inputs.)
const test = require('ava')
const fs = require('node:fs')
const trackerModule = require('../../lib/tracker/tracker.js')

const counted = { live: 0, peak: 0 }
const { ErrorBudgetTracker } = trackerModule
trackerModule.ErrorBudgetTracker = class CountedTracker extends ErrorBudgetTracker {
  constructor(config) {
    super(config)
    counted.peak = Math.max(counted.peak, ++counted.live)
  }

  close() {
    if (!this.closed) counted.live--
    return super.close()
  }
}

const { replay } = require('../../lib/cli/replay/run')
const { budgetOf } = require('../../lib/cli/replay/ranking')
const { replayCli, tempFiles } = require('../fixtures/replay/cli')
const { T0 } = require('../fixtures/replay/logs')

// 5000 sites, one success each, a second apart (T0 … T0 + 4999 s); with a 1 h window the
// window at the end holds the solves after T0 + 1399 s. Worked out at 95 %:
// s4990 fails its one solve: budget 0.05 failures, none left, burn rate 1/0.05 = 20;
// s4500 fails one of 2 solves: budget 0.1, none left, burn 10; s4000 one of 4: budget 0.2, burn 5
// (ranked by burn rate, the budget left being 0 for all three);
// s10's failure left the window long before the end: all its budget left, burn 0, as every other site.
function log() {
  const lines = []
  const line = (i, ok) => lines.push(JSON.stringify({ ts: T0 + i * 1000, site: `s${i}.example`, ok }))
  for (let i = 0; i < 5000; i++) line(i, ![10, 4000, 4500, 4990].includes(i))
  line(4500, true)
  for (let n = 0; n < 3; n++) line(4000, true)
  return `${lines.join('\n')}\n`
}

test('replay() --by site --top 3 over a file of 5000 sites holds only top trackers (5000 before), and ranks by the window at the end', async (t) => {
  const files = tempFiles({ 'solves.jsonl': log() })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const options = {
    input: files['solves.jsonl'],
    fields: { ts: 'ts', ok: 'ok', type: 'type' },
    by: ['site'],
    top: 3,
    minEvents: 0,
    windows: { fallback: 3_600_000, byName: new Map() },
  }
  counted.peak = counted.live
  const result = await replay(options)
  // The 3 kept trackers (a tracker per site before).
  t.is(counted.peak, 3, `${counted.peak} trackers at once`)
  t.is(counted.live, 0)
  t.is(result.trackerCount, 5000)
  t.deepEqual(
    result.trackers.map((s) => [s.name, s.final.budgetRemainingPct, s.final.burnRate, s.events]),
    [
      ['s4990.example', 0, 20, 1],
      ['s4500.example', 0, 10, 2],
      ['s4000.example', 0, 5, 4],
    ],
  )
  // The advice: the 3 kept sites, then every solve of the log (5004, 4 failures).
  t.deepEqual(
    result.advice.rows.map((r) => [r.type, r.solves]),
    [
      ['s4000.example', 4],
      ['s4500.example', 2],
      ['s4990.example', 1],
      ['(all)', 5004],
    ],
  )
  t.is(result.advice.rows[3].successRate, 5000 / 5004)
})

test('replay --by site --top 3: the same output from the file (ranked first) as from stdin (a tracker per site)', async (t) => {
  const text = log()
  const files = tempFiles({ 'solves.jsonl': text })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const args = ['--by', 'site', '--top', '3', '--min-events', '0', '--window', '1h', '--no-progress']
  for (const json of [[], ['--json']]) {
    const fromFile = await replayCli([files['solves.jsonl'], ...args, ...json])
    const fromStdin = await replayCli(['-', '--format', 'jsonl', ...args, ...json], { stdin: text })
    t.is(fromFile.code, 0, fromFile.stderr)
    t.is(fromFile.stderr, fromStdin.stderr)
    t.is(fromFile.stdout.replaceAll(JSON.parse(JSON.stringify(files['solves.jsonl'])), 'stdin'), fromStdin.stdout)
  }
})

test('the ranking reads from counts what a tracker holding them reads (budgetOf)', (t) => {
  for (const config of [
    { targetRate: 0.95, minEvents: 0 },
    { targetRate: 0.999, minEvents: 10 },
    { targetRate: 1, minEvents: 100 },
  ]) {
    for (const [successes, failures] of [
      [0, 0],
      [1, 0],
      [0, 1],
      [7, 3],
      [95, 5],
      [1000, 1],
      [3, 1000],
    ]) {
      const tracker = new ErrorBudgetTracker({ ...config, windowMs: 3_600_000, clock: 'manual' })
      tracker.recordMany(successes, failures, 1000)
      t.deepEqual(budgetOf(successes, failures, config), [tracker.remainingFraction, tracker.burnRate], JSON.stringify({ config, successes, failures }))
      tracker.close()
    }
  }
})

test('replay --by type --top 1: lines without a type and lines of type "untyped" are one tracker, ranked as one', async (t) => {
  // 'untyped': 1 failure and 1 success from lines without a type, 1 failure from type "untyped": 2 of 3
  // fail, burn rate 2/3 / 0.05 ≈ 13.33; 'turnstile': 1 failure of 2, burn rate 10. Apart, neither
  // half of 'untyped' (burn 20 and 10) would rank as the whole does.
  const lines = [
    { ts: T0, ok: false },
    { ts: T0 + 1000, ok: true },
    { ts: T0 + 2000, type: 'untyped', ok: false },
    { ts: T0 + 3000, type: 'turnstile', ok: false },
    { ts: T0 + 4000, type: 'turnstile', ok: true },
  ]
  const files = tempFiles({ 'solves.jsonl': `${lines.map((l) => JSON.stringify(l)).join('\n')}\n` })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const out = await replayCli([files['solves.jsonl'], '--by', 'type', '--top', '1', '--min-events', '0', '--window', '1h', '--json'])
  t.is(out.code, 0, out.stderr)
  const result = JSON.parse(out.stdout)
  t.is(result.trackerCount, 2)
  t.deepEqual(
    result.trackers.map((s) => [s.name, s.events, s.final.burnRate]),
    [['untyped', 3, 13.33]],
  )
})
