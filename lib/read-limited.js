'use strict'
// A fetch response's body, bounded: every answer this package reads from a server
// (CaptchaAI's in.php/res.php, Prometheus's query API) is small, so a larger one
// — an endless body, a huge answer, a gzip bomb — is cut off and the request aborted.

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

module.exports = { readLimited }
