// The core's table of config fields (crates/budget-core/src/config.rs, FIELDS),
// exported by the addon as configFields(), is the one source of the config's
// names, types, ranges and defaults: the constructor follows it, and this spec
// fails when the hand-written `TrackerConfig` (src/header.d.ts, plus the `fleet`
// member index.d.ts adds), `RestoreOptions`, or README's config table disagree
// with it. To add a field: CONTRIBUTING.md, "Adding a config field".
const test = require('ava')
const fs = require('node:fs')
const path = require('node:path')
const { configFields } = require('../../native.js')
const { ErrorBudgetTracker } = require('../..')

const root = path.join(__dirname, '..', '..')
const read = (file) => fs.readFileSync(path.join(root, file), 'utf8')
const fields = configFields()

/** Text as the checks compare it: no backticks, one space between words. */
const normal = (text) => text.replace(/`/g, '').replace(/\s+/g, ' ').trim()

/** The members of every `interface <name> {` block of `source`, in order: { name, type, doc }. */
function members(source, name) {
  const found = []
  const lines = source.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = lines[i].match(/^(\s*)(?:export )?interface (\w+) \{$/)
    if (!open || open[2] !== name) continue
    const close = `${open[1]}}`
    let doc = null
    for (i++; i < lines.length && lines[i] !== close; i++) {
      const line = lines[i].trim()
      if (line.startsWith('/**')) {
        const body = [line.slice(3)]
        while (!lines[i].includes('*/')) body.push(lines[++i].trim().replace(/^\*(?!\/) ?/, ''))
        doc = normal(body.join(' ').replace('*/', ''))
        continue
      }
      const member = line.match(/^(\w+)\?: (.+)$/)
      if (member) {
        found.push({ name: member[1], type: member[2], doc })
        doc = null
      }
    }
  }
  return found
}

/** The TypeScript type a field of `kind` has. */
function tsType(field) {
  const special = { alerts: 'Array<AlertRuleConfig>', persist: 'PersistConfig', javascript: 'FleetConfig' }
  if (field.kind === 'number') return 'number'
  if (field.kind === 'string' || field.kind === 'name') return 'string'
  if (field.kind === 'choice') return field.choices.map((c) => `'${c}'`).join(' | ')
  return special[field.kind]
}

/** Whether `cell` is `text`, or starts with it and goes on after a space or punctuation. */
const startsWithText = (cell, text) => cell === text || [' ', ',', ';', ':'].some((next) => cell.startsWith(text + next))

test('configFields() is the table the constructor reads: its names are the known keys, in order', (t) => {
  const err = t.throws(() => new ErrorBudgetTracker({ nope: 1 }), { instanceOf: TypeError, code: 'ERR_INVALID_ARG_VALUE' })
  // 'nope' is two edits from 'now' (the CLI's rule for a misspelt option: errors-name-the-fix.spec.js).
  t.is(err.message, `unknown config key 'nope'; known keys: ${fields.map((f) => f.name).join(', ')}; did you mean 'now'?`)
  // Hand-checked rows: what the docs promise for three fields.
  const byName = Object.fromEntries(fields.map((f) => [f.name, f]))
  t.like(byName.targetRate, {
    kind: 'number',
    range: 'in (0, 1]',
    default: '0.95',
    defaultValue: 0.95,
    min: 0,
    minOpen: true,
    max: 1,
    maxOpen: false,
    integer: false,
  })
  t.like(byName.resolutionMs, {
    range: 'a positive integer of milliseconds, at most windowMs',
    default: 'max(1, floor(windowMs / 43200))',
    min: 1,
    integer: true,
    atMost: 'windowMs',
    inSnapshot: true,
  })
  t.like(byName.hysteresis, { range: 'in [0, 1)', default: '0', defaultValue: 0, maxOpen: true, inSnapshot: false })
  t.deepEqual(byName.clock.choices, ['monotonic', 'manual'])
  t.deepEqual(
    fields.filter((f) => f.withSnapshot).map((f) => f.name),
    ['clock', 'now', 'persist'],
  )
})

test("the .d.ts TrackerConfig has the table's fields, in order, with their types, ranges and defaults", (t) => {
  const declared = [...members(read('src/header.d.ts'), 'TrackerConfig'), ...members(read('index.d.ts'), 'TrackerConfig')]
  t.deepEqual(
    declared.map((m) => m.name),
    fields.map((f) => f.name),
    'the members of TrackerConfig (src/header.d.ts, then index.d.ts) are the fields of the table, in its order',
  )
  for (const field of fields) {
    const member = declared.find((m) => m.name === field.name)
    if (member === undefined) continue
    t.is(member.type, tsType(field), `${field.name}: its type`)
    t.truthy(member.doc, `${field.name}: a doc comment`)
    if (field.range !== '') t.true(member.doc.includes(field.range), `${field.name}: the doc says "${field.range}": ${member.doc}`)
    if (field.default === 'none') t.false(member.doc.includes('Default:'), `${field.name}: no default: ${member.doc}`)
    else t.true(member.doc.includes(`Default: ${field.default}`), `${field.name}: the doc says "Default: ${field.default}": ${member.doc}`)
  }
})

test('RestoreOptions (lib/types/tracker.d.ts) holds the fields that may go with a snapshot, and restore() takes those', (t) => {
  const restore = fields.filter((f) => f.withSnapshot)
  const declared = members(read('lib/types/tracker.d.ts'), 'RestoreOptions')
  t.deepEqual(
    declared.map((m) => m.name),
    restore.map((f) => f.name),
  )
  for (const field of restore) t.is(declared.find((m) => m.name === field.name)?.type, tsType(field), field.name)
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const json = tracker.snapshot()
  tracker.close()
  const err = t.throws(() => ErrorBudgetTracker.restore(json, { targetRate: 0.9 }))
  t.true(err.message.endsWith(`known options: ${restore.map((f) => f.name).join(', ')}`), err.message)
})

test("README's config table lists the table's fields in order, with their defaults and ranges", (t) => {
  const readme = read('README.md')
  const section = readme.split(/^## /m).find((s) => s.startsWith('API at a glance\n'))
  const lines = section.split('\n')
  const start = lines.indexOf('| config | default | allowed |')
  t.not(start, -1, 'the config table of "API at a glance"')
  const rows = []
  for (let i = start + 2; i < lines.length && lines[i].startsWith('|'); i++) {
    // Cells split on the pipes that are not escaped (`'page' \| 'ticket'`).
    const cells = lines[i]
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map(normal)
    rows.push({ name: cells[0], default: cells[1], allowed: cells[2] })
  }
  t.deepEqual(
    rows.map((r) => r.name),
    fields.map((f) => f.name),
  )
  for (const field of fields) {
    const row = rows.find((r) => r.name === field.name)
    if (row === undefined) continue
    t.true(startsWithText(row.default, field.default), `${field.name}: default "${row.default}" should be "${field.default}"`)
    if (field.range !== '') t.true(startsWithText(row.allowed, field.range), `${field.name}: allowed "${row.allowed}" should start "${field.range}"`)
  }
})

test('the checks follow the ranges of the table: each end of each number field in or out as it says', (t) => {
  const byName = Object.fromEntries(fields.map((f) => [f.name, f]))
  for (const field of fields.filter((f) => f.kind === 'number' && f.defaultValue !== undefined)) {
    // A bound field (criticalThreshold ≤ warningThreshold, resolutionMs ≤ windowMs) is
    // raised to its own largest value, small enough for the bucket limit.
    const base = { clock: 'manual' }
    if (field.atMost !== null && field.atMost !== undefined) base[field.atMost] = byName[field.atMost].integer ? 1_000_000 : byName[field.atMost].max
    // A field bounded by this one (criticalThreshold by warningThreshold) is lowered to its smallest value.
    for (const bounded of fields.filter((f) => f.atMost === field.name)) base[bounded.name] = bounded.min
    const ends = []
    if (field.min !== undefined && field.min !== null) {
      ends.push([field.min, !field.minOpen])
      ends.push([field.integer ? field.min - 1 : field.min - 1e-9, false])
    }
    if (field.max !== undefined && field.max !== null && !field.integer) {
      ends.push([field.max, !field.maxOpen])
      ends.push([field.max + 1e-9, false])
    }
    t.true(ends.length >= 2, `${field.name}: has a range`)
    for (const [value, allowed] of ends) {
      const make = () => new ErrorBudgetTracker({ ...base, [field.name]: value }).close()
      if (allowed) t.notThrows(make, `${field.name}: ${value}`)
      else {
        const err = t.throws(make, { instanceOf: RangeError, code: 'ERR_OUT_OF_RANGE' }, `${field.name}: ${value}`)
        t.true(err?.message.startsWith(`config.${field.name} must be `), err?.message)
      }
    }
  }
})

test('each number default is the one a tracker gets: a shared tracker made without the field takes it as the same config', (t) => {
  for (const field of fields.filter((f) => f.kind === 'number' && f.defaultValue !== undefined)) {
    const name = `config-table-${field.name}-${process.pid}`
    const first = ErrorBudgetTracker.shared(name, { clock: 'manual' })
    const same = ErrorBudgetTracker.shared(name, { clock: 'manual', [field.name]: field.defaultValue })
    // Another value in range, for the same field: refused, the field named.
    const other = field.integer ? field.defaultValue + 1 : field.defaultValue === 0 ? 0.05 : field.defaultValue - 0.05
    const err = t.throws(() => ErrorBudgetTracker.shared(name, { clock: 'manual', [field.name]: other }), { code: 'ERR_INVALID_ARG_VALUE' })
    t.true(err?.message.includes(`(${field.name} differ)`), err?.message)
    same.close()
    first.close()
  }
})
