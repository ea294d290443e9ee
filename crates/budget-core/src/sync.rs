//! The background threads' start (`spawn`) and the locks of the binding's threads: parking_lot's everywhere but WASI. On stable
//! Rust parking_lot builds its wasm parker without atomics, which panics on
//! the first wait ("Parking not supported"), so the timer and autosave threads
//! died there; on WASI std's futex-based Mutex and Condvar stand in, behind
//! the parking_lot API the binding uses.

#[cfg(not(target_os = "wasi"))]
pub use parking_lot::{Condvar, Mutex, MutexGuard};

use crate::{BudgetError, ErrorKind};

/// Starts the background thread `name` running `run`. A failed spawn (a
/// thread or pids limit) is an `ERR_THREAD_SPAWN` error naming `what` and
/// saying what `undone` (left as it was), never an abort.
pub fn spawn(name: &str, run: fn(), what: &str, undone: &str) -> Result<(), BudgetError> {
  std::thread::Builder::new().name(name.into()).spawn(run).map(drop).map_err(|e| BudgetError {
    kind: ErrorKind::State,
    code: "ERR_THREAD_SPAWN",
    field: None,
    message: format!("cannot start {what}: {e} (a thread or process limit?); {undone}"),
  })
}

#[cfg(target_os = "wasi")]
pub use wasi::{Condvar, Mutex, MutexGuard};

#[cfg(target_os = "wasi")]
mod wasi {
  use std::ops::{Deref, DerefMut};
  use std::time::{Duration, Instant};

  /// std's Mutex without poisoning (a panic aborts on wasm anyway).
  pub struct Mutex<T>(std::sync::Mutex<T>);

  /// Holds the std guard in an `Option` so a `Condvar` wait can take it out
  /// and put it back through `&mut`, as parking_lot's waits do.
  pub struct MutexGuard<'a, T>(Option<std::sync::MutexGuard<'a, T>>);

  impl<T> Mutex<T> {
    /// A mutex holding `value`.
    pub const fn new(value: T) -> Self {
      Mutex(std::sync::Mutex::new(value))
    }

    /// Locks, waiting as long as it takes.
    pub fn lock(&self) -> MutexGuard<'_, T> {
      MutexGuard(Some(self.0.lock().unwrap_or_else(|e| e.into_inner())))
    }
  }

  impl<T: Default> Default for Mutex<T> {
    fn default() -> Self {
      Mutex::new(T::default())
    }
  }

  impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
      self.0.as_deref().expect("guard present outside a wait")
    }
  }

  impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
      self.0.as_deref_mut().expect("guard present outside a wait")
    }
  }

  /// std's Condvar with parking_lot's `&mut guard` waits.
  #[derive(Default)]
  pub struct Condvar(std::sync::Condvar);

  impl Condvar {
    /// A condition variable with no waiters.
    pub const fn new() -> Self {
      Condvar(std::sync::Condvar::new())
    }

    /// Wakes one waiter.
    pub fn notify_one(&self) {
      self.0.notify_one();
    }

    /// Wakes every waiter.
    pub fn notify_all(&self) {
      self.0.notify_all();
    }

    /// Waits for a notification (or a spurious wake-up).
    pub fn wait<T>(&self, guard: &mut MutexGuard<'_, T>) {
      let inner = guard.0.take().expect("guard present");
      guard.0 = Some(self.0.wait(inner).unwrap_or_else(|e| e.into_inner()));
    }

    /// Waits for a notification or until `timeout` has passed.
    pub fn wait_for<T>(&self, guard: &mut MutexGuard<'_, T>, timeout: Duration) {
      let inner = guard.0.take().expect("guard present");
      let (inner, _) = self.0.wait_timeout(inner, timeout).unwrap_or_else(|e| e.into_inner());
      guard.0 = Some(inner);
    }

    /// Waits for a notification or until `deadline`.
    pub fn wait_until<T>(&self, guard: &mut MutexGuard<'_, T>, deadline: Instant) {
      self.wait_for(guard, deadline.saturating_duration_since(Instant::now()));
    }
  }
}
