#!/usr/bin/env node
// Packs the main package and every platform package into dist/ (after
// `npm run build` for the loader and `npm run artifacts` for the binaries).
// The packed main package lists the platform packages as optionalDependencies
// (the repository's package.json does not: `npm ci` in a clone would look for
// them before they are published) and carries no scripts, devDependencies or
// binary. Prints the tarball paths, main package first.
'use strict'

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')
const dist = path.join(root, 'dist')
const main = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))

/** `npm pack` of `dir` into dist/; the tarball's path and file list. */
function pack(dir) {
  const [info] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dist], { cwd: dir, encoding: 'utf8' }),
  )
  return { tarball: path.join(dist, info.filename), files: info.files.map((f) => f.path) }
}

function fail(message) {
  console.error(`pack:all: ${message}`)
  process.exit(1)
}

fs.rmSync(dist, { recursive: true, force: true })
fs.mkdirSync(dist)

const platforms = fs.readdirSync(path.join(root, 'npm')).sort()
const optionalDependencies = {}
const tarballs = []
for (const platform of platforms) {
  const dir = path.join(root, 'npm', platform)
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
const stage = path.join(root, 'target', 'pack-main')
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

for (const t of tarballs) console.log(path.relative(root, t))
