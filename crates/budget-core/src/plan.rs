//! The JS config read and checked before anything is created: [`plan`] takes
//! its properties as [`JsValue`]s and returns everything the constructor
//! needs ([`Plan`]). Driven by the table of config fields ([`FIELDS`]): the
//! keys, their types, ranges, defaults and combination rules come from it.
//! What is written here by hand is what a special type needs: the alert rules,
//! `persist`, the clock, the shared name's Unicode check.
//!
//! The checks run in this order: each key given and its type (in the
//! caller's order); the combination rules; the strings (`clock`, `shared`);
//! the numbers, converted then range-checked in table order (the alert rules
//! read between the two); the snapshot, `now` and `persist`.

use std::path::PathBuf;

use crate::alerts::{AlertRule, Severity, DEFAULT_ALERT_MIN_EVENTS};
use crate::config::{check_combination, check_texts, known_keys, Config, Field, Settings, FIELDS};
use crate::error::{BudgetError, Result};
use crate::field::{Kind, Range, FINITE, NON_NEGATIVE, POSITIVE_MS};
use crate::js_value::{well_formed, JsValue};
use crate::tracker::Snapshot;

/// Autosave settings, checked.
#[derive(Debug, Clone)]
pub struct Persist {
  /// The snapshot file.
  pub path: PathBuf,
  /// Milliseconds between saves.
  pub interval_ms: u64,
}

impl crate::persist::SaveTarget for Persist {
  fn path(&self) -> &std::path::Path {
    &self.path
  }

  fn interval(&self) -> std::time::Duration {
    std::time::Duration::from_millis(self.interval_ms)
  }
}

/// Which clock drives a tracker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClockKind {
  Monotonic,
  Manual,
}

/// Everything the constructor needs, checked.
pub struct Plan {
  /// The config (the snapshot's when restoring).
  pub config: Config,
  /// `config.hysteresis`, checked (0 when not given).
  pub hysteresis: f64,
  /// `config.clock`.
  pub clock: ClockKind,
  /// A snapshot to restore from (`config.snapshot`).
  pub snapshot: Option<Snapshot>,
  /// Where a manual clock starts.
  pub manual_start_ms: i64,
  /// `config.persist`, checked.
  pub persist: Option<Persist>,
  /// `config.shared`: the registry name.
  pub shared: Option<String>,
  /// The config keys given (with a value other than `undefined`), besides
  /// `shared`: a handle that gives none attaches to a shared tracker whatever
  /// its config; one that gives some is checked against it on those.
  pub given: Vec<String>,
}

/// How deep the binding reads the value of config key `key`: an alert rule's
/// keys are two levels down (`alerts[i].name`), `persist`'s one; the other
/// fields are checked by their kind only.
pub fn depth(key: &str) -> u8 {
  match FIELDS.iter().find(|f| f.name == key).map(|f| f.kind) {
    Some(Kind::Alerts) => 2,
    Some(Kind::Persist) => 1,
    _ => 0,
  }
}

const RULE_KEYS: &str = "name, severity, longWindowMs, shortWindowMs, burnRate, minEvents";
const PERSIST_KEYS: &str = "path, intervalMs";

/// How often a tracker saves itself when `persist.intervalMs` is not given.
const PERSIST_INTERVAL_MS: f64 = 60_000.0;

/// One alert rule as given, its types checked.
struct RuleInput {
  name: String,
  severity: String,
  long_window_ms: f64,
  short_window_ms: f64,
  burn_rate: f64,
  min_events: Option<f64>,
}

/// One config value, of its field's kind.
enum Value {
  Number(f64),
  Text(String),
  Alerts(Vec<RuleInput>),
  Persist { path: String, interval_ms: Option<f64> },
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

/// Checks the config's properties (`config`, in the caller's order; empty when
/// no config was given): keys and types, the combination rules and the
/// strings; then builds and validates the core settings.
pub fn plan(config: &[(String, JsValue)]) -> Result<Plan> {
  let given = read(config)?;
  check_combination(&given.names(), given.text("clock") == Some("manual"))?;
  check_texts(|name| given.text(name))?;
  build(given)
}

/// "must be a string, got number": the `TypeError` for a value of the wrong type.
fn wrong_type(at: &str, expected: &str, got: &str) -> BudgetError {
  let article = if expected == "object" { "an" } else { "a" };
  BudgetError::invalid_type(format!("must be {article} {expected}, got {got}")).at(at)
}

/// Each key checked against the table (known, of its field's kind), then its value taken.
fn read(config: &[(String, JsValue)]) -> Result<Given> {
  let mut given = Given::default();
  for (key, value) in config {
    let unknown = || BudgetError::invalid_value(format!("unknown config key '{key}'; known keys: {}", known_keys()));
    if key.contains('\0') {
      return Err(unknown());
    }
    // Keys set to `undefined` are not given: they take their defaults.
    if *value == JsValue::Undefined {
      continue;
    }
    let Some(field) = FIELDS.iter().find(|f| f.name == key) else {
      return Err(unknown());
    };
    let value = match (field.kind, value) {
      (Kind::Number, JsValue::Number(n)) => Value::Number(*n),
      (Kind::Number, other) => {
        // A duration written as text ('1h') gets the number to write instead.
        let text = other.text();
        return Err(BudgetError::invalid_type(field.range.not_a_number(other.describe(), text.as_deref())).at(key));
      }
      (Kind::String | Kind::Name, JsValue::String(units)) => {
        if field.kind == Kind::Name {
          well_formed(field.name, units)?;
        }
        Value::Text(String::from_utf16_lossy(units))
      }
      (Kind::String | Kind::Name, other) => return Err(wrong_type(key, "string", other.describe())),
      (Kind::Persist, JsValue::Object(properties)) => persist(properties)?,
      (Kind::Persist, other) => return Err(wrong_type(key, "object", other.describe())),
      (Kind::Alerts, JsValue::Array(rules)) => Value::Alerts(alerts(rules)?),
      (Kind::Alerts, other) => {
        return Err(BudgetError::invalid_type(format!("must be an array, got {}", other.describe())).at("alerts"))
      }
      (Kind::Choice, JsValue::String(units)) => Value::Text(String::from_utf16_lossy(units)),
      (Kind::Choice, other) => {
        let must_be = field.range.text();
        return Err(BudgetError::invalid_type(format!("must be {must_be}, got {}", other.describe())).at(field.name));
      }
      (Kind::JavaScript, _) => return Err(unknown()),
    };
    given.0.push((field, value));
  }
  Ok(given)
}

/// Checks the object at `at` against its `known` keys (name, `typeof` word,
/// required; `known_text` lists them for messages): an unknown key, or a value
/// of another type (`undefined` is absent for an optional one), is refused;
/// then each required key must be there.
fn check_keys(
  at: &str,
  properties: &[(String, JsValue)],
  known: &[(&str, &str, bool)],
  known_text: &str,
) -> Result<()> {
  for (key, value) in properties {
    let unknown = || BudgetError::invalid_value(format!("has an unknown key '{key}'; known keys: {known_text}")).at(at);
    if key.contains('\0') {
      return Err(unknown());
    }
    let Some(&(_, expected, required)) = known.iter().find(|(name, ..)| name == key) else {
      return Err(unknown());
    };
    if !required && *value == JsValue::Undefined {
      continue;
    }
    if value.type_name() != expected {
      let message = format!("must be a {expected}, got {}", value.type_name());
      return Err(BudgetError::invalid_type(message).at(&format!("{at}.{key}")));
    }
  }
  for (name, ..) in known.iter().filter(|(.., required)| *required) {
    if !properties.iter().any(|(key, _)| key == name) {
      return Err(BudgetError::invalid_value("is required").at(&format!("{at}.{name}")));
    }
  }
  Ok(())
}

/// The value of one key of an object whose keys [`check_keys`] checked.
fn property<'a>(properties: &'a [(String, JsValue)], name: &str) -> &'a JsValue {
  properties.iter().find(|(key, _)| key == name).map_or(&JsValue::Undefined, |(_, v)| v)
}

fn number_at(properties: &[(String, JsValue)], name: &str) -> Option<f64> {
  match property(properties, name) {
    JsValue::Number(n) => Some(*n),
    _ => None,
  }
}

/// `config.persist`: its keys and types checked, the path well-formed.
fn persist(properties: &[(String, JsValue)]) -> Result<Value> {
  check_keys("persist", properties, &[("path", "string", true), ("intervalMs", "number", false)], PERSIST_KEYS)?;
  let JsValue::String(path) = property(properties, "path") else { unreachable!("checked: a string") };
  well_formed("persist.path", path)?;
  Ok(Value::Persist { path: String::from_utf16_lossy(path), interval_ms: number_at(properties, "intervalMs") })
}

/// `config.alerts`: each rule an object of the rule keys, of their types.
fn alerts(rules: &[JsValue]) -> Result<Vec<RuleInput>> {
  const KNOWN: [(&str, &str, bool); 6] = [
    ("name", "string", true),
    ("severity", "string", true),
    ("longWindowMs", "number", true),
    ("shortWindowMs", "number", true),
    ("burnRate", "number", true),
    ("minEvents", "number", false),
  ];
  let mut inputs = Vec::with_capacity(rules.len());
  for (i, rule) in rules.iter().enumerate() {
    let at = format!("alerts[{i}]");
    let JsValue::Object(properties) = rule else {
      return Err(BudgetError::invalid_type(format!("must be an object with {RULE_KEYS}")).at(&at));
    };
    check_keys(&at, properties, &KNOWN, RULE_KEYS)?;
    let text = |name| property(properties, name).text().unwrap_or_default();
    let number = |name| number_at(properties, name).unwrap_or(f64::NAN);
    inputs.push(RuleInput {
      name: text("name"),
      severity: text("severity"),
      long_window_ms: number("longWindowMs"),
      short_window_ms: number("shortWindowMs"),
      burn_rate: number("burnRate"),
      min_events: number_at(properties, "minEvents"),
    });
  }
  Ok(inputs)
}

/// Rule `i` of `config.alerts`, its numbers converted (the core checks the
/// policy's ranges: `CheckedConfig`).
fn alert_rule(i: usize, input: RuleInput) -> Result<AlertRule> {
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
fn checked(range: Range, field: &str, value: f64) -> Result<f64> {
  let value = range.convert(field, value)?;
  range.check_number(field, value, |_| f64::NAN)?;
  Ok(value)
}

fn build(mut given: Given) -> Result<Plan> {
  let rules = given.0.iter().position(|(f, _)| f.kind == Kind::Alerts).map(|i| given.0.remove(i).1);
  let settings = Settings::from_numbers(
    |name| given.number(name),
    || match rules {
      Some(Value::Alerts(rules)) => {
        rules.into_iter().enumerate().map(|(i, r)| alert_rule(i, r)).collect::<Result<_>>().map(Some)
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
      let range = crate::config::field("now").map_or(Range::Any, |f| f.range);
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
    Some(Value::Persist { path, interval_ms }) => {
      if path.is_empty() {
        return Err(BudgetError::invalid_value("must be a non-empty string").at("persist.path"));
      }
      let interval_ms = checked(POSITIVE_MS, "persist.intervalMs", interval_ms.unwrap_or(PERSIST_INTERVAL_MS))?;
      Some(Persist { path: path.into(), interval_ms: interval_ms as u64 })
    }
    _ => None,
  };
  let config: Config = snapshot.as_ref().map_or(settings.config, |s| s.config.clone());
  let shared = given.text("shared").map(str::to_string);
  let given = given.names().into_iter().filter(|k| *k != "shared").map(str::to_string).collect();
  Ok(Plan { config, hysteresis: settings.hysteresis, clock, snapshot, manual_start_ms, persist, shared, given })
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::ErrorKind;

  fn text(s: &str) -> JsValue {
    JsValue::String(s.encode_utf16().collect())
  }

  fn entries(pairs: &[(&str, JsValue)]) -> Vec<(String, JsValue)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
  }

  /// The message as `new ErrorBudgetTracker(config)` throws it, and its code.
  fn refusal(pairs: &[(&str, JsValue)]) -> (String, &'static str) {
    let err = plan(&entries(pairs)).err().expect("refused");
    (err.render("config"), err.code)
  }

  fn rule(pairs: &[(&str, JsValue)]) -> JsValue {
    JsValue::Object(entries(pairs))
  }

  fn page_rule() -> Vec<(&'static str, JsValue)> {
    vec![
      ("name", text("fast")),
      ("severity", text("page")),
      ("longWindowMs", JsValue::Number(3_600_000.0)),
      ("shortWindowMs", JsValue::Number(300_000.0)),
      ("burnRate", JsValue::Number(14.4)),
    ]
  }

  #[test]
  fn no_config_is_every_default() {
    let plan = plan(&[]).unwrap();
    assert_eq!(plan.config, Settings::default().config);
    assert_eq!((plan.hysteresis, plan.clock, plan.manual_start_ms), (0.0, ClockKind::Monotonic, 0));
    assert!(plan.snapshot.is_none() && plan.persist.is_none() && plan.shared.is_none() && plan.given.is_empty());
  }

  #[test]
  fn keys_set_to_undefined_are_not_given() {
    let plan = plan(&entries(&[("targetRate", JsValue::Undefined), ("windowMs", JsValue::Number(60_000.0))])).unwrap();
    assert_eq!(plan.given, ["windowMs"]);
    assert_eq!(plan.config.window_ms, 60_000);
  }

  #[test]
  fn an_unknown_key_lists_the_known_ones() {
    let (message, code) = refusal(&[("__proto__", JsValue::Object(vec![]))]);
    assert_eq!(code, "ERR_INVALID_ARG_VALUE");
    assert!(message.starts_with("unknown config key '__proto__'; known keys: targetRate, windowMs, "), "{message}");
    assert!(message.ends_with(", fleet"), "{message}");
    // `fleet` is known, but the JavaScript takes it off first: here it is unknown.
    assert!(refusal(&[("fleet", JsValue::Object(vec![]))]).0.starts_with("unknown config key 'fleet'"));
    assert!(refusal(&[("a\0b", JsValue::Undefined)]).0.starts_with("unknown config key 'a\0b'"));
  }

  #[test]
  fn a_wrong_type_names_the_field_and_the_kind_given() {
    let cases: [(&str, JsValue, &str); 6] = [
      ("targetRate", JsValue::Array(vec![]), "config.targetRate must be a number, got array"),
      ("shared", JsValue::Number(1.0), "config.shared must be a string, got number"),
      ("persist", JsValue::Array(vec![]), "config.persist must be an object, got array"),
      ("alerts", JsValue::Object(vec![]), "config.alerts must be an array, got object"),
      ("clock", JsValue::Boolean(true), "config.clock must be 'monotonic' or 'manual', got boolean"),
      ("windowMs", text(" 1h "), "config.windowMs must be a number of milliseconds, got string '1h' (write 3_600_000)"),
    ];
    for (key, value, expected) in cases {
      let (message, code) = refusal(&[(key, value)]);
      assert_eq!((message.as_str(), code), (expected, "ERR_INVALID_ARG_TYPE"));
    }
  }

  #[test]
  fn persist_keys_types_and_path_are_checked() {
    let persist = |pairs: &[(&str, JsValue)]| refusal(&[("persist", rule(pairs))]).0;
    assert_eq!(
      persist(&[("path", text("a")), ("mode", JsValue::Null)]),
      "config.persist has an unknown key 'mode'; known keys: path, intervalMs"
    );
    assert_eq!(persist(&[("path", JsValue::Array(vec![]))]), "config.persist.path must be a string, got object");
    assert_eq!(persist(&[("path", JsValue::Undefined)]), "config.persist.path must be a string, got undefined");
    assert_eq!(persist(&[("intervalMs", JsValue::Undefined)]), "config.persist.path is required");
    assert_eq!(persist(&[("path", text(""))]), "config.persist.path must be a non-empty string");
    assert_eq!(
      persist(&[("path", JsValue::String(vec![0x61, 0]))]),
      "config.persist.path must not contain a NUL byte (a file path cannot), found at index 1"
    );
    assert_eq!(
      persist(&[("path", text("a")), ("intervalMs", JsValue::Number(0.0))]),
      "config.persist.intervalMs must be a positive integer of milliseconds, got 0"
    );
    let plan =
      plan(&entries(&[("persist", rule(&[("path", text("b.json")), ("intervalMs", JsValue::Undefined)]))])).unwrap();
    let persist = plan.persist.unwrap();
    assert_eq!((persist.path, persist.interval_ms), (PathBuf::from("b.json"), 60_000));
  }

  #[test]
  fn alert_rules_are_checked_key_by_key_then_converted() {
    let alerts = |rules: Vec<JsValue>| refusal(&[("alerts", JsValue::Array(rules))]).0;
    assert_eq!(
      alerts(vec![JsValue::Array(vec![])]),
      "config.alerts[0] must be an object with name, severity, longWindowMs, shortWindowMs, burnRate, minEvents"
    );
    let mut extra = page_rule();
    extra.push(("window", JsValue::Null));
    assert_eq!(
      alerts(vec![rule(&page_rule()), rule(&extra)]),
      "config.alerts[1] has an unknown key 'window'; known keys: name, severity, longWindowMs, shortWindowMs, burnRate, minEvents"
    );
    assert_eq!(alerts(vec![rule(&page_rule()[1..])]), "config.alerts[0].name is required");
    let mut wrong = page_rule();
    wrong[3].1 = text("5m");
    assert_eq!(alerts(vec![rule(&wrong)]), "config.alerts[0].shortWindowMs must be a number, got string");
    let mut wrong = page_rule();
    wrong[1].1 = text("pager");
    assert_eq!(alerts(vec![rule(&wrong)]), "config.alerts[0].severity must be 'page' or 'ticket', got 'pager'");
    let mut wrong = page_rule();
    wrong.push(("minEvents", JsValue::Number(-1.0)));
    assert_eq!(alerts(vec![rule(&wrong)]), "config.alerts[0].minEvents must be a non-negative integer, got -1");
    let mut fine = page_rule();
    fine.push(("minEvents", JsValue::Undefined));
    let plan = plan(&entries(&[("alerts", JsValue::Array(vec![rule(&fine)]))])).unwrap();
    let rules = plan.config.alerts.unwrap();
    assert_eq!(rules.len(), 1);
    assert_eq!((rules[0].name.as_str(), rules[0].severity, rules[0].min_events), ("fast", Severity::Page, 10));
    assert_eq!((rules[0].long_window_ms, rules[0].short_window_ms, rules[0].burn_rate), (3_600_000, 300_000, 14.4));
  }

  #[test]
  fn a_shared_name_must_be_well_formed_and_is_not_a_given_key() {
    let (message, code) = refusal(&[("shared", JsValue::String(vec![0x78, 0xd83d]))]);
    assert_eq!(code, "ERR_INVALID_ARG_VALUE");
    assert_eq!(
      message,
      "config.shared must be well-formed Unicode: it has a lone surrogate (\\ud83d) at index 1, which would make it \
       the same as another string"
    );
    let plan = plan(&entries(&[("shared", text("w")), ("windowMs", JsValue::Number(60_000.0))])).unwrap();
    assert_eq!((plan.shared.as_deref(), plan.given), (Some("w"), vec!["windowMs".to_string()]));
  }

  #[test]
  fn combinations_and_ranges_come_after_the_types() {
    // `now` without `snapshot` is a combination error, even with a number out of range beside it.
    let (message, _) = refusal(&[("targetRate", JsValue::Number(2.0)), ("now", JsValue::Number(1.0))]);
    assert_eq!(message, "config.now is only for restoring: give it with snapshot");
    let err = plan(&entries(&[("targetRate", JsValue::Number(99.0))])).err().unwrap();
    assert_eq!(err.kind, ErrorKind::Range);
    assert_eq!(
      err.render("config"),
      "config.targetRate must be in (0, 1], got 99: a fraction, not a percentage (such as 0.99 for 99 %)"
    );
  }

  #[test]
  fn a_manual_clock_restores_at_now_and_not_before_the_snapshot() {
    let snapshot = crate::Tracker::new(Config::default(), 5_000).unwrap().snapshot_json();
    let restore = |now: f64| {
      plan(&entries(&[("snapshot", text(&snapshot)), ("clock", text("manual")), ("now", JsValue::Number(now))]))
    };
    let plan = restore(7_000.0).unwrap();
    assert_eq!((plan.clock, plan.manual_start_ms, plan.given.len()), (ClockKind::Manual, 7_000, 3));
    let err = restore(4_999.0).err().unwrap();
    assert_eq!(
      err.render("config"),
      "config.now (4999) is earlier than the snapshot's savedAt (5000): restore at or after it"
    );
  }

  #[test]
  fn reading_depth_follows_the_kind() {
    assert_eq!((depth("alerts"), depth("persist"), depth("targetRate"), depth("nope")), (2, 1, 0, 0));
  }
}
