//! One JS object's hold on a tracker. A tracker (`TrackerState`) may be shared
//! by handles in several threads (`ErrorBudgetTracker.shared`); each handle
//! closes on its own, and the last open one closes the tracker. A handle also
//! keeps the JS engine told of the native memory it keeps alive, through the
//! binding's function for it.

use std::ops::Deref;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::Arc;

use crate::registry::Registry;
use crate::state::{Saver, Sink, TrackerState};
use crate::sync::Mutex;
use crate::BudgetError;

/// Tells the JS engine of environment `env` (an address) that its objects
/// keep `delta` more bytes of native memory alive (fewer when negative). Called
/// on `env`'s thread only; a hint the engine may decline.
pub type AdjustMemory = fn(env: usize, delta: i64);

/// The memory a handle reported: to which environment, how, and how many bytes.
struct Reported {
  env: usize,
  adjust: AdjustMemory,
  bytes: i64,
}

/// A handle: the tracker it holds, the registry it counts out through, and
/// whether it was closed.
pub struct Handle<S: Sink, P: Saver> {
  /// The tracker held.
  pub tracker: Arc<TrackerState<S, P>>,
  /// Where a shared tracker's name is freed by its last close.
  registry: &'static Registry<TrackerState<S, P>>,
  closed: AtomicBool,
  /// The memory reported, given back when the handle closes.
  external: Mutex<Option<Reported>>,
  /// The window's part of the bytes reported: its records compare the
  /// window's bytes with it, and report the difference when they differ.
  window_bytes: AtomicI64,
}

impl<S: Sink, P: Saver> Handle<S, P> {
  /// A handle on `tracker`, which the caller has already counted in
  /// (`TrackerState::count_in`, or `Registry::attach` of `registry`).
  pub fn adopt(tracker: Arc<TrackerState<S, P>>, registry: &'static Registry<TrackerState<S, P>>) -> Arc<Self> {
    Arc::new(Handle {
      tracker,
      registry,
      closed: AtomicBool::new(false),
      external: Mutex::new(None),
      window_bytes: AtomicI64::new(0),
    })
  }

  /// Tells environment `env`, through `adjust`, the native memory this open
  /// handle keeps alive, so that its collector feels trackers that are
  /// dropped without `close()`.
  pub fn report_memory(&self, env: usize, adjust: AdjustMemory) {
    let (bytes, window_bytes) = self.tracker.native_bytes();
    let mut external = self.external.lock();
    adjust(env, bytes);
    *external = Some(Reported { env, adjust, bytes });
    self.window_bytes.store(window_bytes, Ordering::Relaxed);
  }

  /// Records through this handle (`TrackerState::record_measured`), then
  /// follows the window's memory: when it grew or shrank (a ring that doubled
  /// or shrank, a change of layout: rare), the engine is told the difference.
  /// Returns, when `STAMPED`, the stamp recorded at
  /// (`TrackerState::record_stamped`), else 0: a plain `record()` returns
  /// nothing and does not pay for it.
  /// On the handle's JS thread, as every record through it.
  #[inline(always)]
  pub fn record<const STAMPED: bool>(
    &self,
    at: Option<i64>,
    successes: u64,
    failures: u64,
  ) -> Result<i64, BudgetError> {
    let recorded = if STAMPED {
      self.tracker.record_stamped(at, successes, failures)
    } else {
      self.tracker.record_measured(at, successes, failures).map(|bytes| (bytes, 0))
    };
    match recorded {
      Ok((window_bytes, stamp)) => {
        if window_bytes != self.window_bytes.load(Ordering::Relaxed) {
          self.follow_memory(window_bytes);
        }
        Ok(stamp)
      }
      Err(at) => Err(self.tracker.refusal(at, successes, failures)),
    }
  }

  #[cold]
  fn follow_memory(&self, window_bytes: i64) {
    let mut external = self.external.lock();
    let previous = self.window_bytes.swap(window_bytes, Ordering::Relaxed);
    if let Some(reported) = external.as_mut() {
      let delta = window_bytes - previous;
      // The env the bytes were reported to, on its thread: records through a
      // handle run on the thread that made it.
      (reported.adjust)(reported.env, delta);
      reported.bytes += delta;
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
      self.registry.count_out(&self.tracker);
      if let Some(reported) = self.external.lock().take() {
        // The env the bytes were reported to, on its thread, still alive (its
        // finalizers and cleanup run before it goes).
        (reported.adjust)(reported.env, -reported.bytes);
      }
    }
  }
}

impl<S: Sink, P: Saver> Deref for Handle<S, P> {
  type Target = TrackerState<S, P>;

  fn deref(&self) -> &TrackerState<S, P> {
    &self.tracker
  }
}

/// A handle collected without `close()` lets go of the tracker too.
impl<S: Sink, P: Saver> Drop for Handle<S, P> {
  fn drop(&mut self) {
    self.close();
  }
}
