// The figures docs/cli.md's prose quotes from a command, checked by running the command
// the prose names, as written: if the sample, the replay or the prose changes, this fails
// (the ```js examples are docs.spec.js's; prose is not run, so it is checked here).
const test = require('ava')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { replayJson } = require('./fixtures/replay/cli')

const ROOT = path.join(__dirname, '..')
const CLI_MD = fs.readFileSync(path.join(ROOT, 'docs', 'cli.md'), 'utf8').replace(/\s+/g, ' ')

test("docs/cli.md: the sample replayed by type and site — both sites' Turnstile exhausted, and the worst burn rates it quotes", async (t) => {
  const quoted = CLI_MD.match(
    /`replay (sample\/solves\.jsonl[^`]*)` shows both sites' Turnstile budgets exhausted, the shop's far worse \((?:worst )?burn rate ([\d.]+) against ([\d.]+)[;)]/,
  )
  t.truthy(quoted, 'docs/cli.md no longer quotes the replay by type and site as this spec reads it: update the spec with the prose')
  if (!quoted) return
  const [, command, shop, tickets] = quoted
  const r = await replayJson(command.split(' '), { cwd: ROOT })
  const tracker = (site) => r.trackers.find((s) => s.name === `type=turnstile,site=${site}`)
  for (const [site, figure] of [
    ['shop.example', shop],
    ['tickets.example', tickets],
  ]) {
    t.true(tracker(site).timeInStatusMs.exhausted > 0, site)
    // The summary's `worst burn` line, as the prose quotes it.
    t.is(String(tracker(site).worstBurnRate.burnRate), figure, site)
  }
})

// The `npm start` paragraph: every figure it quotes from the command's output, captured
// from the prose (so that a changed sentence fails here, not silently).
const START_PROSE = new RegExp(
  [
    /on (?<day>\d{4}-\d\d-\d\d) from (?<saleStart>\d\d:\d\d) UTC .*?/,
    /`npm start` replays it by type .*? without it Turnstile's status flips warning → healthy → warning within (?<flipS>\d+) s at (?<flipAt>\d\d:\d\d)\) /,
    /and writes `replay\.svg`: Turnstile pages within (?<pageMin>\w+) minutes \(`(?<pageAlert>[a-z-]+)`, (?<beforeGoneMin>\w+) minutes before its budget is gone\), once per pair; /,
    /its budget is exhausted for (?<exhaustedH>\d+) hours — until the sale leaves its (?<windowH>\d+)-hour window — and the other types never leave `healthy`\. /,
    /With `--throttle`, .*?: throttled from (?<throttledAt>\d\d:\d\d) \(one probe every (?<probeS>\d+) s\), a (?<luckProbes>\d+)-probe run of luck at (?<luckAt>\d\d:\d\d) /,
    /and a relapse a quarter of a second later, then every solve again from (?<admitAt>\d\d:\d\d), (?<afterSaleMin>\w+) minutes after the sale's failures end /,
    /— (?<nearly>nearly )?(?<backH>\d+) hours before the budget is back\./,
  ]
    .map((part) => part.source)
    .join(''),
)
const NUMBER_WORDS = { one: 1, two: 2, three: 3, four: 4, five: 5, six: 6, seven: 7, eight: 8, nine: 9, ten: 10 }
const number = (word) => NUMBER_WORDS[word] ?? Number(word)
const MINUTE = 60_000
const HOUR = 60 * MINUTE

// The command `npm start` runs (package.json), as --json; its chart goes to a temp dir, not the repository.
async function startReplay(withoutFlag) {
  const script = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start
  const [node, bin, command, ...args] = script.split(' ')
  if (node !== 'node' || bin !== 'bin/captcha-budget.js' || command !== 'replay')
    throw new Error(`npm start no longer runs the replay this spec reads: ${script}`)
  const chart = args.indexOf('--chart')
  if (chart >= 0) args[chart + 1] = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'docs-figures-')), 'replay.svg')
  const flag = args.indexOf(withoutFlag)
  if (withoutFlag !== undefined && flag >= 0) args.splice(flag, 2)
  return replayJson(args, { cwd: ROOT })
}

// One run of each, shared by the tests: as `npm start` runs it, and without its --hysteresis (which the prose explains).
let runs
const replays = () => (runs ??= Promise.all([startReplay(), startReplay('--hysteresis')]))
const quoted = CLI_MD.match(START_PROSE)?.groups
const at = (hhmm) => Date.parse(`${quoted.day}T${hhmm}:00Z`)
const sameMinute = (iso, hhmm) => iso.startsWith(`${quoted.day}T${hhmm}:`)
const turnstile = (r) => r.timeline.filter((e) => e.tracker === 'turnstile')
const ms = (e) => Date.parse(e.at)

test('docs/cli.md: the npm start paragraph still reads as this spec parses it', (t) => {
  t.truthy(quoted, 'docs/cli.md no longer words the npm start paragraph as this spec reads it: update the spec with the prose')
})

test('docs/cli.md: npm start — without --hysteresis the status flips warning → healthy → warning within the seconds quoted; with it, not', async (t) => {
  if (!quoted) return t.pass()
  const [withIt, withoutIt] = await replays()
  const flips = turnstile(withoutIt).filter((e) => e.kind === 'status' && sameMinute(e.at, quoted.flipAt))
  t.deepEqual(
    flips.map((e) => `${e.from} → ${e.to}`),
    ['healthy → warning', 'warning → healthy', 'healthy → warning'],
  )
  t.true(ms(flips[2]) - ms(flips[0]) <= Number(quoted.flipS) * 1000, `${flips[0].at} → ${flips[2].at}`)
  t.is(turnstile(withIt).filter((e) => e.kind === 'status' && sameMinute(e.at, quoted.flipAt)).length, 1)
})

test('docs/cli.md: npm start — the page, the exhaustion and its length, and the other types healthy throughout', async (t) => {
  if (!quoted) return t.pass()
  const [r] = await replays()
  const events = turnstile(r)
  const page = events.find((e) => e.kind === 'alert' && e.severity === 'page')
  t.is(page.name, quoted.pageAlert)
  t.true(ms(page) - at(quoted.saleStart) < number(quoted.pageMin) * MINUTE, page.at)
  const exhausted = events.find((e) => e.kind === 'status' && e.to === 'exhausted')
  t.is(Math.round((ms(exhausted) - ms(page)) / MINUTE), number(quoted.beforeGoneMin), `${page.at} → ${exhausted.at}`)
  const summary = (name) => r.trackers.find((s) => s.name === name)
  t.true(
    Object.values(summary('turnstile').alertsFired).every((n) => n === 1),
    JSON.stringify(summary('turnstile').alertsFired),
  )
  t.is(Math.round(summary('turnstile').timeInStatusMs.exhausted / HOUR), Number(quoted.exhaustedH))
  t.is(summary('turnstile').windowMs, Number(quoted.windowH) * HOUR)
  // It leaves exhausted once the sale's first hours have left the window.
  const back = events.find((e) => e.kind === 'status' && e.from === 'exhausted')
  t.true(ms(back) - at(quoted.saleStart) >= summary('turnstile').windowMs, back.at)
  for (const name of ['image', 'recaptcha']) t.is(summary(name).timeInStatusMs.healthy, r.durationMs, name)
})

test("docs/cli.md: npm start — the throttle's times, its probes and its relapse, and how long before the budget is back", async (t) => {
  if (!quoted) return t.pass()
  const [r] = await replays()
  const events = turnstile(r)
  const throttle = events.filter((e) => e.kind === 'throttle')
  t.deepEqual(
    throttle.slice(0, 4).map((e) => `${e.from} → ${e.to}`),
    ['open → throttled', 'throttled → admitting', 'admitting → throttled', 'throttled → admitting'],
  )
  const [throttled, luck, relapse, admitting] = throttle
  t.true(sameMinute(throttled.at, quoted.throttledAt), throttled.at)
  t.true(sameMinute(luck.at, quoted.luckAt), luck.at)
  t.true(sameMinute(admitting.at, quoted.admitAt), admitting.at)
  // The run of luck: its probes, one per probe interval of the throttled stretch before it.
  t.is(luck.probes - throttled.probes, Number(quoted.luckProbes))
  t.is(Math.floor((ms(luck) - ms(throttled)) / (Number(quoted.probeS) * 1000)), Number(quoted.luckProbes))
  // A quarter of a second, to the nearest quarter.
  t.is(Math.round((ms(relapse) - ms(luck)) / 250), 1, `${luck.at} → ${relapse.at}`)
  // The sale's last failure, read from the log itself.
  const log = fs
    .readFileSync(path.join(ROOT, 'sample', 'solves.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map(JSON.parse)
  const lastFailure = Math.max(...log.filter((l) => l.type === 'turnstile' && !l.ok && Date.parse(l.ts) < ms(admitting)).map((l) => Date.parse(l.ts)))
  t.true(lastFailure >= at(quoted.saleStart), new Date(lastFailure).toISOString())
  t.is(Math.round((ms(admitting) - lastFailure) / MINUTE), number(quoted.afterSaleMin), `${new Date(lastFailure).toISOString()} → ${admitting.at}`)
  // The budget is back when the status leaves exhausted.
  const back = events.find((e) => e.kind === 'status' && e.from === 'exhausted')
  const hours = (ms(back) - ms(admitting)) / HOUR
  const backH = Number(quoted.backH)
  t.true(quoted.nearly ? hours < backH && hours >= backH - 0.5 : Math.round(hours) === backH, `${admitting.at} → ${back.at}: ${hours.toFixed(2)} h`)
})
