const test = require('ava')
const { execFile } = require('node:child_process')
const path = require('node:path')

test('index.d.ts accepts correct use and rejects misuse (tsc --noEmit)', async (t) => {
  const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc')
  const project = path.join(__dirname, 'types')
  const result = await new Promise((resolve) => {
    execFile(process.execPath, [tsc, '-p', project], (error, stdout) => resolve({ code: error ? error.code : 0, stdout }))
  })
  t.is(result.code, 0, result.stdout)
})
