//! The process-wide registry of shared trackers behind
//! `ErrorBudgetTracker.shared(name)`: one tracker per name, reachable from
//! every thread. It holds weak references: a shared tracker lives while one
//! of its handles is open and not collected.

use std::collections::BTreeMap;
use std::sync::{Arc, Weak};

use crate::sync::Mutex;
use crate::BudgetError;

/// What a registry holds: state opened by handles, closed by the last of them.
pub trait Shared: Send + Sync {
  /// Whether it was closed.
  fn is_closed(&self) -> bool;
  /// Counts a new handle in.
  fn count_in(&self);
  /// Counts a handle out; the last one closes it (returns true then).
  fn count_out(&self) -> bool;
  /// Names it (once, before its first handle).
  fn name(&self, name: &str);
  /// Its name, when it is in a registry.
  fn registry_name(&self) -> Option<&str>;
}

/// Shared state by name, held weakly.
pub struct Registry<T> {
  by_name: Mutex<BTreeMap<String, Weak<T>>>,
}

impl<T> Default for Registry<T> {
  fn default() -> Self {
    Registry::new()
  }
}

impl<T> Registry<T> {
  /// An empty registry (`const`: it can be a `static`).
  pub const fn new() -> Self {
    Registry { by_name: Mutex::new(BTreeMap::new()) }
  }
}

impl<T: Shared> Registry<T> {
  /// The open state called `name`, counted in for a new handle once `check`
  /// accepts it; or a new one from `create`, named and counted in.
  pub fn attach(
    &self,
    name: &str,
    check: impl FnOnce(&T) -> Result<(), BudgetError>,
    create: impl FnOnce() -> Result<Arc<T>, BudgetError>,
  ) -> Result<Arc<T>, BudgetError> {
    // One lock for attach and for the last count-out: state cannot be closed
    // between being found here and being counted in.
    let mut by_name = self.by_name.lock();
    if let Some(existing) = by_name.get(name).and_then(Weak::upgrade).filter(|s| !s.is_closed()) {
      check(&existing)?;
      existing.count_in();
      return Ok(existing);
    }
    let state = create()?;
    state.name(name);
    state.count_in();
    by_name.insert(name.to_string(), Arc::downgrade(&state));
    Ok(state)
  }

  /// Counts a handle of `state` out; the last one closes it and, when it is
  /// in this registry, frees its name. Returns whether it was the last.
  pub fn count_out(&self, state: &T) -> bool {
    let Some(name) = state.registry_name() else { return state.count_out() };
    let mut by_name = self.by_name.lock();
    let last = state.count_out();
    if last && by_name.get(name).is_some_and(|w| std::ptr::eq(w.as_ptr(), state)) {
      by_name.remove(name);
    }
    last
  }

  /// Whether `name` is taken by an open state.
  pub fn is_open(&self, name: &str) -> bool {
    self.by_name.lock().get(name).and_then(Weak::upgrade).is_some_and(|s| !s.is_closed())
  }
}
