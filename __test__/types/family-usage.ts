// Compiled by `tsc -p __test__/types` (types.spec.js): BudgetFamily's types.
import { BudgetFamily, registerMetrics, type FamilyReport, type BudgetReport, type AlertEvent, type PromClientRegistry, type FamilyFleetInfo } from 'captcha-error-budget'

const seen: unknown[] = []
const family = new BudgetFamily({
  labelNames: ['type', 'site'],
  targetRate: 0.95,
  windowMs: 86_400_000,
  clock: 'manual',
  childConfig: (labels) => (labels.type === 'image' ? { targetRate: 0.9 } : {}),
  maxChildren: 10_000,
})
const child = family.labels({ type: 'turnstile', site: 'shop.example' })
child.record(false)
family.record({ type: 'image', site: 'a' }, true, 1000)
family.on('exhausted', (report: BudgetReport, labels) => seen.push(report.failures, labels.site))
family.on('alert', (event: AlertEvent, labels) => seen.push(event.name, labels.type))
const rows: FamilyReport<'type' | 'site'>[] = family.report()
seen.push(rows[0]?.labels.site, family.size, family.metrics(), family.snapshot())
const copy = BudgetFamily.restore(family.snapshot(), { clock: 'manual' })
// A subclass's restore returns the subclass; label names can still be spelled.
class SiteFamily extends BudgetFamily<'type' | 'site'> {
  readonly kind = 'sites'
}
const sites: SiteFamily = SiteFamily.restore(family.snapshot(), { clock: 'manual' })
const spelled: BudgetFamily<'type' | 'site'> = BudgetFamily.restore<'type' | 'site'>(family.snapshot())
const detachedFamilyRestore = BudgetFamily.restore
const plain: BudgetFamily = detachedFamilyRestore(family.snapshot())
// @ts-expect-error: the base class's restore is no SiteFamily
const notSites: SiteFamily = BudgetFamily.restore(family.snapshot())
void [sites, spelled, plain, notSites]
declare const registry: PromClientRegistry
const unregister: () => void = registerMetrics(copy, registry, { labels: { region: 'eu' } })
unregister()
declare const redis: object
const fleetFamily = new BudgetFamily({ labelNames: ['site'], fleet: { redis, key: 'solves', syncMs: 1000 } })
fleetFamily.on('fleet-error', (err) => seen.push(err.code, err.key))
const synced: Promise<FamilyFleetInfo> = fleetFamily.sync()
seen.push(synced, fleetFamily.fleet?.workers)
seen.push(new BudgetFamily({ labelNames: ['site'], shared: 'solves' }).size)

// @ts-expect-error: a label the family does not have
family.labels({ type: 'turnstile', site: 'x', provider: 'y' })
// @ts-expect-error: a missing label
family.labels({ type: 'turnstile' })
// @ts-expect-error: labels are strings
family.record({ type: 'turnstile', site: 1 }, true)
// @ts-expect-error: childConfig cannot change the clock
new BudgetFamily({ labelNames: ['type'], childConfig: () => ({ clock: 'manual' as const }) })
// @ts-expect-error: not an event
family.on('exhaused', () => {})
family.close()

// Issue 24: a family's incident listener gets the child's labels.
family.on('incident', (incident, labels) => seen.push(incident.state, labels.type))
