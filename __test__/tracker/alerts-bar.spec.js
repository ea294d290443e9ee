// Issue 14's bar for the default alert policy, on the scenario suite of
// `npm run bench:alerts` (benchmark/alerts-scenarios.js: seeded solve streams on
// the manual clock, so every figure is simulated time and counts, not timing):
//   once   — per incident at most one page event per page pair, one ticket per ticket pair;
//   in time — where the incident exhausts the budget, the first page comes while
//             at least a quarter of the budget left at the incident's start remains
//             (except the scenario marked edge: a budget of ~10 failures);
//   quiet  — no page on healthy noise (with bursts of 3 failures), fresh trackers included,
//            nor before an incident starts;
//   resets — every page resolves within 60 minutes of the incident's end (issue 25),
//            or, where the volume cannot tell a recovery that soon, within the time
//            it needs (`resetGoal`: the span that holds twice a pair's statistical
//            minimum of solves, or its long window; docs/alert-policy.md, "Reset time") —
//            unless the solves after the end still fail above the SLO's allowance,
//            which is then no recovery;
//   one page per incident — on('incident') (issue 24): at most one page notification
//            (an 'open' at page severity or an escalation to page) per incident,
//            under both policies, healthy scenarios included.
const test = require('ava')
const { SCENARIOS, run, stream, resetGoal, recoveryMinSolves, RECOVERY_SPANS_MIN, MIN, HOUR, DAY } = require('../../benchmark/alerts-scenarios')
const { policyOf } = require('../../lib/prometheus/rules-slo.js')
const { nativeRuns } = require('../helpers/binding')

/** Successes and failures of the stream in (from, to]: worked out from the data, not the tracker. */
function countsBetween(scenario, seed, from, to) {
  let [successes, failures] = [0, 0]
  for (const [at, s, f] of stream(scenario, seed)) {
    if (at > from && at <= to) [successes, failures] = [successes + s, failures + f]
  }
  return { successes, failures }
}

const SEEDS = [1, 2, 3]
// On WASI seed 1 only: the other seeds make the same calls with other numbers, at
// 3× the time there.
const onOtherSeeds = nativeRuns('on WASI: seed 1 only, the same calls with other numbers', test.serial)

for (const scenario of SCENARIOS) {
  for (const seed of SEEDS) {
    // Serial: each run is a long synchronous replay; one at a time, results come steadily.
    const serial = seed === 1 ? test.serial : onOtherSeeds
    serial(`${scenario.name}, seed ${seed}: the default policy meets the bar`, async (t) => {
      const r = await run(scenario, seed, 'default')
      const log = r.events.map((e) => `${e.at} ${e.kind} ${e.name}`).join('\n')
      t.is(r.falsePages, 0, `no page on healthy traffic:\n${log}`)
      t.true(r.maxPagesPerIncident <= 1, `one page per incident:\n${JSON.stringify(r.incidents)}`)
      if (scenario.kind !== 'incident') return
      t.is(r.incidentCount, 1, `one incident:\n${JSON.stringify(r.incidents)}`)
      t.true(r.maxPerPair <= 1, `one page event per pair:\n${log}`)
      t.true(r.maxTicketsPerPair <= 1, `one ticket event per pair:\n${log}`)
      // Each scenario is built to exhaust the budget: the bar applies.
      t.true(r.exhausted)
      t.not(r.firstPageMs, null, 'an incident that exhausts the budget pages')
      if (!scenario.edge) {
        t.true(
          r.budgetAtFirstPage >= 0.25 * r.budgetAtStart,
          `first page at ${r.budgetAtFirstPage} failures left of ${r.budgetAtStart} at the start: ${r.firstReason}`,
        )
      }
      t.not(r.resetMs, null, `every page resolved after the incident:\n${log}`)
      const goal = resetGoal(scenario)
      if (r.resetMs > goal) {
        // Allowed only if the solves between the end and the goal failed above
        // the SLO's allowance: not yet a recovery.
        const end = scenario.windowMs + scenario.incident.ms
        const { successes, failures } = countsBetween(scenario, seed, end, end + goal)
        const allowance = (successes + failures) * (1 - scenario.targetRate)
        t.true(failures > allowance, `reset ${r.resetMs} ms > ${goal} ms after ${failures} failures in ${successes + failures} solves:\n${log}`)
      }
    })
  }
}

// The statistical minimum of solves a span must hold to end a page, from the
// suite's own formula, against figures worked out apart (math.comb in Python)
// for a 95 % SLO: fast-burn 14.4×, budget-spend 2×, slow-burn 3×, budget-leak
// 1.5×; the core's own test (alerts.rs) holds it to the same.
test('recovery minimum of solves for a 95 % SLO', (t) => {
  t.deepEqual(
    [14.4, 2, 3, 1.5].map((threshold) => recoveryMinSolves(0.95, threshold)),
    [10, 88, 57, 119],
  )
  t.deepEqual(
    [14.4, 2, 3, 1.5].map((threshold) => recoveryMinSolves(0.99, threshold)),
    [60, 456, 303, 610],
  )
})

// The reset goals by hand (docs/alert-policy.md, "Reset time"): 60 minutes
// where the volume tells in time; 6 h at 0.4 solves a minute (slow-burn, 95.9 %:
// p = 0.123, 71 clean solves, 2 × 71 = 142 ≤ 0.4 × 360); 8 h at 0.2 (96 %: 73
// solves; 146 is more than 8 hours hold, 96 ≥ 73); on the 24-hour edge the
// slow pair's lull, 2 h + 10 min.
test("the suite's recovery spans are the core's", (t) => {
  const spans = policyOf({ name: 'x', targetRate: 0.95, windowMs: 7 * DAY }, 15_000).recoverySpansMs
  // Rounded to whole buckets of the window's resolution (a few seconds at 7 d).
  t.deepEqual(
    spans.map((ms) => Math.round(ms / MIN)),
    RECOVERY_SPANS_MIN,
  )
})

test('reset goals of the scenarios', (t) => {
  const goal = (name) => resetGoal(SCENARIOS.find((s) => s.name === name)) / HOUR
  t.is(goal('flash sale'), 1)
  t.is(goal('outage, 200/min'), 1)
  t.is(goal('slow leak'), 1)
  t.is(goal('outage, 0.4/min'), 6)
  t.is(goal('outage, 0.2/min'), 8)
  t.is(goal('outage, 0.2/min, 24 h (edge)'), 2 + 10 / 60)
  // 0.3/min on 96 %: slow-burn's 73 solves fit in 8 h (144) but 146 do not, so
  // its lull, 2 h + 10 min, as on the edge.
  t.is(goal('outage, 0.3/min, 24 h'), 2 + 10 / 60)
})

// Issue 31's low-volume run: a provider outage at 0.3 solves a minute on a 24 h
// window at 96 %, seed 1. The baseline (1 % failing) happened to fail 11 times in
// the 440 solves of the day before the outage, so of the day's 17.6 failures of
// budget (440 × 4 %) 6.6 were left when it started: a quarter of that is 1.65,
// so the page must come by the outage's 4th failure (6.6 − 4 = 2.6), not the 5th
// (1.6 left, 24 %: where the policy with 5 failures for every pair paged).
test.serial('outage, 0.3/min, 24 h, seed 1: the page comes by the 4th failure, with a quarter of the budget left', async (t) => {
  const scenario = SCENARIOS.find((s) => s.name === 'outage, 0.3/min, 24 h')
  const before = countsBetween(scenario, 1, 0, scenario.windowMs - 1)
  t.deepEqual(before, { successes: 429, failures: 11 })
  const outageFailures = []
  for (const [at, , failures] of stream(scenario, 1)) {
    if (at >= scenario.windowMs) for (let i = 0; i < failures; i++) outageFailures.push(at - scenario.windowMs)
  }
  const r = await run(scenario, 1, 'default')
  t.is(Math.round(r.budgetAtStart * 10), 66)
  t.not(r.firstPageMs, null)
  t.true(r.firstPageMs <= outageFailures[3], `first page ${r.firstPageMs} ms in, the 4th failure at ${outageFailures[3]} ms: ${r.firstReason}`)
  t.true(r.budgetAtFirstPage >= 0.25 * r.budgetAtStart, `${r.budgetAtFirstPage} left of ${r.budgetAtStart}: ${r.firstReason}`)
})

// The comparison the suite exists for, on one scenario: issue 14's flash sale
// flaps under the plain workbook policy and pages once per pair under the default.
test.serial('flash sale: the workbook policy flaps where the default pages once', async (t) => {
  const flash = SCENARIOS.find((s) => s.name === 'flash sale')
  const workbook = await run(flash, 1, 'workbook')
  const ours = await run(flash, 1, 'default')
  t.true(workbook.maxPerPair > 10, `workbook: ${workbook.maxPerPair} page events for one pair`)
  t.is(ours.maxPerPair, 1)
  // Grouped into incidents, even the flapping workbook policy pages once per incident.
  t.is(workbook.maxPagesPerIncident, 1, JSON.stringify(workbook.incidents))
  t.is(ours.maxPagesPerIncident, 1)
})

// `npm start`'s sample, turnstile (12 h window at 96.7 %, minEvents 100 as the
// replay sets it): the flash sale of
// 2026-03-03 14:03 exhausts the budget at 14:11:27. The default policy pages
// before that, and no page pair fires twice.
test('the shipped sample: turnstile pages before its budget is exhausted, once per pair', async (t) => {
  const fs = require('node:fs')
  const path = require('node:path')
  const { ErrorBudgetTracker } = require('../..')
  const lines = fs
    .readFileSync(path.join(__dirname, '..', '..', 'sample', 'solves.jsonl'), 'utf8')
    .trim()
    .split('\n')
  const tracker = new ErrorBudgetTracker({ windowMs: 12 * 3_600_000, targetRate: 0.967, minEvents: 100, clock: 'manual' })
  const log = []
  tracker.on('alert', (e) => log.push(['alert', e.name, e.severity, e.at]))
  tracker.on('exhausted', (r) => log.push(['exhausted', null, null, r.at]))
  const incidents = []
  tracker.on('incident', (i) => incidents.push(i))
  for (const line of lines) {
    const { ts, type, ok } = JSON.parse(line)
    if (type !== 'turnstile') continue
    const at = Date.parse(ts)
    if (at > tracker.now) tracker.advanceTo(at)
    tracker.record(ok)
  }
  // Then a transition that must be delivered last: the window emptied, then 100
  // failures (minEvents) at once.
  const end = tracker.now
  const sentinel = end + 24 * 3_600_000
  const done = new Promise((resolve) => tracker.on('exhausted', (r) => r.at === sentinel && resolve()))
  tracker.advanceTo(sentinel)
  tracker.recordMany(0, 100)
  await done
  const before = log.filter(([, , , at]) => at <= end)
  const sale = Date.parse('2026-03-03T14:00:00Z')
  const firstExhausted = before.find(([kind, , , at]) => kind === 'exhausted' && at > sale)[3]
  t.is(new Date(firstExhausted).toISOString(), '2026-03-03T14:11:27.943Z')
  const pages = before.filter(([kind, , severity]) => kind === 'alert' && severity === 'page')
  t.true(pages.length > 0 && pages[0][3] < firstExhausted, JSON.stringify(before))
  t.is(new Set(pages.map(([, name]) => name)).size, pages.length, 'no page pair fires twice')
  // Issue 24: several page pairs and a ticket in the sale, one page notification for the incident.
  const inSale = incidents.filter((i) => i.at <= end && i.openedAt > sale)
  const notified = inSale.filter((i) => (i.state === 'open' && i.severity === 'page') || i.state === 'escalated')
  t.true(pages.filter(([, , , at]) => at > sale).length > 1, JSON.stringify(before))
  t.is(notified.length, 1, JSON.stringify(inSale.map(({ id, state, severity, at, pair }) => ({ id, state, severity, at, pair }))))
  tracker.close()
})
