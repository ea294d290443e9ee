//! The alert policy asked of the core without building a tracker: the config
//! checked whole (`CheckedConfig`) and the policy the Prometheus rules
//! implement at a scrape interval (lib/prometheus/rules-slo.js). Internal: left out of
//! the package's types, reached through `require('./native.js')`.

use budget_core::{BudgetError, CheckedConfig};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

use crate::args::argument_name;
use crate::config;
use crate::error::throw_in;
use crate::report::AlertRuleInfo;

/// How a held pair of the Prometheus rules' policy resolves (the tracker's
/// rule: `RecoveryTest` in the core).
#[napi(object, object_from_js = false)]
pub struct ScrapeRecovery {
  /// Solves a recovery span must hold to be judged; 0: the pair is not held
  /// (a custom policy).
  pub min_solves: f64,
  /// Below `burnAloneFrom` solves, a span of n may hold as many failures as
  /// there are entries ≤ n here (the binomial test as a step function).
  pub failure_steps: Vec<f64>,
  /// From this many solves on, the burn rate alone decides.
  pub burn_alone_from: f64,
}

/// The policy of the Prometheus rules for one SLO: the tracker's.
#[napi(object, object_from_js = false)]
pub struct ScrapePolicy {
  /// The pairs and their gates as the tracker has them, a window under four
  /// scrapes lengthened to four (the default policy; a custom one is refused).
  pub pairs: Vec<AlertRuleInfo>,
  /// How each pair resolves, in the order of `pairs`.
  pub recovery: Vec<ScrapeRecovery>,
  /// The recovery spans, ms, shortest first (empty when no pair is held).
  pub recovery_spans_ms: Vec<f64>,
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
    let policy = checked.scrape_policy(scrape_interval_ms as i64)?;
    Ok(ScrapePolicy {
      pairs: policy.pairs.iter().map(|p| AlertRuleInfo::new(&p.rule, &p.gate)).collect(),
      recovery: policy
        .pairs
        .iter()
        .map(|p| ScrapeRecovery {
          min_solves: p.recovery.min_solves as f64,
          failure_steps: p.recovery.failure_steps.iter().map(|&n| n as f64).collect(),
          burn_alone_from: p.recovery.burn_alone_from as f64,
        })
        .collect(),
      recovery_spans_ms: policy.recovery_spans_ms.iter().map(|&ms| ms as f64).collect(),
    })
  })();
  policy.map_err(|e| throw_in(&env, e, root))
}
