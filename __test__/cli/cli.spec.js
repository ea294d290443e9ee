// The `captcha-budget` command line as a whole: usage errors exit 2 like any
// other bad input (the README's exit codes), --help and --version exit 0.
const test = require('ava')
const { execFile } = require('node:child_process')
const path = require('node:path')
const { version } = require('../../package.json')

const CLI = path.join(__dirname, '..', '..', 'bin', 'captcha-budget.js')

function cli(args) {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, [CLI, ...args], (error, stdout, stderr) => {
      resolve({ code: error ? error.code : 0, stdout, stderr })
    })
    child.stdin.end()
  })
}

const usageErrors = [
  [[], /^Usage: captcha-budget \[options\] \[command\]/],
  [['nope'], /^error: unknown command 'nope'/],
  [['--bogus'], /^error: unknown option '--bogus'/],
  [['gate'], /^captcha-budget gate: missing argument 'snapshot' \(or --prometheus <url> --slo <id>, or --redis <url> --key <key>\)/],
  [['gate', 'snap.json', '--bogus'], /^error: unknown option '--bogus'/],
  [['gate', 'a.json', 'b.json'], /^error: too many arguments for 'gate'/],
  [['rules', '--target'], /^error: option '--target <rate>' argument missing/],
  [['replay', '--bogus'], /^error: unknown option '--bogus'/],
]
for (const [args, stderr] of usageErrors) {
  test(`usage error exits 2: captcha-budget ${args.join(' ') || '(no command)'}`, async (t) => {
    const out = await cli(args)
    t.is(out.code, 2, out.stderr)
    t.is(out.stdout, '')
    t.regex(out.stderr, stderr)
  })
}

test('--help and --version exit 0 on stdout', async (t) => {
  const help = await cli(['--help'])
  t.is(help.code, 0)
  t.regex(help.stdout, /^Usage: captcha-budget \[options\] \[command\]/)
  for (const command of ['gate', 'replay', 'rules']) t.regex(help.stdout, new RegExp(`^  ${command} `, 'm'))
  const gateHelp = await cli(['gate', '--help'])
  t.is(gateHelp.code, 0)
  t.regex(gateHelp.stdout, /^Usage: captcha-budget gate \[options\] <snapshot> \| --prometheus <url> --slo <id> \| --redis <url> --key <key>$/m)
  const helpGate = await cli(['help', 'gate'])
  t.is(helpGate.code, 0)
  t.is(helpGate.stdout, gateHelp.stdout)
  const v = await cli(['--version'])
  t.deepEqual([v.code, v.stdout], [0, `${version}\n`])
})
