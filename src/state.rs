//! A tracker's native state (the core's `state::TrackerState`) with the
//! binding's sink (`listeners.rs`: a threadsafe function) and saver (the
//! persist file and its saving thread); the registry of shared trackers.

use std::sync::Arc;

use budget_core::registry::Registry;

use crate::config::Persist;
use crate::listeners::Sink;
use crate::persist::{self, Persisted};

/// Shared native state of one tracker.
pub type TrackerState = budget_core::state::TrackerState<Sink, Persisted>;

/// Every shared tracker of the process, by name (`ErrorBudgetTracker.shared`).
pub static REGISTRY: Registry<TrackerState> = Registry::new();

/// Sets up autosave to `persist` (the saving thread already runs: see
/// `persist::ensure_saver`).
pub fn persist(state: &Arc<TrackerState>, persist: &Persist) {
  if state.set_saver(Persisted::new(persist)) {
    persist::schedule(state, std::time::Duration::from_millis(persist.interval_ms));
  }
}
