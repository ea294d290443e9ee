//! The layouts the addon and `lib/` share, each one enum: Rust writes and reads
//! by its variants (`report_head`, `pair_values`, `figure` here; the binding
//! copies them into JavaScript's memory), and the binding's `seamContract()`
//! exports each to JavaScript as `{ name: index }`, which `lib/contract.js`
//! checks at load against the names the JavaScript reads (`b[R.total]`, `figure(F.now)`).

use std::collections::HashMap;

use crate::{AlertSnapshot, FiringAlert, Report, Tracker};

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
  /// The report buffer's head (`write_report`, `lib/fast-report.js`), before the firing pairs.
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
  /// What each tracker's `figure(index)` reads (`lib/tracker.js`'s getters of the same names).
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
  }
}
