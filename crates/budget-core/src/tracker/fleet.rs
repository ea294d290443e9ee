//! One window for a fleet of workers: the local side of the fleet sync.
//!
//! `record()` keeps counting into the local window at its usual cost; the
//! fleet layer then works in coarse *fleet buckets* (a whole number of local
//! buckets, so that the shared store stays small). Bucket `K` of width `W`
//! counts while its start is inside the window, `K × W > now − window`, the
//! local rule at the coarser width.
//!
//! The ledger remembers, per live fleet bucket, the counts this worker's window
//! held for it after the last exchange (`baseline`). So, for each fleet bucket,
//! `window − baseline` is what was recorded here since: `drain` returns it (the
//! push) and moves the baseline up; `apply` sets the window to the fleet's
//! counts plus what was recorded since the drain, and re-evaluates status and
//! alerts through the tracker's usual ordered path.

use std::collections::BTreeMap;

use super::Tracker;
use crate::budget::{Counts, MAX_COUNT};
use crate::config::Config;
use crate::error::{BudgetError, Result};
use crate::tracker::EventSink;

/// The default number of fleet buckets in a window: a bucket of a minute for a
/// day, so that a sync moves a few thousand numbers at most.
pub const DEFAULT_FLEET_BUCKETS: i64 = 1440;

/// The counts of fleet bucket `index` (starting at `index × bucket_ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FleetBucket {
  /// The fleet bucket's index: its start over its width.
  pub index: i64,
  /// Its counts.
  pub counts: Counts,
}

/// What this worker changed in fleet bucket `index` since its last drain: the
/// counts to add to the fleet's. Successes are negative when a success was
/// rejected after it was pushed (`Tracker::reject` turns it into a failure):
/// the push moves it, as the local window did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FleetDelta {
  /// The fleet bucket's index: its start over its width.
  pub index: i64,
  /// Successes to add (negative: to take).
  pub successes: i64,
  /// Failures to add (negative: to take).
  pub failures: i64,
}

/// This worker's side of the fleet's window (see the module doc).
#[derive(Debug, Clone)]
pub struct FleetLedger {
  bucket_ms: i64,
  /// Local buckets in a fleet bucket.
  per: i64,
  /// Per live fleet bucket, what the window held for it after the last drain
  /// or apply.
  baseline: BTreeMap<i64, Counts>,
  /// Fleet buckets later than this worker's newest bucket, kept until it gets there.
  ahead: BTreeMap<i64, Counts>,
}

impl FleetLedger {
  /// A ledger for trackers of `config`, with fleet buckets of `bucket_ms`
  /// (`None`: the smallest multiple of the resolution that is at least
  /// windowMs / 1440). A given width must be a multiple of `resolutionMs`, at
  /// most `windowMs`; the error names `fleet.bucketMs`.
  pub fn new(config: &Config, bucket_ms: Option<i64>) -> Result<Self> {
    let r = config.resolution_ms;
    let bucket_ms = match bucket_ms {
      None => {
        let at_least = (config.window_ms + DEFAULT_FLEET_BUCKETS - 1) / DEFAULT_FLEET_BUCKETS;
        ((at_least + r - 1) / r).max(1) * r
      }
      Some(ms) if ms >= r && ms <= config.window_ms && ms % r == 0 => ms,
      Some(ms) => {
        return Err(
          BudgetError::out_of_range(format!(
            "must be a multiple of resolutionMs ({r}) from {r} to windowMs ({}), got {ms}",
            config.window_ms
          ))
          .at("fleet.bucketMs"),
        )
      }
    };
    Ok(FleetLedger { bucket_ms, per: bucket_ms / r, baseline: BTreeMap::new(), ahead: BTreeMap::new() })
  }

  /// The fleet bucket width, ms.
  pub fn bucket_ms(&self) -> i64 {
    self.bucket_ms
  }

  /// The live fleet buckets at the tracker's now: (oldest, newest) index.
  pub fn live_range(&self, tracker: &Tracker) -> (i64, i64) {
    let now = tracker.now_ms();
    (self.oldest_live_at(tracker.config.window_ms, now), now.div_euclid(self.bucket_ms))
  }

  /// The oldest live fleet bucket at `now_ms` in a window of `window_ms`: the
  /// first whose start is inside it (a family's fleet reads it without a tracker).
  pub fn oldest_live_at(&self, window_ms: i64, now_ms: i64) -> i64 {
    (now_ms - window_ms).div_euclid(self.bucket_ms) + 1
  }

  /// The local buckets of fleet bucket `index` that exist yet (none after the newest).
  fn local_buckets(&self, tracker: &Tracker, index: i64) -> std::ops::RangeInclusive<i64> {
    let (_, newest) = tracker.window.live_range();
    index * self.per..=((index + 1) * self.per - 1).min(newest)
  }

  /// What the window holds for fleet bucket `index`.
  fn held(&self, tracker: &Tracker, index: i64) -> Counts {
    let mut c = Counts::default();
    for k in self.local_buckets(tracker, index) {
      let (s, f) = tracker.window.bucket(k);
      c.successes += s;
      c.failures += f;
    }
    c
  }

  /// Takes what was recorded into the live fleet buckets since the last
  /// drain: the changes to push, a rejection as one success less and one
  /// failure more. (Events replayed into local buckets older than the oldest
  /// live fleet bucket are not shared.)
  pub fn drain(&mut self, tracker: &Tracker) -> Vec<FleetDelta> {
    let (oldest, newest) = self.live_range(tracker);
    self.baseline.retain(|&k, _| k >= oldest);
    let mut out = Vec::new();
    for index in oldest..=newest {
      let held = self.held(tracker, index);
      let base = self.baseline.get(&index).copied().unwrap_or_default();
      // Counts of one window: each at most MAX_COUNT, so the differences fit.
      let successes = held.successes as i64 - base.successes as i64;
      let failures = held.failures as i64 - base.failures as i64;
      if successes != 0 || failures != 0 {
        out.push(FleetDelta { index, successes, failures });
        self.baseline.insert(index, held);
      }
    }
    out
  }

  /// What was recorded here and not drained yet.
  pub fn undrained(&self, tracker: &Tracker) -> Counts {
    let (oldest, newest) = self.live_range(tracker);
    let mut c = Counts::default();
    for index in oldest..=newest {
      let held = self.held(tracker, index);
      let base = self.baseline.get(&index).copied().unwrap_or_default();
      c.successes += held.successes.saturating_sub(base.successes);
      c.failures += held.failures.saturating_sub(base.failures);
    }
    c
  }

  /// Makes the window the fleet's: each live fleet bucket listed in `fleet`
  /// (its counts including every drain acknowledged so far) holds them plus
  /// what was recorded here since the last drain; with `complete`, the buckets
  /// not listed are the fleet's empty ones, else they have not changed since
  /// the last apply. Fleet buckets later than this worker's newest one (a
  /// clock ahead of ours) are kept until ours gets there; local buckets older
  /// than the oldest live fleet bucket are emptied (they are no longer in the
  /// fleet's window). Then status and alerts are re-evaluated, their changes
  /// going to `events` in the usual order.
  ///
  /// Refused, changing nothing (`ERR_OUT_OF_RANGE`), when a count is above
  /// 2^53 − 1 or the fleet's buckets would add up to more than that of one
  /// outcome: the limits of a snapshot, so that every count stays exact.
  pub fn apply(
    &mut self,
    tracker: &mut Tracker,
    fleet: &[FleetBucket],
    complete: bool,
    events: &mut impl EventSink,
  ) -> Result<()> {
    let (oldest, newest) = self.live_range(tracker);
    self.check(fleet, complete, oldest)?;
    self.baseline.retain(|&k, _| k >= oldest);
    let (local_floor, _) = tracker.window.live_range();
    for k in local_floor..oldest * self.per {
      tracker.window.set_bucket(k, 0, 0);
    }
    let mut target = if complete { BTreeMap::new() } else { std::mem::take(&mut self.ahead) };
    for b in fleet.iter().filter(|b| b.index >= oldest) {
      target.insert(b.index, b.counts);
    }
    self.ahead = target.split_off(&(newest + 1));
    let listed: Vec<i64> =
      if complete { (oldest..=newest).collect() } else { target.keys().copied().filter(|&k| k >= oldest).collect() };
    for index in listed {
      let want = target.get(&index).copied().unwrap_or_default();
      let base = self.baseline.get(&index).copied().unwrap_or_default();
      if want == base {
        continue;
      }
      self.shift(
        tracker,
        index,
        want.successes as i128 - base.successes as i128,
        want.failures as i128 - base.failures as i128,
      );
      if want == Counts::default() {
        self.baseline.remove(&index);
      } else {
        self.baseline.insert(index, want);
      }
    }
    tracker.note_changes(events);
    Ok(())
  }

  /// The counts `apply` would install, within the limits of a snapshot: each
  /// at most `MAX_COUNT`, and their sums over the fleet's buckets from
  /// `oldest` on (those ahead of this clock included) too.
  fn check(&self, fleet: &[FleetBucket], complete: bool, oldest: i64) -> Result<()> {
    let mut after: BTreeMap<i64, Counts> = BTreeMap::new();
    if !complete {
      after.extend(self.baseline.range(oldest..).chain(self.ahead.range(oldest..)).map(|(&k, &c)| (k, c)));
    }
    for b in fleet {
      for (n, what) in [(b.counts.successes, "successes"), (b.counts.failures, "failures")] {
        if n > MAX_COUNT {
          return Err(BudgetError::out_of_range(format!(
            "fleet bucket {} holds {n} {what}: above 2^53 − 1 ({MAX_COUNT}), the largest count a snapshot may hold",
            b.index
          )));
        }
      }
      if b.index >= oldest {
        after.insert(b.index, b.counts);
      }
    }
    let (mut successes, mut failures) = (0u64, 0u64);
    for c in after.values() {
      successes += c.successes;
      failures += c.failures;
      // Each term is at most MAX_COUNT (2^53 − 1): the sums cannot wrap before this check.
      if successes > MAX_COUNT || failures > MAX_COUNT {
        let what = if successes > MAX_COUNT { "successes" } else { "failures" };
        return Err(BudgetError::out_of_range(format!(
          "the fleet's buckets add up to more than 2^53 − 1 ({MAX_COUNT}) {what}, the most a window may hold"
        )));
      }
    }
    Ok(())
  }

  /// Adds (or takes, never below zero) counts to fleet bucket `index`: added to
  /// its newest local bucket so far, taken from the newest down. (Newest: other
  /// workers' solves of the current fleet bucket are recent, and alert windows
  /// shorter than a fleet bucket must see them. They then leave the local window
  /// up to a fleet bucket late: the next apply takes them out on time.)
  fn shift(&self, tracker: &mut Tracker, index: i64, mut ds: i128, mut df: i128) {
    for k in self.local_buckets(tracker, index).rev() {
      if ds == 0 && df == 0 {
        break;
      }
      let (s, f) = tracker.window.bucket(k);
      let ns = (s as i128 + ds).max(0);
      let nf = (f as i128 + df).max(0);
      ds -= ns - s as i128;
      df -= nf - f as i128;
      tracker.window.set_bucket(k, ns as u64, nf as u64);
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::budget::Status;
  use crate::tracker::{Event, Transition};

  fn config(window_ms: i64, resolution_ms: i64) -> Config {
    Config { window_ms, resolution_ms, ..Config::default() }
  }

  fn b(index: i64, successes: u64, failures: u64) -> FleetBucket {
    FleetBucket { index, counts: Counts { successes, failures } }
  }

  fn d(index: i64, successes: i64, failures: i64) -> FleetDelta {
    FleetDelta { index, successes, failures }
  }

  #[test]
  fn default_width_is_the_smallest_multiple_of_the_resolution_giving_at_most_1440_buckets() {
    // A day: resolution 2000 ms; 86 400 000 / 1440 = 60 000 ms, a multiple of 2000.
    assert_eq!(FleetLedger::new(&config(86_400_000, 2000), None).unwrap().bucket_ms(), 60_000);
    // An hour at 83 ms: 3 600 000 / 1440 = 2500 → the next multiple of 83 is 2573 (31 × 83).
    assert_eq!(FleetLedger::new(&config(3_600_000, 83), None).unwrap().bucket_ms(), 2573);
    // 1 s at 1 ms: ceil(1000 / 1440) = 1.
    assert_eq!(FleetLedger::new(&config(1000, 1), None).unwrap().bucket_ms(), 1);
  }

  #[test]
  fn a_given_width_must_be_a_multiple_of_the_resolution_within_the_window() {
    assert_eq!(FleetLedger::new(&config(60_000, 100), Some(1000)).unwrap().bucket_ms(), 1000);
    for bad in [50, 150, 60_100, 0, -100] {
      let err = FleetLedger::new(&config(60_000, 100), Some(bad)).unwrap_err();
      assert!(
        err
          .render("config")
          .starts_with("config.fleet.bucketMs must be a multiple of resolutionMs (100) from 100 to windowMs (60000)"),
        "{}",
        err.message
      );
      assert_eq!(err.code, "ERR_OUT_OF_RANGE");
    }
  }

  #[test]
  fn the_oldest_live_bucket_is_the_first_starting_inside_the_window() {
    let ledger = FleetLedger::new(&config(10_000, 100), Some(1000)).unwrap();
    // now 10 000: bucket 0 starts at 0, not after 10 000 − 10 000; bucket 1 does.
    assert_eq!(ledger.oldest_live_at(10_000, 10_000), 1);
    // now 10 999: 999 → still bucket 1 (starts at 1000 > 999); at 11 000 bucket 1 leaves.
    assert_eq!(ledger.oldest_live_at(10_000, 10_999), 1);
    assert_eq!(ledger.oldest_live_at(10_000, 11_000), 2);
    // Early on the window reaches before 0: bucket −9 (start −9000 > 500 − 10 000).
    assert_eq!(ledger.oldest_live_at(10_000, 500), -9);
  }

  #[test]
  fn drain_returns_what_was_recorded_since_the_last_drain_per_fleet_bucket() {
    // Window 10 s, local buckets of 100 ms, fleet buckets of 1 s.
    let c = config(10_000, 100);
    let mut t = Tracker::new(c.clone(), 0).unwrap();
    let mut ledger = FleetLedger::new(&c, Some(1000)).unwrap();
    let mut ev: Vec<Event> = Vec::new();
    t.record(0, 0, 3, 1, &mut ev);
    t.record(950, 950, 2, 0, &mut ev); // fleet bucket 0 too
    t.record(1200, 1200, 0, 4, &mut ev); // fleet bucket 1
    assert_eq!(ledger.undrained(&t), Counts { successes: 5, failures: 5 });
    assert_eq!(ledger.drain(&t), vec![d(0, 5, 1), d(1, 0, 4)]);
    assert_eq!(ledger.drain(&t), vec![]);
    t.record(1300, 1300, 1, 0, &mut ev);
    assert_eq!(ledger.drain(&t), vec![d(1, 1, 0)]);
    assert_eq!(ledger.undrained(&t), Counts::default());
  }

  #[test]
  fn a_rejection_drains_as_one_success_less_and_one_failure_more_once() {
    let c = config(10_000, 100);
    let mut t = Tracker::new(c.clone(), 0).unwrap();
    let mut ledger = FleetLedger::new(&c, Some(1000)).unwrap();
    let mut ev: Vec<Event> = Vec::new();
    t.record(500, 500, 10, 0, &mut ev);
    assert_eq!(ledger.drain(&t), vec![d(0, 10, 0)]);
    // Pushed, then the site rejects one: the push moves it.
    assert!(t.reject(600, 500, &mut ev));
    assert_eq!(ledger.drain(&t), vec![d(0, -1, 1)]);
    assert_eq!(ledger.drain(&t), vec![]);
    // Recorded and rejected between two drains: one failure, no success.
    t.record(700, 700, 1, 0, &mut ev);
    assert!(t.reject(700, 700, &mut ev));
    assert_eq!(ledger.drain(&t), vec![d(0, 0, 1)]);
    // The fleet acknowledges 9 + 2 (ours) and another worker's rejection of one of its
    // 5 successes: 9 + 4 successes, 2 + 1 failures.
    ledger.apply(&mut t, &[b(0, 13, 3)], true, &mut ev).unwrap();
    assert_eq!(t.counts(), Counts { successes: 13, failures: 3 });
    assert_eq!(ledger.drain(&t), vec![]);
  }

  #[test]
  fn apply_makes_the_window_the_fleets_plus_what_was_recorded_since_the_drain() {
    let c = config(10_000, 100);
    let mut t = Tracker::new(c.clone(), 0).unwrap();
    let mut ledger = FleetLedger::new(&c, Some(1000)).unwrap();
    let mut ev: Vec<Event> = Vec::new();
    t.record(500, 500, 10, 0, &mut ev);
    let pushed = ledger.drain(&t);
    assert_eq!(pushed, vec![d(0, 10, 0)]);
    // While the push travels, 1 more success here.
    t.record(600, 600, 1, 0, &mut ev);
    // The fleet: our 10, plus another worker's 20 + 2 in bucket 0 and 5 failures in bucket 3 (not yet ours: later than now).
    ledger.apply(&mut t, &[b(0, 30, 2), b(3, 0, 5)], true, &mut ev).unwrap();
    assert_eq!(t.counts(), Counts { successes: 31, failures: 2 });
    // The success recorded during the push is still to send; nothing else.
    assert_eq!(ledger.drain(&t), vec![d(0, 1, 0)]);
    // Once our clock reaches bucket 3, the next apply installs it.
    t.advance(3000, &mut ev);
    ledger.apply(&mut t, &[b(0, 31, 2), b(3, 0, 5)], true, &mut ev).unwrap();
    assert_eq!(t.counts(), Counts { successes: 31, failures: 7 });
    assert_eq!(ledger.drain(&t), vec![]);
  }

  #[test]
  fn fleet_counts_expire_with_their_fleet_bucket() {
    let c = config(10_000, 100);
    let mut t = Tracker::new(c.clone(), 0).unwrap();
    let mut ledger = FleetLedger::new(&c, Some(1000)).unwrap();
    let mut ev: Vec<Event> = Vec::new();
    // Our own success at 100 (fleet bucket 0, local bucket 1); the sync at 900.
    t.record(100, 100, 1, 0, &mut ev);
    t.advance(900, &mut ev);
    ledger.drain(&t);
    ledger.apply(&mut t, &[b(0, 4, 0), b(1, 0, 0)], true, &mut ev).unwrap();
    assert_eq!(t.counts().successes, 4);
    // The other workers' 3 sit in the newest local bucket (9): a span of the
    // last 200 ms sees them, not our own older success.
    assert_eq!(t.window.counts_over(200).successes, 3);
    // At 10 000 fleet bucket 0 (start 0) leaves the fleet's window: 0 > 10 000 − 10 000 is false.
    t.advance(10_000, &mut ev);
    // Locally both still sit in live buckets (1 and 9, starting after 0): the
    // next apply takes the whole fleet bucket out.
    assert_eq!(t.counts().successes, 4);
    ledger.apply(&mut t, &[], true, &mut ev).unwrap();
    assert_eq!(t.counts().successes, 0);
    assert_eq!(ledger.drain(&t), vec![]);
  }

  #[test]
  fn counts_the_fleet_lost_are_taken_back_never_below_zero() {
    let c = config(10_000, 100);
    let mut t = Tracker::new(c.clone(), 0).unwrap();
    let mut ledger = FleetLedger::new(&c, Some(1000)).unwrap();
    let mut ev: Vec<Event> = Vec::new();
    t.record(100, 100, 2, 0, &mut ev);
    ledger.drain(&t);
    ledger.apply(&mut t, &[b(0, 10, 0)], true, &mut ev).unwrap();
    assert_eq!(t.counts().successes, 10);
    t.record(200, 200, 1, 0, &mut ev); // undrained
                                       // The store lost everything (no persistence): only the undrained success stays.
    ledger.apply(&mut t, &[], true, &mut ev).unwrap();
    assert_eq!(t.counts(), Counts { successes: 1, failures: 0 });
    assert_eq!(ledger.drain(&t), vec![d(0, 1, 0)]);
  }

  #[test]
  fn other_workers_failures_change_the_status_through_the_usual_events() {
    let c = Config { target_rate: 0.9, ..config(10_000, 100) };
    let mut t = Tracker::new(c.clone(), 0).unwrap();
    let mut ledger = FleetLedger::new(&c, Some(1000)).unwrap();
    let mut ev: Vec<Transition> = Vec::new();
    t.record(100, 100, 100, 0, &mut ev);
    ledger.drain(&t);
    // Another worker: 0 successes, 20 failures → 100 / 120 solves, budget 12, spent 20: exhausted.
    ledger.apply(&mut t, &[b(0, 100, 20)], true, &mut ev).unwrap();
    assert_eq!(ev.len(), 1);
    assert_eq!((ev[0].from, ev[0].to), (Status::Healthy, Status::Exhausted));
    assert_eq!((ev[0].report.total, ev[0].report.failures), (120, 20));
    assert_eq!(t.last_status(), Status::Exhausted);
  }

  #[test]
  fn a_partial_apply_changes_the_listed_buckets_only_and_keeps_buckets_ahead_until_they_are_live() {
    let c = config(10_000, 100);
    let mut t = Tracker::new(c.clone(), 0).unwrap();
    let mut ledger = FleetLedger::new(&c, Some(1000)).unwrap();
    let mut ev: Vec<Event> = Vec::new();
    t.advance(1500, &mut ev);
    ledger.apply(&mut t, &[b(0, 4, 0), b(1, 2, 0)], true, &mut ev).unwrap();
    assert_eq!(t.counts(), Counts { successes: 6, failures: 0 });
    // Only bucket 1 changed (and bucket 2, ahead of our clock, appeared): bucket 0 stays as it was.
    ledger.apply(&mut t, &[b(1, 5, 1), b(2, 0, 3)], false, &mut ev).unwrap();
    assert_eq!(t.counts(), Counts { successes: 9, failures: 1 });
    // Bucket 2 is never listed again; it is installed once our clock reaches it.
    t.advance(2000, &mut ev);
    ledger.apply(&mut t, &[], false, &mut ev).unwrap();
    assert_eq!(t.counts(), Counts { successes: 9, failures: 4 });
    // A complete apply empties what it does not list.
    ledger.apply(&mut t, &[b(2, 0, 3)], true, &mut ev).unwrap();
    assert_eq!(t.counts(), Counts { successes: 0, failures: 3 });
    assert_eq!(ledger.drain(&t), vec![]);
  }

  #[test]
  fn counts_above_two_to_the_53_or_adding_up_past_it_are_refused_and_change_nothing() {
    let c = config(10_000, 100);
    let mut t = Tracker::new(c.clone(), 0).unwrap();
    let mut ledger = FleetLedger::new(&c, Some(1000)).unwrap();
    let mut ev: Vec<Event> = Vec::new();
    t.advance(2500, &mut ev);
    ledger.apply(&mut t, &[b(0, 4, 1)], true, &mut ev).unwrap();
    // 2^53 = 9 007 199 254 740 992: one above the largest count.
    let err = ledger.apply(&mut t, &[b(1, 9_007_199_254_740_992, 0)], false, &mut ev).unwrap_err();
    assert_eq!(err.code, "ERR_OUT_OF_RANGE");
    assert_eq!(
      err.message,
      "fleet bucket 1 holds 9007199254740992 successes: above 2^53 − 1 (9007199254740991), the largest count a snapshot may hold"
    );
    assert_eq!(t.counts(), Counts { successes: 4, failures: 1 });
    // Each within the limit, together above it: 4 (bucket 0, kept by a partial apply) + (2^53 − 4).
    let err = ledger.apply(&mut t, &[b(1, 0, 2), b(2, 9_007_199_254_740_988, 0)], false, &mut ev).unwrap_err();
    assert_eq!(
      err.message,
      "the fleet's buckets add up to more than 2^53 − 1 (9007199254740991) successes, the most a window may hold"
    );
    assert_eq!(t.counts(), Counts { successes: 4, failures: 1 });
    // 2^53 − 1 in all: installed.
    ledger.apply(&mut t, &[b(2, 9_007_199_254_740_987, 0)], false, &mut ev).unwrap();
    assert_eq!(t.counts(), Counts { successes: 9_007_199_254_740_991, failures: 1 });
  }
}
