'use strict'
// External programs the specs use (Debian's redis-server and Prometheus): found
// on PATH before anything is spawned, skipped with one line naming the program
// and how to install it where it is missing, required under CI (CI=true), and
// never signalled without a pid.
const fs = require('node:fs')
const path = require('node:path')
const { skippedWith } = require('./skip.js')

/** How to install each program (Debian package names; `.ci/run` installs them). */
const INSTALL = {
  'redis-server': 'apt-get install -y redis-server',
  promtool: 'apt-get install -y prometheus',
  prometheus: 'apt-get install -y prometheus',
}

/** The absolute path of the executable `name` on PATH, or null. */
function findBinary(name) {
  for (const dir of (process.env.PATH || '').split(path.delimiter)) {
    if (dir === '') continue
    const file = path.join(dir, name)
    try {
      fs.accessSync(file, fs.constants.X_OK)
      if (fs.statSync(file).isFile()) return file
    } catch {}
  }
  return null
}

/**
 * Whether this run is CI, where a missing program fails instead of skipping: CI set
 * to anything but empty, `false` or `0` (`CI=false npm test` is a developer's run).
 */
function underCI(env = process.env) {
  const value = (env.CI ?? '').trim().toLowerCase()
  return value !== '' && value !== 'false' && value !== '0'
}

/** Why `name` is missing, in one line: the program and how to install it. */
function missing(name) {
  return `needs ${name}, which is not installed (${INSTALL[name] ?? `install ${name}`})`
}

/**
 * An Error for a spec that needs `name` where it is missing; thrown by the helpers
 * that start a program, before any spawn (under CI a missing program must fail).
 */
function missingError(name) {
  const err = new Error(`${missing(name)}; CI=true runs every spec, so it must be installed there`)
  err.code = 'ENOENT'
  return err
}

/**
 * `test` (ava's) when `name` is installed or under CI; elsewhere a stand-in on
 * which every test and hook of the file is a no-op, and one skipped test says
 * what is missing — so a spec file that needs a program skips in one line.
 * @param {import('ava').TestFn} test
 * @param {string} name
 * @param {string} file the spec's `__filename`, for that line
 */
function needs(test, name, file) {
  if (underCI() || findBinary(name)) return test
  test.skip(`${path.basename(file)}: every test ${missing(name)}`, () => {})
  const none = () => {}
  const stand = Object.assign(() => {}, { serial: none, skip: none, only: none, todo: none, failing: none })
  for (const hook of ['before', 'after', 'beforeEach', 'afterEach']) stand[hook] = Object.assign(() => {}, { always: none })
  stand.serial = Object.assign(() => {}, stand)
  return stand
}

/**
 * For one test in a file that mostly needs nothing: `test` when `name` is installed
 * or under CI, else a skip whose title says what is missing and how to install it.
 * @param {import('ava').TestFn} test
 * @param {string} name
 */
function needsFor(test, name) {
  return underCI() || findBinary(name) ? test : skippedWith(missing(name))
}

/**
 * Signals a child process only if it has a pid: a child whose spawn failed has
 * none (its 'error' may not be delivered yet), and `kill()` on it would signal
 * process group 0 — the caller's own (npm, the shell or CI step that ran it).
 * @param {import('node:child_process').ChildProcess} child
 * @param {NodeJS.Signals} [signal]
 * @returns {boolean} whether a signal was sent
 */
function signalChild(child, signal = 'SIGTERM') {
  if (!Number.isInteger(child.pid) || child.pid <= 0) return false
  if (child.exitCode !== null || child.signalCode !== null) return false
  return child.kill(signal)
}

module.exports = { INSTALL, underCI, findBinary, missing, missingError, needs, needsFor, signalChild }
