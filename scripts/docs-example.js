#!/usr/bin/env node
// Writes the first ```js block of a docs page and the ```text block right
// after it (its exact stdout) to two files, for .ci/platforms to run the
// docs' own example in a freshly installed project:
//   node scripts/docs-example.js docs/platforms.md example.js example.out
'use strict'

const fs = require('node:fs')

const [page, jsFile, outFile] = process.argv.slice(2)
const match = /^```js\n([\s\S]*?)^```\n\s*^```text\n([\s\S]*?)^```$/m.exec(fs.readFileSync(page, 'utf8'))
if (!match) {
  console.error(`${page}: no \`\`\`js block followed by a \`\`\`text block`)
  process.exit(1)
}
fs.writeFileSync(jsFile, match[1])
fs.writeFileSync(outFile, match[2])
