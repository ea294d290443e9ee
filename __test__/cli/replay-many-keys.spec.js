// Issue 30, item 12: `replay --by` with many keys. Without --chart no tracker is
// sampled for a chart (it cost keys × samples in time and memory: 10 000 keys
// 13 s / 345 MiB with --top 3); what the trackers are judged by is unchanged.
// The library's PinnedTrackersWarning is not printed: the replay's trackers are
// many by design and all closed at its end. (Time and memory: npm run bench:inputs.)
const test = require('ava')
const fs = require('node:fs')
const { replayCli, tempFiles } = require('../fixtures/replay/cli')
const { T0 } = require('../fixtures/replay/logs')
const { XMLValidator } = require('fast-xml-parser')
const { replay } = require('../../lib/cli/replay/run')
const { nativeRuns } = require('../helpers/binding')

const KEYS = 1200
const FAILING = [7, 500, 1100]

// One solve per site, `gapMs` apart; the sites FAILING fail theirs.
function log(keys = KEYS, gapMs = 1000) {
  let text = ''
  for (let i = 0; i < keys; i++) text += `${JSON.stringify({ ts: T0 + i * gapMs, site: `s${i}.example`, ok: !FAILING.includes(i) })}\n`
  return text
}

test('replay --by site --top 3 over 1200 sites: the 3 failing ones, worst first, and no PinnedTrackersWarning', async (t) => {
  const files = tempFiles({ 'solves.jsonl': log() })
  t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
  const out = await replayCli([files['solves.jsonl'], '--by', 'site', '--top', '3', '--min-events', '0', '--window', '1h', '--json'])
  t.is(out.code, 0, out.stderr)
  t.is(out.stderr, '')
  const result = JSON.parse(out.stdout)
  t.is(result.trackerCount, KEYS)
  // 1 failure of 1 solve each at 95 %: budget 0.05 failures, remaining 1 − 1/0.05 = −19, burn rate 20; ties by name.
  t.deepEqual(
    result.trackers.map((s) => s.name),
    ['s1100.example', 's500.example', 's7.example'],
  )
  t.deepEqual(
    result.trackers.map((s) => [s.final.status, s.final.burnRate]),
    [
      ['exhausted', 20],
      ['exhausted', 20],
      ['exhausted', 20],
    ],
  )
  // Read after the failure, the first time it was reached.
  t.deepEqual(
    result.trackers.map((s) => s.worstBurnRate),
    FAILING.slice()
      .reverse()
      .map((i) => ({ burnRate: 20, at: new Date(T0 + i * 1000).toISOString() })),
  )
  t.is(result.chart, null)
})

// A million report() calls: on WASI each goes through Node-API (37 s there, 4 s native);
// replay --chart runs there in replay-chart.spec.js.
nativeRuns('on WASI: a million report() calls through Node-API; --chart runs in replay-chart')(
  'replay() samples the trackers for a chart only when asked to',
  async (t) => {
    // 250 sites over 66 min: about 2000 samples each (one every 2 s after thinning).
    const files = tempFiles({ 'solves.jsonl': log(250, 16_000) })
    t.teardown(() => fs.rmSync(files.dir, { recursive: true, force: true }))
    const options = { input: files['solves.jsonl'], fields: { ts: 'ts', ok: 'ok', type: 'type' }, by: ['site'], top: 3, minEvents: 0 }
    const plain = await replay(options)
    t.is(plain.series, null)
    const charted = await replay({ ...options, chart: true })
    t.is(charted.series.lines.size, 250)
    // The same judgement either way.
    t.deepEqual(
      plain.trackers.map((s) => [s.name, s.final.status, s.worstBurnRate]),
      charted.trackers.map((s) => [s.name, s.final.status, s.worstBurnRate]),
    )
    // The chart of 250 trackers' samples, by the command (its burn axis spread them all as arguments:
    // "Maximum call stack size exceeded"; run as a command: a test worker thread has another stack size).
    const chart = `${files.dir}/chart.svg`
    const out = await replayCli([files['solves.jsonl'], '--by', 'site', '--top', '3', '--min-events', '0', '--chart', chart])
    t.is(out.code, 0, out.stderr)
    const svg = fs.readFileSync(chart, 'utf8')
    t.is(XMLValidator.validate(svg), true)
    // 1 failure of 1 solve: burn rate 20, so the axis goes to 20.
    t.regex(svg, /text-anchor="end" fill="#555">20<\/text>/)
  },
)
