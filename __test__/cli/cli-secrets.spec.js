// Issue 20 item 10: `gate --redis URL` and `gate --prometheus URL` never print a
// URL's credentials, name the real cause of a failure, and Prometheus behind
// basic auth works (fetch refuses credentials in a URL: they go in an
// Authorization header), from the URL or from CAPTCHA_BUDGET_PROMETHEUS_AUTH.
// And the "done when" of the issue: every place in lib/providers/solver.js, lib/cli/,
// lib/cli/gate/prometheus.js and lib/cli/gate/redis.js that quotes a URL or a body goes
// through lib/util/redact.js.
const test = require('ava')
const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const { execFile } = require('node:child_process')
const { startRedis } = require('../helpers/redis-server')
const { freePort } = require('../helpers/ports')
const withRedis = require('../helpers/external.js').needsFor(test, 'redis-server')
const { connect, fleetTracker, recordEach } = require('../helpers/fleet')
const { redact, redactUrl, urlSecrets, quoteBody } = require('../../lib/util/redact')

const BIN = path.join(__dirname, '..', '..', 'bin', 'captcha-budget.js')
const PASSWORD = 'S3cretPassw0rd'
const cli = (args, env = {}) =>
  new Promise((resolve) => {
    const childEnv = { ...process.env, ...env }
    delete childEnv.CAPTCHA_BUDGET_PROMETHEUS_AUTH
    Object.assign(childEnv, env)
    execFile(process.execPath, [BIN, ...args], { env: childEnv, timeout: 30_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? error.code : 0, stdout, stderr }),
    )
  })
// Neither the password nor its encoded forms nor the base64 of user:password.
const leaked = (out, secret = PASSWORD, user = 'ci') =>
  [secret, encodeURIComponent(secret), Buffer.from(`${user}:${secret}`).toString('base64')].filter((s) => `${out.stdout}${out.stderr}`.includes(s))

// A canned Prometheus that wants basic auth `ci:<PASSWORD>` (or a bearer token):
// 401 without, the SLO's series with. `seen` logs each request's Authorization.
async function authPrometheus(t, { echoError = false } = {}) {
  const seen = []
  const server = http.createServer((req, res) => {
    const authorization = req.headers.authorization
    seen.push(authorization)
    const good = [`Basic ${Buffer.from(`ci:${PASSWORD}`).toString('base64')}`, `Bearer ${PASSWORD}`]
    if (!good.includes(authorization)) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="prometheus"', 'Content-Type': 'text/plain' }).end(`Unauthorized: ${authorization}`)
      return
    }
    const promql = new URL(req.url, 'http://x').searchParams.get('query')
    if (echoError) {
      // A hostile or careless proxy quoting the request's credentials in its error.
      res.writeHead(400, { 'Content-Type': 'application/json' })
      res.end(JSON.stringify({ status: 'error', errorType: 'bad_data', error: `query ${promql} from ${authorization} (${PASSWORD}) refused` }))
      return
    }
    const rows = {
      'captcha_budget:slo_info{slo="x"}': [{ slo: 'x', name: 'turnstile', objective: '0.95', period: '30d' }, 1],
      'captcha_budget:error_budget_remaining:ratio{slo="x"}': [{ slo: 'x' }, 0.8],
      'captcha_budget:current_burn_rate:ratio{slo="x"}': [{ slo: 'x' }, 0.5],
      'captcha_budget:period_burn_rate:ratio{slo="x"}': [{ slo: 'x' }, 0.2],
    }
    const row = rows[promql]
    const result = row ? [{ metric: row[0], value: [1_700_000_000, String(row[1])] }] : []
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'success', data: { resultType: 'vector', result } }))
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise((resolve) => server.close(resolve)))
  return { port: server.address().port, seen }
}

test('gate --prometheus http://user:password@…: sent as basic auth, the answer read, the password never printed', async (t) => {
  const { port, seen } = await authPrometheus(t)
  const out = await cli(['gate', '--prometheus', `http://ci:${PASSWORD}@127.0.0.1:${port}/`, '--slo', 'x'])
  t.is(out.code, 0, out.stderr)
  t.regex(out.stdout, /^status {12}healthy$/m)
  t.regex(out.stdout, new RegExp(`fleet-wide from http://127\\.0\\.0\\.1:${port}\\)`))
  t.true(seen.length >= 5 && seen.every((a) => a === `Basic ${Buffer.from(`ci:${PASSWORD}`).toString('base64')}`), String(seen))
  t.deepEqual(leaked(out), [])
})

test('gate --prometheus: a percent-encoded password is decoded before it is sent', async (t) => {
  const { port } = await authPrometheus(t)
  // 'S3cretPassw0rd' with its 'w' as %77: the server must see the decoded password.
  const out = await cli(['gate', '--prometheus', `http://ci:S3cretPass%770rd@127.0.0.1:${port}`, '--slo', 'x', '--json'])
  t.is(out.code, 0, out.stderr)
  t.is(JSON.parse(out.stdout).status, 'healthy')
  t.deepEqual(leaked(out), [])
  t.false(out.stderr.includes('%770rd') || out.stdout.includes('%770rd'))
})

test('gate --prometheus: credentials from CAPTCHA_BUDGET_PROMETHEUS_AUTH (user:password or Bearer <token>)', async (t) => {
  const { port, seen } = await authPrometheus(t)
  const url = `http://127.0.0.1:${port}`
  const basic = await cli(['gate', '--prometheus', url, '--slo', 'x'], { CAPTCHA_BUDGET_PROMETHEUS_AUTH: `ci:${PASSWORD}` })
  t.is(basic.code, 0, basic.stderr)
  const bearer = await cli(['gate', '--prometheus', url, '--slo', 'x'], { CAPTCHA_BUDGET_PROMETHEUS_AUTH: `Bearer ${PASSWORD}` })
  t.is(bearer.code, 0, bearer.stderr)
  t.true(seen.includes(`Bearer ${PASSWORD}`))
  t.deepEqual([...leaked(basic), ...leaked(bearer)], [])
  const both = await cli(['gate', '--prometheus', `http://ci:${PASSWORD}@127.0.0.1:${port}`, '--slo', 'x'], {
    CAPTCHA_BUDGET_PROMETHEUS_AUTH: `ci:${PASSWORD}`,
  })
  t.is(both.code, 2)
  t.is(both.stderr, "captcha-budget gate: give Prometheus's credentials in the --prometheus URL or in CAPTCHA_BUDGET_PROMETHEUS_AUTH, not both\n")
  const malformed = await cli(['gate', '--prometheus', url, '--slo', 'x'], { CAPTCHA_BUDGET_PROMETHEUS_AUTH: PASSWORD })
  t.is(malformed.code, 2)
  t.is(malformed.stderr, "captcha-budget gate: CAPTCHA_BUDGET_PROMETHEUS_AUTH must be user:password (basic auth) or 'Bearer <token>'\n")
  t.deepEqual([...leaked(both), ...leaked(malformed)], [])
})

test('gate --prometheus: a wrong or missing password is HTTP 401 named as such, nothing leaked', async (t) => {
  const { port } = await authPrometheus(t)
  const wrong = await cli(['gate', '--prometheus', `http://ci:${PASSWORD}x@127.0.0.1:${port}`, '--slo', 'x'])
  t.is(wrong.code, 2)
  t.is(
    wrong.stderr,
    `captcha-budget gate: Prometheus at http://127.0.0.1:${port} answered HTTP 401: it needs credentials (user:password@ in the --prometheus URL, or CAPTCHA_BUDGET_PROMETHEUS_AUTH); check them\n`,
  )
  t.deepEqual(leaked(wrong, `${PASSWORD}x`), [])
  const none = await cli(['gate', '--prometheus', `http://127.0.0.1:${port}`, '--slo', 'x'])
  t.is(none.code, 2)
  t.regex(none.stderr, /answered HTTP 401: it needs credentials .*; none were given\n$/)
})

test('gate --prometheus: an error body quoting the credentials is redacted', async (t) => {
  const { port } = await authPrometheus(t, { echoError: true })
  const out = await cli(['gate', '--prometheus', `http://ci:${PASSWORD}@127.0.0.1:${port}`, '--slo', 'x'])
  t.is(out.code, 2)
  t.regex(out.stderr, /^captcha-budget gate: Prometheus refused captcha_budget:slo_info\{slo="x"\}: bad_data: query .* refused\n$/)
  t.deepEqual(leaked(out), [])
})

test('gate --prometheus: unreachable or not http(s), with credentials: the cause named, the password masked', async (t) => {
  const closed = await freePort()
  const refused = await cli(['gate', '--prometheus', `http://ci:${PASSWORD}@127.0.0.1:${closed}`, '--slo', 'x'])
  t.is(refused.code, 2)
  t.is(refused.stderr, `captcha-budget gate: cannot reach Prometheus at http://127.0.0.1:${closed}: ECONNREFUSED\n`)
  for (const url of [`ftp://ci:${PASSWORD}@127.0.0.1:9090`, `ci:${PASSWORD}@127.0.0.1:9090`, `http://ci:${PASSWORD}@[::1`]) {
    const out = await cli(['gate', '--prometheus', url, '--slo', 'x'])
    t.is(out.code, 2, url)
    t.regex(out.stderr, /^captcha-budget gate: --prometheus must be an http\(s\) URL such as http:\/\/127\.0\.0\.1:9090, got '.*\*\*\*@/)
    t.deepEqual(leaked(out), [], url)
  }
})

test('gate --redis: a refused connection names ECONNREFUSED (not "Connection is closed."), the password masked', async (t) => {
  const closed = await freePort()
  for (const url of [
    `redis://ci:${PASSWORD}@127.0.0.1:${closed}/0`,
    `redis://:${PASSWORD}@127.0.0.1:${closed}`,
    `redis://ci:S3cret@Passw0rd@127.0.0.1:${closed}`,
  ]) {
    const out = await cli(['gate', '--redis', url, '--key', 'k'])
    t.is(out.code, 2, url)
    t.regex(
      out.stderr,
      new RegExp(
        `^captcha-budget gate: redis://\\*\\*\\*@127\\.0\\.0\\.1:${closed}(/0)? k: cannot connect: connect ECONNREFUSED 127\\.0\\.0\\.1:${closed}\\n$`,
      ),
    )
    t.deepEqual(leaked(out), [], url)
    t.false(out.stderr.includes('S3cret'), out.stderr)
  }
})

withRedis.serial('gate --redis with an ACL user: the right password answers, a wrong one names WRONGPASS and is masked', async (t) => {
  const server = await startRedis()
  const client = await connect('ioredis', server.url)
  t.teardown(async () => {
    client.close()
    await server.stop()
  })
  await client.redis.call('ACL', 'SETUSER', 'ci', 'on', `>${PASSWORD}`, '~*', '+@all')
  const worker = fleetTracker(client.redis, 'secret-gate', { at: Date.now(), targetRate: 0.9 })
  recordEach(worker, 20, 1)
  await worker.sync()
  worker.close()
  const good = await cli(['gate', '--redis', `redis://ci:${PASSWORD}@127.0.0.1:${server.port}`, '--key', 'secret-gate'])
  t.is(good.code, 0, good.stderr)
  t.regex(good.stdout, /^solves in window {2}21 \(1 failed\)$/m)
  const bad = await cli(['gate', '--redis', `redis://ci:${PASSWORD}x@127.0.0.1:${server.port}`, '--key', 'secret-gate'])
  t.is(bad.code, 2)
  t.regex(bad.stderr, new RegExp(`^captcha-budget gate: redis://\\*\\*\\*@127\\.0\\.0\\.1:${server.port} secret-gate: cannot connect: WRONGPASS`))
  t.deepEqual(leaked(bad, `${PASSWORD}x`), [])
})

test('redact(): user-info, secret parameters and known secrets (raw, encoded) masked; the rest kept', (t) => {
  t.is(redact('redis://u:p@ss@h:1/0 failed'), 'redis://***@h:1/0 failed')
  t.is(redact('GET /res.php?key=abc&action=get&id=7&json=1'), 'GET /res.php?key=***&action=get&id=7&json=1')
  t.is(redact('GET /x?password=hunter2;token=t0k#frag'), 'GET /x?password=***;token=***#frag')
  t.is(redact('a/b+c and a%2Fb%2Bc', ['a/b+c']), '*** and ***')
  t.is(redact('no secret here, mail me at ops@example.com'), 'no secret here, mail me at ops@example.com')
  t.is(redactUrl('u:pw@host:6379'), '***@host:6379')
  t.is(redactUrl(new URL('https://u:pw@h/p?apikey=1&x=2')), 'https://***@h/p?apikey=***&x=2')
  t.deepEqual(urlSecrets('redis://u:p%40ss@h'), ['u:p%40ss', 'u:p@ss', 'p%40ss', 'p@ss'])
  t.deepEqual(urlSecrets('redis://h:6379'), [])
  // Masked before the cut: a secret straddling character 80 shows no half.
  t.is(quoteBody(`${'.'.repeat(76)}SECRETKEY!`, ['SECRETKEY']), `"${'.'.repeat(76)}***!"`)
  t.is(quoteBody('line\nbreak'), '"line\\nbreak"')
})

// The "done when" grep: in the files that quote URLs or bodies in messages, no
// message template interpolates a URL, a request/response body or a service
// text except through lib/util/redact.js (redact, redactUrl, quoteBody).
test('every message in lib/providers/solver.js, lib/cli/, lib/cli/gate/prometheus.js and lib/cli/gate/redis.js quotes URLs and bodies through lib/util/redact.js', (t) => {
  const root = path.join(__dirname, '..', '..', 'lib')
  const files = [
    'providers/solver.js',
    'cli/gate/prometheus.js',
    'cli/gate/redis.js',
    'cli/gate/redis-client.js',
    ...fs.readdirSync(path.join(root, 'cli', 'commands')).map((f) => `cli/commands/${f}`),
  ]
  // What a URL or a body is called, as an interpolated expression: everywhere, and in the
  // two HTTP clients also their names for a response's text and the errors they quote.
  const URLISH = 'url|href|baseUrl|base|prometheus|redis|body|error_text|response|res'
  const risky = (file) =>
    new RegExp(
      `\\$\\{\\s*(?:[\\w.]*\\b(?:${URLISH}${/^(providers\/solver|cli\/gate\/prometheus)\.js$/.test(file) ? '|text|request|search|cause' : ''})\\b[\\w.?]*)\\s*\\}`,
      'i',
    )
  // Interpolations known to be safe: redaction helpers' results, or parts that carry no credential
  // (an origin or path has no user-info, an HTTP status is a number).
  const SAFE = /\$\{\s*(?:redact|redactUrl|quoteBody)\(|\$\{\s*(?:url|base)\.origin\s*\}|\$\{\s*url\.pathname\s*\}|\$\{\s*(?:res|response)\.status\s*\}/
  // Templates that look risky but are not (file: expression → why).
  const ALLOWED = {
    // connectError's text is the client's error; gateRedis redacts it (with the URL's secrets) where it is printed.
    'cli/gate/redis-client.js: ${cause.code}': true,
    'cli/gate/redis-client.js: ${cause.message}': true,
  }
  const offenders = []
  for (const file of files) {
    const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n')
    lines.forEach((line, i) => {
      for (const m of line.matchAll(/\$\{[^}]*\}/g)) {
        if (risky(file).test(m[0]) && !SAFE.test(m[0]) && !ALLOWED[`${file}: ${m[0]}`]) offenders.push(`lib/${file}:${i + 1}: ${m[0]}`)
      }
    })
    // The helper is used at all where URLs or bodies are quoted.
    const source = lines.join('\n')
    // (lib/cli/gate/redis-client.js's errors are quoted by gateRedis, which redacts them.)
    if (/fetch\(|connect\(/.test(source) && file !== 'cli/gate/redis-client.js')
      t.regex(source, /require\('(\.\.?\/)+(util\/)?redact\.js'\)/, `lib/${file} fetches but does not use lib/util/redact.js`)
  }
  t.deepEqual(offenders, [])
})
