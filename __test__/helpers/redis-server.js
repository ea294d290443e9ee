'use strict'
// Debian's redis-server for the fleet specs: a free loopback port, a temp
// directory, stopped by the spec (stop()) or, at the latest, when the test
// process exits.
const { spawn } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { findBinary, missingError, signalChild } = require('./external.js')
const { onFreePort } = require('./ports.js')

/**
 * Starts redis-server; resolves once it accepts connections.
 * @param {{ port?: number, dir?: string, appendonly?: boolean }} [options] reuse a port and dir to restart
 */
async function startRedis({ port, dir, appendonly = false } = {}) {
  // Looked up first: a spawn that fails leaves a child without a pid (below).
  const binary = findBinary('redis-server')
  if (binary === null) throw missingError('redis-server')
  dir ??= fs.mkdtempSync(path.join(os.tmpdir(), 'fleet-redis-'))
  // A restart keeps its port: a refused bind there is the spec's to see.
  if (port !== undefined) return launch(binary, port, dir, appendonly)
  return onFreePort((free) => launch(binary, free, dir, appendonly))
}

async function launch(binary, port, dir, appendonly) {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--daemonize', 'no']
  if (appendonly) args.push('--appendonly', 'yes', '--appendfsync', 'always')
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const stopAtExit = () => signalChild(child, 'SIGKILL')
  process.once('exit', stopAtExit)
  let log = ''
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      log += chunk
      if (log.includes('Ready to accept connections')) resolve()
    })
    // 'close', not 'exit': its last lines (why it stopped) may still be on their way.
    child.once('close', (code) => reject(new Error(`redis-server exited (${code}) before it was ready:\n${log}`)))
    child.once('error', reject)
  }).catch((err) => {
    process.removeListener('exit', stopAtExit)
    throw err
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  return {
    port,
    dir,
    url: `redis://127.0.0.1:${port}`,
    /** Stops it: SIGTERM (a clean shutdown) or SIGKILL. */
    async stop(signal = 'SIGTERM') {
      process.removeListener('exit', stopAtExit)
      if (signalChild(child, signal)) await exited
    },
  }
}

module.exports = { startRedis }
