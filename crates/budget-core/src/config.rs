//! Tracker configuration and its validation.

use crate::error::{BudgetError, Result};
use crate::rule::AlertRule;

/// The largest number of buckets a window may have (16 bytes each: 16 MiB).
pub const MAX_BUCKETS: i64 = 1_000_000;
/// The largest integer a JS number holds exactly.
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// A validated tracker configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
  /// Fraction of events that must succeed, in (0, 1].
  pub target_rate: f64,
  /// Length of the rolling window in milliseconds.
  pub window_ms: i64,
  /// Remaining-budget fraction below which the status is `warning`.
  pub warning_threshold: f64,
  /// Remaining-budget fraction below which the status is `critical`.
  pub critical_threshold: f64,
  /// Below this many events in the window the tracker reports `healthy` and burn rate 0.
  pub min_events: u64,
  /// Width of one bucket of the window in milliseconds.
  pub resolution_ms: i64,
  /// The alert policy; `None` for the default one (see `alerts::default_policy`).
  pub alerts: Option<Vec<AlertRule>>,
}

impl Default for Config {
  fn default() -> Self {
    let window_ms = 3_600_000;
    Self {
      target_rate: 0.95,
      window_ms,
      warning_threshold: 0.5,
      critical_threshold: 0.1,
      min_events: 0,
      resolution_ms: default_resolution_ms(window_ms),
      alerts: None,
    }
  }
}

/// The default bucket width: a 43 200th of the window, at least 1 ms (83 ms for
/// an hour, 2 s for a day, 1 min for 30 days), so that the shortest default
/// alert window (window / 3456) spans 12.5 buckets (rounded to 13).
pub fn default_resolution_ms(window_ms: i64) -> i64 {
  (window_ms / 43_200).max(1)
}

impl Config {
  /// Number of buckets in the ring: enough to hold every bucket that can be
  /// inside the window at once.
  pub fn bucket_count(&self) -> usize {
    ((self.window_ms + self.resolution_ms - 1) / self.resolution_ms) as usize
  }

  /// Checks every field's range; the message names the field and the allowed range.
  pub fn validate(&self) -> Result<()> {
    if !(self.target_rate > 0.0 && self.target_rate <= 1.0) {
      return Err(BudgetError::out_of_range(format!("must be in (0, 1], got {}", self.target_rate)).at("targetRate"));
    }
    unit_interval("warningThreshold", self.warning_threshold)?;
    unit_interval("criticalThreshold", self.critical_threshold)?;
    if self.critical_threshold > self.warning_threshold {
      return Err(
        BudgetError::out_of_range(format!(
          "({}) must not exceed warningThreshold ({})",
          self.critical_threshold, self.warning_threshold
        ))
        .at("criticalThreshold"),
      );
    }
    positive_integer("windowMs", self.window_ms)?;
    positive_integer("resolutionMs", self.resolution_ms)?;
    if self.resolution_ms > self.window_ms {
      return Err(
        BudgetError::out_of_range(format!("({}) must not exceed windowMs ({})", self.resolution_ms, self.window_ms))
          .at("resolutionMs"),
      );
    }
    let buckets = (self.window_ms + self.resolution_ms - 1) / self.resolution_ms;
    if buckets > MAX_BUCKETS {
      return Err(
        BudgetError::out_of_range(format!(
          "/ resolutionMs must be at most {MAX_BUCKETS} buckets, got {buckets}: raise resolutionMs"
        ))
        .at("windowMs"),
      );
    }
    Ok(())
  }
}

fn unit_interval(field: &str, value: f64) -> Result<()> {
  if (0.0..=1.0).contains(&value) {
    Ok(())
  } else {
    Err(BudgetError::out_of_range(format!("must be in [0, 1], got {value}")).at(field))
  }
}

fn positive_integer(field: &str, value: i64) -> Result<()> {
  if (1..=MAX_SAFE_INTEGER).contains(&value) {
    Ok(())
  } else {
    Err(BudgetError::out_of_range(format!("must be a positive integer of milliseconds, got {value}")).at(field))
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn with(f: impl FnOnce(&mut Config)) -> Result<()> {
    let mut c = Config::default();
    f(&mut c);
    c.validate()
  }

  #[test]
  fn defaults_are_the_reference_defaults() {
    let c = Config::default();
    assert_eq!((c.target_rate, c.window_ms, c.warning_threshold, c.critical_threshold), (0.95, 3_600_000, 0.5, 0.1));
    assert_eq!((c.min_events, c.resolution_ms, c.bucket_count()), (0, 83, 43_374));
    assert!(c.validate().is_ok());
  }

  #[test]
  fn rejects_each_out_of_range_field_by_name() {
    type Edit = Box<dyn FnOnce(&mut Config)>;
    let cases: [(&str, Edit); 8] = [
      ("targetRate", Box::new(|c| c.target_rate = 0.0)),
      ("targetRate", Box::new(|c| c.target_rate = 1.01)),
      ("targetRate", Box::new(|c| c.target_rate = f64::NAN)),
      ("warningThreshold", Box::new(|c| c.warning_threshold = 1.5)),
      ("criticalThreshold", Box::new(|c| c.critical_threshold = -0.1)),
      ("criticalThreshold (0.6) must not exceed", Box::new(|c| c.critical_threshold = 0.6)),
      ("windowMs", Box::new(|c| c.window_ms = 0)),
      (
        "resolutionMs (2000) must not exceed",
        Box::new(|c| {
          c.window_ms = 1000;
          c.resolution_ms = 2000
        }),
      ),
    ];
    for (needle, f) in cases {
      let err = with(f).unwrap_err();
      assert_eq!(err.code, "ERR_OUT_OF_RANGE");
      let message = err.render("config");
      assert!(message.contains(needle), "{message} should name {needle}");
    }
  }

  #[test]
  fn accepts_the_edges() {
    assert!(with(|c| c.target_rate = 1.0).is_ok());
    assert!(with(|c| {
      c.warning_threshold = 0.0;
      c.critical_threshold = 0.0
    })
    .is_ok());
    assert!(with(|c| c.resolution_ms = c.window_ms).is_ok());
  }

  #[test]
  fn bounds_the_bucket_count() {
    let err = with(|c| {
      c.window_ms = 86_400_000;
      c.resolution_ms = 1
    })
    .unwrap_err();
    assert!(err.message.contains("at most 1000000 buckets"));
  }
}
