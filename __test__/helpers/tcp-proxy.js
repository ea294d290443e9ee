'use strict'
// A tiny TCP proxy between a Redis client and redis-server, to lose a reply
// (dropReplyOnce) or to make Redis unreachable for a while (down / up).
const net = require('node:net')

/** Starts a proxy on a free loopback port forwarding to `targetPort`. */
async function startProxy(targetPort) {
  const pairs = new Set()
  let dropArmed = false
  let dropped = null
  let refusing = false
  const server = net.createServer((client) => {
    if (refusing) return client.destroy()
    const upstream = net.connect(targetPort, '127.0.0.1')
    const pair = { client, upstream }
    pairs.add(pair)
    const end = () => {
      pairs.delete(pair)
      client.destroy()
      upstream.destroy()
    }
    client.on('error', end).on('close', end)
    upstream.on('error', end).on('close', end)
    client.on('data', (chunk) => upstream.write(chunk))
    upstream.on('data', (chunk) => {
      if (dropArmed) {
        // The request reached Redis and ran; its reply never reaches the client.
        dropArmed = false
        dropped.resolve(chunk)
        end()
        return
      }
      client.write(chunk)
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    /** Drops the next reply and closes that connection; resolves with the reply's bytes. */
    dropReplyOnce() {
      dropArmed = true
      let resolve
      const promise = new Promise((r) => (resolve = r))
      dropped = { resolve }
      return promise
    },
    /** Unreachable: every connection is cut and new ones are refused. */
    down() {
      refusing = true
      for (const { client, upstream } of pairs) {
        client.destroy()
        upstream.destroy()
      }
    },
    /** Reachable again. */
    up() {
      refusing = false
    },
    close: () =>
      new Promise((resolve) => {
        for (const { client, upstream } of pairs) {
          client.destroy()
          upstream.destroy()
        }
        server.close(resolve)
      }),
  }
}

module.exports = { startProxy }
