//! One JS object's hold on a tracker. A tracker (`TrackerState`) may be shared
//! by handles in several threads (`ErrorBudgetTracker.shared`); each handle
//! closes on its own, and the last open one closes the tracker.

use std::ops::Deref;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use budget_core::BudgetError;

use crate::state::TrackerState;

/// A handle: the tracker it holds and whether it was closed.
pub struct Handle {
  pub shared: Arc<TrackerState>,
  closed: AtomicBool,
}

impl Handle {
  /// A handle on `shared`, which the caller has already counted in
  /// (`TrackerState::open_handle`, or `shared::attach`).
  pub fn adopt(shared: Arc<TrackerState>) -> Arc<Handle> {
    Arc::new(Handle { shared, closed: AtomicBool::new(false) })
  }

  /// Whether this handle, or the tracker itself, is closed.
  #[inline]
  pub fn is_closed(&self) -> bool {
    self.closed.load(Ordering::Acquire) || self.shared.is_closed()
  }

  /// Fails with `ERR_TRACKER_CLOSED` when closed.
  pub fn check_open(&self, operation: &str) -> Result<(), BudgetError> {
    if self.is_closed() {
      Err(BudgetError::closed(operation))
    } else {
      Ok(())
    }
  }

  /// Closes this handle (once); the last open handle closes the tracker.
  pub fn close(&self) {
    if !self.closed.swap(true, Ordering::AcqRel) {
      self.shared.close_handle();
    }
  }
}

impl Deref for Handle {
  type Target = TrackerState;

  fn deref(&self) -> &TrackerState {
    &self.shared
  }
}

/// A handle collected without `close()` lets go of the tracker too.
impl Drop for Handle {
  fn drop(&mut self) {
    self.close();
  }
}
