#!/usr/bin/env node
// Static checks of the binaries `npm run artifacts` put into npm/<platform>/,
// for the targets this machine cannot run (and the glibc floor of the ones it
// can): the file format and architecture, the libc they link, and the symbols
// Node needs. Needs readelf (binutils), llvm-objdump and llvm-nm (llvm) and
// x86_64-w64-mingw32-objdump (mingw-w64). Exit 1 with every failure listed.
'use strict'

const { execFileSync } = require('node:child_process')
const path = require('node:path')

const root = path.join(__dirname, '..')
const { binaryName } = require('../package.json').napi
// What to expect of each binary follows from its target (scripts/targets.js, from package.json).
const { TARGETS } = require('./targets.js')
const ofKind = (kind) => TARGETS.filter((t) => t.check === kind)
const failures = []
const run = (cmd, args) => execFileSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 << 20 })
const binary = (platform) => path.join(root, 'npm', platform, `${binaryName}.${platform}.node`)

function check(platform, facts, problems) {
  if (problems.length === 0) console.log(`ok ${platform}: ${facts.join('; ')}`)
  else for (const p of problems) failures.push(`${platform}: ${p}`)
}

/** ELF: machine, NEEDED libraries and the glibc symbol versions required. */
function elf(file) {
  const machine = /Machine:\s+(.*)/.exec(run('readelf', ['-h', file]))[1].trim()
  const needed = [...run('readelf', ['-d', file]).matchAll(/\(NEEDED\).*\[(.*)\]/g)].map((m) => m[1])
  const glibc = [...new Set([...run('readelf', ['-V', file]).matchAll(/Name: GLIBC_([\d.]+)/g)].map((m) => m[1]))]
  return { machine, needed, glibc }
}

const newer = (a, b) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number))
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0)
  return false
}

for (const { platform, machine, glibc } of ofKind('elf-gnu')) {
  const e = elf(binary(platform))
  const highest = e.glibc.reduce((a, b) => (newer(b, a) ? b : a), '0')
  const problems = []
  if (e.machine !== machine) problems.push(`machine ${e.machine}, expected ${machine}`)
  if (newer(highest, glibc)) problems.push(`needs glibc ${highest}, more than ${glibc}`)
  check(platform, [e.machine, `glibc ≥ ${highest}`, `needs ${e.needed.join(' ')}`], problems)
}

for (const { platform, machine } of ofKind('elf-musl')) {
  const e = elf(binary(platform))
  const problems = []
  if (e.machine !== machine) problems.push(`machine ${e.machine}, expected ${machine}`)
  // musl's libc is one library (libc.so, installed as libc.musl-<arch>.so.1);
  // anything else, or a glibc symbol version, means glibc was linked.
  const foreign = e.needed.filter((n) => !/^libc(\.musl-[\w]+)?\.so(\.1)?$/.test(n))
  if (foreign.length > 0) problems.push(`links ${foreign.join(', ')}, not only musl's libc`)
  if (e.glibc.length > 0) problems.push(`requires glibc symbol versions ${e.glibc.join(', ')}`)
  check(platform, [e.machine, `needs only ${e.needed.join(' ')}`, 'no GLIBC_ versions'], problems)
}

for (const { platform, cpu, minos } of ofKind('macho')) {
  const file = binary(platform)
  const header = run('llvm-objdump', ['--macho', '--private-headers', file])
  const problems = []
  const magic = /\n\s*(MH_MAGIC_64)\s+(\S+)\s+\S+\s+\S+\s+(\S+)/.exec(header)
  if (!magic) problems.push('not a 64-bit Mach-O file')
  else {
    if (magic[2] !== cpu) problems.push(`cputype ${magic[2]}, expected ${cpu}`)
    if (magic[3] !== 'DYLIB') problems.push(`filetype ${magic[3]}, expected DYLIB`)
  }
  const min = /(?:minos|version)\s+([\d.]+)/.exec(header.slice(header.search(/LC_BUILD_VERSION|LC_VERSION_MIN_MACOSX/)))
  if (!min || min[1] !== minos) problems.push(`minimum macOS ${min && min[1]}, expected ${minos}`)
  const exported = run('llvm-nm', ['--extern-only', '--defined-only', file])
  if (!/ _napi_register_module_v1$/m.test(exported)) problems.push('does not export napi_register_module_v1')
  check(platform, [`Mach-O ${cpu} DYLIB`, `macOS ≥ ${min && min[1]}`, 'exports napi_register_module_v1'], problems)
}

for (const { platform } of ofKind('pe')) {
  const dump = run('x86_64-w64-mingw32-objdump', ['-f', '-p', binary(platform)])
  const problems = []
  if (!/file format pei-x86-64/.test(dump) || !/^Magic\s+020b/m.test(dump)) problems.push('not a PE32+ x86-64 image')
  // Imports per DLL: the Node-API from the host process, the rest from Windows itself.
  const SYSTEM = /^(kernel32|ntdll|msvcrt|bcryptprimitives|advapi32|ws2_32|userenv|api-ms-win-[\w-]+)\.dll$/i
  const imports = {}
  let dll = null
  for (const line of dump.split('\n')) {
    const name = /DLL Name: (\S+)/.exec(line)
    if (name) imports[(dll = name[1])] = []
    else if (dll && /^\s+[0-9a-f]+\s+\d+\s+(\S+)$/.test(line)) imports[dll].push(/(\S+)$/.exec(line)[1])
    else if (/^\s*$/.test(line) && dll && imports[dll].length > 0) dll = null
  }
  for (const [name, symbols] of Object.entries(imports)) {
    if (/^node\.exe$/i.test(name)) {
      const other = symbols.filter((s) => !s.startsWith('napi_'))
      if (other.length > 0) problems.push(`imports ${other.join(', ')} from ${name}`)
    } else if (!SYSTEM.test(name)) problems.push(`imports from ${name}, not a system DLL`)
  }
  if (!/\]\s+napi_register_module_v1\s*$/m.test(dump)) problems.push('does not export napi_register_module_v1')
  const napi = (imports['NODE.EXE'] || []).length
  check(platform, ['PE32+ x86-64 DLL', `imports ${Object.keys(imports).join(' ')} (${napi} napi_* from NODE.EXE)`], problems)
}

if (failures.length > 0) {
  console.error(`static checks failed:\n  ${failures.join('\n  ')}`)
  process.exit(1)
}
