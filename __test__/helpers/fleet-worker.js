'use strict'
// A fleet worker process for fleet-processes.spec.js, driven over IPC:
//   { op: 'start', url, key }                      → { op: 'started' }
//   { op: 'record', solves, failEvery, syncEvery } → { op: 'recorded' } (syncing every syncEvery solves, and at the end)
//   { op: 'unsent', successes, failures }          → { op: 'holding', fleet } (recorded, not synced)
//   { op: 'report' }                               → { op: 'report', report } (after a sync)
// The spec ends it with SIGKILL.
const { connect, fleetTracker, T0 } = require('./fleet')

let tracker
process.on('message', async (msg) => {
  if (msg.op === 'start') {
    const c = await connect('ioredis', msg.url)
    tracker = fleetTracker(c.redis, msg.key)
    process.send({ op: 'started' })
  } else if (msg.op === 'record') {
    for (let i = 1; i <= msg.solves; i++) {
      tracker.record(i % msg.failEvery !== 0)
      if (i % 10_000 === 0) tracker.advanceTo(T0 + i / 10_000)
      if (i % msg.syncEvery === 0) await tracker.sync()
    }
    await tracker.sync()
    process.send({ op: 'recorded' })
  } else if (msg.op === 'unsent') {
    tracker.recordMany(msg.successes, msg.failures)
    process.send({ op: 'holding', fleet: tracker.report().fleet })
  } else if (msg.op === 'report') {
    await tracker.sync()
    process.send({ op: 'report', report: tracker.report() })
  }
})
