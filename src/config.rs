//! Reads and checks the JS config object before anything is created.

use budget_core::config::{default_resolution_ms, MAX_SAFE_INTEGER};
use budget_core::{BudgetError, Config};
use napi::bindgen_prelude::*;
use napi_derive::napi;

/// Configuration of an `ErrorBudgetTracker`. Every field is optional; `0` is a
/// value like any other, never "use the default". Unknown keys are a `TypeError`.
#[napi(object, object_to_js = false)]
pub struct TrackerConfig {
  /// Fraction of solves that must succeed, in (0, 1]. Default 0.95.
  pub target_rate: Option<f64>,
  /// Rolling window length in ms, a positive integer. Default 3 600 000 (1 h).
  pub window_ms: Option<f64>,
  /// Remaining-budget fraction below which the status is `warning`, in [0, 1]. Default 0.5.
  pub warning_threshold: Option<f64>,
  /// Remaining-budget fraction below which the status is `critical`, in [0, 1],
  /// at most `warningThreshold`. Default 0.1.
  pub critical_threshold: Option<f64>,
  /// Below this many events in the window the tracker reports `healthy` and burn
  /// rate 0: a non-negative integer. Default 0; ~100 suits low-volume pipelines.
  pub min_events: Option<f64>,
  /// Bucket width of the window in ms: a positive integer ≤ `windowMs`, at most
  /// 1 000 000 buckets per window. Default `max(1, floor(windowMs / 3600))`.
  pub resolution_ms: Option<f64>,
  /// `'monotonic'` (default): real time from a monotonic clock, reported in epoch
  /// ms. `'manual'`: time moves only through `record(…, atMs)` and `advanceTo()`.
  #[napi(ts_type = "'monotonic' | 'manual'")]
  pub clock: Option<String>,
}

/// Which clock drives a tracker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockKind {
  Monotonic,
  Manual,
}

const NUMBER_KEYS: [&str; 6] =
  ["targetRate", "windowMs", "warningThreshold", "criticalThreshold", "minEvents", "resolutionMs"];
const KNOWN_KEYS: &str = "targetRate, windowMs, warningThreshold, criticalThreshold, minEvents, resolutionMs, clock";

/// Checks keys and types of `raw`, then builds and validates the core config.
pub fn parse(raw: Option<Object>) -> std::result::Result<(Config, ClockKind), BudgetError> {
  let Some(raw) = raw else {
    return Ok((Config::default(), ClockKind::Monotonic));
  };
  for key in Object::keys(&raw).map_err(|e| BudgetError::invalid_type(e.reason))? {
    let value: Unknown = raw.get_named_property(&key).map_err(|e| BudgetError::invalid_type(e.reason))?;
    let ty = value.get_type().map_err(|e| BudgetError::invalid_type(e.reason))?;
    if ty == ValueType::Undefined {
      continue;
    }
    if NUMBER_KEYS.contains(&key.as_str()) {
      if ty != ValueType::Number {
        return Err(BudgetError::invalid_type(format!("config.{key} must be a number, got {}", type_name(ty))));
      }
    } else if key == "clock" {
      if ty != ValueType::String {
        return Err(BudgetError::invalid_type(format!(
          "config.clock must be 'monotonic' or 'manual', got {}",
          type_name(ty)
        )));
      }
    } else {
      return Err(BudgetError::invalid_type(format!("unknown config key '{key}'; known keys: {KNOWN_KEYS}")));
    }
  }
  let input =
    unsafe { TrackerConfig::from_napi_value(raw.env(), raw.raw()) }.map_err(|e| BudgetError::invalid_type(e.reason))?;
  build(input)
}

fn build(input: TrackerConfig) -> std::result::Result<(Config, ClockKind), BudgetError> {
  let defaults = Config::default();
  let window_ms = integer("windowMs", input.window_ms, defaults.window_ms)?;
  let config = Config {
    target_rate: finite("targetRate", input.target_rate, defaults.target_rate)?,
    window_ms,
    warning_threshold: finite("warningThreshold", input.warning_threshold, defaults.warning_threshold)?,
    critical_threshold: finite("criticalThreshold", input.critical_threshold, defaults.critical_threshold)?,
    min_events: integer("minEvents", input.min_events, 0)?.try_into().map_err(|_| {
      BudgetError::out_of_range(format!("minEvents must be a non-negative integer, got {:?}", input.min_events))
    })?,
    resolution_ms: integer("resolutionMs", input.resolution_ms, default_resolution_ms(window_ms))?,
  };
  config.validate()?;
  let clock = match input.clock.as_deref() {
    None | Some("monotonic") => ClockKind::Monotonic,
    Some("manual") => ClockKind::Manual,
    Some(other) => {
      return Err(BudgetError::invalid_type(format!("config.clock must be 'monotonic' or 'manual', got '{other}'")))
    }
  };
  Ok((config, clock))
}

fn finite(field: &str, value: Option<f64>, default: f64) -> std::result::Result<f64, BudgetError> {
  match value {
    None => Ok(default),
    Some(v) if v.is_finite() => Ok(v),
    Some(v) => Err(BudgetError::out_of_range(format!("{field} must be a finite number, got {v}"))),
  }
}

fn integer(field: &str, value: Option<f64>, default: i64) -> std::result::Result<i64, BudgetError> {
  match value {
    None => Ok(default),
    Some(v) if v.is_finite() && v.fract() == 0.0 && v.abs() <= MAX_SAFE_INTEGER as f64 => Ok(v as i64),
    Some(v) => Err(BudgetError::out_of_range(format!("{field} must be an integer, got {v}"))),
  }
}

/// `typeof`-style name of a JS value type, for messages.
pub fn type_name(ty: ValueType) -> &'static str {
  match ty {
    ValueType::Undefined => "undefined",
    ValueType::Null => "null",
    ValueType::Boolean => "boolean",
    ValueType::Number => "number",
    ValueType::String => "string",
    ValueType::Symbol => "symbol",
    ValueType::Object => "object",
    ValueType::Function => "function",
    ValueType::External => "external",
    ValueType::BigInt => "bigint",
    _ => "unknown",
  }
}
