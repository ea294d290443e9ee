//! Reads and checks the JS config object before anything is created, driven
//! by the core's table of config fields (`budget_core::config::FIELDS`): the
//! keys, their types, ranges, defaults and combination rules all come from
//! it. What is written here by hand is what a special type needs: the alert
//! rules, `persist`, the clock, the shared name's Unicode check.
//!
//! The checks run in this order: each key given and its type (in the
//! caller's order); the combination rules; the strings (`clock`, `shared`);
//! the numbers, converted then range-checked in table order (the alert rules
//! read between the two); the snapshot, `now` and `persist`.

use budget_core::alerts::DEFAULT_ALERT_MIN_EVENTS;
use budget_core::config::{check_combination, check_texts, known_keys, Field, Slot, FIELDS};
use budget_core::field::{DefaultValue, Kind, Range, FINITE, NON_NEGATIVE, POSITIVE_MS};
use budget_core::{AlertRule, BudgetError, Config, Settings, Severity, Snapshot};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::args::{describe, type_name};

/// Where and how often a tracker saves itself.
#[napi(object, object_to_js = false)]
pub struct PersistConfig {
  /// The snapshot file. Written as a temporary file in the same directory, fsynced, then renamed.
  /// A NUL byte or a lone surrogate in it is a `TypeError` (`ERR_INVALID_ARG_VALUE`).
  pub path: String,
  /// Milliseconds between saves: a positive integer. Default 60 000.
  pub interval_ms: Option<f64>,
}

/// Autosave settings, checked.
#[derive(Debug, Clone)]
pub struct Persist {
  pub path: std::path::PathBuf,
  pub interval_ms: u64,
}

/// Everything the constructor needs, checked.
pub struct Plan {
  pub config: Config,
  /// `config.hysteresis`, checked (0 when not given).
  pub hysteresis: f64,
  pub clock: ClockKind,
  /// A snapshot to restore from (`config.snapshot`).
  pub snapshot: Option<Snapshot>,
  /// Where a manual clock starts.
  pub manual_start_ms: i64,
  pub persist: Option<Persist>,
  /// `config.shared`: the registry name.
  pub shared: Option<String>,
  /// The config keys given (with a value other than `undefined`), besides
  /// `shared`: a handle that gives none attaches to a shared tracker whatever
  /// its config; one that gives some is checked against it on those.
  pub given: Vec<String>,
}

/// One alert pair: fires while the burn rate over `longWindowMs` and over
/// `shortWindowMs` are both above `burnRate`.
#[napi(object, object_to_js = false)]
pub struct AlertRuleConfig {
  /// Unique name, reported in alert events.
  pub name: String,
  /// `'page'` or `'ticket'`.
  #[napi(ts_type = "'page' | 'ticket'")]
  pub severity: String,
  /// The long window in ms: at least one bucket, at most `windowMs`; rounded to whole buckets.
  pub long_window_ms: f64,
  /// The short window in ms (the workbook uses a twelfth of the long one), shorter than the long one.
  pub short_window_ms: f64,
  /// Burn-rate threshold, in (0, 1 / (1 − targetRate)): 20 at 95 %.
  pub burn_rate: f64,
  /// Fewer events than this in the long window never fire. Default 10.
  pub min_events: Option<f64>,
}

/// Which clock drives a tracker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockKind {
  Monotonic,
  Manual,
}

/// The TypeError for a value of the wrong type: "must be a number, got string".
fn wrong_type(key: &str, expected: ValueType, value: &Unknown) -> BudgetError {
  let article = if expected == ValueType::Object { "an" } else { "a" };
  BudgetError::invalid_type(format!("must be {article} {}, got {}", type_name(expected), describe(value))).at(key)
}
const RULE_KEYS: &str = "name, severity, longWindowMs, shortWindowMs, burnRate, minEvents";
const PERSIST_KEYS: &str = "path, intervalMs";

/// One config value, of its field's kind, read once.
enum Value {
  Number(f64),
  Text(String),
  Alerts(Vec<AlertRuleConfig>),
  Persist(PersistConfig),
}

/// The fields given (with a value other than `undefined`), in the caller's order.
#[derive(Default)]
struct Given(Vec<(&'static Field, Value)>);

impl Given {
  fn get(&self, name: &str) -> Option<&Value> {
    self.0.iter().find(|(f, _)| f.name == name).map(|(_, v)| v)
  }

  fn number(&self, name: &str) -> Option<f64> {
    match self.get(name) {
      Some(Value::Number(n)) => Some(*n),
      _ => None,
    }
  }

  fn text(&self, name: &str) -> Option<&str> {
    match self.get(name) {
      Some(Value::Text(s)) => Some(s),
      _ => None,
    }
  }

  fn names(&self) -> Vec<&'static str> {
    self.0.iter().map(|(f, _)| f.name).collect()
  }
}

/// Checks keys and types of `raw`, the combination rules and the strings,
/// then builds and validates the core settings.
pub fn parse(raw: Option<Object>) -> std::result::Result<Plan, BudgetError> {
  let given = match raw {
    Some(raw) => read(&raw)?,
    None => Given::default(),
  };
  check_combination(&given.names(), given.text("clock") == Some("manual"))?;
  check_texts(|name| given.text(name))?;
  build(given)
}

/// Each key of `raw` checked against the table (known, of its field's kind),
/// then its value read.
fn read(raw: &Object) -> std::result::Result<Given, BudgetError> {
  let err = |e: napi::Error| BudgetError::invalid_type(e.reason);
  // Every property is read once, here: a getter cannot pass the checks below
  // with one value and be converted with another.
  let raw = read_once(raw).map_err(err)?;
  let mut fields = Vec::new();
  for key in Object::keys(&raw).map_err(err)? {
    let unknown = || BudgetError::invalid_value(format!("unknown config key '{key}'; known keys: {}", known_keys()));
    if key.contains('\0') {
      return Err(unknown());
    }
    let value: Unknown = raw.get_named_property(&key).map_err(err)?;
    let ty = value.get_type().map_err(err)?;
    // Keys set to `undefined` are not given: they take their defaults.
    if ty == ValueType::Undefined {
      continue;
    }
    let Some(field) = FIELDS.iter().find(|f| f.name == key) else {
      return Err(unknown());
    };
    // An array is an object to `typeof`, but never what a config field wants.
    let is_array = value.is_array().map_err(err)?;
    match field.kind {
      Kind::Number if ty != ValueType::Number => {
        // A duration written as text ('1h') gets the number to write instead.
        // SAFETY: a value of the current scope, checked to be a string.
        let text = if ty == ValueType::String { unsafe { value.cast::<String>() }.ok() } else { None };
        return Err(BudgetError::invalid_type(field.range.not_a_number(describe(&value), text.as_deref())).at(&key));
      }
      Kind::String | Kind::Name if ty != ValueType::String => return Err(wrong_type(&key, ValueType::String, &value)),
      Kind::Name => well_formed(field.name, value)?,
      Kind::Persist if ty != ValueType::Object || is_array => return Err(wrong_type(&key, ValueType::Object, &value)),
      Kind::Persist => check_persist(value)?,
      Kind::Alerts => check_alerts(value)?,
      Kind::Choice if ty != ValueType::String => {
        let must_be = field.range.text();
        return Err(BudgetError::invalid_type(format!("must be {must_be}, got {}", describe(&value))).at(field.name));
      }
      Kind::JavaScript => return Err(unknown()),
      Kind::Number | Kind::String | Kind::Choice => {}
    }
    fields.push((field, value));
  }
  // Converted once every key has passed its checks.
  let mut given = Given::default();
  for (field, value) in fields {
    // Each of the type its kind was checked for above.
    let value = match field.kind {
      Kind::Number => f64::from_unknown(value).map(Value::Number),
      Kind::Alerts => Vec::<AlertRuleConfig>::from_unknown(value).map(Value::Alerts),
      Kind::Persist => PersistConfig::from_unknown(value).map(Value::Persist),
      _ => String::from_unknown(value).map(Value::Text),
    }
    .map_err(err)?;
    given.0.push((field, value));
  }
  Ok(given)
}

/// Checks the keys and types of `config.persist`.
fn check_persist(value: Unknown) -> std::result::Result<(), BudgetError> {
  let err = |e: napi::Error| BudgetError::invalid_type(e.reason);
  let persist = Object::from_unknown(value).map_err(err)?;
  for key in Object::keys(&persist).map_err(err)? {
    if key.contains('\0') {
      return Err(
        BudgetError::invalid_value(format!("has an unknown key '{key}'; known keys: {PERSIST_KEYS}")).at("persist"),
      );
    }
    let ty = persist.get_named_property::<Unknown>(&key).and_then(|v| v.get_type()).map_err(err)?;
    let expected = match key.as_str() {
      "path" => ValueType::String,
      "intervalMs" if ty == ValueType::Undefined => continue,
      "intervalMs" => ValueType::Number,
      _ => {
        return Err(
          BudgetError::invalid_value(format!("has an unknown key '{key}'; known keys: {PERSIST_KEYS}")).at("persist"),
        )
      }
    };
    if ty != expected {
      return Err(
        BudgetError::invalid_type(format!("must be a {}, got {}", type_name(expected), type_name(ty)))
          .at(&format!("persist.{key}")),
      );
    }
  }
  if !persist.has_named_property("path").map_err(err)? {
    return Err(BudgetError::invalid_value("is required").at("persist.path"));
  }
  let path: Unknown = persist.get_named_property("path").map_err(err)?;
  well_formed("persist.path", path)?;
  Ok(())
}

/// A copy of the config holding each of its properties read once, `persist`
/// and each `alerts` rule copied the same way one level down.
fn read_once<'a>(raw: &Object<'a>) -> napi::Result<Object<'a>> {
  let env = Env::from_raw(raw.env());
  let copy = copy_own(&env, raw)?;
  for key in ["persist", "alerts"] {
    let value: Unknown = copy.get_named_property(key)?;
    if value.get_type()? != ValueType::Object {
      continue;
    }
    let inner = Object::from_unknown(value)?;
    let copied = if value.is_array()? {
      let len = inner.get_array_length()?;
      let mut array = env.create_array(len)?;
      for i in 0..len {
        let rule: Unknown = inner.get_element(i)?;
        if rule.get_type()? == ValueType::Object && !rule.is_array()? {
          array.set(i, copy_own(&env, &Object::from_unknown(rule)?)?)?;
        } else {
          array.set(i, rule)?;
        }
      }
      array.coerce_to_object()?
    } else {
      copy_own(&env, &inner)?
    };
    let mut copy = copy;
    copy.set_named_property(key, copied)?;
  }
  Ok(copy)
}

/// A plain object with `source`'s enumerable string-keyed properties (those
/// `Object::keys` lists, as `for…in` finds them), each read once and defined
/// as an own property of the copy (`__proto__` too). Keys go as
/// JS values: a key with a NUL byte is copied, and refused by name later.
fn copy_own<'a>(env: &Env, source: &Object) -> napi::Result<Object<'a>> {
  let copy = Object::new(env)?;
  let (raw_env, from, to) = (env.raw(), source.raw(), copy.raw());
  let mut names = std::ptr::null_mut();
  let mut len = 0u32;
  // SAFETY: valid env and objects of the current scope; each step checked.
  unsafe {
    check_status!(sys::napi_get_property_names(raw_env, from, &mut names))?;
    check_status!(sys::napi_get_array_length(raw_env, names, &mut len))?;
    for i in 0..len {
      let (mut key, mut value) = (std::ptr::null_mut(), std::ptr::null_mut());
      check_status!(sys::napi_get_element(raw_env, names, i, &mut key))?;
      check_status!(sys::napi_get_property(raw_env, from, key, &mut value))?;
      // Defined, not assigned: an assignment of an own `__proto__` key (as
      // `JSON.parse` makes) would set the copy's prototype, whose keys the
      // checks would then read as fields; defined, it is an unknown key.
      let property = sys::napi_property_descriptor {
        utf8name: std::ptr::null(),
        name: key,
        method: None,
        getter: None,
        setter: None,
        value,
        attributes: sys::PropertyAttributes::writable
          | sys::PropertyAttributes::enumerable
          | sys::PropertyAttributes::configurable,
        data: std::ptr::null_mut(),
      };
      check_status!(sys::napi_define_properties(raw_env, to, 1, &property))?;
    }
  }
  Ok(copy)
}

/// Checks that a string option can be passed on exactly: no NUL byte (a path
/// cannot hold one) and no lone surrogate (UTF-8 has no form for it, so two
/// distinct strings would become one name or one file).
fn well_formed(field: &str, value: Unknown) -> std::result::Result<(), BudgetError> {
  let Ok(units) = Utf16String::from_unknown(value) else {
    return Ok(()); // not a string: the type checks name it
  };
  for (index, unit) in char::decode_utf16(units.iter().copied()).enumerate() {
    match unit {
      Err(lone) => {
        let at = units.iter().position(|&u| u == lone.unpaired_surrogate()).unwrap_or(index);
        return Err(
          BudgetError::invalid_value(format!(
            "must be well-formed Unicode: it has a lone surrogate (\\u{:x}) at index {at}, which \
           would make it the same as another string",
            lone.unpaired_surrogate()
          ))
          .at(field),
        );
      }
      Ok('\0') => {
        let at = units.iter().position(|&u| u == 0).unwrap_or(index);
        if field.ends_with("path") {
          return Err(
            BudgetError::invalid_value(format!(
              "must not contain a NUL byte (a file path cannot), found at index {at}"
            ))
            .at(field),
          );
        }
      }
      Ok(_) => {}
    }
  }
  Ok(())
}

/// Checks the types and keys of `config.alerts` and of each rule in it.
fn check_alerts(value: Unknown) -> std::result::Result<(), BudgetError> {
  let err = |e: napi::Error| BudgetError::invalid_type(e.reason);
  if !value.is_array().map_err(err)? {
    return Err(BudgetError::invalid_type(format!("must be an array, got {}", describe(&value))).at("alerts"));
  }
  let array = Object::from_unknown(value).map_err(err)?;
  let len = array.get_array_length().map_err(err)?;
  for i in 0..len {
    let rule: Unknown = array.get_element(i).map_err(err)?;
    let at = format!("alerts[{i}]");
    if rule.get_type().map_err(err)? != ValueType::Object || rule.is_array().map_err(err)? {
      return Err(BudgetError::invalid_type(format!("must be an object with {RULE_KEYS}")).at(&at));
    }
    let rule = Object::from_unknown(rule).map_err(err)?;
    for key in Object::keys(&rule).map_err(err)? {
      if key.contains('\0') {
        return Err(BudgetError::invalid_value(format!("has an unknown key '{key}'; known keys: {RULE_KEYS}")).at(&at));
      }
      let ty = rule.get_named_property::<Unknown>(&key).and_then(|v| v.get_type()).map_err(err)?;
      let expected = match key.as_str() {
        "name" | "severity" => ValueType::String,
        "longWindowMs" | "shortWindowMs" | "burnRate" => ValueType::Number,
        "minEvents" if ty == ValueType::Undefined => continue,
        "minEvents" => ValueType::Number,
        _ => {
          return Err(
            BudgetError::invalid_value(format!("has an unknown key '{key}'; known keys: {RULE_KEYS}")).at(&at),
          )
        }
      };
      if ty != expected {
        return Err(
          BudgetError::invalid_type(format!("must be a {}, got {}", type_name(expected), type_name(ty)))
            .at(&format!("{at}.{key}")),
        );
      }
    }
    for key in ["name", "severity", "longWindowMs", "shortWindowMs", "burnRate"] {
      if !rule.has_named_property(key).map_err(err)? {
        return Err(BudgetError::invalid_value("is required").at(&format!("{at}.{key}")));
      }
    }
  }
  Ok(())
}

/// Rule `i` of `config.alerts`, its numbers converted (the core checks the
/// policy's ranges: `CheckedConfig`).
fn alert_rule(i: usize, input: AlertRuleConfig) -> std::result::Result<AlertRule, BudgetError> {
  let at = |field: &str| format!("alerts[{i}].{field}");
  let severity = Severity::parse(&input.severity).ok_or_else(|| {
    BudgetError::invalid_value(format!("must be 'page' or 'ticket', got '{}'", input.severity)).at(&at("severity"))
  })?;
  let min_events = match input.min_events {
    None => DEFAULT_ALERT_MIN_EVENTS,
    Some(n) => checked(NON_NEGATIVE, &at("minEvents"), n)? as u64,
  };
  Ok(AlertRule {
    long_window_ms: POSITIVE_MS.convert(&at("longWindowMs"), input.long_window_ms)? as i64,
    short_window_ms: POSITIVE_MS.convert(&at("shortWindowMs"), input.short_window_ms)? as i64,
    burn_rate: FINITE.convert(&at("burnRate"), input.burn_rate)?,
    min_events,
    severity,
    name: input.name,
  })
}

/// `value` converted and checked against `range`, which has no `at_most` bound.
fn checked(range: Range, field: &str, value: f64) -> std::result::Result<f64, BudgetError> {
  let value = range.convert(field, value)?;
  range.check_number(field, value, |_| f64::NAN)?;
  Ok(value)
}

/// How often a tracker saves itself when `persist.intervalMs` is not given.
const PERSIST_INTERVAL_MS: f64 = 60_000.0;

fn build(mut given: Given) -> std::result::Result<Plan, BudgetError> {
  let rules = given.0.iter().position(|(f, _)| f.kind == Kind::Alerts).map(|i| given.0.remove(i).1);
  let settings = Settings::from_numbers(
    |name| given.number(name),
    || match rules {
      Some(Value::Alerts(rules)) => {
        rules.into_iter().enumerate().map(|(i, r)| alert_rule(i, r)).collect::<std::result::Result<_, _>>().map(Some)
      }
      _ => Ok(None),
    },
  )?;
  let clock = match given.text("clock") {
    Some("manual") => ClockKind::Manual,
    _ => ClockKind::Monotonic,
  };
  let snapshot = given.text("snapshot").map(Snapshot::parse).transpose()?;
  let manual_start_ms = match (&snapshot, given.number("now")) {
    (Some(s), Some(now)) => {
      let range = budget_core::config::field("now").map_or(Range::Any, |f| f.range);
      let now = range.convert("now", now)? as i64;
      if now < s.saved_at_ms {
        // A tracker cannot un-age: the snapshot already holds what came later.
        return Err(
          BudgetError::out_of_range(format!(
            "({now}) is earlier than the snapshot's savedAt ({}): restore at or after it",
            s.saved_at_ms
          ))
          .at("now"),
        );
      }
      now
    }
    (Some(s), None) => s.saved_at_ms,
    (None, _) => 0,
  };
  let persist = match given.get("persist") {
    Some(Value::Persist(p)) => {
      if p.path.is_empty() {
        return Err(BudgetError::invalid_value("must be a non-empty string").at("persist.path"));
      }
      let interval_ms = checked(POSITIVE_MS, "persist.intervalMs", p.interval_ms.unwrap_or(PERSIST_INTERVAL_MS))?;
      Some(Persist { path: p.path.clone().into(), interval_ms: interval_ms as u64 })
    }
    _ => None,
  };
  let config: Config = snapshot.as_ref().map_or(settings.config, |s| s.config.clone());
  let shared = given.text("shared").map(str::to_string);
  let given = given.names().into_iter().filter(|k| *k != "shared").map(str::to_string).collect();
  Ok(Plan { config, hysteresis: settings.hysteresis, clock, snapshot, manual_start_ms, persist, shared, given })
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
/// table order: what `__test__/config-table.spec.js` holds the `.d.ts` and
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
