// A reader that stops early (`| head`, `| true`): the CLI exits quietly (status 0,
// nothing on stderr) instead of printing an EPIPE stack trace.
const test = require('ava')
const { execFile } = require('node:child_process')
const path = require('node:path')

const root = path.join(__dirname, '..', '..')
const CLI = path.join(root, 'bin', 'captcha-budget.js')

const commands = {
  rules: ['rules', '--name', 'turnstile', '--target', '0.95', '--window', '30d'],
  dashboard: ['dashboard'],
  replay: ['replay', path.join(root, 'sample', 'solves.jsonl'), '--by', 'type'],
}

for (const [name, args] of Object.entries(commands)) {
  test(`${name} | true: exit 0 and no stack trace`, async (t) => {
    // pipefail: the pipeline's status is the CLI's, not `true`'s.
    const script = 'set -o pipefail; "$@" | true'
    const result = await new Promise((resolve) => {
      execFile('bash', ['-c', script, 'bash', process.execPath, CLI, ...args], { cwd: root, timeout: 60_000 }, (error, stdout, stderr) =>
        resolve({ code: error ? error.code : 0, stderr }),
      )
    })
    t.is(result.stderr, '')
    t.is(result.code, 0)
  })
}
