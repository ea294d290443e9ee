//! The rolling window: a ring of per-bucket counters with running sums.
//!
//! Bucket `k` holds the events with `k × resolution ≤ t < (k + 1) × resolution`.
//! At time `now` it counts while its start is inside the window,
//! `k × resolution > now − window`, which is exactly the reference's
//! `now − t < window` for events stamped at a bucket start, and within one
//! bucket for the rest. Memory is the ring, whatever the number of events.

use crate::budget::Counts;

/// Where an event went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
  /// Counted in its bucket.
  Counted,
  /// Older than the window: not counted.
  TooOld,
}

/// Bucketed counts of the most recent `window_ms`.
#[derive(Debug, Clone)]
pub struct Window {
  window_ms: i64,
  resolution_ms: i64,
  successes: Vec<u64>,
  failures: Vec<u64>,
  sum: Counts,
  /// Latest time the window was moved to; never decreases.
  now_ms: i64,
  /// Every bucket below this index has been cleared.
  floor_k: i64,
  /// Every bucket in `floor_k..scan_k` is empty: where the search for the
  /// oldest non-empty bucket resumes.
  scan_k: i64,
}

impl Window {
  /// An empty window at time `now_ms`.
  pub fn new(window_ms: i64, resolution_ms: i64, now_ms: i64) -> Self {
    let n = ((window_ms + resolution_ms - 1) / resolution_ms) as usize;
    let mut w = Window {
      window_ms,
      resolution_ms,
      successes: vec![0; n],
      failures: vec![0; n],
      sum: Counts::default(),
      now_ms,
      floor_k: 0,
      scan_k: 0,
    };
    w.floor_k = w.first_live_bucket(now_ms);
    w.scan_k = w.floor_k;
    w
  }

  /// The counts inside the window.
  pub fn counts(&self) -> Counts {
    self.sum
  }

  /// The time the window was last moved to.
  pub fn now_ms(&self) -> i64 {
    self.now_ms
  }

  /// Bucket width in milliseconds.
  pub fn resolution_ms(&self) -> i64 {
    self.resolution_ms
  }

  /// Window length in milliseconds.
  pub fn window_ms(&self) -> i64 {
    self.window_ms
  }

  /// Bytes of bucket storage.
  pub fn bucket_bytes(&self) -> usize {
    self.successes.len() * 2 * std::mem::size_of::<u64>()
  }

  fn bucket_of(&self, t: i64) -> i64 {
    t.div_euclid(self.resolution_ms)
  }

  /// The oldest bucket still inside the window at `now`: smallest k with
  /// k × resolution > now − window.
  fn first_live_bucket(&self, now: i64) -> i64 {
    (now - self.window_ms).div_euclid(self.resolution_ms) + 1
  }

  fn slot(&self, k: i64) -> usize {
    k.rem_euclid(self.successes.len() as i64) as usize
  }

  /// Moves the window to `now` (ignored if earlier than the current time),
  /// expiring the buckets that left it.
  pub fn advance(&mut self, now: i64) {
    if now <= self.now_ms {
      return;
    }
    self.now_ms = now;
    let live = self.first_live_bucket(now);
    if live <= self.floor_k {
      return;
    }
    if live - self.floor_k >= self.successes.len() as i64 {
      self.successes.fill(0);
      self.failures.fill(0);
      self.sum = Counts::default();
    } else {
      for k in self.floor_k..live {
        let i = self.slot(k);
        self.sum.successes -= std::mem::take(&mut self.successes[i]);
        self.sum.failures -= std::mem::take(&mut self.failures[i]);
      }
    }
    self.floor_k = live;
    self.scan_k = self.scan_k.max(live);
  }

  /// Adds `successes` and `failures` at time `at` (clamped to now if later).
  pub fn add(&mut self, at: i64, successes: u64, failures: u64) -> Placement {
    let k = self.bucket_of(at.min(self.now_ms));
    if k < self.floor_k {
      return Placement::TooOld;
    }
    let i = self.slot(k);
    self.successes[i] += successes;
    self.failures[i] += failures;
    self.sum.successes += successes;
    self.sum.failures += failures;
    self.scan_k = self.scan_k.min(k);
    Placement::Counted
  }

  /// The next instant at which a non-empty bucket leaves the window, if any:
  /// the only moments the counts, and so the status, can change on their own.
  pub fn next_expiry_ms(&mut self) -> Option<i64> {
    let newest = self.bucket_of(self.now_ms);
    while self.scan_k <= newest {
      let i = self.slot(self.scan_k);
      if self.successes[i] != 0 || self.failures[i] != 0 {
        return Some(self.scan_k * self.resolution_ms + self.window_ms);
      }
      self.scan_k += 1;
    }
    None
  }

  /// Counts of the buckets that start within the last `span_ms` before now
  /// (k × resolution > now − span). O(buckets in the span).
  pub fn counts_over(&self, span_ms: i64) -> Counts {
    let newest = self.bucket_of(self.now_ms);
    let oldest = self.first_live_bucket(self.now_ms).max((self.now_ms - span_ms).div_euclid(self.resolution_ms) + 1);
    let mut c = Counts::default();
    for k in oldest..=newest {
      let i = self.slot(k);
      c.successes += self.successes[i];
      c.failures += self.failures[i];
    }
    c
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn event_at_bucket_start_counts_until_exactly_one_window_later() {
    let mut w = Window::new(1000, 100, 0);
    w.advance(500);
    assert_eq!(w.add(500, 0, 1), Placement::Counted);
    w.advance(1499);
    assert_eq!(w.counts().failures, 1);
    w.advance(1500); // now − t = window: the reference drops it too
    assert_eq!(w.counts().failures, 0);
  }

  #[test]
  fn too_old_events_are_refused_and_out_of_order_ones_land() {
    let mut w = Window::new(1000, 100, 0);
    w.advance(5000);
    assert_eq!(w.add(4000, 1, 0), Placement::TooOld);
    assert_eq!(w.add(4100, 1, 0), Placement::Counted);
    assert_eq!(w.add(4950, 0, 1), Placement::Counted);
    assert_eq!(w.counts(), Counts { successes: 1, failures: 1 });
    assert_eq!(w.next_expiry_ms(), Some(5100));
  }

  #[test]
  fn a_long_gap_clears_everything() {
    let mut w = Window::new(1000, 100, 0);
    w.add(0, 5, 5);
    w.advance(1_000_000);
    assert_eq!(w.counts(), Counts::default());
    assert_eq!(w.next_expiry_ms(), None);
    w.add(1_000_000, 1, 0);
    assert_eq!(w.counts(), Counts { successes: 1, failures: 0 });
  }

  #[test]
  fn negative_times_use_floor_buckets() {
    let mut w = Window::new(1000, 100, -5000);
    assert_eq!(w.add(-5000, 0, 1), Placement::Counted);
    assert_eq!(w.next_expiry_ms(), Some(-4000));
  }

  #[test]
  fn counts_over_a_span() {
    let mut w = Window::new(1000, 100, 0);
    for t in (0..1000).step_by(100) {
      w.advance(t);
      w.add(t, 1, 0);
    }
    // now 900: buckets 7, 8, 9 start after 900 − 300.
    assert_eq!(w.counts_over(300).successes, 3);
    assert_eq!(w.counts_over(1000).successes, 10);
    assert_eq!(w.counts_over(5000).successes, 10);
  }
}
