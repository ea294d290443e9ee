// A plain `npm pack` of the repository refuses (its tarball would have no binary),
// and an addon that cannot be loaded names the platform package to install.
const test = require('ava')
const { execFile } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { addonMissing, suffixOf } = require('../lib/addon-missing.js')
const { name, version, napi } = require('../package.json')

const root = path.join(__dirname, '..')

function run(file, args, options) {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 60_000, ...options }, (error, stdout, stderr) =>
      resolve({ code: error ? error.code : 0, stdout, stderr }),
    )
  })
}

test('a plain npm pack of the repository refuses and points to npm run pack:all', async (t) => {
  const result = await run('npm', ['pack', '--dry-run'], { cwd: root })
  t.not(result.code, 0)
  t.regex(result.stderr, /refusing a plain `npm pack` of the repository/)
  t.regex(result.stderr, /npm run build && npm run artifacts && npm run pack:all/)
})

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
  t.regex(addonMissing(undefined, { suffix: 'linux-x64-gnu', clone: true }).message, /build it from source: npm run build/)
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
