import test from 'ava'
import { createRequire } from 'node:module'
import { ErrorBudgetTracker } from 'captcha-error-budget'
import * as namespace from 'captcha-error-budget'

const require = createRequire(import.meta.url)

test('ESM named import and CommonJS require give the same class', (t) => {
  const cjs = require('captcha-error-budget')
  t.is(ErrorBudgetTracker, cjs.ErrorBudgetTracker)
  t.is(namespace.ErrorBudgetTracker, ErrorBudgetTracker)
  const tracker = new ErrorBudgetTracker()
  tracker.record(true)
  t.is(tracker.total, 1)
})
