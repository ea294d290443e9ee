'use strict'
// What to say when the addon cannot be loaded: which platform package was looked
// for and how to get it, instead of the generated loader's generic "npm has a
// bug" advice (lib/load-native.js throws it).
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')
const ARCH = { x86_64: 'x64', aarch64: 'arm64' }
const OS = { linux: 'linux', darwin: 'darwin', windows: 'win32' }

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

/**
 * The Error for an addon that cannot be loaded (`code` ERR_MODULE_NOT_FOUND, the
 * loader's error as `cause`).
 * @param {unknown} cause
 * @param {{ suffix?: string, clone?: boolean }} [where] this host, unless given (for the specs)
 */
function addonMissing(cause, { suffix = hostSuffix(), clone = fs.existsSync(path.join(root, 'Cargo.toml')) } = {}) {
  const { name, version, napi } = require('../package.json')
  const wanted = `${name}-${suffix}`
  const wasi = `npm install ${name}@${version} ${name}-wasm32-wasi@${version} --cpu=wasm32`
  const lines = [`${name} could not load its native addon for ${suffix}.`]
  if (clone) {
    lines.push('In a clone of the repository, build it from source: npm run build (needs Rust; see CONTRIBUTING.md).')
  } else if (napi.targets.map(suffixOf).includes(suffix)) {
    lines.push(
      `It comes from the optional dependency ${wanted}@${version}, which is not installed: npm skips optional`,
      'dependencies with --omit=optional (or --no-optional), and a tarball made by a plain `npm pack` of the',
      'repository has none (the packages are made with `npm run pack:all`). Install it:',
      `  npm install ${wanted}@${version}`,
      `or the WebAssembly build, which runs anywhere (slower): ${wasi}`,
    )
  } else {
    lines.push(`No prebuilt binary exists for ${suffix}; install the WebAssembly build (npm skips it unless asked):`, `  ${wasi}`)
  }
  const err = new Error(lines.join('\n'))
  err.code = 'ERR_MODULE_NOT_FOUND'
  err.cause = cause
  return err
}

module.exports = { suffixOf, hostSuffix, addonMissing }
