//! One JS object's hold on a tracker. A tracker (`TrackerState`) may be shared
//! by handles in several threads (`ErrorBudgetTracker.shared`); each handle
//! closes on its own, and the last open one closes the tracker.

use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;

use crate::sync::Mutex;
use budget_core::BudgetError;
use napi::{sys, Env};

use crate::state::TrackerState;

/// A handle: the tracker it holds and whether it was closed.
pub struct Handle {
  pub tracker: Arc<TrackerState>,
  closed: AtomicBool,
  /// The environment (as an address) told about the tracker's native bytes,
  /// and how many: given back when the handle closes.
  external: Mutex<Option<(usize, i64)>>,
  /// The window's part of the bytes reported: its records compare the
  /// window's bytes with it, and report the difference when they differ.
  window_bytes: AtomicI64,
}

impl Handle {
  /// A handle on `tracker`, which the caller has already counted in
  /// (`TrackerState::count_in`, or `REGISTRY.attach`).
  pub fn adopt(tracker: Arc<TrackerState>) -> Arc<Handle> {
    Arc::new(Handle {
      tracker,
      closed: AtomicBool::new(false),
      external: Mutex::new(None),
      window_bytes: AtomicI64::new(0),
    })
  }

  /// Tells V8 the native memory this open handle keeps alive, so that the
  /// collector feels trackers that are dropped without `close()`.
  pub fn report_memory(&self, env: &Env) {
    let (bytes, window_bytes) = self.tracker.native_bytes();
    let mut external = self.external.lock();
    // A hint to the collector: nothing to do when V8 declines it.
    let _ = env.adjust_external_memory(bytes);
    *external = Some((env.raw() as usize, bytes));
    self.window_bytes.store(window_bytes, Ordering::Relaxed);
  }

  /// Records through this handle (`TrackerState::record`), then follows the
  /// window's memory: when it grew or shrank (a ring that doubled or shrank,
  /// a change of layout: rare), V8 is told the difference. On the handle's
  /// JS thread, as every record through it.
  #[inline(always)]
  pub fn record(&self, at: Option<i64>, successes: u64, failures: u64) -> Result<(), BudgetError> {
    match self.tracker.record_measured(at, successes, failures) {
      Ok(window_bytes) => {
        if window_bytes != self.window_bytes.load(Ordering::Relaxed) {
          self.follow_memory(window_bytes);
        }
        Ok(())
      }
      Err(at) => Err(self.tracker.refusal(at, successes, failures)),
    }
  }

  #[cold]
  fn follow_memory(&self, window_bytes: i64) {
    let mut external = self.external.lock();
    let previous = self.window_bytes.swap(window_bytes, Ordering::Relaxed);
    if let Some((env, bytes)) = external.as_mut() {
      let delta = window_bytes - previous;
      // The env the bytes were reported to, on its thread: records through a
      // handle run on the thread that made it.
      let _ = Env::from_raw(*env as sys::napi_env).adjust_external_memory(delta);
      *bytes += delta;
    }
  }

  /// Whether this handle, or the tracker itself, is closed.
  #[inline]
  pub fn is_closed(&self) -> bool {
    self.closed.load(Ordering::Acquire) || self.tracker.is_closed()
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
  /// Runs on the handle's JS thread: `close()`, or the finalizer of the last
  /// JS function or object holding it (environment teardown included).
  pub fn close(&self) {
    if !self.closed.swap(true, Ordering::AcqRel) {
      crate::state::REGISTRY.count_out(&self.tracker);
      if let Some((env, bytes)) = self.external.lock().take() {
        // The env the bytes were reported to, on its thread, still alive (its
        // finalizers and cleanup run before it goes).
        let _ = Env::from_raw(env as sys::napi_env).adjust_external_memory(-bytes);
      }
    }
  }
}

impl Deref for Handle {
  type Target = TrackerState;

  fn deref(&self) -> &TrackerState {
    &self.tracker
  }
}

/// A handle collected without `close()` lets go of the tracker too.
impl Drop for Handle {
  fn drop(&mut self) {
    self.close();
  }
}
