// Types of the tracker's JavaScript parts (lib/tracker/tracker.js, lib/fleet/) that the
// addon's generated types (native.d.ts) do not hold; index.d.ts adds them to the class.
import type { PersistConfig } from '../../native.js'

/** Options of `ErrorBudgetTracker.restore()`: the config itself comes from the snapshot. */
export interface RestoreOptions {
  /** `'monotonic'` (default: ages the snapshot to the current time) or `'manual'`. */
  clock?: 'monotonic' | 'manual'
  /** Manual clock: the time to restore at, epoch ms (default the snapshot's `savedAt`). */
  now?: number
  /** Keep saving to a file (see `TrackerConfig.persist`). */
  persist?: PersistConfig
}

/** Where a fleet's window lives: `config.fleet`. */
export interface FleetConfig {
  /** A connected ioredis client (Redis or Cluster) or node-redis (v5+) client; the tracker never closes it. */
  redis: object
  /** The budget's name in Redis; workers with the same key share one window. No `{` or `}`. */
  key: string
  /** Background sync period, ms: 0 (only `sync()`) or 10 to 3 600 000. Default 1000. */
  syncMs?: number
  /** Fleet bucket width, ms: a multiple of `resolutionMs` up to `windowMs`. Default: the smallest such multiple ≥ windowMs / 1440. */
  bucketMs?: number
  /** A sync without a reply within this many ms fails (and is retried, exactly once). Default max(2 × syncMs, 2000). */
  timeoutMs?: number
  /** How far this worker's clock may be from the Redis server's `TIME`, ms (0 to 604 800 000); a sync beyond is refused. Default windowMs / 10, from 1000 to 60 000. */
  maxSkewMs?: number
}

/** `report().fleet` and what `sync()` resolves to. */
export interface FleetInfo {
  /** `config.fleet.key`. */
  key: string
  /** This worker's id in Redis: host:pid:random. */
  worker: string
  /** Workers that synced within the last 3 × max(syncMs, timeoutMs), as of the last sync (this one included). */
  workers: number
  /** The fleet bucket width, ms. */
  bucketMs: number
  /** The tracker's time of the last successful sync, epoch ms; null before the first. */
  syncedAt: number | null
  /** True until the first sync and while syncs fail: the view is the last fleet window plus this worker's own solves. */
  stale: boolean
  /** Since when the view is stale (the creation time before a first sync), epoch ms; null when not stale. */
  staleSince: number | null
  /** Solves recorded here and not acknowledged by Redis yet: what this worker would lose if it died now. */
  unsent: { successes: number; failures: number }
  /** The message of the last failed sync, null after a successful one. */
  lastError: string | null
}

/** A failed fleet sync (`code` 'ERR_FLEET_SYNC'; `cause` the client's error): `sync()`'s rejection and the 'fleet-error' event. */
export declare class FleetSyncError extends Error {
  readonly code: 'ERR_FLEET_SYNC'
  /** `config.fleet.key`. */
  readonly key: string
  /** When the store refused this worker's clock: this clock minus the Redis server's, ms. */
  readonly skewMs?: number
}
