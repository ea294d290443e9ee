#!/usr/bin/env node
// Generates npm/<platform>/ for every target of package.json `napi.targets`:
// napi's own `create-npm-dirs` (package.json with os/cpu/libc, README), plus the
// licence every package ships and, for a target built with another tool chain
// than its name says (Windows: -gnu shipped as -msvc), a line saying so.
//   npm run npm-dirs                 writes npm/ (keeps the binaries in it)
//   node scripts/npm-dirs.js DIR     writes into DIR instead (the spec compares)
// npm/ is never edited by hand: change package.json and run this.
'use strict'

const { execFileSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { TARGETS } = require('./targets.js')

const root = path.join(__dirname, '..')

/**
 * Writes the generated folders into `out` (created if missing); returns their names.
 * @param {string} out
 */
function generate(out) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'npm-dirs-'))
  try {
    fs.copyFileSync(path.join(root, 'package.json'), path.join(work, 'package.json'))
    const napi = path.join(path.dirname(require.resolve('@napi-rs/cli/package.json')), 'dist', 'cli.js')
    execFileSync(process.execPath, [napi, 'create-npm-dirs', '--cwd', work], { stdio: 'ignore' })
    const names = []
    for (const target of TARGETS) {
      const from = path.join(work, 'npm', target.platform)
      const to = path.join(out, target.platform)
      fs.mkdirSync(to, { recursive: true })
      for (const file of fs.readdirSync(from)) fs.copyFileSync(path.join(from, file), path.join(to, file))
      fs.copyFileSync(path.join(root, 'LICENSE'), path.join(to, 'LICENSE'))
      if (target.rustTarget !== target.triple) {
        const readme = path.join(to, 'README.md')
        fs.appendFileSync(
          readme,
          `\nBuilt with the \`${target.rustTarget}\` tool chain (mingw-w64) and published under the \`-${target.abi}\` name the loader asks for on the official Node; Node-API is a C ABI, so the DLL works with the MSVC-built \`node.exe\`.\n`,
        )
      }
      names.push(target.platform)
    }
    return names
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

module.exports = { generate }

if (require.main === module) {
  const out = process.argv[2] ? path.resolve(process.argv[2]) : path.join(root, 'npm')
  console.log(`npm/: ${generate(out).join(', ')}`)
}
