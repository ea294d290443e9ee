#!/usr/bin/env node
// `pretest` / `prestart`: in a clone the addon is built from source, once. The
// published package has no install script; there the platform package from
// optionalDependencies (or the WASI one) provides the binary.
'use strict'

const { execSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')
const { binaryName } = require('../package.json').napi
const built =
  fs.existsSync(path.join(root, 'native.js')) &&
  fs.existsSync(path.join(root, 'native.d.ts')) &&
  fs.readdirSync(root).some((f) => f.startsWith(`${binaryName}.`) && f.endsWith('.node'))

if (!built) {
  console.error('captcha-error-budget: no local build yet, building the addon from source (npm run build)')
  execSync('npm run build', { cwd: root, stdio: 'inherit' })
}
