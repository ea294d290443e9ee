// Issue 23's table, row by row, with seed 1 (scripts/prng.js): the scenarios of
// `npm run bench:throttle` (benchmark/throttle-scenarios.js) through the default
// guard ('throttle'), beside what the table says of the others. Manual clock: no
// sleeps, the same counts on any machine.
const test = require('ava')
const { SCENARIOS } = require('../../benchmark/throttle-scenarios')

const SEED = 1
const row = (name) => SCENARIOS.find((s) => s.name === name)

test('cold start: at most 5 refusals in the hour (the guard before: ≈ 3 600)', async (t) => {
  const { value } = await row('cold start').run(SEED, 'throttle')
  t.true(value <= 5, `${value} refusals`)
  const before = await row('cold start').run(SEED, 'refuse')
  t.true(before.value > 3500, `'refuse': ${before.value} refusals`)
})

test('outage: failed attempts admitted while exhausted are at most 10 % of the attempts then (no guard: 100 %)', async (t) => {
  const { value, detail } = await row('outage').run(SEED, 'throttle')
  t.true(value > 0 && value <= 0.1, detail) // > 0: it does probe
  t.is((await row('outage').run(SEED, 'no guard')).value, 1)
})

test('outage, after recovery: at least 90 % admitted from 5 min to 2 h after (refuse: 0 %)', async (t) => {
  const { value, detail } = await row('outage, after recovery').run(SEED, 'throttle')
  t.true(value >= 0.9, detail)
  t.is((await row('outage, after recovery').run(SEED, 'refuse')).value, 0)
})

test('sustained degradation below the SLO: at most 10 % admitted once exhausted', async (t) => {
  const { value, detail } = await row('sustained degradation').run(SEED, 'throttle')
  t.true(value !== null && value <= 0.1, detail)
  t.true(value > 0, detail) // it keeps probing
})

test('family of 20 sites, one broken for 2 h: no refusal on the 19 healthy ones', async (t) => {
  const { value, detail } = await row('family of 20 sites').run(SEED, 'throttle')
  t.is(value, 0, detail)
  t.regex(detail, /broken site: [1-9]\d* refused/) // the broken one did throttle
})

// Issue 33: probes follow the attempt rate. A site attempted every 10 s was
// admitted 50 % of the time while failing (a probe per 20 s whatever the rate).
const { slowAttempts } = require('../../benchmark/throttle-scenarios')

test('slow attempts: at most 10 % of the broken site admitted while exhausted, at 6, 12 and 30 attempts a minute', async (t) => {
  for (const everyS of [10, 5, 2]) {
    const { during } = await slowAttempts(SEED, 'throttle', everyS)
    t.true(during.value !== null && during.value <= 0.1 && during.value > 0, `every ${everyS} s: ${during.detail}`)
  }
})

test('slow attempts, recovery: noticed (every attempt admitted again) within 10 min of the provider, at 6, 12 and 30 a minute', async (t) => {
  for (const everyS of [10, 5, 2]) {
    const { recovery } = await slowAttempts(SEED, 'throttle', everyS)
    t.true(recovery.value !== null && recovery.value <= 10, `every ${everyS} s: ${recovery.detail}`)
  }
})
