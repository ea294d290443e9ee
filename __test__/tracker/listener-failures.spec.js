const test = require('ava')
const { execFile } = require('node:child_process')
const path = require('node:path')

function runFixture(name, ...args) {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(__dirname, '..', 'fixtures', name), ...args], { timeout: 20000 }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, signal: error && error.signal, stdout, stderr })
    })
  })
}

// Issue 12, item 11: whatever a listener throws, the others run, the process
// lives, and the warning shows the thrown value.
const shown = {
  symbol: "Warning: an ErrorBudgetTracker 'warning' listener threw Symbol(x)",
  string: "Warning: an ErrorBudgetTracker 'warning' listener threw 'bad news'",
  number: "Warning: an ErrorBudgetTracker 'warning' listener threw 42",
  null: "Warning: an ErrorBudgetTracker 'warning' listener threw null",
  undefined: "Warning: an ErrorBudgetTracker 'warning' listener threw undefined",
  // An Error is the warning itself, as process.emitWarning shows errors.
  error: 'Error: listener exploded',
}
for (const [kind, warning] of Object.entries(shown)) {
  test(`a listener that throws ${kind === 'error' ? 'an Error' : kind}: the next listener runs, the warning shows it, the process lives`, async (t) => {
    const run = await runFixture('listener-throws.js', kind)
    t.is(run.code, 0, run.stderr)
    t.is(run.stdout, `second listener ran: warning\nwarning ${warning}\nalive, 4 failures\n`)
    t.notRegex(run.stderr, /captcha-error-budget:/, 'no last-resort line')
  })
}

// Item 6: close() (or Symbol.dispose, what `using` calls) delivers what was queued before it.
for (const how of ['close', 'dispose']) {
  test(`transitions queued before ${how === 'close' ? 'close()' : 'Symbol.dispose'} reach their listeners`, async (t) => {
    const run = await runFixture('close-with-queued.js', how)
    t.is(run.code, 0, run.stderr)
    t.is(run.stdout, 'closed: true\nwarning at 3 failures\ncritical at 5 failures\n')
  })
}

// Item 14: a thread torn down under its listeners reports no listener as failed.
test('a worker that exits from inside a listener: no "listener failed" line, no later listener', async (t) => {
  const run = await runFixture('worker-exits-in-listener.js', '5')
  t.is(run.code, 0, run.stderr)
  t.is(run.stdout, '5 workers exited\n')
  t.is(run.stderr, '')
})
