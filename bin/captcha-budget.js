#!/usr/bin/env node
'use strict'
// The `captcha-budget` command line. Each subcommand lives in lib/cli/commands/<name>.js
// and exports `register(program)`; this file only wires them to commander.
const fs = require('node:fs')
const path = require('node:path')
const { Command } = require('commander')
const { version } = require('../package.json')

// A reader that stops early (`| head`, `| true`) closes the pipe: stop writing and
// exit quietly, as Unix tools do, instead of an EPIPE stack trace.
process.stdout.on('error', (err) => {
  if (err.code !== 'EPIPE') throw err
  process.exit(0)
})

const program = new Command()
program
  .name('captcha-budget')
  .description('SLO error budgets for CAPTCHA-solve workers')
  .version(version)
  .showHelpAfterError()
  // No command, an unknown command or option: a usage error, exit 2 as every
  // subcommand does for bad input (commander's own code is 1). --help and
  // --version still exit 0. Subcommands inherit this; each also sets its own.
  .exitOverride((err) => process.exit(err.exitCode === 0 ? 0 : 2))

const commandsDir = path.join(__dirname, '..', 'lib', 'cli', 'commands')
for (const file of fs
  .readdirSync(commandsDir)
  .filter((f) => f.endsWith('.js'))
  .sort()) {
  require(path.join(commandsDir, file)).register(program) // each command registers its flags
}

program.parseAsync(process.argv).catch((err) => {
  console.error(`captcha-budget: ${err.message}`)
  process.exitCode = process.exitCode || 2
})
