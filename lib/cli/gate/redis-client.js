'use strict'
// The gate's Redis connection (`gate --redis`): whichever client the caller
// installed, ioredis or node-redis (none is bundled), read-only use.

// What went wrong connecting: the client's own last error (ECONNREFUSED, WRONGPASS, …)
// rather than the "Connection is closed." that connect() rejects with after it.
function connectError(err, last) {
  const cause = last ?? err
  const why = cause?.code && !String(cause.message).includes(cause.code) ? `${cause.code}: ${cause.message}` : cause?.message
  return new Error(`cannot connect: ${why ?? String(cause)}`, { cause })
}

/** Loads whichever client is installed and connects it to `url`. */
async function connect(url) {
  let Redis
  try {
    // Optional peer dependencies: loaded only when the gate connects, whichever is installed.
    Redis = require('ioredis')
  } catch {}
  if (Redis !== undefined) {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null })
    let last
    redis.on('error', (err) => (last = err))
    try {
      await redis.connect()
    } catch (err) {
      redis.disconnect()
      throw connectError(err, last)
    }
    return { send: (args) => redis.call(...args), close: () => redis.disconnect() }
  }
  let nodeRedis
  try {
    // The other optional peer dependency, when ioredis is not installed.
    nodeRedis = require('redis')
  } catch {
    throw new Error('--redis needs the ioredis or redis (node-redis v5+) package installed')
  }
  const redis = nodeRedis.createClient({ url, socket: { reconnectStrategy: false } })
  let last
  redis.on('error', (err) => (last = err))
  try {
    await redis.connect()
  } catch (err) {
    try {
      redis.destroy()
    } catch {}
    throw connectError(err, last)
  }
  return { send: (args) => redis.sendCommand(args), close: () => redis.destroy() }
}

module.exports = { connect }
