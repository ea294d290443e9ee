//! What `BudgetFamily` (lib/family/) asks of a child natively: when its window
//! empties, so that a full family knows which children can be evicted, and
//! until when none can, without looking at each one again; and, for a family
//! with `attribution`, which children's counts changed since it last read them
//! (the core's `watch.rs`), so that `blame()` re-reads only those.
//! Internal: index.js does not export it.

use std::sync::Arc;

use budget_core::watch;
use napi_derive::napi;

use crate::tracker::ErrorBudgetTracker;

/// The instant (the child's clock, epoch ms) from which `tracker`'s window
/// holds no events if nothing more is recorded; `null` when it holds none now.
// Called from JS only: unused in `cargo test` builds.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn window_empty_from(tracker: &ErrorBudgetTracker) -> Option<f64> {
  tracker.handle.tracker.read(|core| core.empty_from_ms()).map(|ms| ms as f64)
}

/// A family's change log: the ids of its children whose window counts changed
/// since `watchedCounts()` last read them (lib/family/attribution-counts.js).
#[napi]
pub struct ChangeLog {
  log: Arc<watch::ChangeLog>,
}

#[cfg_attr(test, allow(dead_code))]
#[napi]
impl ChangeLog {
  /// An empty log.
  #[napi(constructor)]
  pub fn new() -> Self {
    ChangeLog { log: Arc::new(watch::ChangeLog::default()) }
  }

  /// The ids logged since the last call (each once), emptying the log.
  #[napi]
  pub fn drain(&self) -> Vec<u32> {
    self.log.drain()
  }

  /// Reads `tracker`'s window counts for this log's family, where it is `id`,
  /// and logs `id` at their next change: `[successes, failures, msUntilExpiry]`,
  /// the last the ms until they change with no new event (real clock; -1 if
  /// none: a manual clock, an empty window, a closed tracker).
  #[napi]
  pub fn watched_counts(&self, tracker: &ErrorBudgetTracker, id: u32) -> Vec<f64> {
    let (counts, expiry) = tracker.handle.tracker.watched_counts(&self.log, id);
    vec![counts.successes as f64, counts.failures as f64, expiry.map_or(-1.0, |ms| ms as f64)]
  }

  /// `tracker` left the family: its changes are logged no more.
  #[napi]
  pub fn unwatch(&self, tracker: &ErrorBudgetTracker) {
    tracker.handle.tracker.unwatch_counts(&self.log);
  }
}
