'use strict'
// Loopback ports for the servers the specs start. A port found free can be
// taken before the server binds it (an outgoing connection of a spec running
// alongside gets one from the same range), so starting on a fresh port is
// retried when the bind is refused.
const net = require('node:net')

/** A loopback port nothing listened on a moment ago. */
function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.unref()
    server.on('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

const ADDRESS_IN_USE = /address already in use/i

/**
 * `launch(port)` on a free port; again on another one, up to `tries` times in
 * all, while it rejects because the port was taken in between.
 */
async function onFreePort(launch, tries = 5) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launch(await freePort())
    } catch (err) {
      if (attempt >= tries || !ADDRESS_IN_USE.test(err?.message)) throw err
    }
  }
}

module.exports = { freePort, onFreePort, ADDRESS_IN_USE }
