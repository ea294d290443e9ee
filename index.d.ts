// Types of the package entry (index.js): the native addon's, generated from the
// Rust doc comments into native.d.ts, plus those of the JavaScript parts.
export * from './native'
import type { PersistConfig } from './native'

/** Options of `ErrorBudgetTracker.restore()`: the config itself comes from the snapshot. */
export interface RestoreOptions {
  /** `'monotonic'` (default: ages the snapshot to the current time) or `'manual'`. */
  clock?: 'monotonic' | 'manual'
  /** Manual clock: the time to restore at, epoch ms (default the snapshot's `savedAt`). */
  now?: number
  /** Keep saving to a file (see `TrackerConfig.persist`). */
  persist?: PersistConfig
}

declare module './native' {
  namespace ErrorBudgetTracker {
    /**
     * Rebuilds a tracker from `snapshot()` JSON, aged to now. A corrupt, truncated,
     * wrong-version or inconsistent snapshot throws `ERR_SNAPSHOT_INVALID`.
     */
    function restore(json: string, options?: RestoreOptions): ErrorBudgetTracker
  }
}
