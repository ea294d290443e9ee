//! A tracker's native state (the core's `state::TrackerState`) with the
//! binding's sink (`listeners.rs`: a threadsafe function) and saver (the
//! persist file and its saving thread); the registry of shared trackers.

use std::sync::Arc;

use budget_core::registry::Registry;
use budget_core::BudgetError;

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

impl budget_core::state::Saver for Persisted {
  fn write(&self, take: impl FnOnce() -> Option<String>) -> Result<(), BudgetError> {
    Persisted::write(self, take)
  }

  fn write_then(&self, take: impl FnOnce() -> Option<String>, then: impl FnOnce()) -> Result<(), BudgetError> {
    let _in_order = self.lock();
    let Some(json) = take() else { return Ok(()) };
    persist::write_atomically(self.path(), &json)?;
    then();
    Ok(())
  }
}

impl persist::Autosaved for TrackerState {
  fn is_closed(&self) -> bool {
    TrackerState::is_closed(self)
  }

  fn autosave_interval(&self) -> Option<std::time::Duration> {
    self.saver().map(Persisted::interval)
  }

  fn autosave(&self) -> Result<(), BudgetError> {
    TrackerState::autosave(self)
  }
}
