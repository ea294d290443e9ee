//! Late verdicts (`Tracker::reject`): a success turned into a failure in the
//! bucket where it was recorded, with the figures worked out by hand. (The
//! reference model checks the same against random operations.)

use budget_core::{AlertRule, Config, Event, Placement, Severity, Status, Tracker, Transition};

/// An hour in 1 s buckets, status only; `verdict_window_ms` as given.
fn hour(target_rate: f64, verdict_window_ms: i64) -> Config {
  Config {
    target_rate,
    window_ms: 3_600_000,
    resolution_ms: 1000,
    alerts: Some(Vec::new()),
    verdict_window_ms,
    ..Config::default()
  }
}

/// 100 successes, one a second from t = 0 (bucket i holds the one at i s).
fn hundred_solves(config: Config) -> Tracker {
  let mut t = Tracker::new(config, 0).unwrap();
  let mut out: Vec<Transition> = Vec::new();
  for i in 0..100 {
    assert_eq!(t.record(i * 1000, i * 1000, 1, 0, &mut out), Placement::Counted);
  }
  assert!(out.is_empty());
  t
}

#[test]
fn ten_rejections_of_a_hundred_solves_are_ten_failures_recorded_then() {
  let mut t = hundred_solves(hour(0.95, 900_000));
  let mut out: Vec<Transition> = Vec::new();
  let mut steps = Vec::new();
  for i in 0..10 {
    assert!(t.reject(100_000, i * 10_000, &mut out), "reject #{i}");
    steps.push((i + 1, out.drain(..).map(|tr| (tr.from, tr.to)).collect::<Vec<_>>()));
  }
  // budgetTotal = 100 × (1 − 0.95) = 100 × 0.050000000000000044 = 5.000000000000004;
  // after k rejections the remaining fraction is (5.000000000000004 − k) / 5.000000000000004:
  // k = 2 → 0.6 healthy, 3 → 0.4 warning (< 0.5), 4 → 0.2 warning, 5 → 7e-16 critical
  // (> 0, < 0.1), 6 → 0 exhausted: each crossing once, at the rejection that crosses it.
  use Status::{Critical, Exhausted, Healthy, Warning};
  let crossings: Vec<_> = steps.into_iter().filter(|(_, t)| !t.is_empty()).collect();
  assert_eq!(
    crossings,
    [(3, vec![(Healthy, Warning)]), (5, vec![(Warning, Critical)]), (6, vec![(Critical, Exhausted)])]
  );
  let report = t.report();
  assert_eq!((report.successes, report.failures, report.total), (90, 10, 100));
  // rate 90/100; burn 10 / 5.000000000000004 = 1.99999999999999… → 2; nothing left.
  assert_eq!((report.status, report.current_rate, report.burn_rate), (Exhausted, 0.9, 2.0));
  assert_eq!((report.budget_total, report.budget_remaining, report.budget_remaining_pct), (5.0, 0.0, 0.0));
  assert_eq!(t.rejected(), 10);
  // The same as 90 successes and 10 failures recorded in those buckets.
  let mut direct = Tracker::new(hour(0.95, 900_000), 0).unwrap();
  for i in 0..100 {
    let failed = i % 10 == 0;
    direct.record(i * 1000, i * 1000, u64::from(!failed), u64::from(failed), &mut out);
  }
  direct.advance(100_000, &mut out);
  assert_eq!(t.report(), direct.report());
  assert_eq!(t.budget(), direct.budget());
  // Bucket 0 held one success, now a failure: a second verdict on it is refused.
  assert!(!t.reject(100_000, 0, &mut out));
  assert_eq!(t.report(), direct.report());
  // The bucket leaves the window with its failure: at 3 600 000 (bucket 0) the
  // failures drop to 9, as the direct tracker's do.
  t.advance(3_600_000, &mut out);
  direct.advance(3_600_000, &mut out);
  assert_eq!((t.report().successes, t.report().failures), (90, 9));
  assert_eq!(t.report(), direct.report());
}

#[test]
fn a_verdict_older_than_the_verdict_window_or_the_window_is_refused() {
  let mut t = hundred_solves(hour(0.95, 900_000));
  let mut out: Vec<Transition> = Vec::new();
  let before = t.report();
  // now 950 000: the solve at 49 000 is 901 000 ms old, more than 900 000.
  assert!(!t.reject(950_000, 49_000, &mut out));
  let moved = Tracker::report(&t);
  assert_eq!((moved.successes, moved.failures, moved.at_ms), (before.successes, 0, 950_000));
  assert_eq!(t.rejected(), 0);
  // 900 000 ms old exactly is not older: taken; 899 000 too.
  assert!(t.reject(950_000, 50_000, &mut out));
  assert!(t.reject(950_000, 51_000, &mut out));
  assert_eq!((t.report().successes, t.report().failures), (98, 2));
  // A bucket with no solve (150 s): nothing to reject.
  assert!(!t.reject(950_000, 150_000, &mut out));
  // A verdict window longer than the window: the bucket's leaving decides.
  let mut long = hundred_solves(hour(0.95, 36_000_000));
  assert!(!long.reject(3_649_500, 49_000, &mut out), "bucket 49 left at 3 649 000");
  assert!(long.reject(3_649_500, 50_000, &mut out), "bucket 50 leaves at 3 650 000");
  // verdictWindowMs 0: only a solve stamped now.
  let mut none = hundred_solves(hour(0.95, 0));
  assert!(!none.reject(99_000, 98_000, &mut out));
  assert!(none.reject(99_000, 99_000, &mut out));
  assert!(out.is_empty(), "one failure in 100 at 95 % crosses nothing: {out:?}");
}

#[test]
fn a_rejection_that_crosses_an_alert_threshold_fires_it_once() {
  let rule = AlertRule {
    name: "page".into(),
    severity: Severity::Page,
    long_window_ms: 60_000,
    short_window_ms: 5_000,
    burn_rate: 0.45,
    min_events: 0,
  };
  let config = Config { target_rate: 0.9, alerts: Some(vec![rule]), ..hour(0.9, 900_000) };
  let mut t = Tracker::new(config, 0).unwrap();
  let mut events: Vec<Event> = Vec::new();
  t.record(1000, 1000, 100, 0, &mut events);
  assert!(events.is_empty());
  // budgetTotal = 100 × 0.09999999999999998 = 9.999999999999998; both windows
  // hold bucket 1. Burn after k: k / 9.999999999999998: 4 → 0.4, 5 → 0.5 > 0.45:
  // fires at the 5th. Remaining fraction (9.999999999999998 − k) / 9.999999999999998:
  // 4 → 0.6, 5 → 4.999999999999998 / 9.999999999999998 = 0.49999999999999994 < 0.5:
  // warning at the 5th too, the status first; nothing more up to 8 (0.2, not < 0.1).
  let mut seen = Vec::new();
  for k in 1..=8 {
    assert!(t.reject(2000, 1000, &mut events));
    for e in events.drain(..) {
      seen.push(match e {
        Event::Alert { fired, alert, report, .. } => {
          format!("{k}: {} fired={fired} failures={}", alert.name, report.failures)
        }
        Event::Status(tr, _) => format!("{k}: {:?} -> {:?}", tr.from, tr.to),
      });
    }
  }
  assert_eq!(seen, ["5: Healthy -> Warning", "5: page fired=true failures=5"]);
}
