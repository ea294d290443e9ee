// What the docs say about shared trackers and snapshots, checked: snapshot() on
// a shared handle works and holds every handle's events; restore() of it gives
// a tracker of its own; persist and snapshot in a shared config are refused.
const test = require('ava')
const { ErrorBudgetTracker } = require('../..')

test('snapshot() of a shared tracker: the whole shared window, restored as a tracker of its own', (t) => {
  const a = ErrorBudgetTracker.shared('snapshot-spec', { clock: 'manual' })
  const b = ErrorBudgetTracker.shared('snapshot-spec')
  a.record(false, 1000)
  b.record(true, 2000)
  const json = b.snapshot()
  const restored = ErrorBudgetTracker.restore(json, { clock: 'manual' })
  t.deepEqual([restored.total, restored.failures, restored.now], [2, 1, 2000])
  // Its own: records into it do not reach the shared tracker.
  restored.record(true, 3000)
  t.deepEqual([a.total, restored.total], [2, 3])
  t.throws(() => ErrorBudgetTracker.shared('snapshot-spec', { snapshot: json }), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_VALUE' })
  t.throws(() => ErrorBudgetTracker.shared('snapshot-spec-2', { persist: { path: 'never-written.json' } }), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_VALUE',
    message: /^config\.persist cannot be given to a shared tracker/,
  })
  a.close()
  b.close()
  restored.close()
})
