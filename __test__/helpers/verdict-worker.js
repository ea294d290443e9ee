'use strict'
// A fleet worker process for verdicts-fleet.spec.js, driven over IPC:
//   { op: 'start', url, key, at }        → { op: 'started' } (a manual clock at `at`, synced once)
//   { op: 'record', successes, at }      → { op: 'recorded' } (recorded at `at`, then synced)
//   { op: 'reject', at, times }          → { op: 'rejected', answers } (`times` rejections at `at`, then synced)
//   { op: 'report', at }                 → { op: 'report', report } (its clock moved to `at`, after a sync)
// The spec ends it with SIGKILL.
const { connect, fleetTracker } = require('./fleet')

let tracker
process.on('message', async (msg) => {
  if (msg.op === 'start') {
    const c = await connect('ioredis', msg.url)
    tracker = fleetTracker(c.redis, msg.key, { at: msg.at })
    await tracker.sync()
    process.send({ op: 'started' })
  } else if (msg.op === 'record') {
    tracker.recordMany(msg.successes, 0, msg.at)
    await tracker.sync()
    process.send({ op: 'recorded' })
  } else if (msg.op === 'reject') {
    const answers = []
    for (let i = 0; i < msg.times; i++) answers.push(tracker.reject(msg.at))
    await tracker.sync()
    process.send({ op: 'rejected', answers })
  } else if (msg.op === 'report') {
    // Every worker's view at one time: a bucket later than a worker's clock waits for it.
    tracker.advanceTo(msg.at)
    await tracker.sync()
    process.send({ op: 'report', report: tracker.report() })
  }
})
