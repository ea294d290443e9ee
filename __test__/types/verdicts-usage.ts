// Compiled by `tsc -p __test__/types` (types.spec.js): late verdicts and fault attribution.
import { BudgetFamily, ErrorBudgetTracker, FaultError, createFailover, createSolver, type BadReports, type Blame } from 'captcha-error-budget'

const seen: unknown[] = []

export async function verdicts(): Promise<void> {
  const tracker = new ErrorBudgetTracker({ clock: 'manual', verdictWindowMs: 600_000 })
  const taken: boolean = tracker.reject(1000)
  const rejected: number = tracker.rejected
  seen.push(taken, rejected)
  await tracker.guard(async (signal, attempt) => {
    seen.push(signal.aborted)
    const again: boolean = attempt.reject('incorrect-captcha-sol')
    const reason: string | undefined = attempt.reason
    seen.push(again, reason)
    return 'token'
  })
  // @ts-expect-error: a reason is a string
  await tracker.guard(async (_signal, attempt) => attempt.reject(42))

  const family = new BudgetFamily({ labelNames: ['provider', 'site'], attribution: { provider: 'provider', site: 'site' } })
  const blame: Blame | null = family.blame({ provider: 'a', site: 'x' })
  seen.push(blame?.label, family.attribution?.site)
  family.on('incident', (incident) => seen.push(incident.blame?.value))
  // @ts-expect-error: attribution names labels of the family
  new BudgetFamily({ labelNames: ['provider', 'site'], attribution: { provider: 'vendor', site: 'site' } })
  const failover = createFailover(family, {
    providers: {
      a: (child) => createSolver({ apiKey: 'a-key', tracker: child }),
      b: (child) => createSolver({ apiKey: 'b-key', tracker: child, baseUrl: 'https://b.example' }),
    },
  })
  try {
    const solved = await failover.solve({ method: 'turnstile', sitekey: 'k', pageurl: 'https://x.example' }, { labels: { site: 'x' } })
    seen.push(solved.provider, solved.reject('incorrect-captcha-sol'))
  } catch (err) {
    if (err instanceof FaultError) seen.push(err.code, err.blame.value)
}
}

export async function reportBad(): Promise<void> {
  const tracker = new ErrorBudgetTracker({ clock: 'manual' })
  const solver = createSolver({ provider: '2captcha', apiKey: 'key', tracker, reportBad: true })
  const result = await solver.solve({ method: 'turnstile', sitekey: 'k', pageurl: 'https://x.example' })
  const taken: boolean = result.reject('incorrect-captcha-sol')
  const counts: BadReports = solver.reports
  await solver.reportsSettled()
  seen.push(taken, counts.reported, counts.skipped, counts.failed)
  // @ts-expect-error: reportBad is a boolean
  createSolver({ apiKey: 'key', tracker, reportBad: 'yes' })
  // @ts-expect-error: a reason is a string
  result.reject(42)
}
