// `captcha-budget replay --chart`: a well-formed SVG with one line per tracker.
const test = require('ava')
const { XMLParser, XMLValidator } = require('fast-xml-parser')
const fs = require('node:fs')
const { replayCli, replayJson, tempFiles } = require('../fixtures/replay/cli')
const { outage, images, byTime, toJsonl } = require('../fixtures/replay/logs')

test('--chart writes well-formed SVG with one budget path and one burn line per tracker', async (t) => {
  const files = tempFiles({ 'mixed.jsonl': toJsonl([...outage(), ...images()].sort(byTime)) })
  const svgPath = `${files.dir}/chart.svg`
  const r = await replayJson([files['mixed.jsonl'], '--by', 'type', '--window', '12h', '--min-events', '0', '--target', 'image=0.75', '--chart', svgPath])
  t.is(r.chart, svgPath)
  const svg = fs.readFileSync(svgPath, 'utf8')
  t.is(XMLValidator.validate(svg), true)
  const doc = new XMLParser({ ignoreAttributes: false, isArray: (name, jpath, leaf, isAttribute) => !isAttribute }).parse(svg)
  const root = doc.svg[0]
  t.deepEqual(
    root.path.map((p) => [p['@_class'], p['@_data-tracker']]),
    [
      ['budget', 'image'],
      ['budget', 'turnstile'],
    ],
  )
  t.deepEqual(
    root.polyline.map((p) => [p['@_class'], p['@_data-tracker']]),
    [
      ['burn', 'image'],
      ['burn', 'turnstile'],
    ],
  )
  // A marker per status change (circles), per alert or resolution (triangles).
  t.is(root.circle.length, r.timeline.filter((e) => e.kind === 'status').length)
  t.is((root.polygon ?? []).length, r.timeline.filter((e) => e.kind !== 'status').length) // none when nothing fires
  // Every sample is a point: the budget path starts full at the first event.
  const points = root.path[1]['@_d'].split(' ')
  t.true(points.length > 100)
  t.regex(points[0], /^M70,80$/)
})

test('tracker names are escaped in the SVG', async (t) => {
  const stdin = '{"ts":0,"ok":true,"type":"<img & \\"co\\">"}\n'
  const dir = tempFiles({}).dir
  const r = await replayCli(['-', '--by', 'type', '--chart', `${dir}/c.svg`], { stdin })
  t.is(r.code, 0, r.stderr)
  const svg = fs.readFileSync(`${dir}/c.svg`, 'utf8')
  t.is(XMLValidator.validate(svg), true)
  t.true(svg.includes('data-tracker="&lt;img &amp; &quot;co&quot;&gt;"'))
})
