// A plain `npm pack` of the repository refuses (its tarball would have no binary),
// and an addon that cannot be loaded names the platform package to install.
const test = require('ava')
const { execFile } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { addonMissing, hostSuffix, suffixOf } = require('../lib/native/addon-missing.js')
const { nativeOnly } = require('./helpers/binding')
const { name, version, napi } = require('../package.json')

const root = path.join(__dirname, '..')

function run(file, args, options) {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 60_000, ...options }, (error, stdout, stderr) => resolve({ code: error ? error.code : 0, stdout, stderr }))
  })
}

test('a plain npm pack of the repository refuses and points to npm run pack:all and pack:host', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-budget-plain-pack-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const result = await run('npm', ['pack', '--pack-destination', dir], { cwd: root })
  t.not(result.code, 0)
  t.regex(result.stderr, /refusing a plain `npm pack` of the repository/)
  t.regex(result.stderr, /npm run build && npm run artifacts && npm run pack:all/)
  t.regex(result.stderr, /npm run pack:host/)
  t.deepEqual(fs.readdirSync(dir), [])
})

test('npm pack --dry-run is let through: it lists what the package holds, docs/ and the sample-log generator but not the 4 MB log, and writes nothing', async (t) => {
  const result = await run('npm', ['pack', '--dry-run', '--json'], { cwd: root })
  t.is(result.code, 0, result.stderr)
  const files = JSON.parse(result.stdout)[0].files.map((f) => f.path)
  t.true(files.includes('docs/platforms.md'))
  // The sample log is generated (seeded) where it is used, not shipped (issue 45).
  t.deepEqual(
    files.filter((f) => f.startsWith('sample/')),
    [],
  )
  t.true(files.includes('scripts/generate-sample-log.js'))
  t.true(files.includes('scripts/prng.js'))
  // Every page README links to is in the package, so its links work in node_modules.
  const linked = [...fs.readFileSync(path.join(root, 'README.md'), 'utf8').matchAll(/\]\(([^)#:\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1].replace(/\/$/, ''))
  t.true(linked.length > 10)
  t.deepEqual(
    linked.filter((file) => !files.some((f) => f === file || f.startsWith(`${file}/`))),
    [],
  )
  t.false(fs.existsSync(path.join(root, `${name}-${version}.tgz`)))
})

test('npm run pack:host is the host build, then this platform only', (t) => {
  const { scripts } = require('../package.json')
  t.is(scripts['pack:host'], 'npm run build && node scripts/pack-all.js --host')
})

// The packing half of `npm run pack:host` (its `npm run build` is the build this suite runs on),
// then what docs/platforms.md tells a user: both tarballs into a project, offline, and require().
nativeOnly('packs the native build of this machine')(
  "pack:host writes the main and this platform's tarball; installed offline into a project, require() works",
  async (t) => {
    t.timeout(180_000)
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-budget-pack-host-'))
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
    const dist = path.join(dir, 'dist')
    const packed = await run(process.execPath, ['scripts/pack-all.js', '--host', '--out', dist], { cwd: root })
    t.is(packed.code, 0, packed.stderr)
    const suffix = hostSuffix()
    t.deepEqual(fs.readdirSync(dist).sort(), [`${name}-${suffix}-${version}.tgz`, `${name}-${version}.tgz`].sort())
    t.deepEqual(
      packed.stdout
        .trim()
        .split('\n')
        .map((line) => path.basename(line)),
      [`${name}-${version}.tgz`, `${name}-${suffix}-${version}.tgz`],
    )
    // A project with the main package's own dependencies already there (as a registry would
    // give them; this spec runs offline), then the two tarballs.
    const project = path.join(dir, 'project')
    fs.mkdirSync(path.join(project, 'node_modules'), { recursive: true })
    fs.writeFileSync(path.join(project, 'package.json'), '{ "name": "first-day", "version": "1.0.0", "private": true }\n')
    for (const dep of Object.keys(require('../package.json').dependencies)) {
      fs.cpSync(path.join(root, 'node_modules', dep), path.join(project, 'node_modules', dep), { recursive: true })
    }
    const tarballs = fs.readdirSync(dist).map((f) => path.join(dist, f))
    const installed = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', ...tarballs], { cwd: project, timeout: 150_000 })
    t.is(installed.code, 0, installed.stderr)
    const env = { ...process.env }
    delete env.NAPI_RS_NATIVE_LIBRARY_PATH
    delete env.NAPI_RS_FORCE_WASI
    const script = `const { ErrorBudgetTracker } = require('${name}')
const budget = new ErrorBudgetTracker({ targetRate: 0.95, windowMs: 3_600_000, clock: 'manual' })
budget.recordMany(97, 3)
console.log(budget.status, budget.report().budgetRemainingPct, require.resolve('${name}-${suffix}').includes('node_modules'))
budget.close()`
    const used = await run(process.execPath, ['-e', script], { cwd: project, env })
    t.is(used.code, 0, used.stderr)
    // 5 failures allowed in 100, 3 spent: 40 % left, under the 50 % warning threshold.
    t.is(used.stdout, 'warning 40 true\n')
  },
)

test('every target of package.json is named as napi-rs names its platform package (npm/<suffix>/)', (t) => {
  t.deepEqual(napi.targets.map(suffixOf).sort(), fs.readdirSync(path.join(root, 'npm')).sort())
})

test('a missing binary on a prebuilt platform names the optional dependency, how npm skipped it, and the WASI build', (t) => {
  const err = addonMissing(new Error('cause'), { suffix: 'linux-arm64-musl', clone: false })
  t.is(err.code, 'ERR_MODULE_NOT_FOUND')
  t.is(err.cause.message, 'cause')
  t.regex(err.message, new RegExp(`^${name} could not load its native addon for linux-arm64-musl\\.`))
  t.true(err.message.includes(`optional dependency ${name}-linux-arm64-musl@${version}`))
  t.true(err.message.includes(`npm install ${name}-linux-arm64-musl@${version}`))
  t.true(err.message.includes('--omit=optional'))
  t.true(err.message.includes(`npm install ${name}@${version} --cpu=wasm32\n`))
  t.false(err.message.includes(`${name}-wasm32-wasi`), 'naming the WASI package makes npm check it against the real CPU (EBADPLATFORM)')
  t.false(err.message.includes('npm has a bug'))
  // Unpublished (a clone's version, or `npm install <clone folder>`), that install 404s: the last line says what works.
  t.is(
    err.message.split('\n').at(-1),
    "A version that is not published (a clone's build) comes from the clone instead: there, npm run pack:host, then npm install both tarballs it writes into dist/ (docs/platforms.md#a-build-that-is-not-published).",
  )
})

test('on a platform without a prebuilt binary the error says to install the WASI build with --cpu=wasm32', (t) => {
  const err = addonMissing(undefined, { suffix: 'freebsd-x64', clone: false })
  t.regex(err.message, /No prebuilt binary exists for freebsd-x64/)
  t.true(err.message.includes(`\n  npm install ${name}@${version} --cpu=wasm32\n`))
  t.true(err.message.includes("put cpu=wasm32 in the project's .npmrc"))
  t.false(err.message.includes(`${name}-wasm32-wasi`))
  t.false(err.message.includes('optional dependency'))
})

test('in a clone without a build the error says npm run build', (t) => {
  const message = addonMissing(undefined, { suffix: 'linux-x64-gnu', clone: true }).message
  t.regex(message, /build it from source: npm run build/)
  t.regex(
    message,
    /To use the clone's build in another project: npm run pack:host there, then npm install the two tarballs it writes into dist\/ \(docs\/platforms\.md#a-build-that-is-not-published\)/,
  )
})

/** require() of the published files, without any platform package and outside the clone: the error's code and message lines. */
async function requireWithoutBinary(t, extraEnv) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'captcha-budget-no-binary-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const pkg = path.join(dir, 'node_modules', name)
  fs.mkdirSync(pkg, { recursive: true })
  for (const file of ['index.js', 'native.js', 'package.json', 'lib']) fs.cpSync(path.join(root, file), path.join(pkg, file), { recursive: true })
  const script = `try { require(${JSON.stringify(name)}) } catch (e) { console.log(e.code); console.log(e.message) }`
  // Whichever build this suite runs on (.ci/platforms runs it forced onto WASI).
  const env = { ...process.env, ...extraEnv }
  delete env.NAPI_RS_NATIVE_LIBRARY_PATH
  if (!extraEnv) delete env.NAPI_RS_FORCE_WASI
  const result = await run(process.execPath, ['-e', script], { cwd: dir, env })
  t.is(result.code, 0, result.stderr)
  const [code, ...message] = result.stdout.trim().split('\n')
  return { code, message }
}

test('require() of an installed package without its binary throws the explained error, not the loader’s', async (t) => {
  const { code, message } = await requireWithoutBinary(t)
  t.is(code, 'ERR_MODULE_NOT_FOUND')
  t.regex(message[0], new RegExp(`^${name} could not load its native addon for linux-x64-(gnu|musl)\\.`))
  t.regex(message.join('\n'), new RegExp(`npm install ${name}-linux-x64-(gnu|musl)@${version.replace(/\./g, '\\.')}`))
})

test('NAPI_RS_FORCE_WASI=error without the WASI package: the error says it is not installed and the --cpu=wasm32 command', async (t) => {
  const { code, message } = await requireWithoutBinary(t, { NAPI_RS_FORCE_WASI: 'error' })
  t.is(code, 'ERR_MODULE_NOT_FOUND')
  t.deepEqual(message.slice(0, 3), [
    `${name} could not load its WebAssembly build, which NAPI_RS_FORCE_WASI=error asks for.`,
    `${name}-wasm32-wasi@${version} is not installed: npm skips it unless told the CPU is wasm32:`,
    `  npm install ${name}@${version} --cpu=wasm32`,
  ])
})
