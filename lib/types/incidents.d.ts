// Types of `on('incident')` (lib/tracker/incidents.js) and of `family.blame()` (lib/providers/blame.js).
import type { AlertEvidence, AlertSeverity } from '../../native.js'

/**
 * What `on('incident')` listeners receive (lib/tracker/incidents.js): the per-pair alert
 * events grouped into incidents. Called when an incident opens (the first pair
 * firing while none is open), once if it escalates from ticket to page, and once
 * when its last firing pair resolves.
 */
export interface Incident {
  /** 1, 2, … per tracker: the same for every event of one incident. */
  id: number
  /** `'open'`, `'escalated'` (ticket → page) or `'resolved'`. */
  state: 'open' | 'escalated' | 'resolved'
  /** The incident's severity: the first pair's, `'page'` once escalated. */
  severity: AlertSeverity
  /** When its first pair fired, epoch ms. */
  openedAt: number
  /** The moment of this event (the causing pair event's `at`), epoch ms. */
  at: number
  /** The pair whose alert or resolve caused this event. */
  pair: string
  /** The pairs firing after this event (empty once resolved), in firing order. */
  firing: string[]
  /** The causing pair event's evidence. */
  evidence: AlertEvidence
  /** The causing pair event's reason. */
  reason: string
  /** A family's incident, with `attribution`: whose fault it is (`family.blame()` when the listener is called). */
  blame?: Blame | null
}

/** `family.blame()`: the label (its name) and the value at fault. */
export interface Blame {
  readonly label: string
  readonly value: string
}
