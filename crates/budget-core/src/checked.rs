//! A config checked whole, its alert policy resolved: what a tracker is built
//! from and what configs are compared by. Validation and `policy_for` run
//! here, in one place.

use crate::alerts::{gates_for, policy_for, scrape_policy, AlertGate, ScrapePolicy};
use crate::config::{Config, Slot, FIELDS};
use crate::error::Result;
use crate::field::Kind;
use crate::rule::AlertRule;

/// A validated config and the alert policy in force for it (its own rules,
/// checked and rounded to whole buckets, or the default policy).
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedConfig {
  config: Config,
  policy: Vec<AlertRule>,
}

impl CheckedConfig {
  /// Checks every field of `config`, then its alert policy; the error names
  /// the first field out of range.
  pub fn new(config: Config) -> Result<Self> {
    config.validate()?;
    let policy = policy_for(&config)?;
    Ok(CheckedConfig { config, policy })
  }

  /// Parts already checked together (a tracker's own config and policy).
  pub(crate) fn from_parts(config: Config, policy: Vec<AlertRule>) -> Self {
    CheckedConfig { config, policy }
  }

  /// The config as given (its `alerts` as configured, `None` for the default).
  pub fn config(&self) -> &Config {
    &self.config
  }

  /// The alert policy in force.
  pub fn policy(&self) -> &[AlertRule] {
    &self.policy
  }

  /// The gates of the policy: the default ones for the default policy, plain
  /// ones for a custom policy.
  pub fn gates(&self) -> Vec<AlertGate> {
    gates_for(&self.config, &self.policy)
  }

  /// The policy the Prometheus rules implement for this config at a scrape
  /// every `scrape_interval_ms` ([`scrape_policy`]): the tracker's own pairs,
  /// gates and recovery spans, checked here as the tracker's policy is.
  pub fn scrape_policy(&self, scrape_interval_ms: i64) -> Result<ScrapePolicy> {
    scrape_policy(&self.config, &self.policy, scrape_interval_ms)
  }

  /// The config and its policy.
  pub fn into_parts(self) -> (Config, Vec<AlertRule>) {
    (self.config, self.policy)
  }

  /// The config fields in which two configs with their alert policies in force
  /// differ (the policy as `alerts`), named as in the JS config, in the
  /// table's order ([`FIELDS`]): what a shared tracker or a persist file with another config is
  /// refused for.
  pub fn differences(&self, other: &CheckedConfig) -> Vec<&'static str> {
    FIELDS
      .iter()
      .filter(|f| match f.slot {
        Slot::Config { get, .. } => get(&self.config) != get(&other.config),
        _ => f.kind == Kind::Alerts && self.policy != other.policy,
      })
      .map(|f| f.name)
      .collect()
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn differences_name_each_field_that_differs_in_field_order() {
    let a = CheckedConfig::new(Config::default()).unwrap();
    let b = CheckedConfig::new(Config { window_ms: 60_000, min_events: 5, ..Config::default() }).unwrap();
    assert_eq!(a.differences(&a), Vec::<&str>::new());
    // A 60 s window keeps the 1 h window's 83 ms resolution but not its policy.
    assert_eq!(a.differences(&b), vec!["windowMs", "minEvents", "alerts"]);
    let no_alerts = CheckedConfig::new(Config { alerts: Some(Vec::new()), ..Config::default() }).unwrap();
    assert_eq!(a.differences(&no_alerts), vec!["alerts"]);
  }

  #[test]
  fn a_bad_policy_is_refused_with_its_field() {
    let rule = AlertRule {
      name: "x".into(),
      severity: crate::rule::Severity::Page,
      long_window_ms: 60_000,
      short_window_ms: 60_000,
      burn_rate: 2.0,
      min_events: 0,
    };
    let e = CheckedConfig::new(Config { alerts: Some(vec![rule]), ..Config::default() }).unwrap_err();
    assert_eq!(e.field.as_deref(), Some("alerts[0].shortWindowMs"));
  }
}
