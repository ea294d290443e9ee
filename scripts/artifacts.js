#!/usr/bin/env node
// Builds the addon for every target into its npm/<platform>/ package:
//   npm run artifacts                      every target
//   npm run artifacts -- linux-arm64-gnu   only the platforms named
// Linux and macOS cross-link through Zig (`napi build -x` = cargo-zigbuild),
// Windows through Debian's mingw-w64, WASI through emnapi. What to install
// first: docs/building-targets.md.
// Two targets build at a time on a machine with two or more cores (a release
// build with LTO and one codegen unit keeps one core busy); ARTIFACTS_JOBS=N
// overrides. Each lane has its own Cargo target directory, since concurrent
// builds in one directory wait on its lock.
'use strict'

const { execFileSync, spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const root = path.join(__dirname, '..')
const { binaryName } = require('../package.json').napi

// Every published platform, from package.json `napi.targets` (scripts/targets.js):
// the package folder under npm/, the triple Cargo builds and the extra
// environment. glibc targets pin glibc 2.17 through the cargo-zigbuild suffix
// (Debian 12's own glibc would demand 2.36); Windows is built for `-gnu` (the
// MSVC SDK cannot be downloaded here) but shipped under the `-msvc` name, which
// is what the loader asks for on the official Node — Node-API is a C ABI, so
// the toolchain behind the DLL does not matter.
const { TARGETS } = require('./targets.js')

/** The folder of the `zig` that PyPI's `ziglang` installs (napi's `-x` wants `zig` on PATH). */
function zigDir() {
  try {
    execFileSync('zig', ['version'], { stdio: 'ignore' })
    return null
  } catch {
    const dir = execFileSync('python3', ['-c', 'import ziglang, os; print(os.path.dirname(ziglang.__file__))'], {
      encoding: 'utf8',
    }).trim()
    return dir
  }
}

/**
 * napi's build script for `windows-gnu` links `-lnode` from `LIBNODE_PATH`.
 * An import library naming NODE.EXE, made from node-api-headers' list of
 * Node-API exports, lets the DLL import `napi_*` from the process that loads it.
 */
function nodeImportLibrary() {
  const dir = path.join(root, 'target', 'node-import-lib')
  fs.mkdirSync(dir, { recursive: true })
  const def = require.resolve('node-api-headers/def/node_api.def')
  // The name the build script checks for; ld reads it as the archive it is.
  execFileSync('x86_64-w64-mingw32-dlltool', ['-d', def, '-l', path.join(dir, 'libnode.dll')])
  return dir
}

/** The builds under way: stopped when another fails. */
const running = new Set()

/**
 * Builds one target in the given Cargo target directory; resolves with its
 * output (printed whole once it ends, so that two builds do not interleave).
 */
async function build({ platform, buildTarget: target, zig, windows, env }, targetDir) {
  const out = path.join(root, 'target', 'napi-out', platform)
  fs.rmSync(out, { recursive: true, force: true })
  const args = ['napi', 'build', '--platform', '--release', '--no-const-enum', '--target', target, '-o', out]
  // The generated loader and types come from the host build (`npm run build`).
  args.push('--no-js', '--dts', 'native.d.ts')
  if (zig) args.push('-x')
  const extra = { ...env, CARGO_TARGET_DIR: targetDir }
  if (zig) {
    const dir = zigDir()
    if (dir) extra.PATH = `${dir}${path.delimiter}${process.env.PATH}`
  }
  if (windows) {
    extra.LIBNODE_PATH = nodeImportLibrary()
    extra.CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER = 'x86_64-w64-mingw32-gcc'
  }
  const started = Date.now()
  let output = ''
  const child = spawn('npx', args, { cwd: root, env: { ...process.env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] })
  running.add(child)
  // Both streams as they come, unsplit: a chunk may end mid-line.
  child.stdout.on('data', (chunk) => (output += chunk))
  child.stderr.on('data', (chunk) => (output += chunk))
  const code = await new Promise((resolve) => child.on('close', resolve))
  running.delete(child)
  const heading = `\n== ${platform} (${target})\n${output.trimEnd()}`
  if (code !== 0) throw new Error(`${heading}\nnapi build for ${platform} exited with ${code}`)
  const pkg = path.join(root, 'npm', platform)
  const { files } = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'))
  for (const file of files) {
    // napi names the Windows file after the triple it built (`-gnu`).
    const built = windows ? file.replace('-msvc.node', '-gnu.node') : file
    fs.copyFileSync(path.join(out, built), path.join(pkg, file))
  }
  return `${heading}\n   ${files.join(', ')} -> npm/${platform}/ (${Math.round((Date.now() - started) / 1000)} s)`
}

const wanted = process.argv.slice(2)
const unknown = wanted.filter((p) => !TARGETS.some((t) => t.platform === p))
if (unknown.length > 0) {
  console.error(`unknown platform(s): ${unknown.join(', ')}; known: ${TARGETS.map((t) => t.platform).join(', ')}`)
  process.exit(2)
}
const queue = TARGETS.filter((t) => wanted.length === 0 || wanted.includes(t.platform))
const jobs = process.env.ARTIFACTS_JOBS ? Number(process.env.ARTIFACTS_JOBS) : Math.min(2, os.availableParallelism())
if (!Number.isInteger(jobs) || jobs < 1) {
  console.error(`ARTIFACTS_JOBS must be a whole number of at least 1, not ${process.env.ARTIFACTS_JOBS}`)
  process.exit(2)
}
const count = queue.length
// Lane 0 uses the usual target/ (the host build's dependencies are there already).
const lanes = Array.from({ length: Math.min(jobs, count) }, async (_, lane) => {
  const targetDir = path.join(root, 'target', ...(lane === 0 ? [] : ['lanes', String(lane)]))
  for (let t = queue.shift(); t; t = queue.shift()) console.log(await build(t, targetDir))
})
Promise.all(lanes).then(
  () => console.log(`\nbuilt ${binaryName} for ${count} platform(s), ${lanes.length} at a time`),
  (error) => {
    for (const child of running) child.kill()
    console.error(error.message)
    process.exit(1)
  },
)
