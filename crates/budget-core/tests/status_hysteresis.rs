//! Opt-in status hysteresis against a naive model: the window's status (the
//! reference's, `Budget::of`) held back on the way up. With margin m, a status
//! gets worse as soon as the window's does; it gets better only to the best
//! status whose lower edge the remaining fraction clears by m (healthy: f ≥
//! warning + m; warning: f ≥ critical + m; critical: f ≥ m). Below minEvents
//! the status is healthy, as without hysteresis. The model re-decides at every
//! record of at least one solve and every instant a non-empty bucket leaves the
//! window.

use budget_core::{Budget, Config, Counts, Status, Tracker, Transition};
use proptest::prelude::*;

const RES: i64 = 100;
const WINDOW: i64 = 10_000;

fn config(min_events: u64) -> Config {
  Config {
    target_rate: 0.9,
    window_ms: WINDOW,
    resolution_ms: RES,
    warning_threshold: 0.5,
    critical_threshold: 0.2,
    min_events,
    alerts: Some(vec![]),
    ..Config::default()
  }
}

fn held(config: &Config, margin: f64, last: Status, counts: Counts) -> Status {
  let b = Budget::of(counts, config);
  if counts.total() < config.min_events {
    return b.status;
  }
  let mut s = b.status;
  while s.index() < last.index() {
    let edge = match s {
      Status::Healthy => config.warning_threshold,
      Status::Warning => config.critical_threshold,
      _ => 0.0,
    };
    if b.remaining_fraction >= edge + margin {
      break;
    }
    s = Status::ALL[s.index() + 1];
  }
  s
}

proptest! {
  #![proptest_config(ProptestConfig::with_cases(300))]
  #[test]
  fn hysteresis_matches_the_naive_model(
    margin in prop_oneof![Just(0.0), Just(0.1), 0.0f64..0.5],
    min_events in prop_oneof![Just(0u64), 1u64..20],
    ops in proptest::collection::vec((0i64..600, 0u64..20, 0u64..3), 1..200),
  ) {
    let config = config(min_events);
    let mut tracker = Tracker::new(config.clone(), 0).unwrap();
    tracker.set_status_hysteresis(margin);
    let mut events: Vec<(i64, u64, u64)> = Vec::new();
    let mut last = Status::Healthy;
    let mut now = 0;
    for (dt, s, f) in ops {
      let prev = now;
      now += dt;
      let mut got: Vec<Transition> = Vec::new();
      tracker.record(now, now, s, f, &mut got);
      let counts_at = |t: i64, events: &[(i64, u64, u64)]| {
        events.iter().filter(|e| e.0 / RES * RES > t - WINDOW).fold(Counts::default(), |c, e| Counts {
          successes: c.successes + e.1,
          failures: c.failures + e.2,
        })
      };
      let mut want: Vec<(Status, Status, i64)> = Vec::new();
      let mut instants: Vec<i64> =
        events.iter().filter(|e| e.1 + e.2 > 0).map(|e| e.0 / RES * RES + WINDOW).filter(|&t| t > prev && t <= now).collect();
      instants.sort_unstable();
      instants.dedup();
      for t in instants {
        let next = held(&config, margin, last, counts_at(t, &events));
        if next != last {
          want.push((last, next, t));
          last = next;
        }
      }
      events.push((now, s, f));
      if s + f > 0 {
        let next = held(&config, margin, last, counts_at(now, &events));
        if next != last {
          want.push((last, next, now));
          last = next;
        }
      }
      let got: Vec<(Status, Status, i64)> = got.iter().map(|t| (t.from, t.to, t.report.at_ms)).collect();
      prop_assert_eq!(got, want);
      prop_assert_eq!(tracker.report().status, last);
    }
  }
}

#[test]
fn a_status_hovering_at_a_threshold_changes_once_with_hysteresis() {
  // 90 %: 100 events with 5 failures leave a hair under 50 % (1 − 0.9 is
  // 0.09999999999999998 in doubles): warning at once; a 6th failure: budget 10.1, 4.1 left = 40.6 %, warning; 30 successes:
  // budget 13.1, 7.1 left = 54.2 % — healthy without hysteresis, still warning
  // with a 0.1 margin (54.2 % < 60 %).
  let mut plain = Tracker::new(config(0), 0).unwrap();
  let mut damped = Tracker::new(config(0), 0).unwrap();
  damped.set_status_hysteresis(0.1);
  let mut a: Vec<Transition> = Vec::new();
  let mut b: Vec<Transition> = Vec::new();
  for (t, out) in [(&mut plain, &mut a), (&mut damped, &mut b)] {
    t.record(0, 0, 95, 5, out);
    t.record(0, 0, 0, 1, out);
    t.record(0, 0, 30, 0, out);
  }
  let seq = |v: &[Transition]| v.iter().map(|t| (t.from, t.to)).collect::<Vec<_>>();
  assert_eq!(seq(&a), [(Status::Healthy, Status::Warning), (Status::Warning, Status::Healthy)]);
  assert_eq!(seq(&b), [(Status::Healthy, Status::Warning)]);
  assert_eq!(damped.report().status, Status::Warning);
  // 20 more successes: 6 / 15.1 → 60.3 % ≥ 50 % + 10 %: healthy again.
  damped.record(0, 0, 20, 0, &mut b);
  assert_eq!(seq(&b), [(Status::Healthy, Status::Warning), (Status::Warning, Status::Healthy)]);
}
