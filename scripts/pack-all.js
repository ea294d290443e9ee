#!/usr/bin/env node
// Packs the main package and the platform packages into dist/:
//   npm run pack:all    every platform (after `npm run build` for the loader and
//                       `npm run artifacts` for the binaries)
//   npm run pack:host   this machine's platform only, from `npm run build`'s binary
//                       (pack:host runs the build first): the two tarballs to install
//                       a build that is not published (docs/platforms.md)
// Options: --host (this platform only), --out DIR (instead of dist/).
// The packed main package lists the packed platform packages as optionalDependencies
// (the repository's package.json does not: `npm ci` in a clone would look for
// them before they are published) and carries no scripts, devDependencies or
// binary. Prints the tarball paths, main package first.
'use strict'

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')
const { parseArgs } = require('node:util')
const { hostSuffix } = require('../lib/native/addon-missing.js')

const root = path.join(__dirname, '..')
const { values: options } = parseArgs({ options: { host: { type: 'boolean' }, out: { type: 'string' } } })
const name = options.host ? 'pack:host' : 'pack:all'
const dist = path.resolve(root, options.out ?? 'dist')
const main = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))

/** `npm pack` of `dir` into dist/; the tarball's path and file list. */
function pack(dir) {
  const [info] = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dist], { cwd: dir, encoding: 'utf8' }))
  return { tarball: path.join(dist, info.filename), files: info.files.map((f) => f.path) }
}

function fail(message) {
  console.error(`${name}: ${message}`)
  process.exit(1)
}

/**
 * npm/<platform>/ as it is (pack:all: `npm run artifacts` put the binary there), or
 * for pack:host a staging copy with the host build's binary from the repository root.
 */
function platformDir(platform) {
  const dir = path.join(root, 'npm', platform)
  if (!options.host) return dir
  const stage = path.join(root, 'target', 'pack-host', platform)
  fs.rmSync(stage, { recursive: true, force: true })
  fs.cpSync(dir, stage, { recursive: true })
  const { files } = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
  for (const file of files.filter((f) => f.endsWith('.node'))) {
    if (!fs.existsSync(path.join(root, file))) fail(`${file} is missing: run \`npm run build\` first`)
    fs.copyFileSync(path.join(root, file), path.join(stage, file))
  }
  return stage
}

// The registry page resolves README's relative links through `repository`; no URL is
// guessed here, but a package for publishing says that it lacks one.
if (!options.host && (!main.repository || !main.homepage)) {
  console.error(`${name}: package.json has no repository / homepage: set them before publishing, or README's links lead nowhere on the registry page`)
}

let platforms = fs.readdirSync(path.join(root, 'npm')).sort()
if (options.host) {
  const host = hostSuffix()
  if (!platforms.includes(host))
    fail(`no platform package for ${host} (known: ${platforms.join(', ')}); the WebAssembly build: npm run artifacts -- wasm32-wasi && npm run pack:all`)
  platforms = [host]
}

fs.rmSync(dist, { recursive: true, force: true })
fs.mkdirSync(dist, { recursive: true })

const optionalDependencies = {}
const tarballs = []
for (const platform of platforms) {
  const dir = platformDir(platform)
  const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'))
  const missing = pkg.files.filter((f) => !fs.existsSync(path.join(dir, f)))
  if (missing.length > 0) fail(`npm/${platform} lacks ${missing.join(', ')}: run \`npm run artifacts\` first`)
  if (pkg.version !== main.version) fail(`npm/${platform} is ${pkg.version}, the main package ${main.version}`)
  optionalDependencies[pkg.name] = pkg.version
  tarballs.push(pack(dir).tarball)
}

// The main package from a staging copy of exactly the files it publishes.
for (const f of ['native.js', 'native.d.ts']) {
  if (!fs.existsSync(path.join(root, f))) fail(`${f} is missing: run \`npm run build\` first`)
}
// Without scripts: `prepack` refuses a plain `npm pack` of the repository (scripts/refuse-plain-pack.js).
const listed = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' }))[0]
const stage = path.join(root, 'target', options.host ? 'pack-host-main' : 'pack-main')
fs.rmSync(stage, { recursive: true, force: true })
for (const { path: file } of listed.files) {
  if (/\.(node|wasm)$/.test(file)) fail(`the main package would ship the binary ${file}`)
  fs.mkdirSync(path.dirname(path.join(stage, file)), { recursive: true })
  fs.copyFileSync(path.join(root, file), path.join(stage, file))
}
const published = { ...main, optionalDependencies }
delete published.scripts
delete published.devDependencies
fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(published, null, 2)}\n`)
tarballs.unshift(pack(stage).tarball)

for (const t of tarballs) console.log(path.relative(process.cwd(), t))
