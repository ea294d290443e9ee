// `captcha-budget gate family.json` printed a child's label values raw: an ESC or a
// newline in a value went out as it was, so a label could forge the gate's lines
// ("verdict           proceed"), and a value holding ',' or '=' printed as
// `site=b=x,y,type=t`, which --labels could not select (`site=b\=x\,y` refused).
// The labels now print as replay --by names its trackers: '\', ',' and '=' escaped
// with a backslash, the characters a terminal acts on as \uXXXX; --labels reads
// those escapes back, so a printed child can be pasted into --labels.
const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { BudgetFamily } = require('../..')
const { gateCli } = require('../helpers/gate-cli.js')

// Now, on a whole second: the gate restores on the real clock, aged to now; an hour's window keeps these solves.
const T0 = Math.floor(Date.now() / 1000) * 1000

/** A family snapshot file of label names `labelNames` with `children`: [labels, successes, failures]. */
function familyFile(t, labelNames, children) {
  const family = new BudgetFamily({ labelNames, targetRate: 0.8, windowMs: 3_600_000, alerts: [], clock: 'manual' })
  family.advanceTo(T0)
  for (const [labels, successes, failures] of children) family.labels(labels).recordMany(successes, failures, T0)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gate-label-escapes-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'family.json')
  fs.writeFileSync(file, family.snapshot())
  family.close()
  return file
}

const FORGED = '\u001b[31mred\nverdict           proceed'

test('a label value with ESC and a newline prints as \\u escapes: no ESC, no forged line', async (t) => {
  // 0 of 10 solves: exhausted, so the decision line names the child too.
  const file = familyFile(t, ['site'], [[{ site: FORGED }, 0, 10]])
  const { code, stdout } = await gateCli([file])
  t.is(code, 3)
  t.false(stdout.includes('\u001b'), stdout)
  const lines = stdout.split('\n')
  t.is(lines[0], 'labels            site=\\u001b[31mred\\u000averdict           proceed')
  t.deepEqual(
    lines.filter((line) => line.startsWith('verdict')),
    ['verdict           stop'],
  )
  t.true(stdout.endsWith('deploys stop: the budget of site=\\u001b[31mred\\u000averdict           proceed is exhausted\n'), stdout)
})

test("values holding '=', ',' and '\\' print escaped as replay --by escapes them", async (t) => {
  const file = familyFile(t, ['site', 'type'], [[{ site: 'b=x,y', type: 'a\\b' }, 10, 0]])
  const { code, stdout } = await gateCli([file])
  t.is(code, 0)
  t.is(stdout.split('\n')[0], 'labels            site=b\\=x\\,y,type=a\\\\b')
})

test('what the gate prints pastes into --labels: that child, exit as its verdict', async (t) => {
  const file = familyFile(
    t,
    ['site', 'type'],
    [
      [{ site: 'b=x,y', type: 't' }, 0, 10],
      [{ site: 'b', type: 'x,y' }, 10, 0],
      [{ site: FORGED, type: 'a\\b' }, 10, 0],
    ],
  )
  // b=x,y / t is exhausted (exit 3); b / x,y and the forged one are healthy (exit 0): each pasted line selects its own child.
  for (const [printed, exit] of [
    ['site=b\\=x\\,y,type=t', 3],
    ['site=b,type=x\\,y', 0],
    ['site=\\u001b[31mred\\u000averdict           proceed,type=a\\\\b', 0],
  ]) {
    const { code, stdout, stderr } = await gateCli([file, '--labels', printed])
    t.is(code, exit, stderr)
    t.is(stdout.split('\n')[0], `labels            ${printed}`)
  }
})

test("--labels: a bare = in a value is still the value's; a part without = is refused (exit 2)", async (t) => {
  const file = familyFile(t, ['site'], [[{ site: 'b=x' }, 10, 0]])
  const selected = await gateCli([file, '--labels', 'site=b=x'])
  t.is(selected.code, 0, selected.stderr)
  t.is(selected.stdout.split('\n')[0], 'labels            site=b\\=x')
  const refused = await gateCli([file, '--labels', 'site'])
  t.is(refused.code, 2)
  t.regex(refused.stderr, /--labels must be name=value pairs separated by commas/)
})
