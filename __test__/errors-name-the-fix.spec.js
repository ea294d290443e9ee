// Errors a new user meets first name the fix, not only the fault (issue 35): a
// percentage for a fraction, a duration written as text, a family record without
// its labels, a misspelt config key.
const test = require('ava')
const { execFile } = require('node:child_process')
const path = require('node:path')
const { ErrorBudgetTracker, BudgetFamily } = require('..')
const { didYouMean } = require('../lib/util/suggest.js')

test('{ targetRate: 99 } says it is a fraction, not a percentage: 0.99', (t) => {
  t.throws(() => new ErrorBudgetTracker({ targetRate: 99 }), {
    instanceOf: RangeError,
    code: 'ERR_OUT_OF_RANGE',
    message: 'config.targetRate must be in (0, 1], got 99: a fraction, not a percentage (such as 0.99 for 99 %)',
  })
  t.throws(() => new ErrorBudgetTracker({ warningThreshold: 50 }), {
    message: 'config.warningThreshold must be in [0, 1], got 50: a fraction, not a percentage (such as 0.5 for 50 %)',
  })
})

test("{ windowMs: '1h' } says milliseconds and the number to write", (t) => {
  t.throws(() => new ErrorBudgetTracker({ windowMs: '1h' }), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_TYPE',
    message: "config.windowMs must be a number of milliseconds, got string '1h' (write 3_600_000)",
  })
  // 24 × 3 600 000 = 86 400 000; 30 × 86 400 000 = 2 592 000 000.
  t.throws(() => new ErrorBudgetTracker({ windowMs: '24h' }), { message: /got string '24h' \(write 86_400_000\)$/ })
  t.throws(() => new ErrorBudgetTracker({ windowMs: '30d', resolutionMs: '10s' }), { message: /config\.windowMs .* \(write 2_592_000_000\)$/ })
  t.throws(() => new ErrorBudgetTracker({ windowMs: 'an hour' }), {
    message: 'config.windowMs must be a number of milliseconds (such as 3_600_000 for 1 h), got string',
  })
  // What it suggests is accepted.
  t.is(new ErrorBudgetTracker({ windowMs: 3_600_000 }).report().sloTarget, 0.95)
})

test('family.record(true) with the labels forgotten names the labels, and records nothing', (t) => {
  const family = new BudgetFamily({ labelNames: ['type', 'site'], clock: 'manual' })
  t.teardown(() => family.close())
  t.throws(() => family.record(true), {
    instanceOf: TypeError,
    code: 'ERR_INVALID_ARG_TYPE',
    message:
      'family.record(labels, success): the labels are missing (got only true); a family records per label set: family.record({ type: …, site: … }, true)',
  })
  t.throws(() => family.record(false), { message: /got only false\); .*family\.record\(\{ type: …, site: … \}, false\)$/ })
  t.is(family.size, 0)
})

test('an unknown config key gets a "did you mean", as the CLI\'s misspelt options do', (t) => {
  const known = /known keys: targetRate, windowMs, .*, fleet/
  for (const [key, meant] of [
    ['targetrate', 'targetRate'],
    ['windowMS', 'windowMs'],
    ['minEvent', 'minEvents'],
    ['target', 'targetRate'],
    ['window', 'windowMs'],
  ]) {
    const err = t.throws(() => new ErrorBudgetTracker({ [key]: 1 }), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_VALUE' })
    t.regex(err.message, known)
    t.true(err.message.startsWith(`unknown config key '${key}'; known keys: `), err.message)
    t.true(err.message.endsWith(`; did you mean '${meant}'?`), err.message)
    t.true(err.stack.includes(`did you mean '${meant}'?`))
  }
  t.false(t.throws(() => new ErrorBudgetTracker({ zzzzzzzzzz: 1 })).message.includes('did you mean'))
  // A family's options: its own keys are candidates too.
  t.throws(() => new BudgetFamily({ labelNames: ['type'], maxChild: 3 }), {
    message: /^unknown key 'maxChild' in new BudgetFamily\(options\): options; known keys: .*; did you mean 'maxChildren'\?$/,
  })
})

test('the library suggests what the CLI suggests for an option (one algorithm)', async (t) => {
  const cli = path.join(__dirname, '..', 'bin', 'captcha-budget.js')
  const stderr = await new Promise((resolve) => execFile(process.execPath, [cli, 'replay', 'x.jsonl', '--taget', '0.9'], (_, __, err) => resolve(err)))
  t.regex(stderr, /\(Did you mean --target\?\)/)
  t.is(didYouMean('taget', ['target', 'window', 'by']), "; did you mean 'target'?")
  t.is(didYouMean('windowz', ['windowa', 'windowb']), "; did you mean one of 'windowa', 'windowb'?") // both one edit away
  t.is(didYouMean('qqq', ['target']), '')
})
