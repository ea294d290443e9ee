// Issue 20, item 17: a tracker with listeners stays alive until close() or its last
// off() (like an interval), so trackers dropped without close() add up. That pinning
// is made visible as Node's MaxListenersExceededWarning is: one process warning when
// 1000 trackers of the process are pinned at once. In a child process: the count is
// process-wide, and ava runs spec files as threads of one process.
const test = require('ava')
const path = require('node:path')
const { execFile } = require('node:child_process')

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'pinned-warning.js')

test('one PinnedTrackersWarning when 1000 trackers with listeners are alive at once; close() and off() unpin', async (t) => {
  const stdout = await new Promise((resolve, reject) => {
    execFile(process.execPath, [FIXTURE], (error, out, stderr) => (error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(out)))
  })
  const { counts, warnings } = JSON.parse(stdout)
  // 999 pinned: none; 9 closed, 1 off() and 10 more: 999 again, none; the 1000th: one; 1000 more: still one.
  t.deepEqual(counts, [0, 0, 1, 1])
  t.deepEqual(warnings, [
    {
      name: 'PinnedTrackersWarning',
      code: 'CAPTCHA_BUDGET_PINNED',
      message:
        '1000 ErrorBudgetTracker objects with listeners are alive: a tracker with listeners stays alive (like an interval) until close() or its last off(), even with no reference to it. close() every tracker you drop',
    },
  ])
})
