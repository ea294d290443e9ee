//! The JS config handed to the core's checks (`budget_core::plan`: keys,
//! types, ranges, defaults, combination rules and messages, driven by the
//! table of config fields), and `configFields()`, that table for JavaScript.

use budget_core::config::{Slot, FIELDS};
use budget_core::field::{DefaultValue, Kind, Range};
use budget_core::BudgetError;
use napi::bindgen_prelude::*;
use napi_derive::napi;

pub use budget_core::plan::{ClockKind, Persist, Plan};

/// Reads `raw` (each property once, as deep as the core's checks look) and
/// checks it: everything the constructor needs, or the first error.
pub fn parse(raw: Option<Object>) -> std::result::Result<Plan, BudgetError> {
  let config = match raw {
    Some(raw) => crate::args::properties(&raw, budget_core::plan::depth),
    None => Ok(Vec::new()),
  };
  budget_core::plan::plan(&config.map_err(|e| BudgetError::invalid_type(e.reason))?)
}

/// One row of the config table, as `configFields()` gives it to JavaScript.
#[napi(object, object_from_js = false)]
pub struct ConfigField {
  /// The key.
  pub name: String,
  /// `'number'`, `'string'`, `'name'` (a string, well-formed Unicode),
  /// `'choice'` (one of `choices`), `'alerts'`, `'persist'` or `'javascript'`
  /// (taken off by the JavaScript before the native constructor).
  pub kind: String,
  /// What a value must be, as messages and the docs say it (`in (0, 1]`); empty for any.
  pub range: String,
  /// The default, as the docs write it (`0.95`, `3 600 000`, `none`).
  pub default: String,
  /// The default when it is a number.
  pub default_value: Option<f64>,
  /// One line on what the field does.
  pub doc: String,
  /// The smallest value allowed, if any, and whether it is excluded.
  pub min: Option<f64>,
  pub min_open: bool,
  /// The largest value allowed, if any, and whether it is excluded.
  pub max: Option<f64>,
  pub max_open: bool,
  /// Whether the value must be an integer.
  pub integer: bool,
  /// The field this one may not exceed.
  pub at_most: Option<String>,
  /// The strings allowed, for a `'choice'`.
  pub choices: Option<Vec<String>>,
  /// Whether it may be given beside `snapshot` (what `restore()` accepts).
  pub with_snapshot: bool,
  /// Whether it may be given with `shared`.
  pub with_shared: bool,
  /// Whether a tracker's snapshot keeps it.
  pub in_snapshot: bool,
}

/// The config table (`budget_core::config::FIELDS`), one object per field in
/// table order: what `__test__/tracker/config-table.spec.js` holds the `.d.ts` and
/// README's config table to. Internal: reached through `require('./native.js')`.
#[napi(skip_typescript)]
// Only JavaScript calls it: `cargo test` builds no registration, so Rust sees no caller.
#[cfg_attr(test, allow(dead_code))]
pub fn config_fields() -> Vec<ConfigField> {
  FIELDS
    .iter()
    .map(|f| {
      let (min, min_open, max, max_open) = f.range.bounds();
      ConfigField {
        name: f.name.into(),
        kind: f.kind.name().into(),
        range: f.range.text(),
        default: f.default.text(),
        default_value: match f.default {
          DefaultValue::Number(n) => Some(n),
          _ => None,
        },
        doc: f.doc.into(),
        min,
        min_open,
        max,
        max_open,
        integer: matches!(f.range, Range::Integer { .. }),
        at_most: f.range.at_most().map(str::to_string),
        choices: match f.range {
          Range::OneOf(choices) => Some(choices.iter().map(|c| c.to_string()).collect()),
          _ => None,
        },
        with_snapshot: f.with_snapshot,
        with_shared: f.with_shared,
        in_snapshot: matches!(f.slot, Slot::Config { .. }) || f.kind == Kind::Alerts,
      }
    })
    .collect()
}
