//! Property test: the core `Tracker` against a naive reference model written
//! from the spec of the reference JS tracker.
//!
//! The model keeps every event as a plain `(timestamp, successes, failures)`
//! entry and, at time `now`, counts an event iff `now - t < window_ms`
//! (i.e. `t > now - window_ms`). All event timestamps generated here are
//! multiples of `resolution_ms`, where the core must agree with the model
//! exactly: every report field, every unrounded budget field (f64 compared
//! with `==`), `dropped`, `last_status`, the placement of each record, the
//! next expiry instant, and the transitions each operation returns.
//!
//! Transitions. For `record()` the model's transitions must match exactly.
//! For `advance()` the core reports time-driven transitions at the exact
//! instants buckets expire; we check that
//!   * they chain (`from` == previous `to`, starting at the old last status),
//!   * each `report.at_ms` is in `(previous now, new now]` and increasing,
//!   * the model re-evaluated at each `at_ms` gives that transition's `to`
//!     and its whole report,
//!   * the last `to` (or the old last status if none) is the model's status
//!     at the new now;
//!
//! and, stronger, that the list equals the one the model gets by evaluating
//! its status at every event expiry instant `t + window_ms` in
//! `(previous now, new now]`, in order. (A `record()` whose `now` is later than
//! the tracker's first advances time the same way, so its transition list is
//! the time-driven ones followed by the one its own event causes, if any.)
//!
//! Alert policies (none, the default one, random pairs) are generated too:
//! their shorter windows make the tracker stop at more instants, which must
//! leave the status side exactly as above (alerts themselves are checked in
//! span_model.rs); `next_change_ms()` is then at or before the window's next
//! expiry instead of equal to it.

use budget_core::{AlertRule, Budget, Config, Counts, Placement, Report, Severity, Status, Tracker, Transition};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;

/// Number of generated cases (`PROPTEST_CASES` overrides it for a deeper run);
/// each runs up to `MAX_OPS` operations.
const CASES: u32 = 1500;

fn cases() -> u32 {
  std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(CASES)
}
const MAX_OPS: usize = 80;

// ---------------------------------------------------------------------------
// The reference model
// ---------------------------------------------------------------------------

/// JS `Math.round`: nearest integer, ties toward +infinity. Written
/// independently of the crate's `round_js`: Rust's `f64::round` rounds ties
/// away from zero, which differs from JS only on negative ties, so those are
/// sent to `ceil`.
fn math_round(v: f64) -> f64 {
  if v - v.floor() == 0.5 {
    v.ceil()
  } else {
    v.round()
  }
}

/// `Math.round(x * 10 ** d) / 10 ** d` for the digit counts the report uses.
fn js_round(x: f64, digits: u32) -> f64 {
  let scale = match digits {
    1 => 10.0,
    2 => 100.0,
    4 => 10000.0,
    _ => unreachable!("digits {digits}"),
  };
  math_round(x * scale) / scale
}

#[derive(Debug, Clone, PartialEq)]
struct ModelFigures {
  total: u64,
  successes: u64,
  failures: u64,
  current_rate: f64,
  budget_total: f64,
  budget_remaining: f64,
  remaining_fraction: f64,
  burn_rate: f64,
  status: Status,
}

fn figures(successes: u64, failures: u64, cfg: &Config) -> ModelFigures {
  let total = successes + failures;
  let current_rate = if total == 0 { 1.0 } else { successes as f64 / total as f64 };
  let budget_total = total as f64 * (1.0 - cfg.target_rate);
  let budget_remaining = f64::max(0.0, budget_total - failures as f64);
  let remaining_fraction = if budget_total <= 0.0 {
    if failures == 0 {
      1.0
    } else {
      0.0
    }
  } else {
    f64::max(0.0, budget_remaining / budget_total)
  };
  let burn_rate =
    if total == 0 || budget_total <= 0.0 || total < cfg.min_events { 0.0 } else { failures as f64 / budget_total };
  let status = if total < cfg.min_events {
    Status::Healthy
  } else {
    let f = remaining_fraction;
    if f <= 0.0 {
      Status::Exhausted
    } else if f < cfg.critical_threshold {
      Status::Critical
    } else if f < cfg.warning_threshold {
      Status::Warning
    } else {
      Status::Healthy
    }
  };
  ModelFigures {
    total,
    successes,
    failures,
    current_rate,
    budget_total,
    budget_remaining,
    remaining_fraction,
    burn_rate,
    status,
  }
}

#[derive(Debug, Clone)]
struct Model {
  cfg: Config,
  now: i64,
  /// Every counted event ever: (timestamp, successes, failures).
  events: Vec<(i64, u64, u64)>,
  dropped: u64,
  /// Every event ever recorded, counted or dropped.
  recorded: Counts,
  /// Successes ever turned into failures by a reject.
  rejected: u64,
  last: Status,
}

impl Model {
  fn new(cfg: Config, now: i64) -> Self {
    Model { cfg, now, events: Vec::new(), dropped: 0, recorded: Counts::default(), rejected: 0, last: Status::Healthy }
  }

  fn in_window(&self, t: i64, now: i64) -> bool {
    now - t < self.cfg.window_ms
  }

  fn counts_at(&self, now: i64) -> (u64, u64) {
    let (mut s, mut f) = (0, 0);
    for &(t, es, ef) in &self.events {
      assert!(t <= now, "model: events later than now are not generated");
      if self.in_window(t, now) {
        s += es;
        f += ef;
      }
    }
    (s, f)
  }

  fn figures_at(&self, now: i64) -> ModelFigures {
    let (s, f) = self.counts_at(now);
    figures(s, f, &self.cfg)
  }

  fn report_at(&self, now: i64) -> Report {
    let m = self.figures_at(now);
    Report {
      status: m.status,
      current_rate: js_round(m.current_rate, 4),
      total: m.total,
      successes: m.successes,
      failures: m.failures,
      budget_remaining_pct: js_round(m.remaining_fraction * 100.0, 1),
      burn_rate: js_round(m.burn_rate, 2),
      slo_target: self.cfg.target_rate,
      budget_total: js_round(m.budget_total, 1),
      budget_remaining: js_round(m.budget_remaining, 1),
      dropped: self.dropped,
      at_ms: now,
    }
  }

  fn budget_at(&self, now: i64) -> Budget {
    let m = self.figures_at(now);
    Budget {
      counts: Counts { successes: m.successes, failures: m.failures },
      current_rate: m.current_rate,
      budget_total: m.budget_total,
      budget_remaining: m.budget_remaining,
      remaining_fraction: m.remaining_fraction,
      burn_rate: m.burn_rate,
      status: m.status,
    }
  }

  /// Earliest instant a non-empty event in the window leaves it.
  fn next_expiry(&self) -> Option<i64> {
    self
      .events
      .iter()
      .filter(|&&(t, s, f)| s + f > 0 && self.in_window(t, self.now))
      .map(|&(t, _, _)| t + self.cfg.window_ms)
      .min()
  }

  fn note(&mut self, at: i64, out: &mut Vec<Transition>) {
    let status = self.figures_at(at).status;
    if status != self.last {
      out.push(Transition { from: self.last, to: status, report: self.report_at(at) });
      self.last = status;
    }
  }

  /// Moves time forward, evaluating the status at each expiry instant in
  /// `(now, new_now]` (the only moments the counts change on their own).
  fn advance(&mut self, new_now: i64) -> Vec<Transition> {
    let new_now = new_now.max(self.now);
    let mut instants: Vec<i64> =
      self.events.iter().map(|&(t, _, _)| t + self.cfg.window_ms).filter(|&x| x > self.now && x <= new_now).collect();
    instants.sort_unstable();
    instants.dedup();
    let mut out: Vec<Transition> = Vec::new();
    for x in instants {
      self.note(x, &mut out);
    }
    self.now = new_now;
    out
  }

  /// Returns the placement, the transitions, and how many of those are
  /// time-driven (the rest, at most one, is caused by the event itself).
  fn record(&mut self, now: i64, at: i64, successes: u64, failures: u64) -> (Placement, Vec<Transition>, usize) {
    let mut out = self.advance(now);
    let time_driven = out.len();
    self.recorded.successes += successes;
    self.recorded.failures += failures;
    assert!(at <= self.now);
    if self.in_window(at, self.now) {
      self.events.push((at, successes, failures));
      let now = self.now;
      self.note(now, &mut out);
      (Placement::Counted, out, time_driven)
    } else {
      self.dropped += successes + failures;
      (Placement::TooOld, out, time_driven)
    }
  }
}

impl Model {
  /// A late verdict on a success stamped `at`: refused when `at` is more than
  /// `verdict_window_ms` before now or out of the window, or when no event
  /// stamped `at` holds a success (timestamps are bucket starts here, so the
  /// events stamped `at` are exactly that bucket's); otherwise one such success
  /// becomes a failure and the status is noted at now.
  fn reject(&mut self, now: i64, at: i64) -> (bool, Vec<Transition>, usize) {
    let mut out = self.advance(now);
    let time_driven = out.len();
    let now = self.now;
    let fresh = now - at <= self.cfg.verdict_window_ms && self.in_window(at, now);
    let entry = self.events.iter_mut().find(|e| e.0 == at && e.1 > 0);
    match entry {
      Some(e) if fresh => {
        e.1 -= 1;
        e.2 += 1;
        self.rejected += 1;
        self.note(now, &mut out);
        (true, out, time_driven)
      }
      _ => (false, out, time_driven),
    }
  }
}

// ---------------------------------------------------------------------------
// Operations and generators
// ---------------------------------------------------------------------------

#[derive(Debug, Clone)]
enum Jump {
  /// 0 ..= 3 resolutions.
  Small(u32),
  /// window ± one resolution.
  NearWindow(u32),
  /// 2 ..= 51 windows and change.
  Huge(u32),
  /// Exactly to the model's next expiry instant (small step if none).
  ToNextExpiry,
  /// One millisecond before the model's next expiry instant.
  JustBeforeNextExpiry,
  /// An earlier time: must be ignored.
  Back(u32),
}

#[derive(Debug, Clone)]
enum Op {
  /// Move `now` to the first multiple of resolution at or after the current
  /// now plus `buckets` resolutions, and record there, at now.
  RecordNow {
    buckets: u8,
    successes: u64,
    failures: u64,
  },
  /// Record, without moving time, at the latest multiple of resolution at or
  /// before now minus `back` resolutions (may be older than the window). With
  /// `stale` > 0 the call passes a `now` up to a window earlier than the
  /// tracker's (a late caller: time must not go back) and `at` is taken from it.
  RecordPast {
    back: u32,
    stale: u32,
    successes: u64,
    failures: u64,
  },
  Advance(Jump),
  /// Reject a success stamped at the latest multiple of resolution at or
  /// before now minus `back` resolutions (may be too late, or hold none),
  /// with `now` up to a window earlier with `stale` > 0, as `RecordPast`.
  Reject {
    back: u32,
    stale: u32,
  },
}

fn batch() -> impl Strategy<Value = (u64, u64)> {
  prop_oneof![
    5 => Just((1u64, 0u64)),
    4 => Just((0u64, 1u64)),
    2 => (1u64..60).prop_map(|k| (k, 0)),
    1 => (0u64..4, 0u64..4),
  ]
}

fn op() -> impl Strategy<Value = Op> {
  let jump = prop_oneof![
    4 => any::<u32>().prop_map(Jump::Small),
    2 => any::<u32>().prop_map(Jump::NearWindow),
    1 => any::<u32>().prop_map(Jump::Huge),
    2 => Just(Jump::ToNextExpiry),
    2 => Just(Jump::JustBeforeNextExpiry),
    1 => any::<u32>().prop_map(Jump::Back),
  ];
  prop_oneof![
    6 => (prop_oneof![3 => Just(0u8), 2 => 1u8..4], batch())
      .prop_map(|(buckets, (successes, failures))| Op::RecordNow { buckets, successes, failures }),
    3 => (any::<u32>(), prop_oneof![3 => Just(0u32), 1 => any::<u32>()], batch())
      .prop_map(|(back, stale, (successes, failures))| Op::RecordPast { back, stale, successes, failures }),
    4 => jump.prop_map(Op::Advance),
    3 => (any::<u32>(), prop_oneof![3 => Just(0u32), 1 => any::<u32>()])
      .prop_map(|(back, stale)| Op::Reject { back, stale }),
  ]
}

fn config() -> impl Strategy<Value = Config> {
  let target = prop_oneof![
    Just(0.5),
    Just(0.9),
    Just(0.95),
    Just(0.99),
    Just(1.0),
    // (0, 1]
    (0.0f64..1.0).prop_map(|x| 1.0 - x),
  ];
  let threshold = || prop_oneof![Just(0.0), Just(0.1), Just(0.25), Just(0.5), Just(0.9), Just(1.0), 0.0f64..=1.0,];
  // resolution r, window = r * m (r divides it) or r * m + s with 0 < s < r.
  let geometry = (1i64..=40, 1i64..=20, any::<bool>(), any::<u32>()).prop_map(|(r, m, divides, s)| {
    let w = if divides || r == 1 { r * m } else { r * m + 1 + (s as i64 % (r - 1)) };
    (w, r)
  });
  // The alert policy: none (status only), the default one, or 1-3 random
  // valid pairs. Alerts have their own tests (span_model.rs); here they only
  // add instants the tracker stops at, which must not change the status side.
  let alerts = prop_oneof![
    3 => Just(AlertChoice::Empty),
    1 => Just(AlertChoice::Default),
    2 => prop::collection::vec((any::<u32>(), any::<u32>(), 0.02f64..0.98, 0u64..12), 1..4).prop_map(AlertChoice::Custom),
  ];
  // The verdict window: none, shorter or longer than the alert-free window.
  let verdict = prop_oneof![Just(0u32), any::<u32>()];
  (target, threshold(), threshold(), geometry, 0u64..5, alerts, verdict).prop_map(
    |(target_rate, a, b, (window_ms, resolution_ms), min_events, alerts, verdict)| Config {
      target_rate,
      window_ms,
      warning_threshold: a.max(b),
      critical_threshold: a.min(b),
      min_events,
      resolution_ms,
      alerts: alerts.policy(target_rate, window_ms, resolution_ms),
      verdict_window_ms: verdict as i64 % (2 * window_ms + 1),
    },
  )
}

#[derive(Debug, Clone)]
enum AlertChoice {
  Empty,
  Default,
  /// Raw (short, long, burn share of the maximum, min events) of each pair.
  Custom(Vec<(u32, u32, f64, u64)>),
}

impl AlertChoice {
  fn policy(&self, target: f64, window_ms: i64, resolution_ms: i64) -> Option<Vec<AlertRule>> {
    let whole_buckets = window_ms / resolution_ms;
    match self {
      AlertChoice::Empty => Some(Vec::new()),
      AlertChoice::Default => None,
      // Alerts need a budget (target < 1) and two distinct whole-bucket windows.
      AlertChoice::Custom(_) if target >= 1.0 || whole_buckets < 2 => Some(Vec::new()),
      AlertChoice::Custom(raw) => Some(
        raw
          .iter()
          .enumerate()
          .map(|(i, &(short, long, share, min_events))| {
            let short_b = 1 + short as i64 % (whole_buckets - 1); // 1 ..= whole − 1
            let long_b = short_b + 1 + long as i64 % (whole_buckets - short_b); // short + 1 ..= whole
            AlertRule {
              name: format!("pair{i}"),
              severity: if i % 2 == 0 { Severity::Page } else { Severity::Ticket },
              long_window_ms: long_b * resolution_ms,
              short_window_ms: short_b * resolution_ms,
              burn_rate: share / (1.0 - target),
              min_events,
            }
          })
          .collect(),
      ),
    }
  }
}

fn start() -> impl Strategy<Value = i64> {
  prop_oneof![Just(0i64), -5000i64..5000, 1_700_000_000_000i64..1_700_000_100_000]
}

// ---------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------

fn check_state(tracker: &mut Tracker, model: &Model, ctx: &str) -> Result<(), TestCaseError> {
  prop_assert_eq!(tracker.now_ms(), model.now, "now_ms {}", ctx);
  prop_assert_eq!(tracker.report(), model.report_at(model.now), "report {}", ctx);
  prop_assert_eq!(tracker.budget(), model.budget_at(model.now), "budget {}", ctx);
  let (s, f) = model.counts_at(model.now);
  prop_assert_eq!(tracker.counts(), Counts { successes: s, failures: f }, "counts {}", ctx);
  prop_assert_eq!(tracker.dropped(), model.dropped, "dropped {}", ctx);
  prop_assert_eq!(tracker.last_status(), model.last, "last_status {}", ctx);
  // The tracker's invariant: the last status is the status now.
  prop_assert_eq!(model.last, model.figures_at(model.now).status, "model last status {}", ctx);
  prop_assert_eq!(tracker.recorded(), model.recorded, "recorded {}", ctx);
  prop_assert_eq!(tracker.rejected(), model.rejected, "rejected {}", ctx);
  let next = tracker.next_change_ms();
  if tracker.alert_rules().next().is_none() {
    prop_assert_eq!(next, model.next_expiry(), "next_change_ms {}", ctx);
  } else {
    // Alert windows are shorter than the window: their expiries of the same
    // buckets come first, and all of them are empty iff the window is.
    match (next, model.next_expiry()) {
      (None, None) => {}
      (Some(got), Some(want)) => {
        prop_assert!(got > model.now && got <= want, "next_change_ms {} vs window's {} {}", got, want, ctx)
      }
      (got, want) => prop_assert!(false, "next_change_ms {:?} vs window's {:?} {}", got, want, ctx),
    }
  }
  Ok(())
}

/// The checks the brief lists for the transitions of an `advance()`, each
/// stated on its own (the exact-list comparison follows it).
fn check_time_transitions(got: &[Transition], before: &Model, after: &Model, ctx: &str) -> Result<(), TestCaseError> {
  let mut prev_status = before.last;
  let mut prev_at = before.now;
  for (i, tr) in got.iter().enumerate() {
    prop_assert_eq!(tr.from, prev_status, "transition {} does not chain {}", i, ctx);
    prop_assert!(tr.from != tr.to, "transition {} to itself {}", i, ctx);
    let at = tr.report.at_ms;
    prop_assert!(
      at > prev_at && at <= after.now,
      "transition {} at {} outside ({}, {}] {}",
      i,
      at,
      prev_at,
      after.now,
      ctx
    );
    // Re-evaluate the model (with no new events) at that instant.
    let at_model = before.report_at(at);
    prop_assert_eq!(tr.to, at_model.status, "transition {} status at {} {}", i, at, ctx);
    prop_assert_eq!(&tr.report, &at_model, "transition {} report at {} {}", i, at, ctx);
    prev_status = tr.to;
    prev_at = at;
  }
  prop_assert_eq!(prev_status, after.figures_at(after.now).status, "status at the end {}", ctx);
  Ok(())
}

fn ceil_to(x: i64, r: i64) -> i64 {
  -(-x).div_euclid(r) * r
}

fn floor_to(x: i64, r: i64) -> i64 {
  x.div_euclid(r) * r
}

/// What a run exercised (used by the generator-coverage test).
#[derive(Debug, Default)]
struct Stats {
  cases: u64,
  with_alert_rules: u64,
  non_dividing_windows: u64,
  ops: u64,
  too_old: u64,
  event_transitions_to: [u64; 4],
  time_transitions_to: [u64; 4],
  several_time_transitions_in_one_call: u64,
  records_with_time_then_event_transition: u64,
  rejects_taken: u64,
  rejects_refused: u64,
}

fn run(cfg: Config, start: i64, ops: Vec<Op>) -> Result<(), TestCaseError> {
  run_with_stats(cfg, start, ops, &mut Stats::default())
}

fn run_with_stats(cfg: Config, start: i64, ops: Vec<Op>, stats: &mut Stats) -> Result<(), TestCaseError> {
  stats.cases += 1;
  if cfg.window_ms % cfg.resolution_ms != 0 {
    stats.non_dividing_windows += 1;
  }
  let mut tracker = Tracker::new(cfg.clone(), start).expect("generated configs are valid");
  if tracker.alert_rules().next().is_some() {
    stats.with_alert_rules += 1;
  }
  let mut model = Model::new(cfg.clone(), start);
  let (w, r) = (cfg.window_ms, cfg.resolution_ms);
  let buckets = (w + r - 1) / r;
  check_state(&mut tracker, &model, "at start")?;

  for (i, op) in ops.into_iter().enumerate() {
    let ctx = format!("after op #{i} {op:?} (model now {})", model.now);
    let mut got = Vec::new();
    stats.ops += 1;
    let time_driven: usize;
    match op {
      Op::RecordNow { buckets: b, successes, failures } => {
        let t = ceil_to(model.now, r) + b as i64 * r;
        let placement = tracker.record(t, t, successes, failures, &mut got);
        let (want_placement, want, td) = model.record(t, t, successes, failures);
        time_driven = td;
        prop_assert_eq!(placement, want_placement, "placement {}", ctx);
        prop_assert_eq!(&got, &want, "record transitions {}", ctx);
      }
      Op::RecordPast { back, stale, successes, failures } => {
        let back = back as i64 % (buckets + 3);
        let now = model.now - stale as i64 % (w + 1);
        let at = floor_to(now, r) - back * r;
        let placement = tracker.record(now, at, successes, failures, &mut got);
        let (want_placement, want, td) = model.record(now, at, successes, failures);
        time_driven = td;
        prop_assert_eq!(placement, want_placement, "placement {}", ctx);
        prop_assert_eq!(&got, &want, "record transitions {}", ctx);
      }
      Op::Reject { back, stale } => {
        let back = back as i64 % (buckets + 3);
        let now = model.now - stale as i64 % (w + 1);
        let at = floor_to(now, r) - back * r;
        let taken = tracker.reject(now, at, &mut got);
        let (want_taken, want, td) = model.reject(now, at);
        time_driven = td;
        stats.rejects_taken += want_taken as u64;
        stats.rejects_refused += !want_taken as u64;
        prop_assert_eq!(taken, want_taken, "reject taken {}", ctx);
        prop_assert_eq!(&got, &want, "reject transitions {}", ctx);
      }
      Op::Advance(jump) => {
        let now = model.now;
        let to = match jump {
          Jump::Small(x) => now + x as i64 % (3 * r + 1),
          Jump::NearWindow(x) => now + w - r + x as i64 % (2 * r + 1),
          Jump::Huge(x) => now + w * (2 + x as i64 % 50) + x as i64 % r,
          Jump::ToNextExpiry => model.next_expiry().unwrap_or(now + 1),
          Jump::JustBeforeNextExpiry => model.next_expiry().map_or(now, |t| t - 1),
          Jump::Back(x) => now - 1 - x as i64 % (w + 1),
        };
        let before = model.clone();
        tracker.advance(to, &mut got);
        let want = model.advance(to);
        time_driven = want.len();
        check_time_transitions(&got, &before, &model, &ctx)?;
        prop_assert_eq!(&got, &want, "advance transitions {}", ctx);
      }
    }
    // (`got` equals the model's list here.)
    for (j, tr) in got.iter().enumerate() {
      if j < time_driven {
        stats.time_transitions_to[tr.to.index()] += 1;
      } else {
        stats.event_transitions_to[tr.to.index()] += 1;
      }
    }
    if time_driven >= 2 {
      stats.several_time_transitions_in_one_call += 1;
    }
    if time_driven >= 1 && got.len() > time_driven {
      stats.records_with_time_then_event_transition += 1;
    }
    check_state(&mut tracker, &model, &ctx)?;
  }
  stats.too_old += model.dropped;
  Ok(())
}

proptest! {
  // No failure persistence: a failure prints its shrunk case, and nothing is
  // written next to the sources.
  #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, ..ProptestConfig::default() })]

  #[test]
  fn core_matches_the_reference_model(
    cfg in config(),
    start in start(),
    ops in prop::collection::vec(op(), 1..MAX_OPS),
  ) {
    run(cfg, start, ops)?;
  }
}

/// The generators reach every status by both routes, drop events, produce
/// several time-driven transitions in one call and time-then-event
/// transitions in one record, and use windows the resolution does not divide.
#[test]
fn generator_exercises_every_path() {
  use proptest::strategy::ValueTree;
  use proptest::test_runner::TestRunner;
  let mut runner = TestRunner::deterministic();
  let strategy = (config(), start(), prop::collection::vec(op(), 1..MAX_OPS));
  let mut stats = Stats::default();
  for _ in 0..300 {
    let (cfg, start, ops) = strategy.new_tree(&mut runner).unwrap().current();
    run_with_stats(cfg, start, ops, &mut stats).unwrap();
  }
  eprintln!("{stats:#?}");
  assert!(stats.non_dividing_windows >= 50, "{stats:?}");
  assert!(stats.with_alert_rules >= 50, "{stats:?}");
  assert!(stats.too_old > 0, "{stats:?}");
  assert!(stats.rejects_taken >= 100 && stats.rejects_refused >= 100, "{stats:?}");
  assert!(stats.several_time_transitions_in_one_call > 0, "{stats:?}");
  assert!(stats.records_with_time_then_event_transition > 0, "{stats:?}");
  for s in Status::ALL {
    assert!(stats.event_transitions_to[s.index()] > 0, "no event transition to {s:?}: {stats:?}");
    assert!(stats.time_transitions_to[s.index()] > 0, "no time transition to {s:?}: {stats:?}");
  }
}

// ---------------------------------------------------------------------------
// Sanity checks of the model itself (so a bug in it cannot mirror one in the core)
// ---------------------------------------------------------------------------

#[test]
fn model_math_round_is_js_math_round() {
  assert_eq!(math_round(0.5), 1.0);
  assert_eq!(math_round(1.5), 2.0);
  assert_eq!(math_round(2.5), 3.0);
  assert_eq!(math_round(-0.5), 0.0);
  assert_eq!(math_round(-1.5), -1.0);
  assert_eq!(math_round(-2.5), -2.0);
  assert_eq!(math_round(0.49999999999999994), 0.0);
  assert_eq!(math_round(4503599627370495.5), 4503599627370496.0);
  assert_eq!(js_round(0.12345, 4), 0.1235);
  assert_eq!(js_round(1.005, 2), 1.0);
  assert_eq!(js_round(2.675, 2), 2.68);
}

#[test]
fn model_hand_checks() {
  let cfg = Config { target_rate: 0.95, window_ms: 1000, resolution_ms: 100, ..Config::default() };
  // 97/3: budget 100 × 0.050000000000000044, 2 left → 40 % → warning.
  let m = figures(97, 3, &cfg);
  assert_eq!(m.status, Status::Warning);
  assert_eq!(js_round(m.remaining_fraction * 100.0, 1), 40.0);
  assert_eq!(js_round(m.burn_rate, 2), 0.6);
  // Window boundary: an event at t counts while now − t < window.
  let mut model = Model::new(cfg, 0);
  let (placement, transitions, time_driven) = model.record(500, 500, 0, 1);
  assert_eq!((placement, time_driven), (Placement::Counted, 0));
  assert_eq!(transitions.len(), 1);
  assert_eq!((transitions[0].from, transitions[0].to), (Status::Healthy, Status::Exhausted));
  assert_eq!(model.counts_at(1499), (0, 1));
  assert_eq!(model.counts_at(1500), (0, 0));
  assert_eq!(model.next_expiry(), Some(1500));
}
