'use strict'
// What to say when the addon cannot be loaded: which platform package was looked
// for and how to get it, instead of the generated loader's generic "npm has a
// bug" advice (lib/native/load-native.js throws it).
const fs = require('node:fs')
const path = require('node:path')
const { name, version, napi } = require('../../package.json')
const { moduleNotFound } = require('../util/errors.js')

const root = path.join(__dirname, '..')
const ARCH = { x86_64: 'x64', aarch64: 'arm64' }
const OS = { linux: 'linux', darwin: 'darwin', windows: 'win32' }
const PLATFORMS_PAGE = 'docs/platforms.md#a-build-that-is-not-published'

/** A target triple of package.json `napi.targets` as its platform package's suffix (napi-rs's naming). */
function suffixOf(triple) {
  if (triple.startsWith('wasm32-')) return 'wasm32-wasi'
  const [cpu, , os, abi] = triple.split('-')
  return [OS[os] ?? os, ARCH[cpu] ?? cpu, abi].filter(Boolean).join('-')
}

/** This process's platform-package suffix (`linux-x64-gnu`, `darwin-arm64`, `win32-x64-msvc`, …). */
function hostSuffix() {
  if (process.platform === 'linux') {
    const glibc = process.report?.getReport?.().header?.glibcVersionRuntime
    return `linux-${process.arch}-${glibc ? 'gnu' : 'musl'}`
  }
  if (process.platform === 'win32') return `win32-${process.arch}-msvc`
  return `${process.platform}-${process.arch}`
}

/** Whether the WASI package resolves from this package (installed, or linked in a clone). */
function wasiInstalled(name) {
  try {
    require.resolve(`${name}-wasm32-wasi/package.json`, { paths: [root] })
    return true
  } catch {
    return false
  }
}

/**
 * The Error for an addon that cannot be loaded (`code` ERR_MODULE_NOT_FOUND, the
 * loader's error as `cause`).
 * @param {unknown} cause
 * @param {{ suffix?: string, clone?: boolean, forcedWasi?: boolean }} [where] this host, unless
 *   given (for the specs); `forcedWasi`: the loader was told to load only the WASI build
 *   (NAPI_RS_FORCE_WASI=error) and could not
 */
function addonMissing(
  cause,
  {
    suffix = hostSuffix(),
    clone = fs.existsSync(path.join(root, 'Cargo.toml')),
    forcedWasi = cause instanceof Error && String(cause.message).startsWith('WASI binding not found'),
  } = {},
) {
  const wanted = `${name}-${suffix}`
  // A version that is not published (a clone's, or an install of the clone's folder) is
  // not on the registry: the command above would fail with a 404.
  const fromClone = `A version that is not published (a clone's build) comes from the clone instead: there, npm run pack:host, then npm install both tarballs it writes into dist/ (${PLATFORMS_PAGE}).`
  // --cpu applies to optional dependencies only: npm then takes the wasm32 package of
  // the main package's optionalDependencies and skips the native ones. Naming the WASI
  // package itself makes it a regular dependency, which npm checks against the real
  // CPU and refuses (EBADPLATFORM).
  const wasi = `npm install ${name}@${version} --cpu=wasm32`
  const again =
    "npm decides optional packages again on every install: pass --cpu=wasm32 to later `npm install` and `npm ci` too, or put cpu=wasm32 in the project's .npmrc"
  if (forcedWasi) {
    const lines = [`${name} could not load its WebAssembly build, which NAPI_RS_FORCE_WASI=error asks for.`]
    if (wasiInstalled(name)) {
      lines.push(`${name}-wasm32-wasi is installed but failed to load (the loader's error is the cause); it needs Node 20.19, 22.13 or >= 23.5.`)
    } else if (clone) {
      lines.push('In a clone of the repository, build it (npm run artifacts -- wasm32-wasi) and link it into node_modules: see docs/building-targets.md.')
    } else {
      lines.push(`${name}-wasm32-wasi@${version} is not installed: npm skips it unless told the CPU is wasm32:`, `  ${wasi}`, `(${again}).`)
    }
    return moduleNotFound(lines.join('\n'), cause)
  }
  const lines = [`${name} could not load its native addon for ${suffix}.`]
  if (clone) {
    lines.push(
      'In a clone of the repository, build it from source: npm run build (needs Rust; see CONTRIBUTING.md).',
      `To use the clone's build in another project: npm run pack:host there, then npm install the two tarballs it writes into dist/ (${PLATFORMS_PAGE}).`,
    )
  } else if (napi.targets.map(suffixOf).includes(suffix)) {
    lines.push(
      `It comes from the optional dependency ${wanted}@${version}, which is not installed: npm skips optional`,
      'dependencies with --omit=optional (or --no-optional), and a tarball made by a plain `npm pack` of the',
      'repository has none (the packages are made with `npm run pack:all`). Install it:',
      `  npm install ${wanted}@${version}`,
      `or the WebAssembly build, which runs anywhere (slower), in place of it: ${wasi}`,
      `(${again}).`,
      fromClone,
    )
  } else {
    lines.push(
      `No prebuilt binary exists for ${suffix}; install the WebAssembly build, which npm skips unless told the CPU is wasm32:`,
      `  ${wasi}`,
      `(${again}).`,
    )
  }
  return moduleNotFound(lines.join('\n'), cause)
}

module.exports = { suffixOf, hostSuffix, addonMissing }
