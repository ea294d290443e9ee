#!/usr/bin/env node
// Builds the addon for every target into its npm/<platform>/ package:
//   npm run artifacts                      every target
//   npm run artifacts -- linux-arm64-gnu   only the platforms named
// Linux and macOS cross-link through Zig (`napi build -x` = cargo-zigbuild),
// Windows through Debian's mingw-w64, WASI through emnapi. What to install
// first: docs/building-targets.md.
'use strict'

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
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

function build({ platform, buildTarget: target, zig, windows, env }) {
  const out = path.join(root, 'target', 'napi-out', platform)
  fs.rmSync(out, { recursive: true, force: true })
  const args = ['napi', 'build', '--platform', '--release', '--no-const-enum', '--target', target, '-o', out]
  // The generated loader and types come from the host build (`npm run build`).
  args.push('--no-js', '--dts', 'native.d.ts')
  if (zig) args.push('-x')
  const extra = { ...env }
  if (zig) {
    const dir = zigDir()
    if (dir) extra.PATH = `${dir}${path.delimiter}${process.env.PATH}`
  }
  if (windows) {
    extra.LIBNODE_PATH = nodeImportLibrary()
    extra.CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER = 'x86_64-w64-mingw32-gcc'
  }
  console.log(`\n== ${platform} (${target})`)
  execFileSync('npx', args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...extra } })
  const pkg = path.join(root, 'npm', platform)
  const { files } = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'))
  for (const file of files) {
    // napi names the Windows file after the triple it built (`-gnu`).
    const built = windows ? file.replace('-msvc.node', '-gnu.node') : file
    fs.copyFileSync(path.join(out, built), path.join(pkg, file))
  }
  console.log(`   ${files.join(', ')} -> npm/${platform}/`)
}

const wanted = process.argv.slice(2)
const unknown = wanted.filter((p) => !TARGETS.some((t) => t.platform === p))
if (unknown.length > 0) {
  console.error(`unknown platform(s): ${unknown.join(', ')}; known: ${TARGETS.map((t) => t.platform).join(', ')}`)
  process.exit(2)
}
for (const t of TARGETS) if (wanted.length === 0 || wanted.includes(t.platform)) build(t)
console.log(`\nbuilt ${binaryName} for ${wanted.length || TARGETS.length} platform(s)`)
