// Every relative link of the Markdown pages leads somewhere: the file exists, and
// a `#fragment` names a heading of it (as GitHub and the registry make anchors).
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')
const pages = [
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  ...fs
    .readdirSync(path.join(root, 'docs'), { recursive: true })
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f).split(path.sep).join('/'))
    .sort(),
]

/** The page's text without fenced blocks and inline code (links there are examples, not links). */
function prose(file) {
  const lines = fs.readFileSync(file, 'utf8').split('\n')
  const kept = []
  let fence = null
  for (const line of lines) {
    const m = /^\s*(`{3,}|~{3,})/.exec(line)
    if (fence) {
      if (m && line.trim() === fence) fence = null
      kept.push('')
    } else if (m) {
      fence = m[1]
      kept.push('')
    } else kept.push(line.replace(/`[^`]*`/g, ''))
  }
  return kept
}

/** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to '-', repeats numbered. */
function anchorsOf(file) {
  const seen = new Map()
  const anchors = new Set()
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!m) continue
    const text = m[1].replace(/`/g, '').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    const base = text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  for (const m of fs.readFileSync(file, 'utf8').matchAll(/<a (?:name|id)="([^"]+)"/g)) anchors.add(m[1])
  return anchors
}

/** Every broken relative link of `page`: "page:line: target (why)". */
function brokenLinks(page, base = root) {
  const broken = []
  prose(path.join(base, page)).forEach((line, i) => {
    for (const [, target] of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue // http:, mailto:, …
      const [file, fragment] = target.split('#')
      const resolved = file === '' ? path.join(base, page) : path.join(base, path.dirname(page), decodeURIComponent(file))
      if (!fs.existsSync(resolved)) broken.push(`${page}:${i + 1}: ${target} (no such file)`)
      else if (fragment !== undefined && resolved.endsWith('.md') && !anchorsOf(resolved).has(fragment)) {
        broken.push(`${page}:${i + 1}: ${target} (no heading #${fragment})`)
      }
    }
  })
  return broken
}

test('every relative link of README, CONTRIBUTING, CHANGELOG and docs/ leads to a file and, with #, to a heading of it', (t) => {
  t.deepEqual(
    pages.flatMap((page) => brokenLinks(page)),
    [],
  )
})

test('the link check catches a missing file and a missing heading, not a link in code', (t) => {
  const os = require('node:os')
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-links-'))
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const page = [
    '# A page',
    '## How it is `tested` (here)',
    '## Again',
    '## Again',
    '[ok](#how-it-is-tested-here) [ok](#again-1) [ok](b.md#b)',
    '[gone](c.md) [no heading](b.md#nope) `[code](nowhere.md)` [web](https://example.com/x)',
    '```md',
    '[fenced](nowhere.md)',
    '```',
    '',
  ]
  fs.writeFileSync(path.join(dir, 'a.md'), page.join('\n'))
  fs.writeFileSync(path.join(dir, 'b.md'), '# B\n')
  t.deepEqual(brokenLinks('a.md', dir), ['a.md:6: c.md (no such file)', 'a.md:6: b.md#nope (no heading #nope)'])
  t.true(anchorsOf(path.join(root, 'docs', 'platforms.md')).has('the-wasi-fallback'))
})
