// The figures docs/cli.md's prose quotes from a command, checked by running the command
// the prose names, as written: if the sample, the replay or the prose changes, this fails
// (the ```js examples are docs.spec.js's; prose is not run, so it is checked here).
const test = require('ava')
const fs = require('node:fs')
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
