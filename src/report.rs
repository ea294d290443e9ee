//! The JS shapes of the core's report and status.

use budget_core::{AlertGate, AlertRule, AlertSnapshot, Evidence, FiringAlert, Report, Severity, Status};
use napi::bindgen_prelude::{Either, Null};
use napi_derive::napi;

/// Budget state, from best to worst: `healthy` (at least `warningThreshold` of
/// the budget left), `warning`, `critical` (less than `criticalThreshold` left),
/// `exhausted` (nothing left).
#[napi(string_enum)]
#[derive(Debug, PartialEq, Eq)]
pub enum BudgetStatus {
  /// At least `warningThreshold` of the budget left.
  #[napi(value = "healthy")]
  Healthy,
  /// Less than `warningThreshold` left.
  #[napi(value = "warning")]
  Warning,
  /// Less than `criticalThreshold` left.
  #[napi(value = "critical")]
  Critical,
  /// Nothing left.
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
  /// The alert pairs firing now, in policy order.
  pub alerts: Vec<FiringAlertInfo>,
  /// Too few events to judge: fewer than `minEvents` in the window, or fewer than
  /// every alert pair's `minEvents` in its long window. No alert fires then.
  pub insufficient_data: bool,
  /// Milliseconds until the remaining budget is spent at the short-window burn
  /// rate of the fastest firing pair (else the window's burn rate), a linear
  /// projection; `null` when nothing is burning.
  #[napi(ts_type = "number | null")]
  pub exhausts_in_ms: Either<f64, Null>,
}

/// Who an alert is for: `page` (wake someone) or `ticket` (working hours).
#[napi(string_enum)]
#[derive(Debug, PartialEq, Eq)]
pub enum AlertSeverity {
  /// Wake someone up.
  #[napi(value = "page")]
  Page,
  /// Look at it in working hours.
  #[napi(value = "ticket")]
  Ticket,
}

/// An alert pair that is firing, with its burn rates to 2 decimals.
#[napi(object, object_from_js = false)]
pub struct FiringAlertInfo {
  /// The pair's name from the policy.
  pub name: String,
  /// Who the alert is for.
  pub severity: AlertSeverity,
  /// Burn rate over the long window.
  pub burn_rate_long: f64,
  /// Burn rate over the short window.
  pub burn_rate_short: f64,
  /// The pair's threshold.
  pub threshold: f64,
}

/// What `on('alert')` and `on('resolve')` listeners receive: the pair that
/// started or stopped firing, the moment, and the report at that moment.
#[napi(object, object_from_js = false)]
pub struct AlertEvent {
  /// The pair's name from the policy.
  pub name: String,
  /// Who the alert is for.
  pub severity: AlertSeverity,
  /// Burn rate over the long window, to 2 decimals.
  pub burn_rate_long: f64,
  /// Burn rate over the short window, to 2 decimals.
  pub burn_rate_short: f64,
  /// The pair's threshold.
  pub threshold: f64,
  /// The moment it started or stopped firing, epoch ms.
  pub at: f64,
  /// The counts behind the burn rates: failures and solves over each window.
  pub evidence: AlertEvidence,
  /// Why it fired or resolved, in words and numbers.
  pub reason: String,
  /// The report at that moment.
  pub report: BudgetReport,
}

impl From<&FiringAlert> for FiringAlertInfo {
  fn from(a: &FiringAlert) -> Self {
    FiringAlertInfo {
      name: a.name.clone(),
      severity: a.severity.into(),
      burn_rate_long: a.burn_rate_long,
      burn_rate_short: a.burn_rate_short,
      threshold: a.threshold,
    }
  }
}

impl From<Severity> for AlertSeverity {
  fn from(s: Severity) -> Self {
    match s {
      Severity::Page => AlertSeverity::Page,
      Severity::Ticket => AlertSeverity::Ticket,
    }
  }
}

/// The counts behind an alert's burn rates, for a person to check:
/// burn rate = failures ÷ (solves × (1 − targetRate)) over each window.
#[napi(object, object_from_js = false)]
pub struct AlertEvidence {
  /// The long window, ms.
  pub long_window_ms: f64,
  /// Failures in the long window.
  pub long_failures: f64,
  /// Solves (successes and failures) in the long window.
  pub long_total: f64,
  /// The short window, ms.
  pub short_window_ms: f64,
  /// Failures in the short window.
  pub short_failures: f64,
  /// Solves in the short window.
  pub short_total: f64,
  /// Failures the long window must hold before the pair may fire.
  pub min_failures: f64,
  /// A firing pair resolves once its long-window burn rate is at or below this
  /// (or the long window holds fewer than `minFailures` failures).
  pub resolve_burn_rate: f64,
}

impl From<&Evidence> for AlertEvidence {
  fn from(e: &Evidence) -> Self {
    AlertEvidence {
      long_window_ms: e.long_window_ms as f64,
      long_failures: e.long.failures as f64,
      long_total: e.long.total() as f64,
      short_window_ms: e.short_window_ms as f64,
      short_failures: e.short.failures as f64,
      short_total: e.short.total() as f64,
      min_failures: e.gate.min_failures as f64,
      resolve_burn_rate: e.gate.resolve_burn_rate,
    }
  }
}

impl AlertEvent {
  /// The JS event for `alert` (`fired`) or `resolve` with the report and alerts of its moment.
  pub fn new(fired: bool, alert: &FiringAlert, report: &Report, alerts: &AlertSnapshot) -> Self {
    AlertEvent {
      evidence: AlertEvidence::from(&alert.evidence),
      reason: alert.reason(fired),
      name: alert.name.clone(),
      severity: alert.severity.into(),
      burn_rate_long: alert.burn_rate_long,
      burn_rate_short: alert.burn_rate_short,
      threshold: alert.threshold,
      at: report.at_ms as f64,
      report: BudgetReport::new(report, alerts),
    }
  }
}

impl BudgetReport {
  /// The JS report from the core's report and alert snapshot of one moment.
  pub fn new(r: &Report, alerts: &AlertSnapshot) -> Self {
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
      alerts: alerts.firing.iter().map(FiringAlertInfo::from).collect(),
      insufficient_data: alerts.insufficient_data,
      exhausts_in_ms: alerts.exhausts_in_ms.map_or(Either::B(Null), Either::A),
    }
  }
}

/// One pair of the alert policy in force, windows rounded to whole buckets.
#[napi(object, object_from_js = false)]
pub struct AlertRuleInfo {
  /// The pair's name from the policy.
  pub name: String,
  /// Who the alert is for.
  pub severity: AlertSeverity,
  /// The long window in ms (whole buckets).
  pub long_window_ms: f64,
  /// The short window in ms (whole buckets).
  pub short_window_ms: f64,
  /// Fires while both burn rates are above this.
  pub burn_rate: f64,
  /// Fewer events than this in the long window never fire.
  pub min_events: f64,
  /// Fewer failures than this in the long window never fire (0 in a custom policy).
  pub min_failures: f64,
  /// A firing pair resolves once its long-window burn rate is at or below this
  /// (or the long window holds fewer than `minFailures` failures); equal to
  /// `burnRate` (a custom policy) it stops as soon as either burn rate is at or
  /// below `burnRate`.
  pub resolve_burn_rate: f64,
  /// The pair cannot fire before the tracker has seen solves (from its oldest
  /// event) for this long, ms: its long window in the default policy (P/4 for `budget-spend`), 0 in a custom one.
  pub warm_up_ms: f64,
  /// The long window's failures must be at least this share of the window's
  /// allowed failures (`budgetTotal`) to fire; 0: no such gate.
  pub min_budget_share: f64,
}

impl AlertRuleInfo {
  /// The JS shape of a pair of the policy in force and its gate.
  pub fn new(r: &AlertRule, gate: &AlertGate) -> Self {
    AlertRuleInfo {
      min_failures: gate.min_failures as f64,
      resolve_burn_rate: gate.resolve_burn_rate,
      warm_up_ms: gate.warm_up_ms as f64,
      min_budget_share: gate.min_budget_share,
      name: r.name.clone(),
      severity: r.severity.into(),
      long_window_ms: r.long_window_ms as f64,
      short_window_ms: r.short_window_ms as f64,
      burn_rate: r.burn_rate,
      min_events: r.min_events as f64,
    }
  }
}

/// Events ever recorded by outcome, never reset by the window (for Prometheus
/// counters and rates over any window).
#[napi(object, object_from_js = false)]
pub struct RecordedCounts {
  /// Successes ever recorded.
  pub successes: f64,
  /// Failures ever recorded.
  pub failures: f64,
}
