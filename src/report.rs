//! The JS shapes of the core's report and status.

use budget_core::{Report, Status};
use napi_derive::napi;

/// Budget state, from best to worst: `healthy` (at least `warningThreshold` of
/// the budget left), `warning`, `critical` (less than `criticalThreshold` left),
/// `exhausted` (nothing left).
#[napi(string_enum)]
#[derive(Debug, PartialEq, Eq)]
pub enum BudgetStatus {
  #[napi(value = "healthy")]
  Healthy,
  #[napi(value = "warning")]
  Warning,
  #[napi(value = "critical")]
  Critical,
  #[napi(value = "exhausted")]
  Exhausted,
}

impl From<Status> for BudgetStatus {
  fn from(s: Status) -> Self {
    match s {
      Status::Healthy => BudgetStatus::Healthy,
      Status::Warning => BudgetStatus::Warning,
      Status::Critical => BudgetStatus::Critical,
      Status::Exhausted => BudgetStatus::Exhausted,
    }
  }
}

/// A snapshot of the window, rounded as the reference tracker rounds it.
#[napi(object, object_from_js = false)]
pub struct BudgetReport {
  /// Status at the moment of the report.
  pub status: BudgetStatus,
  /// successes / total, to 4 decimals; 1 with no events.
  pub current_rate: f64,
  /// Events in the window.
  pub total: f64,
  /// Failures in the window.
  pub failures: f64,
  /// Remaining fraction of the budget × 100, to 1 decimal.
  pub budget_remaining_pct: f64,
  /// failures / (total × (1 − targetRate)), to 2 decimals; 0 when not measurable.
  pub burn_rate: f64,
  /// The SLO target (`targetRate`).
  pub slo_target: f64,
  /// Successes in the window.
  pub successes: f64,
  /// Failures the window may absorb: total × (1 − targetRate), to 1 decimal.
  pub budget_total: f64,
  /// Failures still allowed: max(0, budgetTotal − failures), to 1 decimal.
  pub budget_remaining: f64,
  /// Events ever refused because their `atMs` was older than the window.
  pub dropped: f64,
  /// The moment of the report, epoch milliseconds.
  pub at: f64,
}

impl From<&Report> for BudgetReport {
  fn from(r: &Report) -> Self {
    BudgetReport {
      status: r.status.into(),
      current_rate: r.current_rate,
      total: r.total as f64,
      failures: r.failures as f64,
      budget_remaining_pct: r.budget_remaining_pct,
      burn_rate: r.burn_rate,
      slo_target: r.slo_target,
      successes: r.successes as f64,
      budget_total: r.budget_total,
      budget_remaining: r.budget_remaining,
      dropped: r.dropped as f64,
      at: r.at_ms as f64,
    }
  }
}
