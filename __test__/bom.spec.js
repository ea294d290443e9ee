// A UTF-8 byte-order mark: one rule for every input the package reads as text —
// a leading BOM is ignored by restore(), by gate (file or stdin) and by replay;
// anywhere else it is part of the text (and a snapshot with one is invalid).
const test = require('ava')
const { execFile } = require('node:child_process')
const path = require('node:path')
const { ErrorBudgetTracker } = require('..')
const { replayJson, tempFiles } = require('./fixtures/replay/cli')

const CLI = path.join(__dirname, '..', 'bin', 'captcha-budget.js')
const BOM = '\ufeff'

// Manual clock, 1 h at 95 %: 40 successes and 3 failures, saved at 700 ms.
function snapshot() {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  tracker.recordMany(40, 3, 100)
  tracker.advanceTo(700)
  const json = tracker.snapshot()
  tracker.close()
  return json
}

function gate(args, stdin) {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, 'gate', '--json', ...args], (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stdout, stderr })
    })
    child.stdin.end(stdin ?? '')
  })
}

test('restore() ignores a leading BOM; one anywhere else is refused', (t) => {
  const json = snapshot()
  const restored = ErrorBudgetTracker.restore(BOM + json, { clock: 'manual' })
  t.deepEqual([restored.now, restored.total, restored.failures], [700, 43, 3])
  restored.close()
  for (const text of [` ${BOM}${json}`, BOM + BOM + json, json.replace('{', `{${BOM}`)]) {
    t.throws(() => ErrorBudgetTracker.restore(text, { clock: 'manual' }), { code: 'ERR_SNAPSHOT_INVALID' })
  }
})

test('gate reads a snapshot with a BOM, from a file or stdin, as without one', async (t) => {
  const json = snapshot()
  const files = tempFiles({ 'plain.json': json, 'bom.json': BOM + json })
  const plain = await gate([files['plain.json']])
  t.is(plain.code, 0, plain.stderr)
  // The report is aged to now (the real clock): compare the decision and the counts.
  const decision = (out) => {
    const { proceed, report } = JSON.parse(out.stdout)
    return [out.code, proceed, report.sloTarget, out.stderr]
  }
  t.deepEqual(decision(await gate([files['bom.json']])), decision(plain))
  t.deepEqual(decision(await gate(['-'], BOM + json)), decision(plain))
})

test('replay reads a JSON Lines log with a BOM as without one', async (t) => {
  const log = '{"ts":1000,"ok":true}\n{"ts":2000,"ok":false}\n'
  const files = tempFiles({ 'plain.jsonl': log, 'bom.jsonl': BOM + log })
  const plain = await replayJson([files['plain.jsonl'], '--min-events', '0'])
  const bom = await replayJson([files['bom.jsonl'], '--min-events', '0'])
  t.is(bom.badLineCount, 0)
  t.deepEqual({ ...bom, input: null }, { ...plain, input: null })
})

test('a persist file with a BOM restores as without one (the same rule, in the core)', (t) => {
  const { dir } = tempFiles({})
  const plainPath = path.join(dir, 'plain.json')
  const bomPath = path.join(dir, 'bom.json')
  const json = snapshot()
  require('node:fs').writeFileSync(plainPath, json)
  require('node:fs').writeFileSync(bomPath, BOM + json)
  const open = (p) => {
    const tracker = new ErrorBudgetTracker({ clock: 'manual', persist: { path: p } })
    const figures = [tracker.now, tracker.successes, tracker.failures, tracker.status]
    tracker.close()
    return figures
  }
  t.deepEqual(open(bomPath), [700, 40, 3, 'exhausted'])
  t.deepEqual(open(bomPath), open(plainPath))
})
