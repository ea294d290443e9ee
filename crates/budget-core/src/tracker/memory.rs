//! What a tracker holds in memory: its window, which follows the events
//! (`window.rs`), and its configuration and alert rules, fixed at creation.

use super::{ArmedRule, Tracker};
use crate::rule::AlertRule;
use crate::window::Layout;

impl Tracker {
  /// Heap bytes of the window (its buckets, spans and running sums): changes
  /// as the window grows, shrinks or changes layout. A field read.
  #[inline]
  pub fn window_bytes(&self) -> usize {
    self.window.heap_bytes()
  }

  /// Heap bytes of the whole tracker, its own struct excluded: the window
  /// plus the configuration's and the armed rules' allocations.
  pub fn heap_bytes(&self) -> usize {
    let rule_names = |rules: &[AlertRule]| rules.iter().map(|r| r.name.capacity()).sum::<usize>();
    let configured = self.config.alerts.as_deref().map_or(0, |rules| size_of_val(rules) + rule_names(rules));
    let armed =
      self.rules.capacity() * size_of::<ArmedRule>() + self.rules.iter().map(|r| r.rule.name.capacity()).sum::<usize>();
    self.window_bytes() + configured + armed
  }

  /// The layout the window's buckets are in now (dense or sparse).
  pub fn window_layout(&self) -> Layout {
    self.window.layout()
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::config::Config;
  use crate::tracker::Transition;

  #[test]
  fn a_default_day_fed_one_solve_a_minute_holds_at_most_32_kib() {
    // The default 24 h window (43 200 buckets of 2 s) and its default alert policy.
    let config = Config { window_ms: 86_400_000, resolution_ms: 2_000, ..Config::default() };
    let mut t = Tracker::new(config, 0).unwrap();
    // The binding adds its own state (TrackerState, ≈ 0.5 KiB, and 256 bytes of
    // allocator headers) to this: the budgets are 4 KiB idle, 32 KiB for the day.
    let own = size_of::<Tracker>();
    let idle = own + t.heap_bytes();
    assert!(idle <= 3 * 1024, "idle: {idle} bytes");
    let mut out: Vec<Transition> = Vec::new();
    for minute in 0..1440 {
      let at = minute * 60_000;
      t.record(at, at, 1, 0, &mut out);
    }
    assert_eq!(t.counts().total(), 1440);
    assert_eq!(t.window_layout(), Layout::Sparse);
    // Before: 43 200 × 16 bytes = 675 KiB, whatever the events.
    let day = own + t.heap_bytes();
    assert!(day <= 30 * 1024, "1/min: {day} bytes");
  }
}
