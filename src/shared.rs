//! The process-wide registry behind `ErrorBudgetTracker.shared(name)`: one
//! tracker per name, reachable from every thread. It holds weak references:
//! a shared tracker lives while one of its handles is open and not collected.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Weak};

use crate::sync::Mutex;
use budget_core::{BudgetError, CheckedConfig};

use crate::state::TrackerState;

static REGISTRY: LazyLock<Mutex<HashMap<String, Weak<TrackerState>>>> = LazyLock::new(Default::default);

/// The config a handle asked for: the config with its alert policy, whether its
/// clock is real, and the keys it gave.
pub struct Expected<'a> {
  pub config: &'a CheckedConfig,
  pub real_clock: bool,
  /// `config.hysteresis` (0 when not given).
  pub hysteresis: f64,
  pub given: &'a [String],
}

/// The open shared tracker called `name`, counted in for a new handle; or a
/// new one from `create`. With `expected` (a caller that gave a config), an
/// existing tracker must have the same config: the error names the fields
/// that differ (those the caller gave; all of them if only derived ones do,
/// such as the default resolution or alert policy).
pub fn attach(
  name: &str,
  expected: Option<Expected>,
  create: impl FnOnce() -> Result<Arc<TrackerState>, BudgetError>,
) -> Result<Arc<TrackerState>, BudgetError> {
  // One lock for attach and for the last close: a tracker cannot be closed
  // between being found here and being counted in.
  let mut registry = REGISTRY.lock();
  if let Some(existing) = registry.get(name).and_then(Weak::upgrade).filter(|s| !s.is_closed()) {
    if let Some(expected) = expected {
      let mut fields = existing.read(|core| core.checked_config()).differences(expected.config);
      if existing.clock.is_real() != expected.real_clock {
        fields.push("clock");
      }
      if existing.read(|core| core.status_hysteresis()) != expected.hysteresis {
        fields.push("hysteresis");
      }
      if fields.iter().any(|f| expected.given.iter().any(|g| g == f)) {
        fields.retain(|f| expected.given.iter().any(|g| g == f));
      }
      if !fields.is_empty() {
        return Err(BudgetError::invalid_value(format!(
          "shared tracker '{name}' already exists with another config ({} differ); attach with shared('{name}') \
           without a config, or use the same config",
          fields.join(", ")
        )));
      }
    }
    existing.count_in();
    return Ok(existing);
  }
  let state = create()?;
  state.set_registry_name(name);
  state.count_in();
  registry.insert(name.to_string(), Arc::downgrade(&state));
  Ok(state)
}

/// Counts a handle of shared tracker `state` out; the last one closes it and
/// frees its name.
pub fn count_out(name: &str, state: &TrackerState) {
  let mut registry = REGISTRY.lock();
  if state.count_out() && registry.get(name).is_some_and(|w| std::ptr::eq(w.as_ptr(), state)) {
    registry.remove(name);
  }
}
