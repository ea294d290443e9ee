//! The layouts the addon and `lib/` share, each one enum: Rust writes and reads
//! by its variants (`report_head`, `pair_values`, `figure`, `guard_state`,
//! `scrape` here; the binding copies them into JavaScript's memory), and the binding's `seamContract()`
//! exports each to JavaScript as `{ name: index }`, which `lib/native/contract.js`
//! checks at load against the names the JavaScript reads (`b[R.total]`, `figure(F.now)`).

use std::collections::HashMap;

use crate::{AlertSnapshot, FiringAlert, Report, Status, Tracker};

/// Defines a layout: a `#[repr(usize)]` enum whose variants are indexes from 0,
/// each with its JavaScript name.
macro_rules! layout {
  ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $js:literal,)* }) => {
    $(#[$doc])*
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[repr(usize)]
    pub enum $name {
      $($(#[$vdoc])* $variant,)*
    }

    // Each layout uses some of these (`COUNT` for the buffer's, `from_index` for the figures).
    #[allow(dead_code)]
    impl $name {
      /// Every variant, in index order.
      pub const ALL: &'static [$name] = &[$($name::$variant,)*];
      /// How many indexes the layout has.
      pub const COUNT: usize = Self::ALL.len();

      /// The name JavaScript reads it by.
      pub const fn js_name(self) -> &'static str {
        match self {
          $($name::$variant => $js,)*
        }
      }

      /// The variant at `index`, if there is one.
      pub fn from_index(index: i32) -> Option<Self> {
        Self::ALL.get(usize::try_from(index).ok()?).copied()
      }

      /// The layout for JavaScript: `{ name: index }`.
      pub fn to_js() -> HashMap<String, u32> {
        Self::ALL.iter().map(|v| (v.js_name().to_string(), *v as u32)).collect()
      }
    }
  };
}

layout! {
  /// The report buffer's head (`write_report`, `lib/native/fast-report.js`), before the firing pairs.
  ReportField {
    /// The status's index in `Status::ALL` (0 healthy … 3 exhausted).
    Status => "status",
    CurrentRate => "currentRate",
    Total => "total",
    Failures => "failures",
    BudgetRemainingPct => "budgetRemainingPct",
    BurnRate => "burnRate",
    SloTarget => "sloTarget",
    Successes => "successes",
    BudgetTotal => "budgetTotal",
    BudgetRemaining => "budgetRemaining",
    Dropped => "dropped",
    At => "at",
    /// 0 or 1.
    InsufficientData => "insufficientData",
    /// NaN for null.
    ExhaustsInMs => "exhaustsInMs",
    /// How many firing pairs follow the head.
    Firing => "firing",
  }
}

layout! {
  /// Each firing pair's values after the report buffer's head.
  PairField {
    /// The pair's index in `alertPolicy`.
    Index => "index",
    BurnRateLong => "burnRateLong",
    BurnRateShort => "burnRateShort",
  }
}

layout! {
  /// What each tracker's `figure(index)` reads (`lib/tracker/tracker.js`'s getters of the same names).
  Figure {
    Now => "now",
    Total => "total",
    Successes => "successes",
    Failures => "failures",
    CurrentRate => "currentRate",
    BudgetTotal => "budgetTotal",
    BudgetRemaining => "budgetRemaining",
    RemainingFraction => "remainingFraction",
    BurnRate => "burnRate",
    /// The status's index in `Status::ALL`.
    Status => "status",
    /// The last delivered status's index in `Status::ALL`.
    LastStatus => "lastStatus",
    /// 0 or 1.
    Closed => "closed",
  }
}

layout! {
  /// What one `guard()` decision reads of its tracker, in one call (`guard_state`):
  /// the getters of the same names, and the throttle's recent burn rate.
  GuardField {
    /// 0 or 1.
    Closed => "closed",
    Now => "now",
    /// The status's index in `Status::ALL` (the `status` getter's: no hysteresis).
    Status => "status",
    Total => "total",
    /// The SLO target (`report().sloTarget`), which a new throttle starts from.
    SloTarget => "sloTarget",
    /// Asked with `recentMs` and exhausted: the burn rate over the last
    /// `recentMs` (`burnRateOver`), or over the whole window (the `burnRate`
    /// getter) when that is shorter; NaN otherwise.
    RecentBurnRate => "recentBurnRate",
  }
}

layout! {
  /// The head of the scrape buffer (`scrape`): what a Prometheus scrape reads
  /// of a tracker, at one instant. The pairs (`ScrapePairField`, one per pair
  /// of `alertPolicy`, in its order) and then the windows (`ScrapeWindowField`,
  /// one per distinct window of the policy, shortest first) follow.
  ScrapeField {
    /// The report's status index in `Status::ALL` (`report().status`: with hysteresis).
    Status => "status",
    /// The report's window counts and target.
    Total => "total",
    Failures => "failures",
    SloTarget => "sloTarget",
    /// 0 or 1.
    InsufficientData => "insufficientData",
    /// The report's `at`: the tracker's now.
    At => "at",
    /// The getters of the same names (unrounded).
    RemainingFraction => "remainingFraction",
    BurnRate => "burnRate",
    /// `recorded` (lifetime counts, not the window's) and `rejected`.
    RecordedSuccesses => "recordedSuccesses",
    RecordedFailures => "recordedFailures",
    Rejected => "rejected",
    /// How many pairs follow the head.
    Pairs => "pairs",
    /// How many windows follow the pairs.
    Windows => "windows",
  }
}

layout! {
  /// Each pair of the alert policy after the scrape buffer's head.
  ScrapePairField {
    /// 0 or 1: whether the pair fires now.
    Firing => "firing",
  }
}

layout! {
  /// Each distinct window of the alert policy after the scrape buffer's pairs.
  ScrapeWindowField {
    /// The window in ms (whole buckets, as `alertPolicy` gives it).
    WindowMs => "windowMs",
    /// The burn rate over it (`burnRateOver(windowMs)`).
    BurnRate => "burnRate",
  }
}

/// The guard state of `tracker` now, by `GuardField`; `recent_ms` asks for the
/// recent burn rate, computed only when the status is exhausted (O(buckets)
/// for a span outside the alert policy: the throttle needs it as the window
/// becomes exhausted, not at each decision). `Closed` is 0: the binding answers it.
pub fn guard_state(tracker: &Tracker, recent_ms: Option<i64>) -> [f64; GuardField::COUNT] {
  let budget = tracker.budget();
  let exhausted = budget.status == Status::Exhausted;
  let recent = match recent_ms {
    Some(ms) if exhausted && ms <= tracker.config().window_ms => tracker.burn_rate_over(ms),
    // A window shorter than the span: all of it, as the throttle reads it.
    Some(_) if exhausted => budget.burn_rate,
    _ => f64::NAN,
  };
  let mut state = [0f64; GuardField::COUNT];
  for field in GuardField::ALL {
    state[*field as usize] = match field {
      GuardField::Closed => 0.0,
      GuardField::Now => tracker.now_ms() as f64,
      GuardField::Status => budget.status.index() as f64,
      GuardField::Total => budget.counts.total() as f64,
      GuardField::SloTarget => tracker.config().target_rate,
      GuardField::RecentBurnRate => recent,
    };
  }
  state
}

/// The distinct windows of `tracker`'s alert policy, shortest first.
fn policy_windows(tracker: &Tracker) -> Vec<i64> {
  let mut windows: Vec<i64> = tracker.alert_rules().flat_map(|r| [r.long_window_ms, r.short_window_ms]).collect();
  windows.sort_unstable();
  windows.dedup();
  windows
}

/// The scrape buffer of `tracker` now: the head by `ScrapeField`, then each
/// pair by `ScrapePairField`, then each window by `ScrapeWindowField`.
pub fn scrape(tracker: &Tracker) -> Vec<f64> {
  let (report, alerts) = tracker.report_and_alerts();
  let budget = tracker.budget();
  let windows = policy_windows(tracker);
  let pairs = tracker.alert_rules().count();
  let mut out =
    vec![0f64; ScrapeField::COUNT + pairs * ScrapePairField::COUNT + windows.len() * ScrapeWindowField::COUNT];
  for field in ScrapeField::ALL {
    out[*field as usize] = match field {
      ScrapeField::Status => report.status.index() as f64,
      ScrapeField::Total => report.total as f64,
      ScrapeField::Failures => report.failures as f64,
      ScrapeField::SloTarget => report.slo_target,
      ScrapeField::InsufficientData => alerts.insufficient_data as u8 as f64,
      ScrapeField::At => report.at_ms as f64,
      ScrapeField::RemainingFraction => budget.remaining_fraction,
      ScrapeField::BurnRate => budget.burn_rate,
      ScrapeField::RecordedSuccesses => tracker.recorded().successes as f64,
      ScrapeField::RecordedFailures => tracker.recorded().failures as f64,
      ScrapeField::Rejected => tracker.rejected() as f64,
      ScrapeField::Pairs => pairs as f64,
      ScrapeField::Windows => windows.len() as f64,
    };
  }
  for (i, rule) in tracker.alert_rules().enumerate() {
    let at = ScrapeField::COUNT + i * ScrapePairField::COUNT;
    out[at + ScrapePairField::Firing as usize] = alerts.firing.iter().any(|f| f.name == rule.name) as u8 as f64;
  }
  let windows_at = ScrapeField::COUNT + pairs * ScrapePairField::COUNT;
  for (i, ms) in windows.iter().enumerate() {
    let at = windows_at + i * ScrapeWindowField::COUNT;
    out[at + ScrapeWindowField::WindowMs as usize] = *ms as f64;
    out[at + ScrapeWindowField::BurnRate as usize] = tracker.burn_rate_over(*ms);
  }
  out
}

/// The report buffer's head for the report and alerts of one moment, by `ReportField`.
pub fn report_head(report: &Report, alerts: &AlertSnapshot) -> [f64; ReportField::COUNT] {
  let mut head = [0f64; ReportField::COUNT];
  for field in ReportField::ALL {
    head[*field as usize] = match field {
      ReportField::Status => report.status.index() as f64,
      ReportField::CurrentRate => report.current_rate,
      ReportField::Total => report.total as f64,
      ReportField::Failures => report.failures as f64,
      ReportField::BudgetRemainingPct => report.budget_remaining_pct,
      ReportField::BurnRate => report.burn_rate,
      ReportField::SloTarget => report.slo_target,
      ReportField::Successes => report.successes as f64,
      ReportField::BudgetTotal => report.budget_total,
      ReportField::BudgetRemaining => report.budget_remaining,
      ReportField::Dropped => report.dropped as f64,
      ReportField::At => report.at_ms as f64,
      ReportField::InsufficientData => alerts.insufficient_data as u8 as f64,
      ReportField::ExhaustsInMs => alerts.exhausts_in_ms.unwrap_or(f64::NAN),
      ReportField::Firing => alerts.firing.len() as f64,
    };
  }
  head
}

/// A firing pair's values after the head, by `PairField`: its index in
/// `tracker`'s policy (`usize::MAX` if not there) and its burn rates.
pub fn pair_values(tracker: &Tracker, firing: &FiringAlert) -> [f64; PairField::COUNT] {
  let index = tracker.alert_rules().position(|rule| rule.name == firing.name).unwrap_or(usize::MAX);
  let mut pair = [0f64; PairField::COUNT];
  pair[PairField::Index as usize] = index as f64;
  pair[PairField::BurnRateLong as usize] = firing.burn_rate_long;
  pair[PairField::BurnRateShort as usize] = firing.burn_rate_short;
  pair
}

/// `tracker`'s figure `figure` at its current time. A core tracker is never
/// closed: `Closed` is 0 here, and the binding answers it for its handle.
pub fn figure(tracker: &Tracker, figure: Figure) -> f64 {
  match figure {
    Figure::Now => tracker.now_ms() as f64,
    Figure::Total => tracker.counts().total() as f64,
    Figure::Successes => tracker.counts().successes as f64,
    Figure::Failures => tracker.counts().failures as f64,
    Figure::CurrentRate => tracker.budget().current_rate,
    Figure::BudgetTotal => tracker.budget().budget_total,
    Figure::BudgetRemaining => tracker.budget().budget_remaining,
    Figure::RemainingFraction => tracker.budget().remaining_fraction,
    Figure::BurnRate => tracker.budget().burn_rate,
    Figure::Status => tracker.budget().status.index() as f64,
    Figure::LastStatus => tracker.last_status().index() as f64,
    Figure::Closed => 0.0,
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::{Config, Event};

  /// 95 % target, one hour, no alert pairs; 180 successes and 20 failures at
  /// 1 000 000 ms: a budget of 200 × 0.05 = 10 failures, all spent twice over.
  fn spent_tracker() -> Tracker {
    let config = Config { alerts: Some(Vec::new()), ..Config::default() };
    let mut tracker = Tracker::new(config, 1_000_000).unwrap();
    let mut events: Vec<Event> = Vec::new();
    tracker.record(1_000_000, 1_000_000, 180, 20, &mut events);
    tracker
  }

  #[test]
  fn the_head_holds_the_report_by_field() {
    let tracker = spent_tracker();
    let (report, alerts) = tracker.report_and_alerts();
    let head = report_head(&report, &alerts);
    let at = |field: ReportField| head[field as usize];
    assert_eq!(at(ReportField::Status), 3.0, "exhausted");
    assert_eq!(at(ReportField::Total), 200.0);
    assert_eq!(at(ReportField::Successes), 180.0);
    assert_eq!(at(ReportField::Failures), 20.0);
    assert_eq!(at(ReportField::CurrentRate), 0.9);
    assert_eq!(at(ReportField::SloTarget), 0.95);
    assert_eq!(at(ReportField::BudgetTotal), 10.0);
    assert_eq!(at(ReportField::BudgetRemaining), 0.0);
    assert_eq!(at(ReportField::BudgetRemainingPct), 0.0);
    assert_eq!(at(ReportField::BurnRate), 2.0);
    assert_eq!(at(ReportField::Dropped), 0.0);
    assert_eq!(at(ReportField::At), 1_000_000.0);
    assert_eq!(at(ReportField::Firing), 0.0);
  }

  #[test]
  fn a_tracker_with_nothing_burning_has_no_exhaustion_time() {
    let tracker = Tracker::new(Config { alerts: Some(Vec::new()), ..Config::default() }, 0).unwrap();
    let (report, alerts) = tracker.report_and_alerts();
    assert!(report_head(&report, &alerts)[ReportField::ExhaustsInMs as usize].is_nan());
  }

  #[test]
  fn figures_read_the_tracker_by_name() {
    let tracker = spent_tracker();
    assert_eq!(figure(&tracker, Figure::Now), 1_000_000.0);
    assert_eq!(figure(&tracker, Figure::Total), 200.0);
    assert_eq!(figure(&tracker, Figure::Successes), 180.0);
    assert_eq!(figure(&tracker, Figure::Failures), 20.0);
    assert_eq!(figure(&tracker, Figure::CurrentRate), 0.9);
    // Figures are unrounded: 200 × (1 − 0.95) in f64 is 10.000000000000009.
    let budget_total = 200.0 * (1.0 - 0.95);
    assert_eq!(figure(&tracker, Figure::BudgetTotal), budget_total);
    assert_eq!(figure(&tracker, Figure::BudgetRemaining), 0.0);
    assert_eq!(figure(&tracker, Figure::RemainingFraction), 0.0);
    assert_eq!(figure(&tracker, Figure::BurnRate), 20.0 / budget_total);
    assert_eq!(figure(&tracker, Figure::Status), 3.0);
    assert_eq!(figure(&tracker, Figure::Closed), 0.0);
  }

  /// 95 % over an hour in 1-minute buckets, two custom pairs: "fast" (10 min /
  /// 1 min above 1.5) and "slow" (1 h / 10 min above 10); 180 successes and
  /// 20 failures at 1 000 000 ms, all in the newest bucket: a burn rate of
  /// 20 / (200 × 0.05) = 2 over every span, so "fast" fires and "slow" does not.
  fn paired_tracker() -> Tracker {
    let rule = |name: &str, long_window_ms, short_window_ms, burn_rate| crate::AlertRule {
      name: name.into(),
      severity: crate::Severity::Page,
      long_window_ms,
      short_window_ms,
      burn_rate,
      min_events: 1,
    };
    let alerts = vec![rule("fast", 600_000, 60_000, 1.5), rule("slow", 3_600_000, 600_000, 10.0)];
    let config = Config { resolution_ms: 60_000, alerts: Some(alerts), ..Config::default() };
    let mut tracker = Tracker::new(config, 0).unwrap();
    tracker.record(1_000_000, 1_000_000, 180, 20, &mut Vec::<Event>::new());
    tracker
  }

  fn close_to(actual: f64, expected: f64) -> bool {
    (actual - expected).abs() < 1e-9
  }

  #[test]
  fn the_guard_state_holds_what_a_decision_reads() {
    let tracker = spent_tracker();
    let state = guard_state(&tracker, None);
    let at = |field: GuardField| state[field as usize];
    assert_eq!(at(GuardField::Closed), 0.0);
    assert_eq!(at(GuardField::Now), 1_000_000.0);
    assert_eq!(at(GuardField::Status), 3.0, "exhausted");
    assert_eq!(at(GuardField::Total), 200.0);
    assert_eq!(at(GuardField::SloTarget), 0.95);
    assert!(at(GuardField::RecentBurnRate).is_nan(), "not asked");
  }

  #[test]
  fn the_recent_burn_rate_is_read_only_when_asked_and_exhausted() {
    let tracker = spent_tracker();
    // Every event in the last 5 minutes: 20 / (200 × 0.05) = 2.
    let recent = guard_state(&tracker, Some(300_000))[GuardField::RecentBurnRate as usize];
    assert!(close_to(recent, 2.0), "{recent}");
    // A span longer than the window (1 h): the whole window's burn rate.
    let whole = guard_state(&tracker, Some(7_200_000))[GuardField::RecentBurnRate as usize];
    assert!(close_to(whole, 2.0), "{whole}");
    // Not exhausted (no events): not read.
    let fresh = Tracker::new(Config { alerts: Some(Vec::new()), ..Config::default() }, 0).unwrap();
    assert!(guard_state(&fresh, Some(300_000))[GuardField::RecentBurnRate as usize].is_nan());
  }

  #[test]
  fn the_scrape_buffer_holds_the_head_then_each_pair_then_each_window() {
    let tracker = paired_tracker();
    let b = scrape(&tracker);
    // 13 values of head, 2 pairs of 1, 3 windows (1 min, 10 min, 1 h) of 2.
    assert_eq!(b.len(), 13 + 2 + 3 * 2);
    let at = |field: ScrapeField| b[field as usize];
    assert_eq!(at(ScrapeField::Status), 3.0, "exhausted");
    assert_eq!(at(ScrapeField::Total), 200.0);
    assert_eq!(at(ScrapeField::Failures), 20.0);
    assert_eq!(at(ScrapeField::SloTarget), 0.95);
    assert_eq!(at(ScrapeField::InsufficientData), 0.0);
    assert_eq!(at(ScrapeField::At), 1_000_000.0);
    assert_eq!(at(ScrapeField::RemainingFraction), 0.0);
    assert!(close_to(at(ScrapeField::BurnRate), 2.0));
    assert_eq!(at(ScrapeField::RecordedSuccesses), 180.0);
    assert_eq!(at(ScrapeField::RecordedFailures), 20.0);
    assert_eq!(at(ScrapeField::Rejected), 0.0);
    assert_eq!(at(ScrapeField::Pairs), 2.0);
    assert_eq!(at(ScrapeField::Windows), 3.0);
    assert_eq!(&b[13..15], &[1.0, 0.0], "fast fires, slow does not");
    let windows: Vec<f64> = b[15..].chunks(2).map(|w| w[0]).collect();
    assert_eq!(windows, [60_000.0, 600_000.0, 3_600_000.0]);
    for w in b[15..].chunks(2) {
      assert!(close_to(w[1], 2.0), "burn over {} ms: {}", w[0], w[1]);
    }
  }

  #[test]
  fn a_tracker_without_pairs_scrapes_the_head_only() {
    let b = scrape(&spent_tracker());
    assert_eq!(b.len(), ScrapeField::COUNT);
    assert_eq!((b[ScrapeField::Pairs as usize], b[ScrapeField::Windows as usize]), (0.0, 0.0));
  }

  #[test]
  fn layouts_map_names_to_indexes() {
    let report = ReportField::to_js();
    assert_eq!(report.len(), 15);
    assert_eq!(report["status"], 0);
    assert_eq!(report["firing"], 14);
    assert_eq!(PairField::to_js()["burnRateShort"], 2);
    assert_eq!(Figure::from_index(11), Some(Figure::Closed));
    assert_eq!(Figure::from_index(12), None);
    assert_eq!(Figure::from_index(-1), None);
    assert_eq!(GuardField::to_js()["recentBurnRate"], 5);
    assert_eq!(ScrapeField::to_js()["windows"], 12);
    assert_eq!(ScrapeWindowField::to_js()["burnRate"], 1);
  }
}
