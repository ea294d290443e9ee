// `captcha-budget gate family.json` (issue 44, item 19): a BudgetFamily's snapshot
// (family.snapshot() or its persist file) was refused, exit 2 "unknown field
// labelNames", and --family required --redis. The gate now judges every child,
// aged to now, worst first; the worst decides the exit code (0 proceed, 3 stop,
// 2 bad input), with or without --family; --labels judges one child.
const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { ErrorBudgetTracker, BudgetFamily } = require('../..')
const { gateCli } = require('../helpers/gate-cli.js')

const OPTIONS = { targetRate: 0.8, windowMs: 3_600_000, resolutionMs: 1000, alerts: [], clock: 'manual' }
// Now, on a whole second: the gate restores on the real clock, aged to now; an hour's window keeps these solves.
const T0 = Math.floor(Date.now() / 1000) * 1000

function tempDir(t) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gate-family-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  return dir
}

/**
 * A family snapshot file: a.example 20 successes, one rejected (19 and 1), b.example
 * 8 and 4; `more` adds children ({ site: [successes, failures] }).
 */
function familyFile(t, more = {}) {
  const family = new BudgetFamily({ labelNames: ['site'], ...OPTIONS })
  family.advanceTo(T0)
  family.labels({ site: 'a.example' }).recordMany(20, 0, T0)
  t.true(family.labels({ site: 'a.example' }).reject(T0))
  family.labels({ site: 'b.example' }).recordMany(8, 4, T0)
  for (const [site, [successes, failures]] of Object.entries(more)) family.labels({ site }).recordMany(successes, failures, T0)
  const file = path.join(tempDir(t), 'family.json')
  fs.writeFileSync(file, family.snapshot())
  family.close()
  return file
}

// b.example: 8 of 12, 66.67 %; budget 12 × 0.2 = 2.4 failures, 4 spent: none left; burn
// (4 / 12) / 0.2 = 1.67. a.example: 19 of 20, 95 %; budget 4, 1 spent: 3 left, 75 %; burn (1 / 20) / 0.2 = 0.25.
const B_EXHAUSTED = `labels            site=b.example
status            exhausted
success rate      66.67 % (SLO 80.00 %)
solves in window  12 (4 failed)
budget left       0 % (0 of 2.4 failures)
burn rate         1.67
alerts firing     none
verdict           stop`
const A_HEALTHY = `labels            site=a.example
status            healthy
success rate      95.00 % (SLO 80.00 %)
solves in window  20 (1 failed)
budget left       75 % (3 of 4 failures)
burn rate         0.25
alerts firing     none
verdict           proceed`

test('gate family.json judges every child, worst first; the worst stops deploys: exit 3, with or without --family', async (t) => {
  const file = familyFile(t)
  for (const flags of [[], ['--family']]) {
    const out = await gateCli([file, ...flags])
    t.is(out.stderr, '')
    t.is(out.code, 3, flags.join(' '))
    t.is(out.stdout, `${B_EXHAUSTED}\n\n${A_HEALTHY}\n\ndeploys stop: the budget of site=b.example is exhausted\n`)
  }
})

test('gate family.json --json: the decision, the worst child as report, and every child with its verdict', async (t) => {
  const out = await gateCli([familyFile(t), '--json'])
  t.is(out.code, 3, out.stderr)
  const answer = JSON.parse(out.stdout)
  t.like(answer, { proceed: false, strict: false, family: { name: 'default', size: 2 }, report: { labels: { site: 'b.example' }, status: 'exhausted' } })
  t.deepEqual(
    answer.children.map((c) => [c.report.labels.site, c.proceed, c.report.total, c.report.failures]),
    [
      ['b.example', false, 12, 4],
      ['a.example', true, 20, 1],
    ],
  )
})

test('gate family.json --strict also stops on a critical child; without it a critical child proceeds: exit 0', async (t) => {
  // Budget 100 × 0.2 = 20 failures each. d.example: 8 spent, 12 / 20 = 0.6 left, healthy;
  // e.example: 19 spent, 1 / 20 = 0.05 left, critical (below 0.1, not 0). Worst first: e, then d.
  const family = new BudgetFamily({ labelNames: ['site'], ...OPTIONS })
  family.advanceTo(T0)
  family.labels({ site: 'd.example' }).recordMany(92, 8, T0)
  family.labels({ site: 'e.example' }).recordMany(81, 19, T0)
  const file = path.join(tempDir(t), 'family.json')
  fs.writeFileSync(file, family.snapshot())
  family.close()
  const plain = await gateCli([file])
  t.is(plain.code, 0, plain.stderr)
  t.regex(plain.stdout, /^labels {12}site=e\.example\nstatus {12}critical\n/)
  t.regex(plain.stdout, /\n\ndeploys may proceed\n$/)
  const strict = await gateCli([file, '--strict'])
  t.is(strict.code, 3)
  t.regex(strict.stdout, /\n\ndeploys stop: the budget of site=e\.example is critical\n$/)
  t.is(strict.stdout.match(/^verdict {11}(\w+)$/gm).join(';'), 'verdict           stop;verdict           proceed')
})

test('gate family.json --labels judges that one child; a child or label the family has not is bad input, exit 2', async (t) => {
  const file = familyFile(t)
  const one = await gateCli([file, '--labels', 'site=a.example'])
  t.is(one.code, 0, one.stderr)
  t.is(one.stdout, `${A_HEALTHY}\n\ndeploys may proceed\n`)
  for (const [labels, message] of [
    ['site=c.example', 'the family has no child site=c.example'],
    ['type=image', "--labels must name exactly the family's labels: site"],
    ['site', "--labels must be name=value pairs separated by commas, e.g. type=turnstile,site=shop.example, got 'site'"],
  ]) {
    const out = await gateCli([file, '--labels', labels])
    t.is(out.code, 2, labels)
    t.is(out.stdout, '')
    t.is(out.stderr, `captcha-budget gate: ${file}: ${message}\n`)
  }
})

test('gate of a family with no children proceeds: nothing spent', async (t) => {
  const family = new BudgetFamily({ labelNames: ['site'], ...OPTIONS })
  const file = path.join(tempDir(t), 'empty.json')
  fs.writeFileSync(file, family.snapshot())
  family.close()
  const out = await gateCli([file, '--family'])
  t.is(out.code, 0, out.stderr)
  t.is(out.stdout, 'deploys may proceed\n')
})

test('--family or --labels with a tracker snapshot, or with --prometheus, is bad input: exit 2 saying what they need', async (t) => {
  const file = path.join(tempDir(t), 'tracker.json')
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  fs.writeFileSync(file, tracker.snapshot())
  tracker.close()
  for (const flags of [['--family'], ['--labels', 'site=a']]) {
    const out = await gateCli([file, ...flags])
    t.is(out.code, 2)
    t.is(out.stderr, `captcha-budget gate: ${file}: ${flags[0]} needs a BudgetFamily snapshot (family.snapshot() or its persist file); this is a tracker's\n`)
    const prometheus = await gateCli(['--prometheus', 'http://127.0.0.1:1', '--slo', 's', ...flags])
    t.is(prometheus.code, 2)
    t.is(
      prometheus.stderr,
      `captcha-budget gate: ${flags[0]} needs a BudgetFamily snapshot or --redis <url> --key <key> (a BudgetFamily fleet); --prometheus has no children\n`,
    )
  }
})

test('gate judges the family snapshot the release before issue 44 wrote after a reject(), moved to now', async (t) => {
  // fixtures/snapshots/rejected-family.json: a.example 19 and 1 (one success rejected), b.example 8 and 4.
  const fixture = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'snapshots', 'rejected-family.json'), 'utf8'))
  const shift = T0 - fixture.savedAt
  fixture.savedAt += shift
  for (const { snapshot } of fixture.children) {
    snapshot.savedAt += shift
    for (const bucket of snapshot.buckets) bucket.startMs += shift
  }
  const file = path.join(tempDir(t), 'old-family.json')
  fs.writeFileSync(file, JSON.stringify(fixture))
  const out = await gateCli([file])
  t.is(out.code, 3, out.stderr)
  t.is(out.stdout, `${B_EXHAUSTED}\n\n${A_HEALTHY}\n\ndeploys stop: the budget of site=b.example is exhausted\n`)
})
