//! Hand-worked scenarios of time-driven status transitions, with the exact
//! instants and reports worked out by hand in the comments.
//!
//! Conventions used throughout: bucket k holds [k·res, (k+1)·res) and leaves
//! the window when now ≥ k·res + window (for an event stamped at a bucket
//! start t: when now − t ≥ window). Status from f = remaining fraction:
//! f ≤ 0 exhausted, f < critical critical, f < warning warning, else healthy.

use budget_core::{Config, Placement, Report, Status, Tracker, Transition};
use Status::{Critical, Exhausted, Healthy, Warning};

fn tracker(config: Config, now: i64) -> Tracker {
  Tracker::new(config, now).expect("valid config")
}

/// The report fields in the order the scenarios write them.
struct R {
  at: i64,
  status: Status,
  successes: u64,
  failures: u64,
  /// successes / total to 4 decimals.
  rate: f64,
  /// remaining fraction × 100 to 1 decimal.
  pct: f64,
  /// failures / budgetTotal to 2 decimals.
  burn: f64,
  budget_total: f64,
  budget_remaining: f64,
  dropped: u64,
}

fn report(slo_target: f64, r: R) -> Report {
  Report {
    status: r.status,
    current_rate: r.rate,
    total: r.successes + r.failures,
    successes: r.successes,
    failures: r.failures,
    budget_remaining_pct: r.pct,
    burn_rate: r.burn,
    slo_target,
    budget_total: r.budget_total,
    budget_remaining: r.budget_remaining,
    dropped: r.dropped,
    at_ms: r.at,
  }
}

fn transition(from: Status, to: Status, slo_target: f64, r: R) -> Transition {
  Transition { from, to, report: report(slo_target, r) }
}

/// (from, to, at_ms) of each transition: for readable assertion messages.
fn summary(ts: &[Transition]) -> Vec<(Status, Status, i64)> {
  ts.iter().map(|t| (t.from, t.to, t.report.at_ms)).collect()
}

/// The empty-window report: healthy, rate 1, 100 % left, nothing burning.
fn empty(at: i64, dropped: u64) -> R {
  R {
    at,
    status: Healthy,
    successes: 0,
    failures: 0,
    rate: 1.0,
    pct: 100.0,
    burn: 0.0,
    budget_total: 0.0,
    budget_remaining: 0.0,
    dropped,
  }
}

// ---------------------------------------------------------------------------
// a) A burst of failures that ages out
// ---------------------------------------------------------------------------

fn burst_config() -> Config {
  Config {
    target_rate: 0.95,
    window_ms: 1000,
    resolution_ms: 100,
    warning_threshold: 0.5,
    critical_threshold: 0.1,
    min_events: 0,
    alerts: Some(Vec::new()), // status only: alerts have their own tests
    ..Config::default()
  }
}

/// t=0: 100 successes (bucket 0, leaves at 1000). t=200: 10 failures
/// (bucket 2, leaves at 1200). Returns the tracker at t=200.
fn burst_tracker() -> Tracker {
  let mut t = tracker(burst_config(), 0);
  let mut out: Vec<Transition> = Vec::new();
  // 100 successes: budgetTotal = 100 × (1 − 0.95) = 100 × 0.050000000000000044
  // ≈ 5.0, no failures → f = 1 → healthy, as the tracker starts: no transition.
  assert_eq!(t.record(0, 0, 100, 0, &mut out), Placement::Counted);
  assert!(out.is_empty(), "{:?}", summary(&out));

  // 10 failures at 200: total 110, budgetTotal = 110 × 0.050000000000000044
  // ≈ 5.5, budgetRemaining = max(0, 5.5 − 10) = 0 → f = 0 → exhausted.
  // Report: rate 100/110 = 0.90909… → 0.9091; pct 0; burn 10/5.5 = 1.8181… → 1.82;
  // budgetTotal 5.5; remaining 0.
  assert_eq!(t.record(200, 200, 0, 10, &mut out), Placement::Counted);
  assert_eq!(
    out,
    vec![transition(
      Healthy,
      Exhausted,
      0.95,
      R {
        at: 200,
        status: Exhausted,
        successes: 100,
        failures: 10,
        rate: 0.9091,
        pct: 0.0,
        burn: 1.82,
        budget_total: 5.5,
        budget_remaining: 0.0,
        dropped: 0,
      }
    )]
  );
  assert_eq!(t.last_status(), Exhausted);
  t
}

/// After the successes left (t ≥ 1000) and before the failures leave (< 1200):
/// 10 failures alone, budgetTotal = 10 × 0.050000000000000044 ≈ 0.5,
/// remaining max(0, 0.5 − 10) = 0 → exhausted; burn 10/0.5 = 20.
fn only_failures(at: i64) -> R {
  R {
    at,
    status: Exhausted,
    successes: 0,
    failures: 10,
    rate: 0.0,
    pct: 0.0,
    burn: 20.0,
    budget_total: 0.5,
    budget_remaining: 0.0,
    dropped: 0,
  }
}

#[test]
fn a_burst_of_failures_ages_out_at_the_exact_instant() {
  let mut t = burst_tracker();
  let mut out: Vec<Transition> = Vec::new();

  // Bucket 0 leaves at 0 + 1000 = 1000: the successes go, the status stays
  // exhausted (see `only_failures`), so no transition at 1000.
  assert_eq!(t.next_change_ms(), Some(1000));
  t.advance(1150, &mut out);
  assert!(out.is_empty(), "{:?}", summary(&out));
  assert_eq!(t.report(), report(0.95, only_failures(1150)));
  assert_eq!(t.next_change_ms(), Some(1200));

  // One millisecond before bucket 2 (start 200) leaves: still there.
  t.advance(1199, &mut out);
  assert!(out.is_empty(), "{:?}", summary(&out));
  assert_eq!(t.report(), report(0.95, only_failures(1199)));

  // At 200 + 1000 = 1200 the window is empty: budgetTotal 0 with 0 failures
  // → f = 1 → healthy. Exactly one transition, at 1200, with total 0.
  t.advance(1200, &mut out);
  assert_eq!(out, vec![transition(Exhausted, Healthy, 0.95, empty(1200, 0))]);
  assert_eq!(out[0].report.at_ms, 1200);
  assert_eq!(out[0].report.total, 0);
  assert_eq!(t.last_status(), Healthy);
  assert_eq!(t.next_change_ms(), None);
}

#[test]
fn a_burst_of_failures_ages_out_in_one_jump() {
  // The same, jumping from 200 straight past both expiries: the stop at 1000
  // changes nothing, the one at 1200 gives the transition, stamped 1200 and
  // not 5000.
  let mut t = burst_tracker();
  let mut out: Vec<Transition> = Vec::new();
  t.advance(5000, &mut out);
  assert_eq!(out, vec![transition(Exhausted, Healthy, 0.95, empty(1200, 0))]);
  assert_eq!(t.report(), report(0.95, empty(5000, 0)));
}

// ---------------------------------------------------------------------------
// b) Successes ageing out under a steady failure trickle
// ---------------------------------------------------------------------------

// target 0.5 keeps the arithmetic exact: budgetTotal = T / 2 for T events.
// With F failures, f = (T/2 − F) / (T/2) = 1 − 2F/T while positive.
// warning 0.5, critical 0.25.
//
// Successes: 8 at t=0, 2 at 100, 4 at 200, 2 at 300 (16 in all).
// Failures: 1 at each of 500, 600, 700, 800 (F = 4 once all are in).
//
// While recording (all healthy, no transition):
//   t=0..300: only successes, f = 1.
//   t=500: T=17, f = 1 − 2/17 ≈ 0.88;  t=600: T=18, f = 1 − 4/18 ≈ 0.78
//   t=700: T=19, f = 1 − 6/19 ≈ 0.68;  t=800: T=20, f = 1 − 8/20 = 0.6
// Time alone then (bucket k·100 leaves at k·100 + 1000):
//   1000: the 8 successes of t=0 leave: S=8, F=4, T=12: budget 6, left 2,
//         f = 1/3 → warning.  rate 8/12 → 0.6667; pct 33.3; burn 4/6 → 0.67.
//   1100: the 2 of t=100 leave: S=6, T=10: budget 5, left 1, f = 0.2 → critical.
//         rate 0.6; pct 20; burn 0.8.
//   1200: the 4 of t=200 leave: S=2, T=6: budget 3, left max(0, 3 − 4) = 0
//         → exhausted. rate 2/6 → 0.3333; pct 0; burn 4/3 → 1.33.
//   1300: the last 2 successes leave: S=0, T=4, budget 2 < 4 → exhausted: no change.
//   1500, 1600, 1700: one failure leaves each time: T=F=3, 2, 1,
//         budget 1.5, 1, 0.5 < F → exhausted: no change.
//   1800: the window is empty → healthy.

fn trickle_config() -> Config {
  Config {
    target_rate: 0.5,
    window_ms: 1000,
    resolution_ms: 100,
    warning_threshold: 0.5,
    critical_threshold: 0.25,
    min_events: 0,
    alerts: Some(Vec::new()), // status only: alerts have their own tests
    ..Config::default()
  }
}

fn trickle_tracker() -> Tracker {
  let mut t = tracker(trickle_config(), 0);
  let mut out: Vec<Transition> = Vec::new();
  for (at, successes) in [(0, 8), (100, 2), (200, 4), (300, 2)] {
    assert_eq!(t.record(at, at, successes, 0, &mut out), Placement::Counted);
  }
  for at in [500, 600, 700, 800] {
    assert_eq!(t.record(at, at, 0, 1, &mut out), Placement::Counted);
  }
  assert!(out.is_empty(), "recording stays healthy: {:?}", summary(&out));
  // At 800: T=20, budget 10, left 6, f = 0.6; rate 16/20 = 0.8; burn 4/10 = 0.4.
  assert_eq!(
    t.report(),
    report(
      0.5,
      R {
        at: 800,
        status: Healthy,
        successes: 16,
        failures: 4,
        rate: 0.8,
        pct: 60.0,
        burn: 0.4,
        budget_total: 10.0,
        budget_remaining: 6.0,
        dropped: 0,
      }
    )
  );
  t
}

fn trickle_expected() -> Vec<Transition> {
  vec![
    transition(
      Healthy,
      Warning,
      0.5,
      R {
        at: 1000,
        status: Warning,
        successes: 8,
        failures: 4,
        rate: 0.6667,
        pct: 33.3,
        burn: 0.67,
        budget_total: 6.0,
        budget_remaining: 2.0,
        dropped: 0,
      },
    ),
    transition(
      Warning,
      Critical,
      0.5,
      R {
        at: 1100,
        status: Critical,
        successes: 6,
        failures: 4,
        rate: 0.6,
        pct: 20.0,
        burn: 0.8,
        budget_total: 5.0,
        budget_remaining: 1.0,
        dropped: 0,
      },
    ),
    transition(
      Critical,
      Exhausted,
      0.5,
      R {
        at: 1200,
        status: Exhausted,
        successes: 2,
        failures: 4,
        rate: 0.3333,
        pct: 0.0,
        burn: 1.33,
        budget_total: 3.0,
        budget_remaining: 0.0,
        dropped: 0,
      },
    ),
    transition(Exhausted, Healthy, 0.5, empty(1800, 0)),
  ]
}

#[test]
fn successes_ageing_out_in_one_jump() {
  let mut t = trickle_tracker();
  let mut out: Vec<Transition> = Vec::new();
  t.advance(2000, &mut out);
  assert_eq!(
    summary(&out),
    vec![(Healthy, Warning, 1000), (Warning, Critical, 1100), (Critical, Exhausted, 1200), (Exhausted, Healthy, 1800)]
  );
  assert_eq!(out, trickle_expected());
  assert_eq!(t.report(), report(0.5, empty(2000, 0)));
  assert_eq!(t.last_status(), Healthy);
}

#[test]
fn successes_ageing_out_step_by_step() {
  // Steps of 50 ms land on every instant; steps of 70 ms (870, 940, 1010, …)
  // and 1 ms straddle or hit them: the list, with its exact instants, is the same.
  for step in [50, 70, 1, 333] {
    let mut t = trickle_tracker();
    let mut out: Vec<Transition> = Vec::new();
    let mut now = 800;
    while now < 2000 {
      now = (now + step).min(2000);
      t.advance(now, &mut out);
    }
    assert_eq!(out, trickle_expected(), "step {step}");
  }
}

#[test]
fn successes_ageing_out_with_the_status_read_between() {
  // Right before and at each instant.
  let mut t = trickle_tracker();
  let mut out: Vec<Transition> = Vec::new();
  for (at, before, after) in [
    (1000, Healthy, Warning),
    (1100, Warning, Critical),
    (1200, Critical, Exhausted),
    (1300, Exhausted, Exhausted),
    (1800, Exhausted, Healthy),
  ] {
    assert_eq!(t.next_change_ms(), Some(at), "next change before {at}");
    t.advance(at - 1, &mut out);
    assert_eq!((t.report().status, t.last_status()), (before, before), "at {}", at - 1);
    t.advance(at, &mut out);
    assert_eq!((t.report().status, t.last_status()), (after, after), "at {at}");
    if at == 1300 {
      // The last successes leave, and so does… nothing else until 1500.
      assert_eq!(t.next_change_ms(), Some(1500));
      t.advance(1799, &mut out);
    }
  }
  assert_eq!(out, trickle_expected());
  assert_eq!(t.next_change_ms(), None);
}

// ---------------------------------------------------------------------------
// c) Replay ordering
// ---------------------------------------------------------------------------

// target 0.5, window 1000, resolution 100, warning 0.5, critical 0.1.
// One failure alone: T=1, budget 0.5 < 1 → exhausted.
// 2 successes + 1 failure: T=3, budget 1.5, left 0.5, f = 1/3 → warning
// (≥ 0.1, < 0.5). Report: rate 2/3 → 0.6667; pct 33.3; burn 1/1.5 → 0.67.

fn replay_config() -> Config {
  Config {
    target_rate: 0.5,
    window_ms: 1000,
    resolution_ms: 100,
    warning_threshold: 0.5,
    critical_threshold: 0.1,
    min_events: 0,
    alerts: Some(Vec::new()), // status only: alerts have their own tests
    ..Config::default()
  }
}

fn lone_failure(at: i64, dropped: u64) -> R {
  R {
    at,
    status: Exhausted,
    successes: 0,
    failures: 1,
    rate: 0.0,
    pct: 0.0,
    burn: 2.0,
    budget_total: 0.5,
    budget_remaining: 0.0,
    dropped,
  }
}

fn two_of_three(at: i64, dropped: u64) -> R {
  R {
    at,
    status: Warning,
    successes: 2,
    failures: 1,
    rate: 0.6667,
    pct: 33.3,
    burn: 0.67,
    budget_total: 1.5,
    budget_remaining: 0.5,
    dropped,
  }
}

#[test]
fn replay_puts_the_expiry_transition_before_the_events_own() {
  let mut t = tracker(replay_config(), 0);

  // 1) t=0: a failure → healthy → exhausted at 0.
  let mut out: Vec<Transition> = Vec::new();
  t.record(0, 0, 0, 1, &mut out);
  assert_eq!(out, vec![transition(Healthy, Exhausted, 0.5, lone_failure(0, 0))]);

  // 2) A record at now=1050 stamped 1000 (out of order, inside the window:
  //    1050 − 1000 < 1000). Moving time to 1050 passes 0 + 1000 = 1000, where
  //    the failure leaves: exhausted → healthy at 1000, total 0. Then the
  //    event itself (2 successes + 1 failure) → healthy → warning at 1050.
  let mut out: Vec<Transition> = Vec::new();
  assert_eq!(t.record(1050, 1000, 2, 1, &mut out), Placement::Counted);
  assert_eq!(summary(&out), vec![(Exhausted, Healthy, 1000), (Healthy, Warning, 1050)]);
  assert_eq!(
    out,
    vec![transition(Exhausted, Healthy, 0.5, empty(1000, 0)), transition(Healthy, Warning, 0.5, two_of_three(1050, 0)),]
  );

  // 3) A record at now=2000 stamped 1000: moving to 2000 expires bucket 10
  //    (start 1000) at exactly 2000 → empty → warning → healthy at 2000. The
  //    event is then too old (2000 − 1000 = window, not < window): dropped,
  //    no transition of its own. The expiry report was taken before the drop.
  let mut out: Vec<Transition> = Vec::new();
  assert_eq!(t.record(2000, 1000, 0, 1, &mut out), Placement::TooOld);
  assert_eq!(out, vec![transition(Warning, Healthy, 0.5, empty(2000, 0))]);
  assert_eq!(t.dropped(), 1);
  assert_eq!(t.report(), report(0.5, empty(2000, 1)));

  // 4) A failure at 2100 → exhausted at 2100 (dropped now 1 in the report).
  let mut out: Vec<Transition> = Vec::new();
  t.record(2100, 2100, 0, 1, &mut out);
  assert_eq!(out, vec![transition(Healthy, Exhausted, 0.5, lone_failure(2100, 1))]);

  // 5) Expiry and event at the same instant: at 3100 the failure of 2100
  //    leaves (2100 + 1000) and the new event lands. Both transitions carry
  //    at_ms 3100; the expiry's (total 0) comes first, the event's (total 3)
  //    second.
  let mut out: Vec<Transition> = Vec::new();
  t.record(3100, 3100, 2, 1, &mut out);
  assert_eq!(
    out,
    vec![transition(Exhausted, Healthy, 0.5, empty(3100, 1)), transition(Healthy, Warning, 0.5, two_of_three(3100, 1)),]
  );
  assert_eq!(t.last_status(), Warning);
}

// ---------------------------------------------------------------------------
// d) next_change_ms()
// ---------------------------------------------------------------------------

/// Default figures (target 0.95, warning 0.5, critical 0.1) and no alert
/// pairs, so that the only instants are the window's own bucket expiries
/// (alert windows would add theirs).
fn window_only(window_ms: i64, resolution_ms: i64) -> Config {
  Config { window_ms, resolution_ms, alerts: Some(Vec::new()), ..Config::default() }
}

#[test]
fn next_change_is_the_expiry_of_the_oldest_non_empty_bucket() {
  let config = window_only(1000, 100);
  let mut t = tracker(config, 0);
  let mut out: Vec<Transition> = Vec::new();

  // Empty window.
  assert_eq!(t.next_change_ms(), None);

  // An event at 300 (bucket 3) leaves at 300 + 1000 = 1300.
  t.record(300, 300, 1, 0, &mut out);
  assert_eq!(t.next_change_ms(), Some(1300));

  // A record of nothing in bucket 1 leaves that bucket empty: unchanged.
  t.record(300, 100, 0, 0, &mut out);
  assert_eq!(t.next_change_ms(), Some(1300));

  // An out-of-order event at 100 (bucket 1) is now the oldest: 1100.
  t.record(300, 100, 1, 0, &mut out);
  assert_eq!(t.next_change_ms(), Some(1100));

  // Not yet expired one millisecond before; at 1100 bucket 1 is gone.
  t.advance(1099, &mut out);
  assert_eq!(t.next_change_ms(), Some(1100));
  t.advance(1100, &mut out);
  assert_eq!(t.next_change_ms(), Some(1300));
  assert_eq!(t.counts().successes, 1);

  // An event stamped 1250, inside bucket 12 (start 1200): the bucket, not the
  // event, sets the instant: 1200 + 1000 = 2200. (Bucket 3 is still older.)
  t.record(1250, 1250, 1, 0, &mut out);
  assert_eq!(t.next_change_ms(), Some(1300));
  t.advance(1300, &mut out);
  assert_eq!(t.next_change_ms(), Some(2200));
  assert_eq!(t.counts().successes, 1);

  // Everything gone: None again, also after a long gap.
  t.advance(2200, &mut out);
  assert_eq!(t.next_change_ms(), None);
  t.advance(1_000_000, &mut out);
  assert_eq!(t.next_change_ms(), None);
  // A new event after the gap.
  t.record(1_000_000, 1_000_000, 0, 1, &mut out);
  assert_eq!(t.next_change_ms(), Some(1_001_000));
  assert!(out.iter().all(|tr| tr.report.at_ms <= 1_000_000));
}

#[test]
fn next_change_with_a_window_the_resolution_does_not_divide() {
  // window 1050, resolution 100: 11 buckets in the ring. An event at 0
  // counts while 0 > now − 1050, i.e. until now = 1050.
  let config = window_only(1050, 100);
  let mut t = tracker(config, 0);
  let mut out: Vec<Transition> = Vec::new();
  t.record(0, 0, 0, 1, &mut out);
  t.record(1000, 1000, 1, 0, &mut out);
  assert_eq!(t.next_change_ms(), Some(1050));
  t.advance(1049, &mut out);
  assert_eq!(t.counts().failures, 1);
  t.advance(1050, &mut out);
  assert_eq!(t.counts().failures, 0);
  // Then the event at 1000 leaves at 2050.
  assert_eq!(t.next_change_ms(), Some(2050));
  // The lone failure went healthy → exhausted at 0 and back at 1050 (the
  // success of 1000 alone: f = 1); the success recorded at 1000, with the
  // failure still in (T=2, budget 2 × 0.05 ≈ 0.1 < 1 failure), changed nothing.
  assert_eq!(summary(&out), vec![(Healthy, Exhausted, 0), (Exhausted, Healthy, 1050)]);
}

#[test]
fn next_change_with_negative_times() {
  // Bucket −50 (start −5000) leaves at −4000.
  let config = window_only(1000, 100);
  let mut t = tracker(config, -5000);
  let mut out: Vec<Transition> = Vec::new();
  assert_eq!(t.next_change_ms(), None);
  t.record(-5000, -5000, 0, 1, &mut out);
  assert_eq!(t.next_change_ms(), Some(-4000));
  t.advance(0, &mut out);
  assert_eq!(summary(&out), vec![(Healthy, Exhausted, -5000), (Exhausted, Healthy, -4000)]);
  assert_eq!(t.next_change_ms(), None);
}
