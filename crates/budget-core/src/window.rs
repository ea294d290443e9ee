//! The rolling window: per-bucket counters with running sums.
//!
//! Bucket `k` holds the events with `k × resolution ≤ t < (k + 1) × resolution`.
//! At time `now` it counts while its start is inside the window,
//! `k × resolution > now − window`, which is exactly the reference's
//! `now − t < window` for events stamped at a bucket start, and within one
//! bucket for the rest.
//!
//! Memory follows the events, bounded by the buckets. The buckets are held in
//! one of two layouts, picked by density ([`Layout::Auto`]):
//!
//! - **sparse**: only the non-empty buckets, oldest first, 12 bytes each (the
//!   bucket index modulo 2^32 and two `u32` counters) in a ring that grows as
//!   needed. A 24 h window of 43 200 buckets fed one solve a minute holds
//!   1 440 of them (≈ 24 KiB with the ring's spare room); an idle one none.
//! - **dense**: every bucket of the window, 16 bytes each (two `u64`
//!   counters), whatever the events, as in the first releases.
//!
//! A sparse window turns dense when it would hold more than a quarter of the
//! buckets (where it would take about as much as the dense ring once the
//! ring's spare room is counted) or when one bucket's count would pass
//! `u32::MAX`; a dense one turns sparse again when at most a sixteenth of its
//! buckets hold events (and every count fits a `u32`). Both layouts hold the
//! same counts, so decisions, snapshots and expiry times do not depend on it.
//!
//! Hot path: `record()` at now lands in the newest bucket, whose index, slot and
//! start are cached (no division), and the next expiry is cached until a
//! bucket with events leaves a span, so a record costs a few additions. In the
//! sparse layout each span keeps a cursor on its oldest entry, so expiring
//! and finding the next expiry cost O(1) amortised there too.

use std::collections::VecDeque;

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

/// How a window holds its buckets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
  /// Sparse while few buckets hold events, dense when many do (the default).
  #[default]
  Auto,
  /// Always every bucket (16 bytes each).
  Dense,
  /// Only the non-empty buckets, as long as every count fits a `u32` (a
  /// larger one makes the window dense, for good).
  Sparse,
}

/// A non-empty bucket of the sparse layout.
#[derive(Debug, Clone, Copy)]
struct Entry {
  /// The bucket index modulo 2^32: live buckets span at most `MAX_BUCKETS`
  /// (far below 2^31) indices, so it is read back from the window's floor.
  k: u32,
  successes: u32,
  failures: u32,
}

/// The counters themselves.
#[derive(Debug, Clone)]
enum Store {
  Dense {
    successes: Vec<u64>,
    failures: Vec<u64>,
    /// How many buckets hold events.
    occupied: usize,
  },
  Sparse(VecDeque<Entry>),
}

/// Running counts of the buckets that start within the last `span_ms`.
#[derive(Debug, Clone)]
struct Span {
  span_ms: i64,
  /// Buckets below this index are no longer in the span.
  floor_k: i64,
  /// Dense: every bucket in `floor_k..scan_k` is empty: where the search for
  /// the oldest non-empty bucket of the span resumes.
  scan_k: i64,
  /// Sparse: the index in the ring of the span's oldest entry (the first
  /// with `k ≥ floor_k`; the ring's length when there is none).
  cursor: usize,
}

/// Bucketed counts of the most recent `window_ms`, plus running sums over
/// shorter tracked spans (the alert windows), all O(1) amortised per call.
#[derive(Debug, Clone)]
pub struct Window {
  resolution_ms: i64,
  /// Buckets in the window.
  n: usize,
  store: Store,
  layout: Layout,
  /// Dense only: do not turn sparse before the floor reaches this bucket (a
  /// count too large for the sparse layout was found below it).
  sparse_from_k: i64,
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
  /// `heap_bytes()`, kept current wherever an allocation may change.
  bytes: usize,
}

/// The index of a sparse entry, read back from the window's floor (every
/// entry is at or above it, by fewer than 2^31 buckets).
#[inline]
fn key_of(floor_k: i64, e: &Entry) -> i64 {
  floor_k + e.k.wrapping_sub(floor_k as u32) as i64
}

/// Whether a count fits a sparse entry.
#[inline]
fn fits(successes: u64, failures: u64) -> bool {
  (successes | failures) >> 32 == 0
}

impl Window {
  /// An empty window at time `now_ms`, with running sums over each of
  /// `tracked_spans_ms` (each from `resolution_ms` to `window_ms`), in the
  /// [`Layout::Auto`] layout.
  pub fn new(window_ms: i64, resolution_ms: i64, now_ms: i64, tracked_spans_ms: &[i64]) -> Self {
    Self::with_layout(window_ms, resolution_ms, now_ms, tracked_spans_ms, Layout::Auto)
  }

  /// `new` with the layout given: [`Layout::Dense`] and [`Layout::Sparse`]
  /// pin one (for tests and benchmarks comparing them).
  pub fn with_layout(
    window_ms: i64,
    resolution_ms: i64,
    now_ms: i64,
    tracked_spans_ms: &[i64],
    layout: Layout,
  ) -> Self {
    let n = ((window_ms + resolution_ms - 1) / resolution_ms) as usize;
    let spans = std::iter::once(window_ms)
      .chain(tracked_spans_ms.iter().copied())
      .map(|span_ms| {
        // A longer span could not be kept: the window clears its buckets first.
        debug_assert!(span_ms <= window_ms, "span {span_ms} ms is longer than the window {window_ms} ms");
        // A shorter one could start after the newest bucket, which `add` counts in every span.
        debug_assert!(span_ms >= resolution_ms, "span {span_ms} ms is shorter than a bucket ({resolution_ms} ms)");
        let floor_k = first_live_bucket(now_ms, span_ms, resolution_ms);
        Span { span_ms, floor_k, scan_k: floor_k, cursor: 0 }
      })
      .collect::<Vec<_>>();
    let store = match layout {
      Layout::Dense => Store::Dense { successes: vec![0; n], failures: vec![0; n], occupied: 0 },
      Layout::Auto | Layout::Sparse => Store::Sparse(VecDeque::new()),
    };
    let mut window = Window {
      resolution_ms,
      n,
      store,
      layout,
      sparse_from_k: i64::MIN,
      sums: vec![Counts::default(); spans.len()],
      spans,
      now_ms,
      newest_k: 0,
      newest_start_ms: 0,
      newest_slot: 0,
      next_expiry: Some(None),
      floors_move_at: 0,
      bytes: 0,
    };
    window.set_newest();
    window.floors_move_at = window.floors_move_at();
    window.note_bytes();
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

  /// The layout the buckets are in now: [`Layout::Dense`] or [`Layout::Sparse`].
  pub fn layout(&self) -> Layout {
    match self.store {
      Store::Dense { .. } => Layout::Dense,
      Store::Sparse(_) => Layout::Sparse,
    }
  }

  /// Bytes this window holds on the heap: its buckets (the ring's capacity,
  /// spare room included), the spans and their running sums. A field read:
  /// cheap enough for every `record()`.
  #[inline]
  pub fn heap_bytes(&self) -> usize {
    debug_assert_eq!(self.bytes, self.measure_bytes(), "heap_bytes is stale");
    self.bytes
  }

  fn note_bytes(&mut self) {
    self.bytes = self.measure_bytes();
  }

  fn measure_bytes(&self) -> usize {
    let store = match &self.store {
      Store::Dense { successes, failures, .. } => (successes.capacity() + failures.capacity()) * size_of::<u64>(),
      Store::Sparse(ring) => ring.capacity() * size_of::<Entry>(),
    };
    store + self.spans.capacity() * size_of::<Span>() + self.sums.capacity() * size_of::<Counts>()
  }

  fn bucket_of(&self, t: i64) -> i64 {
    t.div_euclid(self.resolution_ms)
  }

  fn slot(&self, k: i64) -> usize {
    k.rem_euclid(self.n as i64) as usize
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
    let changed = match self.store {
      Store::Dense { .. } => self.advance_dense(now, newest_with_events),
      Store::Sparse(_) => self.advance_sparse(now),
    };
    self.floors_move_at = self.floors_move_at();
    // Each span's first non-empty bucket, and so the next expiry, stays the
    // same unless a bucket with events left.
    if changed {
      self.next_expiry = None;
    }
    changed
  }

  fn advance_dense(&mut self, now: i64, newest_with_events: i64) -> bool {
    let n = self.n as i64;
    let Store::Dense { successes, failures, occupied } = &mut self.store else { unreachable!("dense") };
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
          successes.fill(0);
          failures.fill(0);
          *occupied = 0;
        }
      } else {
        let upto = if clears { live } else { live.min(newest_with_events + 1) };
        for k in floor..upto {
          let i = k.rem_euclid(n) as usize;
          let (ok, bad) = (successes[i], failures[i]);
          if ok == 0 && bad == 0 {
            continue;
          }
          changed = true;
          self.sums[s].successes -= ok;
          self.sums[s].failures -= bad;
          if clears {
            successes[i] = 0;
            failures[i] = 0;
            *occupied -= 1;
          }
        }
      }
      let span = &mut self.spans[s];
      span.floor_k = live;
      span.scan_k = span.scan_k.max(live);
    }
    self.maybe_sparse();
    changed
  }

  fn advance_sparse(&mut self, now: i64) -> bool {
    let floor0 = self.spans[0].floor_k;
    let Store::Sparse(ring) = &mut self.store else { unreachable!("sparse") };
    let mut changed = false;
    // The shorter spans move their cursors over the entries they leave…
    for (span, sum) in self.spans.iter_mut().zip(&mut self.sums).skip(1) {
      let live = first_live_bucket(now, span.span_ms, self.resolution_ms);
      if live <= span.floor_k {
        continue;
      }
      while let Some(e) = ring.get(span.cursor) {
        if key_of(floor0, e) >= live {
          break;
        }
        sum.successes -= e.successes as u64;
        sum.failures -= e.failures as u64;
        changed = true;
        span.cursor += 1;
      }
      span.floor_k = live;
      span.scan_k = span.scan_k.max(live);
    }
    // …then the whole window drops them (below every span's floor, so before
    // every cursor).
    let live = first_live_bucket(now, self.spans[0].span_ms, self.resolution_ms);
    if live > floor0 {
      let mut popped = 0;
      while let Some(e) = ring.front() {
        if key_of(floor0, e) >= live {
          break;
        }
        self.sums[0].successes -= e.successes as u64;
        self.sums[0].failures -= e.failures as u64;
        changed = true;
        ring.pop_front();
        popped += 1;
      }
      // (The window's own cursor stays 0: its oldest entry is the ring's first.)
      for span in self.spans.iter_mut().skip(1) {
        debug_assert!(span.cursor >= popped, "a cursor below the window's floor");
        span.cursor -= popped;
      }
      let span = &mut self.spans[0];
      span.floor_k = live;
      span.scan_k = span.scan_k.max(live);
      // Memory follows the events down too, with room to grow again (a
      // shrink copies the ring, after at least half its length in pops).
      if ring.capacity() > 64 && ring.len() <= ring.capacity() / 3 {
        ring.shrink_to(ring.len() + ring.len() / 2);
        self.note_bytes();
      }
    }
    changed
  }

  /// A dense window with few buckets holding events (at most a sixteenth)
  /// turns sparse, unless a count is too large for it.
  fn maybe_sparse(&mut self) {
    let Store::Dense { successes, failures, occupied } = &self.store else { return };
    if self.layout != Layout::Auto || *occupied > self.n / 16 || self.spans[0].floor_k < self.sparse_from_k {
      return;
    }
    let mut ring = VecDeque::with_capacity(*occupied);
    for k in self.spans[0].floor_k..=self.newest_k {
      let i = self.slot(k);
      let (s, f) = (successes[i], failures[i]);
      if s == 0 && f == 0 {
        continue;
      }
      if !fits(s, f) {
        // Stays dense until this bucket has left (O(buckets) once for it).
        self.sparse_from_k = k + 1;
        return;
      }
      ring.push_back(Entry { k: k as u32, successes: s as u32, failures: f as u32 });
    }
    self.store = Store::Sparse(ring);
    let Store::Sparse(ring) = &self.store else { unreachable!("sparse") };
    let floor0 = self.spans[0].floor_k;
    for span in &mut self.spans {
      span.cursor = ring.partition_point(|e| key_of(floor0, e) < span.floor_k);
    }
    self.note_bytes();
  }

  /// A sparse window turns dense (too many entries, or a count too large).
  fn make_dense(&mut self) {
    let Store::Sparse(ring) = &self.store else { return };
    let (n, floor0) = (self.n, self.spans[0].floor_k);
    let (mut successes, mut failures) = (vec![0; n], vec![0; n]);
    for e in ring {
      let i = key_of(floor0, e).rem_euclid(n as i64) as usize;
      successes[i] = e.successes as u64;
      failures[i] = e.failures as u64;
    }
    let occupied = ring.len();
    self.store = Store::Dense { successes, failures, occupied };
    // Nothing below a floor is searched yet: the dense scan starts there.
    for span in &mut self.spans {
      span.scan_k = span.floor_k;
    }
    self.note_bytes();
  }

  /// The first instant at which some span's floor passes its oldest bucket.
  fn floors_move_at(&self) -> i64 {
    self.spans.iter().map(|s| s.floor_k * self.resolution_ms + s.span_ms).min().unwrap_or(i64::MAX)
  }

  /// The first instant after the newest bucket (where the next one starts).
  #[inline]
  pub fn newest_end_ms(&self) -> i64 {
    self.newest_start_ms + self.resolution_ms
  }

  /// Whether the newest bucket (the one `now` is in) holds events: then more
  /// events at now change neither the layout's entries nor the next expiry.
  pub fn newest_holds_events(&self) -> bool {
    match &self.store {
      Store::Dense { successes, failures, .. } => successes[self.newest_slot] != 0 || failures[self.newest_slot] != 0,
      Store::Sparse(ring) => ring.back().is_some_and(|e| key_of(self.spans[0].floor_k, e) == self.newest_k),
    }
  }

  /// The instant from which the window holds no events if none is added: when
  /// its newest non-empty bucket leaves it; `None` when it holds none now.
  /// O(buckets between that bucket and now).
  pub fn empty_from_ms(&self) -> Option<i64> {
    let total = self.sums[0];
    if total.successes == 0 && total.failures == 0 {
      return None;
    }
    let floor0 = self.spans[0].floor_k;
    let newest = match &self.store {
      Store::Dense { successes, failures, .. } => {
        (floor0..=self.newest_k).rev().find(|&k| successes[self.slot(k)] != 0 || failures[self.slot(k)] != 0)?
      }
      Store::Sparse(ring) => key_of(floor0, ring.back()?),
    };
    Some(newest * self.resolution_ms + self.spans[0].span_ms)
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
      // The common case: the newest bucket already has events, so it is
      // already no earlier than each span's first non-empty bucket
      // (`scan_k`, the cursors and the next expiry stand); it is in every span.
      let added = match &mut self.store {
        Store::Dense { successes: ok, failures: bad, .. } => {
          let i = self.newest_slot;
          let has_events = ok[i] != 0 || bad[i] != 0;
          if has_events {
            ok[i] += successes;
            bad[i] += failures;
          }
          has_events
        }
        Store::Sparse(ring) => match ring.back_mut() {
          Some(e) if e.k == self.newest_k as u32 => {
            let (s, f) = (e.successes as u64 + successes, e.failures as u64 + failures);
            let fit = fits(s, f);
            if fit {
              e.successes = s as u32;
              e.failures = f as u32;
            }
            fit
          }
          _ => false,
        },
      };
      if added {
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

  /// Moves one success of the bucket `at` falls in (the newest one when `at`
  /// is later, as `add` clamps) to a failure, in every span that holds it.
  /// `false`, nothing changed, when that bucket left the window or holds no
  /// success. The bucket holds events before and after, so the cursors and
  /// the next expiry stand.
  pub fn reject(&mut self, at: i64) -> bool {
    let k = if at >= self.newest_start_ms { self.newest_k } else { self.bucket_of(at) };
    if k < self.spans[0].floor_k {
      return false;
    }
    let (successes, failures) = self.bucket(k);
    if successes == 0 {
      return false;
    }
    self.store_set(k, successes - 1, failures + 1);
    for (_, sum) in self.spans.iter().zip(&mut self.sums).filter(|(span, _)| k >= span.floor_k) {
      sum.successes -= 1;
      sum.failures += 1;
    }
    true
  }

  /// Adds to live bucket `k` and the spans that hold it; keeps `scan_k`, the
  /// cursors and the cached next expiry right.
  fn add_to(&mut self, k: i64, successes: u64, failures: u64) {
    let (s, f) = self.bucket(k);
    self.store_set(k, s + successes, f + failures);
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

  /// Where bucket `k` is or would go in the sparse ring.
  fn position(ring: &VecDeque<Entry>, floor0: i64, k: i64) -> usize {
    match ring.back() {
      None => 0,
      Some(e) if key_of(floor0, e) < k => ring.len(),
      Some(_) => ring.partition_point(|e| key_of(floor0, e) < k),
    }
  }

  /// Sets live bucket `k` to the given counts in the store alone (running
  /// sums untouched; the cursors kept on the same entries).
  fn store_set(&mut self, k: i64, successes: u64, failures: u64) {
    let floor0 = self.spans[0].floor_k;
    let empty = successes == 0 && failures == 0;
    let i = self.slot(k);
    match &mut self.store {
      Store::Dense { successes: ok, failures: bad, occupied } => {
        let was_empty = ok[i] == 0 && bad[i] == 0;
        ok[i] = successes;
        bad[i] = failures;
        match (was_empty, empty) {
          (true, false) => *occupied += 1,
          (false, true) => *occupied -= 1,
          _ => {}
        }
      }
      Store::Sparse(ring) => {
        let p = Self::position(ring, floor0, k);
        let found = ring.get(p).is_some_and(|e| key_of(floor0, e) == k);
        let grows = !found && !empty;
        let too_many = grows && self.layout == Layout::Auto && ring.len() >= self.n / 4;
        if !fits(successes, failures) || too_many {
          self.make_dense();
          return self.store_set(k, successes, failures);
        }
        if found && empty {
          ring.remove(p);
          for span in &mut self.spans {
            if span.cursor > p {
              span.cursor -= 1;
            }
          }
        } else if found {
          ring[p].successes = successes as u32;
          ring[p].failures = failures as u32;
        } else if grows {
          let capacity = ring.capacity();
          ring.insert(p, Entry { k: k as u32, successes: successes as u32, failures: failures as u32 });
          for span in &mut self.spans {
            if k < span.floor_k {
              span.cursor += 1;
            }
          }
          if ring.capacity() != capacity {
            self.note_bytes();
          }
        }
      }
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
    let floor0 = self.spans[0].floor_k;
    match &self.store {
      Store::Sparse(ring) => {
        for span in &self.spans {
          if let Some(e) = ring.get(span.cursor) {
            let at = key_of(floor0, e) * self.resolution_ms + span.span_ms;
            next = Some(next.map_or(at, |n| n.min(at)));
          }
        }
      }
      Store::Dense { successes, failures, .. } => {
        let n = self.n as i64;
        for span in &mut self.spans {
          let mut k = span.scan_k;
          while k <= newest {
            let i = k.rem_euclid(n) as usize;
            if successes[i] != 0 || failures[i] != 0 {
              let at = k * self.resolution_ms + span.span_ms;
              next = Some(next.map_or(at, |n| n.min(at)));
              break;
            }
            k += 1;
          }
          span.scan_k = k;
        }
      }
    }
    self.next_expiry = Some(next);
    next
  }

  /// The instant the oldest non-empty bucket leaves the window (the window's
  /// counts change then, with no new event); `None` when there is none. The
  /// whole window's part of `next_expiry_ms` (which the alert spans' expiries
  /// come before), O(1) amortised as it is.
  pub fn oldest_expiry_ms(&mut self) -> Option<i64> {
    let floor0 = self.spans[0].floor_k;
    let oldest = match &self.store {
      Store::Sparse(ring) => key_of(floor0, ring.front()?),
      Store::Dense { successes, failures, .. } => {
        let n = self.n as i64;
        let span = &mut self.spans[0];
        // `scan_k` only moves past empty buckets (as in `next_expiry_ms`).
        while span.scan_k <= self.newest_k {
          let i = span.scan_k.rem_euclid(n) as usize;
          if successes[i] != 0 || failures[i] != 0 {
            break;
          }
          span.scan_k += 1;
        }
        if span.scan_k > self.newest_k {
          return None;
        }
        span.scan_k
      }
    };
    Some(oldest * self.resolution_ms + self.spans[0].span_ms)
  }

  /// The non-empty buckets inside the window, oldest first, as
  /// (start ms, successes, failures); the same in either layout.
  pub fn buckets(&self) -> impl Iterator<Item = (i64, u64, u64)> + '_ {
    let floor0 = self.spans[0].floor_k;
    let (dense, sparse) = match &self.store {
      Store::Dense { successes, failures, .. } => {
        let every = (floor0..=self.newest_k).filter_map(move |k| {
          let i = self.slot(k);
          let (s, f) = (successes[i], failures[i]);
          (s != 0 || f != 0).then_some((k * self.resolution_ms, s, f))
        });
        (Some(every), None)
      }
      Store::Sparse(ring) => {
        let entries =
          ring.iter().map(move |e| (key_of(floor0, e) * self.resolution_ms, e.successes as u64, e.failures as u64));
        (None, Some(entries))
      }
    };
    dense.into_iter().flatten().chain(sparse.into_iter().flatten())
  }

  /// Counts of the buckets that start within the last `span_ms` before now
  /// (k × resolution > now − span). O(buckets in the span).
  pub fn counts_over(&self, span_ms: i64) -> Counts {
    let newest = self.newest_k;
    let floor0 = self.spans[0].floor_k;
    let oldest = floor0.max(first_live_bucket(self.now_ms, span_ms, self.resolution_ms));
    let mut c = Counts::default();
    match &self.store {
      Store::Dense { successes, failures, .. } => {
        for k in oldest..=newest {
          let i = self.slot(k);
          c.successes += successes[i];
          c.failures += failures[i];
        }
      }
      Store::Sparse(ring) => {
        for e in ring.iter().rev().take_while(|e| key_of(floor0, e) >= oldest) {
          c.successes += e.successes as u64;
          c.failures += e.failures as u64;
        }
      }
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
    match &self.store {
      Store::Dense { successes, failures, .. } => {
        let i = self.slot(k);
        (successes[i], failures[i])
      }
      Store::Sparse(ring) => {
        let floor0 = self.spans[0].floor_k;
        let p = Self::position(ring, floor0, k);
        match ring.get(p) {
          Some(e) if key_of(floor0, e) == k => (e.successes as u64, e.failures as u64),
          _ => (0, 0),
        }
      }
    }
  }

  /// Sets live bucket `k` (inside `live_range()`) to the given counts, keeping
  /// every span's running sums and the next expiry right. For the fleet
  /// (`tracker/fleet.rs`), which installs counts other workers recorded.
  pub(crate) fn set_bucket(&mut self, k: i64, successes: u64, failures: u64) {
    debug_assert!(k >= self.spans[0].floor_k && k <= self.newest_k, "bucket {k} is not live");
    let (old_s, old_f) = self.bucket(k);
    if (old_s, old_f) == (successes, failures) {
      return;
    }
    self.store_set(k, successes, failures);
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
  fn the_window_is_empty_from_when_its_newest_event_leaves_it() {
    // Window 1000 ms, buckets of 100 ms: an event in bucket k leaves at k × 100 + 1000.
    let mut w = Window::new(1000, 100, 0, &[]);
    assert_eq!(w.empty_from_ms(), None);
    w.add(0, 1, 0);
    w.advance(250);
    w.add(250, 0, 1); // bucket 2
    w.advance(400);
    assert_eq!(w.empty_from_ms(), Some(1200));
    w.advance(1199);
    assert_eq!(w.counts(), Counts { successes: 0, failures: 1 });
    w.advance(1200);
    assert_eq!(w.counts(), Counts::default());
    assert_eq!(w.empty_from_ms(), None);
  }

  #[test]
  fn the_sparse_layout_says_when_it_empties_too() {
    let mut w = Window::with_layout(1000, 100, 0, &[], Layout::Sparse);
    w.add(0, 1, 0);
    w.advance(550);
    w.add(550, 1, 0); // bucket 5
    w.add(320, 1, 0); // older, out of order: bucket 3
    assert_eq!(w.empty_from_ms(), Some(1500));
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

#[cfg(test)]
mod layout_tests {
  //! The sparse and the dense layout hold the same counts: three windows (one
  //! pinned dense, one pinned sparse, one switching) fed the same calls agree
  //! on everything they answer, after every call.
  use super::*;
  use proptest::prelude::*;

  #[derive(Debug, Clone)]
  enum Op {
    /// Moves time forward by this much.
    Advance(i64),
    /// Adds at now minus this much (negative: in the future, clamped to now).
    Add { back: i64, successes: u64, failures: u64 },
    /// Sets the live bucket this far below the newest one (the fleet's way).
    Set { below: i64, successes: u64, failures: u64 },
  }

  fn op(window_ms: i64) -> impl Strategy<Value = Op> {
    // Counts mostly small, sometimes past u32::MAX (a sparse entry's limit).
    let count = prop_oneof![6 => 0u64..4, 1 => Just(u32::MAX as u64), 1 => (1u64 << 32)..(1u64 << 40)];
    prop_oneof![
      4 => prop_oneof![0i64..50, 0..window_ms / 3, window_ms..3 * window_ms].prop_map(Op::Advance),
      6 => (-50..window_ms + 200, count.clone(), 0u64..3)
        .prop_map(|(back, successes, failures)| Op::Add { back, successes, failures }),
      1 => (0..window_ms / 10, count, 0u64..3).prop_map(|(below, successes, failures)| Op::Set { below, successes, failures }),
    ]
  }

  /// Counts, span counts, next expiry, buckets, counts over the probe, accepts.
  type Answers = (Counts, Vec<Counts>, Option<i64>, Vec<(i64, u64, u64)>, Counts, bool);

  /// Everything a window answers, read without moving it.
  fn answers(w: &mut Window, probe_ms: i64) -> Answers {
    let spans = (0..w.spans.len() - 1).map(|i| w.span_counts(i)).collect();
    let at = w.now_ms() - probe_ms;
    (w.counts(), spans, w.next_expiry_ms(), w.buckets().collect(), w.counts_over(probe_ms), w.accepts(at))
  }

  proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn dense_sparse_and_auto_agree(
      (buckets, resolution_ms) in (1i64..200, 1i64..40),
      start in -5_000i64..5_000,
      ops in prop::collection::vec(op(4_000), 1..250),
      probe in 0i64..5_000,
    ) {
      let window_ms = buckets * resolution_ms;
      // Spans of at least one bucket, as alert windows are (`alerts.rs`).
      let spans = [window_ms / 2 + 1, window_ms / 7 + 1, window_ms].map(|s| s.max(resolution_ms));
      let mut ws = [Layout::Dense, Layout::Sparse, Layout::Auto]
        .map(|layout| Window::with_layout(window_ms, resolution_ms, start, &spans, layout));
      let mut changes = [false; 3];
      for op in &ops {
        for (w, changed) in ws.iter_mut().zip(&mut changes) {
          *changed = false;
          let now = w.now_ms();
          match *op {
            Op::Advance(by) => *changed = w.advance(now + by),
            Op::Add { back, successes, failures } => {
              let placed = w.add(now - back, successes, failures);
              *changed = placed == Placement::Counted;
            }
            Op::Set { below, successes, failures } => {
              let (floor, newest) = w.live_range();
              let k = (newest - below).max(floor);
              w.set_bucket(k, successes, failures);
              prop_assert_eq!(w.bucket(k), (successes, failures));
            }
          }
        }
        prop_assert_eq!(changes[0], changes[1]);
        prop_assert_eq!(changes[0], changes[2]);
        let dense = answers(&mut ws[0], probe);
        prop_assert_eq!(&answers(&mut ws[1], probe), &dense);
        prop_assert_eq!(&answers(&mut ws[2], probe), &dense);
        prop_assert_eq!(ws[0].layout(), Layout::Dense);
        // Every live bucket reads the same, one by one.
        let (floor, newest) = ws[0].live_range();
        for k in floor..=newest {
          prop_assert_eq!(ws[1].bucket(k), ws[0].bucket(k));
          prop_assert_eq!(ws[2].bucket(k), ws[0].bucket(k));
        }
      }
    }
  }

  #[test]
  fn a_day_of_one_event_a_minute_stays_small_and_a_busy_day_no_larger_than_dense() {
    // The default 24 h window: 43 200 buckets of 2 s.
    let (window_ms, resolution_ms) = (86_400_000, 2_000);
    let spans = [3_600_000, 300_000, 21_600_000, 1_800_000];
    let dense = Window::with_layout(window_ms, resolution_ms, 0, &spans, Layout::Dense).heap_bytes();
    assert!(dense >= 43_200 * 16, "{dense}");
    let mut w = Window::new(window_ms, resolution_ms, 0, &spans);
    assert!(w.heap_bytes() <= 1024, "idle: {} bytes", w.heap_bytes());
    for minute in 0..2 * 1440 {
      let t = minute * 60_000;
      w.advance(t);
      w.add(t, 1, (minute % 20 == 0) as u64);
    }
    // 1 440 buckets with events in the window: 12 bytes each, the ring's
    // capacity a power of two (2 048 × 12 = 24 KiB).
    assert_eq!(w.counts().total(), 1440 + 72);
    assert_eq!(w.layout(), Layout::Sparse);
    assert!(w.heap_bytes() <= 32 * 1024, "1/min: {} bytes", w.heap_bytes());
    // 1 000 events a second: every bucket holds events, so the window is dense.
    for ms in (2 * 86_400_000..3 * 86_400_000).step_by(1000) {
      w.advance(ms);
      w.add(ms, 1000, 0);
    }
    assert_eq!(w.layout(), Layout::Dense);
    assert_eq!(w.heap_bytes(), dense);
    // Quiet again: the ring gives its memory back once a sixteenth or less holds events.
    for minute in 3 * 1440..5 * 1440 {
      let t = minute * 60_000;
      w.advance(t);
      w.add(t, 1, 0);
    }
    assert_eq!(w.layout(), Layout::Sparse);
    assert!(w.heap_bytes() <= 32 * 1024, "{} bytes", w.heap_bytes());
    assert_eq!(w.counts().total(), 1440);
  }
}
