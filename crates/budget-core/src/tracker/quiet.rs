//! The quiet region: how many more successes and failures a tracker can take
//! before its status or an alert could change, so that `record()` skips the
//! full re-evaluation (a dozen floating-point divisions) inside it.
//!
//! Status and alerts are decided by a handful of quantities of the counts:
//! the window's `q = failures / (total × (1 − targetRate))` (the remaining
//! fraction is `1 − q`) against the status thresholds, and each alert span's
//! burn rate (also `failures / (total × (1 − targetRate))`) against its
//! threshold, plus integer tests (`minEvents`). Adding `a` successes and `b`
//! failures to any subset of the spans moves each of these monotonically: down
//! in `a`, up in `b`. So if a quantity is on the same side of every threshold
//! at `(A, 0)` and `(0, B)` as at `(0, 0)`, it is on that side everywhere in
//! `[0, A] × [0, B]`.
//!
//! Exactness: the tracker compares floating-point results, which are within a
//! few ulps of the exact rational values; the region is only granted where the
//! exact value stays a relative 1e-9 away from each threshold (far beyond any
//! rounding), so inside it the floating-point decisions are those of `(0, 0)`,
//! bit for bit. Near a threshold the region is empty and every record is
//! evaluated in full, exactly as before.

use crate::budget::{status_for, Counts, Status, MAX_COUNT};

use super::Tracker;

/// Relative distance from a threshold below which a quantity is "too close to call".
const MARGIN: f64 = 1e-9;
/// The largest region granted in one go (events); also keeps every `u64` → `f64`
/// conversion below exact-integer range.
const CAP: u64 = 1 << 40;

/// Events the tracker can still take at once without re-evaluating.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Quiet {
  successes: u64,
  failures: u64,
  events: u64,
}

impl Quiet {
  /// Spends `successes` and `failures` from the region; false (and nothing
  /// spent) if they do not fit.
  #[inline]
  pub(super) fn take(&mut self, successes: u64, failures: u64) -> bool {
    if successes <= self.successes && failures <= self.failures && successes + failures <= self.events {
      self.successes -= successes;
      self.failures -= failures;
      self.events -= successes + failures;
      true
    } else {
      false
    }
  }
}

/// A share of the quiet region handed to a caller that records on its own
/// (the binding's lock-free `record()`): recording at most `successes`
/// successes and `failures` failures, `events` in all, stamped `at_ms`, while
/// time is before `until_ms`, changes no status and no alert, no layout and no
/// next expiry, and passes no count limit. Its events reach the tracker later,
/// in one `record(now_ms(), at_ms, …)` that the region then covers (so nothing
/// is re-evaluated), before the tracker moves in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuietLease {
  /// The most successes.
  pub successes: u64,
  /// The most failures.
  pub failures: u64,
  /// The most events, successes and failures together.
  pub events: u64,
  /// The time its events are recorded at: the tracker's now, in its newest bucket.
  pub at_ms: i64,
  /// The lease holds while time is before this: the end of the newest bucket,
  /// the next expiry of a non-empty bucket and the next end of a warm-up or
  /// re-arm period, whichever comes first.
  pub until_ms: i64,
}

impl Tracker {
  /// The quiet region left at now as a [`QuietLease`]; `None` when it is empty
  /// or when the newest bucket holds no events yet (a first event there would
  /// change the next expiry).
  pub fn quiet_lease(&mut self) -> Option<QuietLease> {
    let q = self.quiet;
    if q.events == 0 || !self.window.newest_holds_events() {
      return None;
    }
    // A count that would pass MAX_COUNT is refused by `record`: never leased.
    let successes = q.successes.min(MAX_COUNT - self.recorded.successes);
    let failures = q.failures.min(MAX_COUNT - self.recorded.failures);
    let until_ms =
      self.window.next_expiry_ms().unwrap_or(i64::MAX).min(self.warm_up_end_ms).min(self.window.newest_end_ms());
    let now = self.now_ms();
    (until_ms > now && (successes > 0 || failures > 0)).then_some(QuietLease {
      successes,
      failures,
      events: q.events,
      at_ms: now,
      until_ms,
    })
  }
}

/// Limits on successes and failures along one quantity's two directions.
#[derive(Clone, Copy)]
struct Limits {
  successes: u64,
  failures: u64,
}

const UNLIMITED: Limits = Limits { successes: CAP, failures: CAP };
const NONE: Limits = Limits { successes: 0, failures: 0 };

impl Tracker {
  /// The quiet region at the current counts, given the status and firing
  /// flags `note_changes` just set from them.
  pub(super) fn quiet_region(&self) -> Quiet {
    let c = 1.0 - self.config.target_rate;
    let window = self.window.counts();
    let min_events = self.config.min_events;
    let mut events = CAP;
    let mut limits = UNLIMITED;
    let mut meet = |l: Limits| {
      limits.successes = limits.successes.min(l.successes);
      limits.failures = limits.failures.min(l.failures);
    };
    if window.total() < min_events {
      // Low volume: healthy and nothing fires while below `minEvents`.
      events = min_events - 1 - window.total();
    } else {
      meet(status_limits(window, c, &self.config, self.last_status));
      for r in &self.rules {
        let long = self.window.span_counts(r.long_span);
        if r.firing && r.gate.holds(&r.rule) {
          // Held: a success can end it through a lull or a recovery span
          // reaching its minimum of solves, so every record re-decides while it
          // fires (an incident's records, rarely many).
          meet(NONE);
          continue;
        }
        if self.now_ms() < r.rearm_ms {
          // Resolved moments ago: cannot fire before its re-arm time, which
          // empties the region when time reaches it (`advance_to`).
          continue;
        }
        let short = self.window.span_counts(r.short_span);
        if self.now_ms() < r.fresh_until_ms && short.failures < 2 * r.gate.min_failures {
          // Resolved within a long window: fires again only once its short
          // window holds twice `min_failures` failures (the end of that time
          // empties the region too).
          meet(Limits { successes: CAP, failures: 2 * r.gate.min_failures - 1 - short.failures });
        }
        if self.age_ms() < r.gate.warm_up_ms {
          // Too young to fire, whatever is recorded; time passing the warm-up
          // empties the region (`advance_to`).
          continue;
        }
        if r.gate.min_budget_share > 0.0 {
          meet(share_limits(long, window, c, r.gate.min_budget_share));
        }
        if long.failures < r.gate.min_failures {
          // Cannot fire before the long window holds `min_failures` failures.
          meet(Limits { successes: CAP, failures: r.gate.min_failures - 1 - long.failures });
          continue;
        }
        if long.total() < r.rule.min_events {
          events = events.min(r.rule.min_events - 1 - long.total());
          continue;
        }
        meet(burn_limits(long, c, r.rule.burn_rate));
        meet(burn_limits(self.window.span_counts(r.short_span), c, r.rule.burn_rate));
      }
    }
    Quiet { successes: limits.successes.min(events), failures: limits.failures.min(events), events }
  }
}

/// `failures / (total × c)` as the tracker computes it, when both are exact integers in f64.
fn ratio(counts: Counts, c: f64) -> f64 {
  counts.failures as f64 / (counts.total() as f64 * c)
}

fn plus(counts: Counts, successes: u64, failures: u64) -> Counts {
  Counts { successes: counts.successes + successes, failures: counts.failures + failures }
}

/// The status of counts (at or above `minEvents`) when the window's remaining
/// fraction `1 − q` is clear of 0 and both thresholds; `None` when too close.
fn clear_status(counts: Counts, c: f64, config: &crate::config::Config) -> Option<Status> {
  let q = ratio(counts, c);
  let r = 1.0 - q;
  let tolerance = MARGIN * (1.0 + q);
  let edges = [0.0, config.critical_threshold, config.warning_threshold];
  if edges.iter().any(|e| (r - e).abs() <= tolerance) {
    return None;
  }
  Some(if r < 0.0 { Status::Exhausted } else { status_for(r, config) })
}

/// How far the window's status is settled.
fn status_limits(counts: Counts, c: f64, config: &crate::config::Config, status: Status) -> Limits {
  if counts.failures == 0 {
    // Remaining fraction exactly 1 whatever the successes; a failure re-decides.
    return Limits { successes: CAP, failures: 0 };
  }
  if c <= 0.0 {
    // targetRate 1: any failure exhausts the budget for good.
    return UNLIMITED;
  }
  if counts.total() > CAP || clear_status(counts, c, config) != Some(status) {
    return NONE;
  }
  // q = failures / (total × c) falls with successes, rises with failures; the
  // band of `status` is lo < q ≤ hi (q-space edges of the thresholds).
  let (lo, hi) = match status {
    Status::Exhausted => (Some(1.0), None),
    Status::Critical => (Some(1.0 - config.critical_threshold), Some(1.0)),
    Status::Warning => (Some(1.0 - config.warning_threshold), Some(1.0 - config.critical_threshold)),
    Status::Healthy => (None, Some(1.0 - config.warning_threshold)),
  };
  let same = |s: u64, f: u64| clear_status(plus(counts, s, f), c, config) == Some(status);
  Limits {
    successes: settle(lo.map_or(CAP, |lo| successes_until(counts, c, lo)), |a| same(a, 0)),
    failures: settle(hi.map_or(CAP, |hi| failures_until(counts, c, hi)), |b| same(0, b)),
  }
}

/// How far one alert span's side of its burn-rate threshold is settled.
fn burn_limits(counts: Counts, c: f64, threshold: f64) -> Limits {
  if c <= 0.0 {
    return UNLIMITED; // no budget: the burn rate is 0 whatever happens
  }
  if counts.failures == 0 {
    // Burn rate exactly 0; with no events at all, one failure is 1 / c.
    let failures = if counts.total() == 0 { 0 } else { failures_until(counts, c, threshold) };
    return Limits {
      successes: CAP,
      failures: settle(failures, |b| side(plus(counts, 0, b), c, threshold) == Some(false)),
    };
  }
  if counts.total() > CAP {
    return NONE;
  }
  match side(counts, c, threshold) {
    None => NONE,
    Some(true) => Limits {
      successes: settle(successes_until(counts, c, threshold), |a| {
        side(plus(counts, a, 0), c, threshold) == Some(true)
      }),
      failures: CAP,
    },
    Some(false) => Limits {
      successes: CAP,
      failures: settle(failures_until(counts, c, threshold), |b| side(plus(counts, 0, b), c, threshold) == Some(false)),
    },
  }
}

/// How far `long.failures ≥ share × window.total × c` (a long window's share of
/// the window's budget) is settled. Both counts grow with each event.
fn share_limits(long: Counts, window: Counts, c: f64, share: f64) -> Limits {
  let k = share * c;
  let holds = |s: u64, f: u64| -> Option<bool> {
    let lhs = (long.failures + f) as f64;
    let rhs = k * (window.total() + s + f) as f64;
    if (lhs - rhs).abs() <= MARGIN * rhs.max(1.0) {
      None
    } else {
      Some(lhs >= rhs)
    }
  };
  if window.total() > CAP {
    return NONE;
  }
  match holds(0, 0) {
    None => NONE,
    // Failures only strengthen it; successes dilute it: F < k (T + a) ⇔ a > F / k − T.
    Some(true) => Limits {
      successes: settle(guess(long.failures as f64 / k - window.total() as f64), |a| holds(a, 0) == Some(true)),
      failures: CAP,
    },
    // F + b ≥ k (T + b) ⇔ b ≥ (k T − F) / (1 − k).
    Some(false) => Limits {
      successes: CAP,
      failures: if k >= 1.0 {
        CAP
      } else {
        settle(guess((k * window.total() as f64 - long.failures as f64) / (1.0 - k)), |b| holds(0, b) == Some(false))
      },
    },
  }
}

/// Whether the burn rate of counts is above `threshold`, when clearly so either way.
fn side(counts: Counts, c: f64, threshold: f64) -> Option<bool> {
  let h = ratio(counts, c);
  if (h - threshold).abs() <= MARGIN * threshold {
    None
  } else {
    Some(h > threshold)
  }
}

/// A guess at how many successes keep `failures / (total × c)` above `edge`:
/// total + a < failures / (edge × c).
fn successes_until(counts: Counts, c: f64, edge: f64) -> u64 {
  if edge <= 0.0 {
    return CAP;
  }
  guess(counts.failures as f64 / (edge * c) - counts.total() as f64)
}

/// A guess at how many failures keep `failures / (total × c)` below `edge`:
/// (failures + b) < edge × c × (total + b).
fn failures_until(counts: Counts, c: f64, edge: f64) -> u64 {
  let k = edge * c;
  if k >= 1.0 {
    return CAP;
  }
  guess((k * counts.total() as f64 - counts.failures as f64) / (1.0 - k))
}

fn guess(x: f64) -> u64 {
  let x = x * (1.0 - 1e-6) - 1.0;
  if x >= CAP as f64 {
    CAP
  } else if x >= 1.0 {
    x as u64
  } else {
    0
  }
}

/// The largest of `guess`, `guess / 2`, … (or 0) at which `holds` — the check
/// that makes the region safe whatever the guess was.
fn settle(mut guess: u64, holds: impl Fn(u64) -> bool) -> u64 {
  while guess > 0 && !holds(guess) {
    guess /= 2;
  }
  guess
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::config::Config;
  use crate::tracker::Event;

  #[test]
  fn regions_stop_short_of_each_threshold() {
    // 95 %: q = F / (T × 0.05). 10 000 events, 100 failures: q = 0.2, healthy
    // (r = 0.8 ≥ 0.5). Warning at q > 0.5: (100 + b) / ((10 000 + b) × 0.05) > 0.5
    // ⇔ 100 + b > 250 + 0.025 b ⇔ b > 153.8: 153 failures stay healthy.
    let config = Config::default();
    let counts = Counts { successes: 9_900, failures: 100 };
    let l = status_limits(counts, 1.0 - 0.95, &config, Status::Healthy);
    assert_eq!(l.successes, CAP);
    assert!(l.failures <= 153 && l.failures >= 150, "{}", l.failures);
    assert_eq!(clear_status(plus(counts, 0, 153), 1.0 - 0.95, &config), Some(Status::Healthy));
    assert_eq!(clear_status(plus(counts, 0, 154), 1.0 - 0.95, &config), Some(Status::Warning));
    // Critical band 0.9 < q < 1 at 1 000 events, 47 failures (q = 0.94): back to
    // warning needs 47 / (T × 0.05) ≤ 0.9 ⇔ T ≥ 1044.4, i.e. 45 successes;
    // exhausted needs (47 + b) ≥ 0.05 (1000 + b) ⇔ b ≥ 3.16, i.e. 4 failures.
    let counts = Counts { successes: 953, failures: 47 };
    let l = status_limits(counts, 1.0 - 0.95, &config, Status::Critical);
    assert!(l.successes <= 44 && l.successes >= 40, "{}", l.successes);
    assert!(l.failures <= 3 && l.failures >= 1, "{}", l.failures);
  }

  #[test]
  fn nothing_is_granted_on_a_threshold() {
    // 5 failures of 100 at 95 %: q = 5 / 5.000000000000004, a sliver under 1.
    let config = Config::default();
    let counts = Counts { successes: 95, failures: 5 };
    assert_eq!(clear_status(counts, 1.0 - 0.95, &config), None);
    let l = status_limits(counts, 1.0 - 0.95, &config, Status::Critical);
    assert_eq!((l.successes, l.failures), (0, 0));
    // A burn rate equal to its threshold: 10 failures of 100 at 95 % is 2.
    assert_eq!(side(Counts { successes: 90, failures: 10 }, 1.0 - 0.95, 2.0), None);
  }

  #[test]
  fn burn_limits_on_each_side() {
    // 1 failure in 100 at 95 %: burn 0.2, threshold 2 ⇔ F / T > 0.1:
    // (1 + b) / (100 + b) > 0.1 ⇔ b > 10 (b = 10 is on it): 9 failures stay below.
    let l = burn_limits(Counts { successes: 99, failures: 1 }, 1.0 - 0.95, 2.0);
    assert_eq!(l.successes, CAP);
    assert!(l.failures <= 9 && l.failures >= 7, "{}", l.failures);
    // 50 failures in 100: burn 10 above 2; successes bring it to 2 at T = 500.
    let l = burn_limits(Counts { successes: 50, failures: 50 }, 1.0 - 0.95, 2.0);
    assert_eq!(l.failures, CAP);
    assert!(l.successes <= 399 && l.successes >= 390, "{}", l.successes);
    // An empty span: the first failure already crosses any threshold.
    let l = burn_limits(Counts::default(), 1.0 - 0.95, 14.4);
    assert_eq!((l.successes, l.failures), (CAP, 0));
  }

  #[test]
  fn take_is_all_or_nothing() {
    let mut q = Quiet { successes: 3, failures: 1, events: 3 };
    assert!(q.take(2, 0));
    assert!(!q.take(0, 2));
    assert!(!q.take(1, 1)); // fits each kind, but 2 events > 1 left
    assert!(q.take(0, 1));
    assert_eq!(q, Quiet { successes: 1, failures: 0, events: 0 });
  }

  #[test]
  fn a_lease_ends_with_its_bucket_or_the_next_expiry_and_stays_below_max_count() {
    // 1 s buckets over 10 s; the default policy's windows are far longer than
    // the window, so only the window's own expiry matters.
    let config = Config { window_ms: 10_000, resolution_ms: 1_000, alerts: Some(vec![]), ..Config::default() };
    let mut t = Tracker::new(config, 0).unwrap();
    // Nothing in the newest bucket yet: a first event there would set the next expiry.
    assert_eq!(t.quiet_lease(), None);
    t.record(500, 500, 1, 0, &mut Vec::<Event>::new());
    // 1 success: healthy whatever the successes, no failure allowed (one
    // failure in two events spends the budget: exhausted).
    let lease = t.quiet_lease().unwrap();
    assert_eq!((lease.successes, lease.failures, lease.at_ms, lease.until_ms), (CAP, 0, 500, 1_000));
    // At 9 700 the bucket of 500 leaves the window at 10 000 < the bucket's end.
    t.record(9_700, 9_700, 1, 0, &mut Vec::<Event>::new());
    t.record(9_700, 9_700, 0, 0, &mut Vec::<Event>::new());
    assert_eq!(t.quiet_lease().map(|l| l.until_ms), Some(10_000));
    // Near MAX_COUNT the lease stops where `record` would refuse.
    t.recorded.successes = MAX_COUNT - 3;
    assert_eq!(t.quiet_lease().map(|l| l.successes), Some(3));
    t.recorded.successes = MAX_COUNT;
    assert_eq!(t.quiet_lease(), None);
  }

  /// The quiet region changes speed only: a tracker using it and one that
  /// re-evaluates every record (its region emptied before each operation)
  /// emit the same events and agree on everything after every operation.
  mod same_as_full_evaluation {
    use super::super::super::{Event, Tracker};
    use super::*;
    use crate::alerts::{AlertRule, Severity};
    use crate::window::Placement;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
      /// Time step, how far back the event is stamped, successes, failures.
      Record(i64, i64, u64, u64),
      /// A run of single events at now: count, failure every `n`th (0: none).
      Run(u32, u32),
      Advance(i64),
      /// Single events at now through a quiet lease (as many as it allows),
      /// reaching the tracker in one record: count, failure every `n`th.
      Leased(u32, u32),
    }

    fn op() -> impl Strategy<Value = Op> {
      let step = prop_oneof![4 => Just(0i64), 2 => 0i64..50, 1 => 0i64..3000];
      let back = prop_oneof![6 => Just(0i64), 1 => 0i64..1500];
      let batch = prop_oneof![
        4 => Just((1u64, 0u64)),
        4 => Just((0, 1)),
        1 => (0u64..5, 0u64..5),
        1 => (0u64..100_000, 0u64..10_000),
      ];
      prop_oneof![
        5 => (step, back, batch).prop_map(|(t, b, (s, f))| Op::Record(t, b, s, f)),
        3 => (1u32..400, prop_oneof![Just(0u32), 1u32..40]).prop_map(|(n, k)| Op::Run(n, k)),
        1 => (0i64..2500).prop_map(Op::Advance),
        3 => (1u32..400, prop_oneof![Just(0u32), 1u32..40]).prop_map(|(n, k)| Op::Leased(n, k)),
      ]
    }

    fn config() -> impl Strategy<Value = Config> {
      let target = prop_oneof![Just(0.95), Just(0.9), Just(0.99), Just(0.5), Just(0.999), Just(1.0), 0.5f64..1.0];
      let thresholds = prop_oneof![
        Just((0.5, 0.1)),
        Just((1.0, 0.0)),
        Just((0.3, 0.3)),
        (0.0f64..=1.0, 0.0f64..=1.0).prop_map(|(a, b)| (a.max(b), a.min(b))),
      ];
      let rules = prop_oneof![
        Just(None),
        Just(Some(vec![])),
        (1u64..20, 1.1f64..1.9).prop_map(|(min_events, burn)| Some(vec![
          AlertRule {
            name: "a".into(),
            severity: Severity::Page,
            long_window_ms: 600,
            short_window_ms: 100,
            burn_rate: burn,
            min_events,
          },
          AlertRule {
            name: "b".into(),
            severity: Severity::Ticket,
            long_window_ms: 1000,
            short_window_ms: 300,
            burn_rate: 1.0,
            min_events: 0,
          },
        ])),
      ];
      (target, thresholds, prop_oneof![Just(0u64), 1u64..60], rules).prop_map(
        |(target_rate, (w, c), min_events, alerts)| {
          let alerts = if target_rate >= 1.0 { Some(vec![]) } else { alerts };
          Config {
            target_rate,
            window_ms: 1000,
            resolution_ms: 50,
            warning_threshold: w,
            critical_threshold: c,
            min_events,
            alerts,
            verdict_window_ms: 0,
          }
        },
      )
    }

    fn state(t: &Tracker) -> String {
      let firing: Vec<bool> = t.rules.iter().map(|r| r.firing).collect();
      format!(
        "{:?} {:?} {:?} {:?} {firing:?} {:?}",
        t.report(),
        t.alert_snapshot(),
        t.last_status,
        t.recorded,
        t.dropped
      )
    }

    proptest! {
      #![proptest_config(ProptestConfig::with_cases(400))]
      #[test]
      fn quiet_region_changes_nothing(config in config(), ops in proptest::collection::vec(op(), 1..120)) {
        let mut fast = Tracker::new(config.clone(), 0).unwrap();
        let mut full = Tracker::new(config, 0).unwrap();
        let mut now = 0i64;
        for op in ops {
          let (mut a, mut b): (Vec<Event>, Vec<Event>) = (Vec::new(), Vec::new());
          match op {
            Op::Record(dt, back, s, f) => {
              now += dt;
              full.quiet = Quiet::default();
              let pa = fast.record(now, now - back, s, f, &mut a);
              let pb = full.record(now, now - back, s, f, &mut b);
              prop_assert_eq!(pa, pb);
            }
            Op::Run(n, every) => {
              for i in 1..=n {
                let failed = every != 0 && i % every == 0;
                full.quiet = Quiet::default();
                fast.record(now, now, !failed as u64, failed as u64, &mut a);
                full.record(now, now, !failed as u64, failed as u64, &mut b);
              }
            }
            Op::Advance(dt) => {
              now += dt;
              full.quiet = Quiet::default();
              fast.advance(now, &mut a);
              full.advance(now, &mut b);
            }
            Op::Leased(n, every) => {
              let Some(lease) = fast.quiet_lease() else { continue };
              prop_assert_eq!(lease.at_ms, now);
              prop_assert!(lease.until_ms > now);
              prop_assert!(lease.until_ms <= (now.div_euclid(50) + 1) * 50, "past the bucket: {:?}", lease);
              prop_assert!(fast.next_change_ms().is_none_or(|t| lease.until_ms <= t), "past an expiry: {:?}", lease);
              let (mut s, mut f) = (0u64, 0u64);
              for i in 1..=n {
                let failed = every != 0 && i % every == 0;
                let fits = s + f < lease.events && if failed { f < lease.failures } else { s < lease.successes };
                if !fits {
                  break;
                }
                if failed { f += 1 } else { s += 1 }
                full.quiet = Quiet::default();
                full.record(now, now, !failed as u64, failed as u64, &mut b);
              }
              prop_assert_eq!(fast.record(fast.now_ms(), lease.at_ms, s, f, &mut a), Placement::Counted);
              prop_assert!(a.is_empty(), "a leased record changed something: {:?}", a);
            }
          }
          prop_assert_eq!(&a, &b);
          prop_assert_eq!(state(&fast), state(&full));
          prop_assert_eq!(fast.next_change_ms(), full.next_change_ms());
        }
      }
    }
  }
}
