//! The alert policy asked of the core without building a tracker: the config
//! checked whole (`CheckedConfig`) and the policy the Prometheus rules
//! implement at a scrape interval (lib/rules-slo.js). Internal: left out of
//! the package's types, reached through `require('./native.js')`.

use budget_core::alerts::{AlertGate, PROMETHEUS_MIN_FAILURES};
use budget_core::{BudgetError, CheckedConfig};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

use crate::args::argument_name;
use crate::config;
use crate::error::throw_in;
use crate::report::AlertRuleInfo;

/// The policy of the Prometheus rules for one SLO.
#[napi(object, object_from_js = false)]
pub struct ScrapePolicy {
  /// The pairs: the custom ones as the tracker rounds them, or the workbook
  /// table in whole seconds, no window under four scrapes.
  pub pairs: Vec<AlertRuleInfo>,
  /// Failures a pair's long window must hold before it may fire, unless the
  /// SLO sets its own `minFailures`.
  pub min_failures: f64,
}

/// Checks `config` (a tracker config: `targetRate`, `windowMs`, `alerts`, …)
/// as the tracker would, then returns the Prometheus rules' policy for a
/// scrape every `scrapeIntervalMs` (see `scrape_policy` in the core). Errors
/// name the field inside what the caller called the object (its
/// `ARGUMENT_NAME` symbol, else `config`).
#[napi(skip_typescript)]
// Only JavaScript calls it: `cargo test` builds no registration, so Rust sees no caller.
#[cfg_attr(test, allow(dead_code))]
pub fn scrape_policy(env: Env, config: Object, scrape_interval_ms: f64) -> Result<ScrapePolicy> {
  let root = argument_name(&env, &config)?;
  let root = root.as_deref().unwrap_or("config");
  let policy = (|| -> std::result::Result<ScrapePolicy, BudgetError> {
    let checked = CheckedConfig::new(config::parse(Some(config))?.config)?;
    let pairs = checked.scrape_policy(scrape_interval_ms as i64)?;
    Ok(ScrapePolicy {
      pairs: pairs.iter().map(|r| AlertRuleInfo::new(r, &AlertGate::plain(r))).collect(),
      min_failures: PROMETHEUS_MIN_FAILURES as f64,
    })
  })();
  policy.map_err(|e| throw_in(&env, e, root))
}
