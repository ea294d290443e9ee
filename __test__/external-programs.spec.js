// Specs that need an external program (redis-server, promtool, prometheus) skip
// cleanly where it is missing, fail under CI, and never signal their caller's
// process group: a child whose spawn failed has no pid, and kill() on it
// signals group 0.
// Their subject is the specs' helpers, not the build: on WASI they skip.
const test = require('./helpers/binding').nativeRuns("on WASI: checks the specs' own helpers, not the build")
const { execFile } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { needsFor } = require('./helpers/external')

const root = path.join(__dirname, '..')
const ava = path.join(root, 'node_modules', 'ava', 'entrypoints', 'cli.mjs')

/** A PATH with node and nothing else: none of the external programs. */
function bareEnv(t, extra = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-budget-bare-path-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  fs.symlinkSync(process.execPath, path.join(dir, 'node'))
  const env = { ...process.env, PATH: dir, ...extra }
  delete env.CI
  if (extra.CI !== undefined) env.CI = extra.CI
  return env
}

/**
 * Runs `script` in its own process group, as npm or a CI step would run the
 * specs: had it signalled group 0, it would end by SIGKILL.
 */
function runDetached(args, env, timeout = 60_000) {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, args, { cwd: root, env, timeout, detached: true }, (error, stdout, stderr) =>
      resolve({ code: error ? error.code : 0, signal: error?.signal ?? null, stdout, stderr }),
    )
    child.unref()
  })
}

test('startRedis() without redis-server rejects with the install hint and spawns nothing; the caller lives', async (t) => {
  const script = `
    const { startRedis } = require('./__test__/helpers/redis-server.js')
    startRedis().then(() => process.exit(3), (err) => { console.log(err.message); process.exit(0) })`
  const result = await runDetached(['-e', script], bareEnv(t))
  t.is(result.signal, null, result.stderr)
  t.is(result.code, 0, result.stderr)
  t.regex(result.stdout, /needs redis-server, which is not installed \(apt-get install -y redis-server\)/)
})

test('signalChild() on a child whose spawn failed sends nothing (child.kill() would SIGKILL the caller’s group)', async (t) => {
  const script = `
    const { spawn } = require('node:child_process')
    const { signalChild } = require('./__test__/helpers/external.js')
    const child = spawn('no-such-program-captcha-budget', [])
    child.on('error', () => {})
    console.log(signalChild(child, 'SIGKILL'))
    process.exit(0)`
  const result = await runDetached(['-e', script], bareEnv(t))
  t.is(result.signal, null)
  t.is(result.code, 0, result.stderr)
  t.is(result.stdout, 'false\n')
})

test('a fleet spec without redis-server skips in one line naming it and how to install it', async (t) => {
  const result = await runDetached([ava, '--tap', '__test__/cli/fleet-gate.spec.js'], bareEnv(t))
  t.is(result.code, 0, result.stdout + result.stderr)
  const skipped = result.stdout.split('\n').filter((line) => line.includes('# SKIP'))
  t.is(skipped.length, 1, result.stdout)
  t.regex(skipped[0], /fleet-gate\.spec\.js: every test needs redis-server, which is not installed \(apt-get install -y redis-server\)/)
  t.notRegex(result.stdout + result.stderr, /uncaught|ENOENT spawn/i)
})

test('under CI a missing redis-server fails the fleet spec instead of skipping it', async (t) => {
  const result = await runDetached([ava, '--tap', '__test__/cli/fleet-gate.spec.js'], bareEnv(t, { CI: 'true' }))
  t.is(result.signal, null)
  t.not(result.code, 0)
  t.regex(result.stdout + result.stderr, /needs redis-server/)
  t.notRegex(result.stdout, /# SKIP/)
})

for (const value of ['false', '0']) {
  test(`CI=${JSON.stringify(value)} is not CI: a fleet spec without redis-server still skips`, async (t) => {
    const result = await runDetached([ava, '--tap', '__test__/cli/fleet-gate.spec.js'], bareEnv(t, { CI: value }))
    t.is(result.code, 0, result.stdout + result.stderr)
    t.regex(result.stdout, /fleet-gate\.spec\.js: every test needs redis-server.* # SKIP/)
  })
}

test('underCI() reads CI as CI services set it: any value but empty, false or 0', (t) => {
  const { underCI } = require('./helpers/external.js')
  t.deepEqual(
    ['true', '1', 'yes', 'woodpecker', 'false', 'False', '0', '', ' ', undefined].map((CI) => underCI(CI === undefined ? {} : { CI })),
    [true, true, true, true, false, false, false, false, false, false],
  )
})

test('every documentation example that starts redis-server is marked <!-- needs: redis-server -->', (t) => {
  const pages = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md'))
  let marked = 0
  for (const page of pages) {
    const lines = fs.readFileSync(path.join(root, page), 'utf8').split('\n')
    lines.forEach((line, i) => {
      if (!/^```m?js\s*$/.test(line.trim())) return
      const end = lines.indexOf('```', i + 1)
      const body = lines.slice(i + 1, end).join('\n')
      if (!/spawn\(['"]redis-server/.test(body)) return
      t.true(
        [lines[i - 1], lines[i - 2]].some((l) => l?.trim() === '<!-- needs: redis-server -->'),
        `${page}:${i + 1}`,
      )
      marked += 1
    })
  }
  t.true(marked >= 1)
})

test('a program killed at its time limit says so, with its output until then kept (not a bare exit code of -1)', async (t) => {
  const { run } = require('./fixtures/prometheus-tools')
  const stuck = "process.stdout.write('half the work\\n'); process.stderr.write('still going\\n'); setInterval(() => {}, 1000)"
  const result = await run(process.execPath, ['-e', stuck], { timeout: 10_000 }) // long enough for node to start and write on a loaded machine
  t.is(result.code, -1)
  t.true(result.timedOut)
  t.is(result.stdout, 'half the work\n')
  t.is(result.stderr, `${path.basename(process.execPath)} timed out after 10 s and was killed (SIGTERM); its output until then follows\nstill going\n`)
  // A program that ends on its own is not reported as timed out.
  const quick = await run(process.execPath, ['-e', 'process.exit(3)'], { timeout: 30_000 })
  t.deepEqual(quick, { code: 3, timedOut: false, stdout: '', stderr: '' })
})

test('specs that provoke errors on purpose pass without printing them (no "listener exploded" on a passing run)', async (t) => {
  const files = ['tracker/listeners', 'tracker/incidents', 'guard/guard', 'tracker/persist', 'fleet/fleet-attacks'].map((name) => `__test__/${name}.spec.js`)
  t.timeout(200_000) // five spec files in a child ava, on a loaded machine
  const result = await runDetached([ava, '--tap', ...files], { ...process.env, CI: 'false' }, 180_000)
  t.is(result.code, 0, result.stdout + result.stderr)
  t.notRegex(result.stderr, /exploded|bad news|classifier bug|countsAsFailure|save at exit failed|final save failed|CAPTCHA_BUDGET_FLEET/, result.stderr)
})

test('a wait on Prometheus that runs out says how long it waited and what the last check threw', async (t) => {
  const { until } = require('./fixtures/prometheus-fleet')
  const err = await t.throwsAsync(
    until('the rules', Date.now() + 300, async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:9090')
    }),
  )
  t.regex(err.message, /^timed out after \d+ s waiting for the rules \(the last check threw: connect ECONNREFUSED 127\.0\.0\.1:9090\)$/)
})

test('a failed test keeps its temp dir (the test.yml promtool names can be opened) and prints it; a passed one removes it', async (t) => {
  const result = await runDetached([ava, '--tap', '__test__/fixtures/kept-temp-dir.js'], { ...process.env, CI: 'false' })
  t.not(result.code, 0) // one test of the fixture fails on purpose
  const output = result.stdout + result.stderr
  const passing = /passing dir: (\S+)/.exec(output)[1]
  const failing = /failing dir: (\S+)/.exec(output)[1]
  t.teardown(() => fs.rmSync(failing, { recursive: true, force: true }))
  t.false(fs.existsSync(passing))
  t.is(fs.readFileSync(path.join(failing, 'test.yml'), 'utf8'), 'failing\n')
  t.true(output.includes(`kept for the failed test "fails": ${failing}`), output)
})

test('a server whose free port is taken before it binds starts again on another one; other errors are not retried', async (t) => {
  const { onFreePort } = require('./helpers/ports')
  // The CI failure this reproduces: redis-server refused "bind: Address already in use".
  const taken = new Error('Could not create server TCP listening socket 127.0.0.1:33397: bind: Address already in use')
  const ports = []
  const started = await onFreePort(async (port) => {
    ports.push(port)
    if (ports.length === 1) throw taken
    return `up on ${port}`
  })
  t.is(ports.length, 2)
  t.true(ports.every((p) => Number.isInteger(p) && p > 0))
  t.is(started, `up on ${ports[1]}`)

  let calls = 0
  const other = await t.throwsAsync(onFreePort(async () => ((calls += 1), Promise.reject(new Error('bad config')))))
  t.is(other.message, 'bad config')
  t.is(calls, 1)

  calls = 0
  const always = await t.throwsAsync(onFreePort(async () => ((calls += 1), Promise.reject(taken)), 3))
  t.is(always, taken)
  t.is(calls, 3)
})

/** A loopback port something else listens on, until the test ends. */
async function takenPort(t) {
  const busy = require('node:net').createServer()
  await new Promise((resolve) => busy.listen(0, '127.0.0.1', resolve))
  t.teardown(() => busy.close())
  return busy.address().port
}

needsFor(test, 'redis-server')('startRedis() on a port kept for a restart does not move: a taken port is refused with the log', async (t) => {
  const { startRedis } = require('./helpers/redis-server')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'taken-port-redis-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const err = await t.throwsAsync(startRedis({ port: await takenPort(t), dir }))
  t.regex(err.message, /^redis-server exited \(1\) before it was ready:[\s\S]*Address already in use/)
})

needsFor(test, 'prometheus')('Prometheus on a taken port exits saying so, in the words onFreePort retries on', async (t) => {
  const { prometheus, run } = require('./fixtures/prometheus-tools')
  t.truthy(prometheus, 'prometheus is not installed: apt-get install -y prometheus (.ci/run does)')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'taken-port-prometheus-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), 'global: {}\n')
  const args = [`--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`]
  const result = await run(prometheus, [...args, `--web.listen-address=127.0.0.1:${await takenPort(t)}`], { timeout: 30_000 })
  t.is(result.code, 1, result.stdout + result.stderr)
  t.regex(result.stderr, require('./helpers/ports').ADDRESS_IN_USE)
})
