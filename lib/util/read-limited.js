'use strict'
// Input read with a bound. Every answer this package reads from a server
// (CaptchaAI's in.php/res.php, Prometheus's query API) is small, so a larger one
// — an endless body, a huge answer, a gzip bomb — is cut off and the request
// aborted. Every file the CLI reads (a snapshot, an SLO spec, an alert policy) is
// a regular file or stdin, read to at most its bound: never a FIFO or a device,
// which could block or never end.
const fs = require('node:fs')

/**
 * The body as text, or null once it passes `limit` bytes (as decompressed by
 * fetch): the stream is then cancelled, which aborts the request.
 * @param {Response} response
 * @param {number} limit
 * @returns {Promise<string | null>}
 */
async function readLimited(response, limit) {
  if (response.body === null) return ''
  const reader = response.body.getReader()
  const chunks = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > limit) {
      reader.cancel().catch(() => {})
      return null
    }
    chunks.push(value)
  }
  return new TextDecoder().decode(Buffer.concat(chunks))
}

/** `bytes` as the messages write a bound: `4 MiB`. */
const mebibytes = (bytes) => `${bytes / (1024 * 1024)} MiB`

/**
 * A file's text, or stdin's (`file` '-' when `stdin` is allowed), read
 * synchronously to at most `maxBytes` bytes. A named file must be a regular file
 * (opened non-blocking, so a FIFO is refused, not waited on); stdin may be a pipe,
 * a file or a terminal, never a device such as /dev/zero. Throws an Error whose
 * message says why (`what` names the input: 'a snapshot'), or fs's own error
 * (ENOENT, EACCES).
 * @param {string} file
 * @param {{ maxBytes: number, what: string, stdin?: boolean }} options
 * @returns {string}
 */
function readFileLimited(file, { maxBytes, what, stdin = true }) {
  const tooLarge = () => new Error(`larger than the ${mebibytes(maxBytes)} (${maxBytes} bytes) ${what} may hold`)
  const fromStdin = stdin && file === '-'
  const fd = fromStdin ? 0 : fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0))
  try {
    const stat = fs.fstatSync(fd)
    const device = stat.isBlockDevice() || (stat.isCharacterDevice() && !require('node:tty').isatty(fd))
    if (fromStdin && device) {
      throw new Error(`stdin is a device (such as /dev/null or /dev/zero), not ${what}: pipe or redirect ${what} file into it`)
    }
    if (!fromStdin && !stat.isFile()) {
      throw new Error(`is not a regular file (a FIFO, device or directory?): give ${what} file${stdin ? ", or '-' for stdin" : ''}`)
    }
    if (stat.isFile() && stat.size > maxBytes) throw tooLarge()
    // Read to the end, never past the maximum (a file may grow, stdin has no size).
    const chunks = []
    let total = 0
    for (;;) {
      const buf = Buffer.allocUnsafe(Math.min(1 << 20, maxBytes + 1 - total))
      let n
      try {
        n = fs.readSync(fd, buf, 0, buf.length, null)
      } catch (err) {
        if (err.code !== 'EAGAIN') throw err
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10) // stdin not ready yet
        continue
      }
      if (n === 0) break
      chunks.push(buf.subarray(0, n))
      total += n
      if (total > maxBytes) throw tooLarge()
    }
    return Buffer.concat(chunks, total).toString('utf8')
  } finally {
    if (!fromStdin) fs.closeSync(fd)
  }
}

module.exports = { readLimited, readFileLimited }
