const test = require('ava')
const { execFile } = require('node:child_process')
const path = require('node:path')

function runFixture(name) {
  return new Promise((resolve) => {
    const started = Date.now()
    execFile(process.execPath, [path.join(__dirname, '..', 'fixtures', name)], { timeout: 20000 }, (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, signal: error && error.signal, stdout, stderr, ms: Date.now() - started })
    })
  })
}

test('a transition caused by record() is delivered before the process exits', async (t) => {
  const run = await runFixture('record-and-end.js')
  t.is(run.code, 0, run.stderr)
  t.is(run.stdout, 'exhausted after 1 failures\n')
})

test('an idle tracker with listeners does not keep the process alive', async (t) => {
  const run = await runFixture('idle-with-listeners.js')
  t.is(run.code, 0, run.stderr)
  t.is(run.stdout, 'recorded\n')
  t.true(run.ms < 10000, `exited after ${run.ms} ms`)
})

test('an exhausted tracker left alone recovers on its own and the process then exits', async (t) => {
  const run = await runFixture('recovers-by-itself.js')
  t.is(run.code, 0, run.stdout + run.stderr)
  const [first, second] = run.stdout.trim().split('\n')
  t.is(first, 'exhausted')
  const healthy = JSON.parse(second)
  t.is(healthy.total, 0)
  t.is(healthy.status, 'healthy')
  // The window is 300 ms with 10 ms buckets: due at 290–300 ms; generous upper bound.
  t.true(healthy.healthyAfterMs >= 280, `${healthy.healthyAfterMs} ms`)
  t.true(healthy.healthyAfterMs < 15_000, `${healthy.healthyAfterMs} ms`)
})
