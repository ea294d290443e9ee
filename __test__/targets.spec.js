// Issue 21: one list of targets. package.json `napi.targets` drives the build
// recipes (scripts/targets.js), the artifacts, the binary checks and the CI's
// Rust targets; npm/ is generated from it (scripts/npm-dirs.js); a target
// triple written anywhere else fails here.
const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { TARGETS, targetOf } = require('../scripts/targets.js')
const { generate } = require('../scripts/npm-dirs.js')
const pkg = require('../package.json')

const root = path.join(__dirname, '..')

/** Every file under `dir` (relative to the root), skipping what is generated or installed. */
function files(dir) {
  const skip = new Set(['node_modules', 'target', '.git', 'npm', 'dist', 'fixtures'])
  return fs.readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const file = path.posix.join(dir, entry.name)
    if (entry.isDirectory()) return skip.has(entry.name) ? [] : files(file)
    return [file]
  })
}

test('npm/ is what scripts/npm-dirs.js generates from package.json, one folder per target', (t) => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'i21-npm-'))
  t.teardown(() => fs.rmSync(out, { recursive: true, force: true }))
  const names = generate(out)
  t.deepEqual(
    names,
    TARGETS.map((target) => target.platform),
  )
  const committed = fs.readdirSync(path.join(root, 'npm')).sort()
  t.deepEqual(committed, [...names].sort())
  for (const name of names) {
    for (const file of ['package.json', 'README.md', 'LICENSE']) {
      t.is(fs.readFileSync(path.join(root, 'npm', name, file), 'utf8'), fs.readFileSync(path.join(out, name, file), 'utf8'), `npm/${name}/${file}`)
    }
  }
})

test('the build recipe follows from OS, architecture and ABI', (t) => {
  t.deepEqual(
    TARGETS.map((x) => x.triple),
    pkg.napi.targets,
  )
  t.like(targetOf('aarch64-unknown-linux-gnu'), {
    platform: 'linux-arm64-gnu',
    buildTarget: 'aarch64-unknown-linux-gnu.2.17',
    zig: true,
    check: 'elf-gnu',
    machine: 'AArch64',
  })
  t.like(targetOf('x86_64-apple-darwin'), { platform: 'darwin-x64', zig: true, env: { MACOSX_DEPLOYMENT_TARGET: '10.13' }, check: 'macho', cpu: 'X86_64' })
  t.like(targetOf('x86_64-pc-windows-msvc'), { platform: 'win32-x64-msvc', rustTarget: 'x86_64-pc-windows-gnu', windows: true, check: 'pe' })
  t.like(targetOf('wasm32-wasip1-threads'), { platform: 'wasm32-wasi', buildTarget: 'wasm32-wasip1-threads', check: 'run' })
  // A target no rule covers is an error naming it, not a silent skip.
  t.throws(() => targetOf('riscv64gc-unknown-freebsd'), { message: /no build recipe for riscv64gc-unknown-freebsd/ })
})

test('no target triple is written outside package.json, npm/ and the build docs', (t) => {
  const triples = new Set(TARGETS.flatMap((x) => [x.triple, x.rustTarget, x.buildTarget]))
  // The documentation may name them (and docs/building-targets.md must: below); native.d.ts is generated.
  const allowed = (file) => file === 'package.json' || file === 'native.d.ts' || file === 'README.md' || file.startsWith('docs/') || file.endsWith('.lock')
  const found = []
  for (const file of files('.')) {
    if (allowed(file) || file === '__test__/targets.spec.js') continue
    let text
    try {
      text = fs.readFileSync(path.join(root, file), 'utf8')
    } catch {
      continue
    }
    for (const triple of triples) if (text.includes(triple)) found.push(`${file}: ${triple}`)
  }
  t.deepEqual(found, [])
})

test('docs/building-targets.md lists every target: platform and the triple it is built for', (t) => {
  const doc = fs.readFileSync(path.join(root, 'docs', 'building-targets.md'), 'utf8')
  for (const target of TARGETS) t.true(doc.includes(`| \`${target.platform}\` | \`${target.buildTarget}\` |`), target.platform)
})
