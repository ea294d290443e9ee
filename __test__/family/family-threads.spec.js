// BudgetFamily with `shared`: each child is a process-wide shared tracker, the same
// window in every worker thread whose family has that name.
const test = require('ava')
const path = require('node:path')
const { Worker } = require('node:worker_threads')
const { BudgetFamily } = require('../..')
const acrossThreads = require('../helpers/binding').nativeOnly('WASI instances do not share memory across threads')

function run(workerData) {
  const worker = new Worker(path.join(__dirname, '..', 'fixtures', 'workers', 'family.js'), { workerData })
  const ready = new Promise((resolve, reject) => {
    worker.once('message', resolve)
    worker.once('error', reject)
  })
  const done = ready.then(
    () =>
      new Promise((resolve, reject) => {
        worker.once('message', resolve)
        worker.once('error', reject)
        worker.postMessage('go')
      }),
  )
  return { ready, done, worker }
}

acrossThreads("a shared family: children recorded in three worker threads hold every thread's solves", async (t) => {
  const shared = `family-${process.pid}`
  const shop = { type: 'turnstile', site: 'shop.example' }
  const tickets = { type: 'turnstile', site: 'tickets.example' }
  // Held here first, so that the shared children outlive the workers' families.
  const main = new BudgetFamily({ labelNames: ['type', 'site'], shared, windowMs: 3_600_000 })
  main.labels(shop)
  main.labels(tickets)
  const workers = [
    run({ shared, sets: [shop, tickets], count: 1000, failEvery: 10 }),
    run({ shared, sets: [shop], count: 500, failEvery: 5 }),
    run({ shared, sets: [tickets], count: 200, failEvery: 2 }),
  ]
  await Promise.all(workers.map((w) => w.ready))
  const results = await Promise.all(workers.map((w) => w.done))
  await Promise.all(workers.map((w) => w.worker.terminate()))
  t.deepEqual(
    results.map((r) => r.size),
    [2, 1, 1],
  )
  // shop: 1000 (100 failing) + 500 (100 failing); tickets: 1000 (100) + 200 (100).
  t.deepEqual([main.labels(shop).total, main.labels(shop).failures], [1500, 200])
  t.deepEqual([main.labels(tickets).total, main.labels(tickets).failures], [1200, 200])
  main.close()
})

test('shared: a non-empty string, not with persist or fleet', (t) => {
  t.throws(() => new BudgetFamily({ labelNames: ['t'], shared: '' }), { code: 'ERR_INVALID_ARG_TYPE', message: /options\.shared must be a non-empty string/ })
  t.throws(() => new BudgetFamily({ labelNames: ['t'], shared: 'x', persist: { path: '/tmp/x.json' } }), {
    code: 'ERR_INVALID_ARG_VALUE',
    message: /options\.shared cannot be given with options\.persist/,
  })
  // A second family of that name with other options: the child's config differs, named.
  const a = new BudgetFamily({ labelNames: ['t'], shared: `mismatch-${process.pid}`, targetRate: 0.9 })
  const b = new BudgetFamily({ labelNames: ['t'], shared: `mismatch-${process.pid}`, targetRate: 0.95 })
  a.labels({ t: 'x' })
  t.throws(() => b.labels({ t: 'x' }), { code: 'ERR_INVALID_ARG_VALUE', message: /targetRate/ })
  t.is(b.size, 0)
  a.close()
  b.close()
})
