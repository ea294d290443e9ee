//! Issue 25's "no fire/resolve/fire within an incident" under a steady, random
//! failure rate above a pair's threshold (a genuine slow burn): seeded Poisson
//! arrivals, each solve failing with a fixed probability, replayed second by
//! second through the default policy. Every pair that fires must fire once and
//! stay firing to the end: the recovery rule may end a page only on evidence
//! that the failure rate is no longer at the pair's threshold.

use budget_core::{Config, Event, Tracker};

const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;
const DAY: i64 = 24 * HOUR;

/// splitmix64: a small seeded generator, uniform in [0, 1).
struct Rng(u64);

impl Rng {
  fn next(&mut self) -> f64 {
    self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = self.0;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
  }

  /// A Poisson count of mean `mean` (Knuth's method; means here are below 1).
  fn poisson(&mut self, mean: f64) -> u64 {
    let limit = (-mean).exp();
    let mut n = 0;
    let mut p = self.next();
    while p > limit {
      n += 1;
      p *= self.next();
    }
    n
  }
}

/// The (fired, pair, at) alert events of `hours` of `per_min` solves a minute,
/// each failing with probability `fail`, on a 95 % SLO over `window_ms`
/// (default policy, default resolution), from an empty tracker at 0.
fn steady(window_ms: i64, per_min: f64, fail: f64, hours: i64, seed: u64) -> (Vec<(bool, String, i64)>, Vec<String>) {
  let config = Config {
    target_rate: 0.95,
    window_ms,
    resolution_ms: budget_core::config::default_resolution_ms(window_ms),
    ..Config::default()
  };
  let mut tracker = Tracker::new(config, 0).unwrap();
  let mut rng = Rng(seed);
  let mut events: Vec<Event> = Vec::new();
  let mut at = 1000;
  while at < hours * HOUR {
    let n = rng.poisson(per_min / 60.0);
    let failures = (0..n).filter(|_| rng.next() < fail).count() as u64;
    if n > 0 {
      tracker.record(at, at, n - failures, failures, &mut events);
    }
    at += 1000;
  }
  let log = events
    .iter()
    .filter_map(|e| match e {
      Event::Alert { fired, alert, report, .. } => Some((*fired, alert.name.clone(), report.at_ms)),
      _ => None,
    })
    .collect();
  (log, tracker.alert_snapshot().firing.iter().map(|a| a.name.clone()).collect())
}

/// The events of `pair` as `+6.0h -6.5h …`, fires and resolves, in hours.
fn timeline(log: &[(bool, String, i64)], pair: &str) -> String {
  let times: Vec<String> = log
    .iter()
    .filter(|e| e.1 == pair)
    .map(|e| format!("{}{:.1}h", if e.0 { "+" } else { "-" }, e.2 as f64 / HOUR as f64))
    .collect();
  times.join(" ")
}

/// The runs (24 h and 7 d windows, each rate, seeds 1–3) in which `pair`
/// did not fire exactly once and still fire at the end, with its timeline:
/// `fail` of the solves failing, for the pair's long window (window ÷
/// `long_divisor`: its warm-up) plus 48 hours.
fn flaps(pair: &str, fail: f64, per_mins: &[f64], long_divisor: i64) -> Vec<String> {
  let mut flaps = Vec::new();
  for (label, window_ms) in [("24 h", DAY), ("7 d", 7 * DAY)] {
    for &per_min in per_mins {
      for seed in 1..=3 {
        let hours = window_ms / long_divisor / HOUR + 48;
        let (log, firing) = steady(window_ms, per_min, fail, hours, seed);
        let fires = log.iter().filter(|e| e.0 && e.1 == pair).count();
        if fires != 1 || !firing.iter().any(|n| n == pair) {
          flaps.push(format!("{label}, {per_min}/min, seed {seed}: {pair} {}", timeline(&log, pair)));
        }
      }
    }
  }
  flaps
}

/// 10 % failing on 95 % burns 2×, above `budget-leak`'s 1.5× (its long window
/// is P/4: 6 h at 24 h, 42 h at 7 d, and so is its warm-up): run its warm-up
/// plus 48 h, and it must fire once and still fire at the end. Before the
/// statistical recovery minimum it fired and resolved 6 to 52 times per run
/// at 0.5–5 solves a minute (not at 50): a 10-minute span of 10 solves with
/// no failure (0.9^10 ≈ 35 %), of 50 solves with one or two (1 set aside), or
/// the 6-hour long window at 0.5/min holding 6 failures in 160 solves,
/// resolved it, and it fired again a long window later.
#[test]
fn a_steady_random_ten_percent_failure_rate_fires_budget_leak_once() {
  let flaps = flaps("budget-leak", 0.10, &[0.5, 1.0, 5.0, 50.0], 4);
  assert!(flaps.is_empty(), "{}", flaps.join("\n"));
}

/// 20 % failing on 95 % burns 4×, above `slow-burn`'s 3× (a page; 2 h / 10
/// min at 24 h, 14 h / 70 min at 7 d): it must fire once and hold, from 1
/// solve a minute (at 0.5 a 24 h window's budget is 36 failures, and its 2-hour
/// window holds 60 solves: fewer than 5 failures in it, the lull that ends a
/// page at low volume, comes by chance — docs/alert-policy.md, "Below ~10
/// failures of budget"). Before the statistical minimum it fired 16 to 36
/// times per run at 1 and 5 solves a minute.
#[test]
fn a_steady_random_twenty_percent_failure_rate_fires_slow_burn_once() {
  let flaps = flaps("slow-burn", 0.20, &[1.0, 5.0, 50.0], 12);
  assert!(flaps.is_empty(), "{}", flaps.join("\n"));
}
