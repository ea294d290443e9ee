//! What `BudgetFamily` (lib/family/) asks of a child natively: when its window
//! empties, so that a full family knows which children can be evicted, and
//! until when none can, without looking at each one again.
//! Internal: index.js does not export it.

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
