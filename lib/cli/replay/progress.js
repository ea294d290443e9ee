'use strict'
// A progress bar on stderr for long replays, only when stderr is a terminal:
// by bytes for a file (its size is known), a running count for stdin. It
// appears after half a second, so short inputs never flash one.
const fs = require('node:fs')
const cliProgress = require('cli-progress')

const DELAY_MS = 500

/**
 * Returns `{ update({ bytes, lines }), stop() }`; a no-op unless stderr is a TTY and `enabled`.
 * @param {string} input a path or '-'
 */
function progressBar(input, enabled = true) {
  if (!enabled || !process.stderr.isTTY) return { update() {}, stop() {} }
  const size = input === '-' ? 0 : (fs.statSync(input, { throwIfNoEntry: false })?.size ?? 0)
  const started = Date.now()
  let bar = null
  return {
    update({ bytes, lines }) {
      if (bar === null) {
        if (Date.now() - started < DELAY_MS) return
        const format = size > 0 ? 'replay |{bar}| {percentage}% · {lines} lines · ETA {eta_formatted}' : 'replay · {lines} lines · {mb} MB'
        bar = new cliProgress.SingleBar({ format, stream: process.stderr, hideCursor: true, clearOnComplete: true }, cliProgress.Presets.shades_classic)
        bar.start(size || 1, 0, { lines: 0, mb: 0 })
      }
      bar.update(size > 0 ? Math.min(bytes, size) : 0, { lines: lines.toLocaleString('en-US'), mb: (bytes / 1e6).toFixed(1) })
    },
    stop() {
      if (bar !== null) bar.stop()
    },
  }
}

module.exports = { progressBar }
