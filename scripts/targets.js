#!/usr/bin/env node
// The one list of targets: package.json `napi.targets`, read here and turned
// into what each script needs — the npm/<platform>/ folder, the triple Cargo
// builds (and how), and what the static checks expect of the binary. The
// recipes follow from a target's OS, architecture and ABI (napi's own
// parseTriple), never from a list of triples: adding a target is a line in
// package.json and `npm run npm-dirs`.
//   node scripts/targets.js            the targets as JSON
//   node scripts/targets.js --rustup   the Rust targets to install, one line
'use strict'

const { parseTriple } = require('@napi-rs/cli')
const pkg = require('../package.json')

/** Minimum macOS by architecture (the first macOS each runs). */
const MACOS_MIN = { x64: '10.13', arm64: '11.0' }
/** What readelf and llvm-objdump call each architecture. */
const ELF_MACHINE = { x64: 'Advanced Micro Devices X86-64', arm64: 'AArch64' }
const MACHO_CPU = { x64: 'X86_64', arm64: 'ARM64' }
/** The glibc a -gnu Linux build links against at most (cargo-zigbuild's suffix). */
const GLIBC_FLOOR = '2.17'

/**
 * One target of package.json, with its build recipe and its checks:
 * `platform` (the npm/ folder and the loader's name), `rustTarget` (what
 * rustup installs), `buildTarget` (what `napi build --target` gets), `zig`,
 * `windows` (mingw-w64 cross-link), `env`, and `check` (what
 * scripts/check-binaries.js looks at: 'elf-gnu', 'elf-musl', 'macho', 'pe'
 * or 'run' for the targets .ci/platforms runs).
 * @param {string} triple
 */
function targetOf(triple) {
  const { platformArchABI: platform, platform: os, arch, abi } = parseTriple(triple)
  const base = { triple, platform, os, arch, abi, rustTarget: triple, buildTarget: triple, zig: false, windows: false, env: {} }
  if (os === 'linux' && abi === 'gnu')
    return { ...base, buildTarget: `${triple}.${GLIBC_FLOOR}`, zig: true, check: 'elf-gnu', machine: ELF_MACHINE[arch], glibc: GLIBC_FLOOR }
  if (os === 'linux' && abi === 'musl') return { ...base, zig: true, check: 'elf-musl', machine: ELF_MACHINE[arch] }
  if (os === 'darwin')
    return { ...base, zig: true, env: { MACOSX_DEPLOYMENT_TARGET: MACOS_MIN[arch] }, check: 'macho', cpu: MACHO_CPU[arch], minos: MACOS_MIN[arch] }
  if (os === 'win32') {
    // Built for -gnu (the MSVC SDK cannot be downloaded here), shipped under the
    // -msvc name the loader asks for: Node-API is a C ABI.
    const gnu = triple.replace(/-msvc$/, '-gnu')
    return { ...base, rustTarget: gnu, buildTarget: gnu, windows: true, check: 'pe' }
  }
  if (os === 'wasi') return { ...base, check: 'run' }
  throw new Error(`scripts/targets.js: no build recipe for ${triple} (os ${os}, arch ${arch}, abi ${abi}): add one by OS/ABI`)
}

/** Every target of package.json, in its order. */
const TARGETS = Object.freeze(pkg.napi.targets.map(targetOf))

module.exports = { TARGETS, targetOf }

if (require.main === module) {
  if (process.argv.includes('--rustup')) console.log([...new Set(TARGETS.map((t) => t.rustTarget))].join(' '))
  else console.log(JSON.stringify(TARGETS, null, 2))
}
