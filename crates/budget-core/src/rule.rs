//! An alert rule as configured, and who it is for: plain data, shared by the
//! config (which holds custom rules) and the alert policies.

/// Who an alert is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
  /// Wake someone up.
  Page,
  /// Look at it in working hours.
  Ticket,
}

impl Severity {
  /// The lowercase name used in the JS API.
  pub fn as_str(self) -> &'static str {
    match self {
      Severity::Page => "page",
      Severity::Ticket => "ticket",
    }
  }

  /// The severity called `name`, if any.
  pub fn parse(name: &str) -> Option<Severity> {
    [Severity::Page, Severity::Ticket].into_iter().find(|s| s.as_str() == name)
  }
}

/// One long/short window pair and its burn-rate threshold, as configured.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertRule {
  /// Unique within a policy; reported in alert events.
  pub name: String,
  /// Who the alert is for.
  pub severity: Severity,
  /// The long window, ms (whole buckets once validated).
  pub long_window_ms: i64,
  /// The short window, ms (whole buckets once validated).
  pub short_window_ms: i64,
  /// Fires while both burn rates are strictly above this.
  pub burn_rate: f64,
  /// Fewer events than this in the long window never fire.
  pub min_events: u64,
}
