// gate --prometheus reads at most 4 MiB of an answer: an endless body is cut
// off, the request aborted, and the gate exits 2 with a message that says so.
const test = require('ava')
const http = require('node:http')
const { cli } = require('../fixtures/prometheus-tools')

test('an endless answer from "Prometheus": cut off at 4 MiB, request aborted, exit 2', async (t) => {
  let sent = 0
  let closed = false
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    const pump = () => {
      while (!closed && sent < 256 * 1024 * 1024 && res.write(chunk)) sent += chunk.length
      if (!closed && sent < 256 * 1024 * 1024) res.once('drain', pump)
      else res.end()
    }
    res.on('close', () => (closed = true))
    pump()
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => server.close())
  const out = await cli(['gate', '--prometheus', `http://127.0.0.1:${server.address().port}`, '--slo', 'x'])
  t.is(out.code, 2, out.stderr)
  t.regex(out.stderr, /the answer is longer than 4194304 bytes \(HTTP 200\): not a gate query's vector, request aborted/)
  t.true(closed, 'the connection was closed by the gate')
  t.true(sent < 64 * 1024 * 1024, `sent ${sent} bytes before the gate hung up`)
})
