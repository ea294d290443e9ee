//! The rolling window: a ring of per-bucket counters with running sums.
//!
//! Bucket `k` holds the events with `k × resolution ≤ t < (k + 1) × resolution`.
//! At time `now` it counts while its start is inside the window,
//! `k × resolution > now − window`, which is exactly the reference's
//! `now − t < window` for events stamped at a bucket start, and within one
//! bucket for the rest. Memory is the ring, whatever the number of events:
//! 16 bytes a bucket (a success and a failure counter).
//!
//! Hot path: `record()` at now lands in the newest bucket, whose index, slot and
//! start are cached (no division), and the next expiry is cached until a
//! bucket with events leaves a span, so a record costs a few additions.

use crate::budget::Counts;

/// Where an event went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
  /// Counted in its bucket.
  Counted,
  /// Older than the window: not counted.
  TooOld,
  /// Refused, nothing changed: a counter would pass `MAX_COUNT`.
  Refused,
}

/// Running counts of the buckets that start within the last `span_ms`.
#[derive(Debug, Clone)]
struct Span {
  span_ms: i64,
  /// Buckets below this index are no longer in the span.
  floor_k: i64,
  /// Every bucket in `floor_k..scan_k` is empty: where the search for the
  /// oldest non-empty bucket of the span resumes.
  scan_k: i64,
}

/// Bucketed counts of the most recent `window_ms`, plus running sums over
/// shorter tracked spans (the alert windows), all O(1) amortised per call.
#[derive(Debug, Clone)]
pub struct Window {
  resolution_ms: i64,
  successes: Vec<u64>,
  failures: Vec<u64>,
  /// `spans[0]` is the whole window; it alone clears the buckets it leaves.
  spans: Vec<Span>,
  /// `sums[s]`: the running counts of `spans[s]` (apart, so that a record adds
  /// to all of them in one tight loop).
  sums: Vec<Counts>,
  /// Latest time the window was moved to; never decreases.
  now_ms: i64,
  /// `bucket_of(now_ms)`, its first millisecond and its slot in the ring.
  newest_k: i64,
  newest_start_ms: i64,
  newest_slot: usize,
  /// What `next_expiry_ms()` returns, once computed; `None` when it must be
  /// recomputed (a bucket with events left a span).
  next_expiry: Option<Option<i64>>,
  /// `advance()` has nothing to expire before this instant.
  floors_move_at: i64,
}

impl Window {
  /// An empty window at time `now_ms`, with running sums over each of
  /// `tracked_spans_ms` (each at most `window_ms`).
  pub fn new(window_ms: i64, resolution_ms: i64, now_ms: i64, tracked_spans_ms: &[i64]) -> Self {
    let n = ((window_ms + resolution_ms - 1) / resolution_ms) as usize;
    let spans = std::iter::once(window_ms)
      .chain(tracked_spans_ms.iter().copied())
      .map(|span_ms| {
        // A longer span could not be kept: the window clears its buckets first.
        debug_assert!(span_ms <= window_ms, "span {span_ms} ms is longer than the window {window_ms} ms");
        let floor_k = first_live_bucket(now_ms, span_ms, resolution_ms);
        Span { span_ms, floor_k, scan_k: floor_k }
      })
      .collect::<Vec<_>>();
    let mut window = Window {
      resolution_ms,
      successes: vec![0; n],
      failures: vec![0; n],
      sums: vec![Counts::default(); spans.len()],
      spans,
      now_ms,
      newest_k: 0,
      newest_start_ms: 0,
      newest_slot: 0,
      next_expiry: Some(None),
      floors_move_at: 0,
    };
    window.set_newest();
    window.floors_move_at = window.floors_move_at();
    window
  }

  fn set_newest(&mut self) {
    self.newest_k = self.bucket_of(self.now_ms);
    self.newest_start_ms = self.newest_k * self.resolution_ms;
    self.newest_slot = self.slot(self.newest_k);
  }

  /// The counts inside the window.
  pub fn counts(&self) -> Counts {
    self.sums[0]
  }

  /// The counts inside tracked span `i` (0-based in `tracked_spans_ms`).
  pub fn span_counts(&self, i: usize) -> Counts {
    self.sums[i + 1]
  }

  /// The time the window was last moved to.
  pub fn now_ms(&self) -> i64 {
    self.now_ms
  }

  fn bucket_of(&self, t: i64) -> i64 {
    t.div_euclid(self.resolution_ms)
  }

  fn slot(&self, k: i64) -> usize {
    k.rem_euclid(self.successes.len() as i64) as usize
  }

  /// Moves the window to `now` (ignored if earlier than the current time),
  /// expiring the buckets that left the window and each span. Returns whether
  /// any count changed (a bucket with events left the window or a span).
  pub fn advance(&mut self, now: i64) -> bool {
    if now <= self.now_ms {
      return false;
    }
    // Buckets after the newest one so far hold no events yet (their slots may
    // still hold buckets the whole window is about to clear): spans skip them.
    let newest_with_events = self.newest_k;
    self.now_ms = now;
    if now >= self.newest_start_ms + self.resolution_ms {
      self.set_newest();
    }
    if now < self.floors_move_at {
      // No span's oldest bucket left (the slot of a new newest bucket was
      // cleared when the window's floor passed its previous bucket).
      return false;
    }
    let n = self.successes.len() as i64;
    let mut changed = false;
    // Shorter spans first: they read buckets the whole window may clear below.
    for s in (0..self.spans.len()).rev() {
      let live = first_live_bucket(now, self.spans[s].span_ms, self.resolution_ms);
      let floor = self.spans[s].floor_k;
      if live <= floor {
        continue;
      }
      let clears = s == 0;
      if live - floor >= n {
        changed |= self.sums[s] != Counts::default();
        self.sums[s] = Counts::default();
        if clears {
          self.successes.fill(0);
          self.failures.fill(0);
        }
      } else {
        let upto = if clears { live } else { live.min(newest_with_events + 1) };
        for k in floor..upto {
          let i = self.slot(k);
          let (ok, bad) = (self.successes[i], self.failures[i]);
          changed |= ok != 0 || bad != 0;
          self.sums[s].successes -= ok;
          self.sums[s].failures -= bad;
          if clears {
            self.successes[i] = 0;
            self.failures[i] = 0;
          }
        }
      }
      let span = &mut self.spans[s];
      span.floor_k = live;
      span.scan_k = span.scan_k.max(live);
    }
    self.floors_move_at = self.floors_move_at();
    // Each span's first non-empty bucket, and so the next expiry, stays the
    // same unless a bucket with events left.
    if changed {
      self.next_expiry = None;
    }
    changed
  }

  /// The first instant at which some span's floor passes its oldest bucket.
  fn floors_move_at(&self) -> i64 {
    self.spans.iter().map(|s| s.floor_k * self.resolution_ms + s.span_ms).min().unwrap_or(i64::MAX)
  }

  /// Whether an event at `at` would be counted (not older than the window).
  #[inline]
  pub fn accepts(&self, at: i64) -> bool {
    at >= self.newest_start_ms || self.bucket_of(at) >= self.spans[0].floor_k
  }

  /// Adds `successes` and `failures` at time `at` (clamped to now if later).
  #[inline]
  pub fn add(&mut self, at: i64, successes: u64, failures: u64) -> Placement {
    if at >= self.newest_start_ms {
      let i = self.newest_slot;
      if self.successes[i] != 0 || self.failures[i] != 0 {
        // The common case: the newest bucket already has events, so it is
        // already no earlier than each span's first non-empty bucket
        // (`scan_k` and the next expiry stand); it is in every span.
        self.successes[i] += successes;
        self.failures[i] += failures;
        for sum in &mut self.sums {
          sum.successes += successes;
          sum.failures += failures;
        }
        return Placement::Counted;
      }
      self.add_to(self.newest_k, successes, failures);
      return Placement::Counted;
    }
    let k = self.bucket_of(at);
    if k < self.spans[0].floor_k {
      return Placement::TooOld;
    }
    self.add_to(k, successes, failures);
    Placement::Counted
  }

  /// Adds to live bucket `k` and the spans that hold it; keeps `scan_k` and
  /// the cached next expiry right.
  fn add_to(&mut self, k: i64, successes: u64, failures: u64) {
    let i = self.slot(k);
    self.successes[i] += successes;
    self.failures[i] += failures;
    let start_ms = k * self.resolution_ms;
    let mut expiry = self.next_expiry.flatten();
    for (span, sum) in self.spans.iter_mut().zip(&mut self.sums).filter(|(span, _)| k >= span.floor_k) {
      sum.successes += successes;
      sum.failures += failures;
      span.scan_k = span.scan_k.min(k);
      // Bucket k is now this span's first non-empty one, or a later one.
      let at = start_ms + span.span_ms;
      expiry = Some(expiry.map_or(at, |t| t.min(at)));
    }
    if self.next_expiry.is_some() && successes + failures > 0 {
      self.next_expiry = Some(expiry);
    }
  }

  /// The next instant at which a non-empty bucket leaves the window or one of
  /// the tracked spans, if any: the only moments the counts, and so the
  /// status and the alerts, can change on their own.
  pub fn next_expiry_ms(&mut self) -> Option<i64> {
    if let Some(next) = self.next_expiry {
      return next;
    }
    let newest = self.newest_k;
    let mut next: Option<i64> = None;
    for s in 0..self.spans.len() {
      let mut k = self.spans[s].scan_k;
      while k <= newest {
        let i = self.slot(k);
        if self.successes[i] != 0 || self.failures[i] != 0 {
          let at = k * self.resolution_ms + self.spans[s].span_ms;
          next = Some(next.map_or(at, |n| n.min(at)));
          break;
        }
        k += 1;
      }
      self.spans[s].scan_k = k;
    }
    self.next_expiry = Some(next);
    next
  }

  /// The non-empty buckets inside the window, oldest first, as
  /// (start ms, successes, failures).
  pub fn buckets(&self) -> impl Iterator<Item = (i64, u64, u64)> + '_ {
    (self.spans[0].floor_k..=self.bucket_of(self.now_ms)).filter_map(move |k| {
      let i = self.slot(k);
      let (s, f) = (self.successes[i], self.failures[i]);
      (s != 0 || f != 0).then_some((k * self.resolution_ms, s, f))
    })
  }

  /// Counts of the buckets that start within the last `span_ms` before now
  /// (k × resolution > now − span). O(buckets in the span).
  pub fn counts_over(&self, span_ms: i64) -> Counts {
    let newest = self.bucket_of(self.now_ms);
    let oldest = self.spans[0].floor_k.max(first_live_bucket(self.now_ms, span_ms, self.resolution_ms));
    let mut c = Counts::default();
    for k in oldest..=newest {
      let i = self.slot(k);
      c.successes += self.successes[i];
      c.failures += self.failures[i];
    }
    c
  }
}

impl Window {
  /// The oldest and the newest bucket index inside the window.
  pub(crate) fn live_range(&self) -> (i64, i64) {
    (self.spans[0].floor_k, self.newest_k)
  }

  /// The counts of live bucket `k` (successes, failures).
  pub(crate) fn bucket(&self, k: i64) -> (u64, u64) {
    let i = self.slot(k);
    (self.successes[i], self.failures[i])
  }

  /// Sets live bucket `k` (inside `live_range()`) to the given counts, keeping
  /// every span's running sums and the next expiry right. For the fleet
  /// (`tracker/fleet.rs`), which installs counts other workers recorded.
  pub(crate) fn set_bucket(&mut self, k: i64, successes: u64, failures: u64) {
    debug_assert!(k >= self.spans[0].floor_k && k <= self.newest_k, "bucket {k} is not live");
    let i = self.slot(k);
    let (old_s, old_f) = (self.successes[i], self.failures[i]);
    if (old_s, old_f) == (successes, failures) {
      return;
    }
    self.successes[i] = successes;
    self.failures[i] = failures;
    for (span, sum) in self.spans.iter_mut().zip(&mut self.sums).filter(|(span, _)| k >= span.floor_k) {
      sum.successes = sum.successes - old_s + successes;
      sum.failures = sum.failures - old_f + failures;
      span.scan_k = span.scan_k.min(k);
    }
    // Recomputed on demand: a bucket may have become empty or non-empty.
    self.next_expiry = None;
  }
}

/// The oldest bucket still inside a span at `now`: the smallest k with
/// k × resolution > now − span.
fn first_live_bucket(now: i64, span_ms: i64, resolution_ms: i64) -> i64 {
  (now - span_ms).div_euclid(resolution_ms) + 1
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn event_at_bucket_start_counts_until_exactly_one_window_later() {
    let mut w = Window::new(1000, 100, 0, &[]);
    w.advance(500);
    assert_eq!(w.add(500, 0, 1), Placement::Counted);
    w.advance(1499);
    assert_eq!(w.counts().failures, 1);
    w.advance(1500); // now − t = window: the reference drops it too
    assert_eq!(w.counts().failures, 0);
  }

  #[test]
  fn too_old_events_are_refused_and_out_of_order_ones_land() {
    let mut w = Window::new(1000, 100, 0, &[]);
    w.advance(5000);
    assert_eq!(w.add(4000, 1, 0), Placement::TooOld);
    assert_eq!(w.add(4100, 1, 0), Placement::Counted);
    assert_eq!(w.add(4950, 0, 1), Placement::Counted);
    assert_eq!(w.counts(), Counts { successes: 1, failures: 1 });
    assert_eq!(w.next_expiry_ms(), Some(5100));
  }

  #[test]
  fn a_long_gap_clears_everything() {
    let mut w = Window::new(1000, 100, 0, &[]);
    w.add(0, 5, 5);
    w.advance(1_000_000);
    assert_eq!(w.counts(), Counts::default());
    assert_eq!(w.next_expiry_ms(), None);
    w.add(1_000_000, 1, 0);
    assert_eq!(w.counts(), Counts { successes: 1, failures: 0 });
  }

  #[test]
  fn negative_times_use_floor_buckets() {
    let mut w = Window::new(1000, 100, -5000, &[]);
    assert_eq!(w.add(-5000, 0, 1), Placement::Counted);
    assert_eq!(w.next_expiry_ms(), Some(-4000));
  }

  #[test]
  fn counts_over_a_span() {
    let mut w = Window::new(1000, 100, 0, &[]);
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

#[cfg(test)]
mod span_tests {
  use super::*;

  #[test]
  fn tracked_spans_keep_their_own_running_sums() {
    // Window 1000, spans 200 and 500, buckets of 100.
    let mut w = Window::new(1000, 100, 0, &[200, 500]);
    for t in (0..1000).step_by(100) {
      w.advance(t);
      w.add(t, 1, (t == 400) as u64);
    }
    // now 900: span 200 holds buckets 8, 9; span 500 buckets 5..9; window 0..9.
    assert_eq!(w.span_counts(0), Counts { successes: 2, failures: 0 });
    assert_eq!(w.span_counts(1), Counts { successes: 5, failures: 0 });
    assert_eq!(w.counts(), Counts { successes: 10, failures: 1 });
    assert_eq!(w.counts_over(500), w.span_counts(1));
    // Next expiry: bucket 8 leaves span 200 at 1000, bucket 0 the window at 1000.
    assert_eq!(w.next_expiry_ms(), Some(1000));
    w.advance(1350);
    // At 1350 span 500 holds buckets with k × 100 > 850: bucket 9 only; the
    // window still holds buckets 4..9 (the failure, bucket 4, leaves at 1400).
    assert_eq!(w.span_counts(1), Counts { successes: 1, failures: 0 });
    assert_eq!(w.counts(), Counts { successes: 6, failures: 1 });
    w.advance(1400);
    assert_eq!(w.counts(), Counts { successes: 5, failures: 0 });
    // A late event older than a span but inside the window counts in the window only.
    w.add(600, 0, 1);
    assert_eq!(w.counts().failures, 1);
    assert_eq!(w.span_counts(0).failures, 0);
    assert_eq!(w.span_counts(1).failures, 0);
    // A jump past everything empties every span.
    w.advance(10_000);
    assert_eq!(
      (w.counts(), w.span_counts(0), w.span_counts(1)),
      (Counts::default(), Counts::default(), Counts::default())
    );
    assert_eq!(w.next_expiry_ms(), None);
  }
}
