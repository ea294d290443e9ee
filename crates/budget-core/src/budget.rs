//! Budget math on the window's counts, exactly as the reference tracker does it
//! (same floating-point operations in the same order, same rounding).

use crate::config::Config;

/// The four budget states, from best to worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
  /// At least `warning_threshold` of the budget left.
  Healthy,
  /// Less than `warning_threshold` left.
  Warning,
  /// Less than `critical_threshold` left.
  Critical,
  /// Nothing left.
  Exhausted,
}

impl Status {
  /// All statuses, best first.
  pub const ALL: [Status; 4] = [Status::Healthy, Status::Warning, Status::Critical, Status::Exhausted];

  /// The lowercase name used in the JS API.
  pub fn as_str(self) -> &'static str {
    match self {
      Status::Healthy => "healthy",
      Status::Warning => "warning",
      Status::Critical => "critical",
      Status::Exhausted => "exhausted",
    }
  }

  /// The status called `name`, if any.
  pub fn parse(name: &str) -> Option<Status> {
    Status::ALL.into_iter().find(|s| s.as_str() == name)
  }

  /// Index into `ALL`.
  pub fn index(self) -> usize {
    self as usize
  }
}

/// The largest value any counter reaches (events in a bucket, in the window,
/// recorded, dropped): 2^53 − 1, so that every count is exact as a JavaScript
/// number and no sum of two overflows a `u64`. Snapshots with larger counts
/// are refused, and so are records that would pass it.
pub const MAX_COUNT: u64 = crate::config::MAX_SAFE_INTEGER as u64;

/// `a + b` if it stays within `MAX_COUNT`.
#[inline]
pub fn add_count(a: u64, b: u64) -> Option<u64> {
  a.checked_add(b).filter(|&n| n <= MAX_COUNT)
}

/// Success and failure counts over some span of time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
  /// Successful events.
  pub successes: u64,
  /// Failed events.
  pub failures: u64,
}

impl Counts {
  /// All events.
  pub fn total(self) -> u64 {
    self.successes + self.failures
  }

  /// "1 success, 3 failures": the counts for a message, each word agreeing with its number.
  pub fn in_words(self) -> String {
    format!("{}, {}", counted(self.successes, "success", "successes"), counted(self.failures, "failure", "failures"))
  }
}

/// `n` and the word that agrees with it (`one` for 1, else `many`): "1 failure", "0 failures".
pub fn counted(n: u64, one: &str, many: &str) -> String {
  if n == 1 {
    format!("1 {one}")
  } else {
    format!("{n} {many}")
  }
}

/// The unrounded budget figures of a window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
  /// The counts the figures come from.
  pub counts: Counts,
  /// successes / total; 1 with no events.
  pub current_rate: f64,
  /// total × (1 − targetRate): the failures the window may absorb.
  pub budget_total: f64,
  /// max(0, budgetTotal − failures).
  pub budget_remaining: f64,
  /// budgetRemaining / budgetTotal, in [0, 1].
  pub remaining_fraction: f64,
  /// failures / budgetTotal; 0 with no events, no allowed failures, or below `minEvents`.
  pub burn_rate: f64,
  /// The status these figures give.
  pub status: Status,
}

impl Budget {
  /// The figures for `counts` under `config`.
  pub fn of(counts: Counts, config: &Config) -> Budget {
    let total = counts.total();
    let failures = counts.failures as f64;
    let current_rate = if total == 0 { 1.0 } else { counts.successes as f64 / total as f64 };
    let budget_total = total as f64 * (1.0 - config.target_rate);
    let budget_remaining = (budget_total - failures).max(0.0);
    let remaining_fraction = if budget_total <= 0.0 {
      if counts.failures == 0 {
        1.0
      } else {
        0.0
      }
    } else {
      (budget_remaining / budget_total).max(0.0)
    };
    let low_volume = total < config.min_events;
    let burn_rate = if total == 0 || budget_total <= 0.0 || low_volume { 0.0 } else { failures / budget_total };
    let status = if low_volume { Status::Healthy } else { status_for(remaining_fraction, config) };
    Budget { counts, current_rate, budget_total, budget_remaining, remaining_fraction, burn_rate, status }
  }
}

/// Status from the remaining fraction `f`: f ≤ 0 exhausted, f < critical critical,
/// f < warning warning, else healthy.
pub fn status_for(f: f64, config: &Config) -> Status {
  if f <= 0.0 {
    Status::Exhausted
  } else if f < config.critical_threshold {
    Status::Critical
  } else if f < config.warning_threshold {
    Status::Warning
  } else {
    Status::Healthy
  }
}

/// JavaScript's `Math.round(x * 10 ** digits) / 10 ** digits`, bit for bit.
pub fn round_js(x: f64, digits: i32) -> f64 {
  let scale = 10f64.powi(digits);
  js_math_round(x * scale) / scale
}

/// ECMAScript `Math.round`: the nearest integer, ties towards +∞.
fn js_math_round(v: f64) -> f64 {
  if !v.is_finite() {
    return v;
  }
  let floor = v.floor();
  if v - floor >= 0.5 {
    floor + 1.0
  } else {
    floor
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn budget(successes: u64, failures: u64) -> Budget {
    Budget::of(Counts { successes, failures }, &Config::default())
  }

  #[test]
  fn empty_window_is_healthy_with_full_budget() {
    let b = budget(0, 0);
    assert_eq!((b.current_rate, b.budget_total, b.remaining_fraction, b.burn_rate), (1.0, 0.0, 1.0, 0.0));
    assert_eq!(b.status, Status::Healthy);
  }

  #[test]
  fn hand_worked_95_percent() {
    // 100 events, 3 failures: budget 100 × 0.05 = 5, 2 left, 40 % → warning; burn 3/5.
    let b = budget(97, 3);
    assert_eq!(b.current_rate, 0.97);
    assert!((b.budget_total - 5.0).abs() < 1e-12);
    assert!((b.remaining_fraction - 0.4).abs() < 1e-12);
    assert!((b.burn_rate - 0.6).abs() < 1e-12);
    assert_eq!(b.status, Status::Warning);
    // 5 failures of 100 leave a sliver: 1 − 0.95 is 0.050000000000000044 in
    // doubles, so the budget is 5.000000000000004 and the reference (same
    // arithmetic) says critical, not exhausted. A 6th failure exhausts it.
    let b = budget(95, 5);
    assert_eq!(b.status, Status::Critical);
    assert_eq!(b.budget_total, 5.000000000000004);
    let b = budget(94, 6);
    assert_eq!(b.status, Status::Exhausted);
    assert_eq!(b.remaining_fraction, 0.0);
  }

  #[test]
  fn zero_budget_target_of_one() {
    let config = Config { target_rate: 1.0, ..Config::default() };
    let ok = Budget::of(Counts { successes: 10, failures: 0 }, &config);
    assert_eq!((ok.remaining_fraction, ok.burn_rate, ok.status), (1.0, 0.0, Status::Healthy));
    let bad = Budget::of(Counts { successes: 10, failures: 1 }, &config);
    assert_eq!((bad.remaining_fraction, bad.burn_rate, bad.status), (0.0, 0.0, Status::Exhausted));
  }

  #[test]
  fn below_min_events_is_healthy_and_not_burning() {
    let config = Config { min_events: 100, ..Config::default() };
    let b = Budget::of(Counts { successes: 2, failures: 1 }, &config);
    assert_eq!((b.status, b.burn_rate), (Status::Healthy, 0.0));
    assert_eq!(b.remaining_fraction, 0.0);
  }

  #[test]
  fn rounding_matches_math_round() {
    assert_eq!(round_js(0.12345, 4), 0.1235); // 1234.5 → ties up
    assert_eq!(round_js(2.675, 2), 2.68); // 2.675 × 100 is exactly 267.5 in IEEE doubles: up
    assert_eq!(round_js(1.005, 2), 1.0); // 1.005 × 100 is 100.49999999999999: down
    assert_eq!(round_js(66.66666666666667, 1), 66.7);
    assert_eq!(round_js(0.0, 2), 0.0);
  }

  #[test]
  fn status_names_round_trip() {
    for s in Status::ALL {
      assert_eq!(Status::parse(s.as_str()), Some(s));
    }
    assert_eq!(Status::parse("Healthy"), None);
  }
}
