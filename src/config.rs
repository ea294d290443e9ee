//! Reads and checks the JS config object before anything is created.

use budget_core::alerts::DEFAULT_ALERT_MIN_EVENTS;
use budget_core::config::{default_resolution_ms, MAX_SAFE_INTEGER};
use budget_core::{AlertRule, BudgetError, Config, Severity, Snapshot};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::args::{describe, js_number, type_name};

/// Configuration of an `ErrorBudgetTracker`. Every field is optional; `0` is a
/// value like any other, never "use the default". Unknown keys are a `TypeError`.
#[napi(object, object_to_js = false)]
#[derive(Default)]
pub struct TrackerConfig {
  /// Fraction of solves that must succeed, in (0, 1]. Default 0.95.
  pub target_rate: Option<f64>,
  /// Rolling window length in ms, a positive integer. Default 3 600 000 (1 h, the
  /// article's); most pipelines want 24 h (docs/choosing-an-slo.md).
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
  /// 1 000 000 buckets per window. Default `max(1, floor(windowMs / 43200))`,
  /// so the shortest default alert window (`windowMs / 8640`) spans 5 buckets.
  pub resolution_ms: Option<f64>,
  /// The multiwindow burn-rate alert policy; omitted, the default one derived
  /// from `windowMs` (see docs/alert-policy.md); `[]` for none.
  pub alerts: Option<Vec<AlertRuleConfig>>,
  /// Status hysteresis, in [0, 1): a status gets worse as soon as the remaining
  /// fraction crosses its threshold, better only once it is this far past it
  /// (e.g. 0.05: back to `healthy` at `warningThreshold + 0.05`). Default 0, the
  /// reference's exact semantics. Not kept in snapshots.
  pub hysteresis: Option<f64>,
  /// `'monotonic'` (default): real time from a monotonic clock, reported in epoch
  /// ms. `'manual'`: time moves only through `record(…, atMs)` and `advanceTo()`.
  #[napi(ts_type = "'monotonic' | 'manual'")]
  pub clock: Option<String>,
  /// Restore from this `snapshot()` JSON instead of starting empty (what
  /// `ErrorBudgetTracker.restore()` does): the config comes from the snapshot,
  /// so only `clock`, `now` and `persist` may be given with it.
  pub snapshot: Option<String>,
  /// With `snapshot` and the manual clock: the time to restore at (epoch ms,
  /// not earlier than the snapshot's `savedAt`, which is the default).
  pub now: Option<f64>,
  /// Autosave: write a snapshot to `path` atomically every `intervalMs` and on
  /// `close()`, and restore from it on start when it exists.
  pub persist: Option<PersistConfig>,
  /// The name of a process-wide tracker shared by every thread (what
  /// `ErrorBudgetTracker.shared(name, config?)` passes): well-formed Unicode
  /// (a lone surrogate is a `TypeError`, `ERR_INVALID_ARG_VALUE`).
  pub shared: Option<String>,
}

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

/// What a config key's value must be, as `parse` checks it before conversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
  /// A number (its range is checked when the config is built).
  Number,
  /// A string.
  String,
  /// `config.shared`: a string, well-formed Unicode.
  Name,
  /// `config.clock`: `'monotonic'` or `'manual'`.
  Clock,
  /// `config.alerts`: an array of rules (`check_alerts`).
  Alerts,
  /// `config.persist`: an object (`check_persist`).
  Persist,
  /// Taken off by the JavaScript before the native constructor (`config.fleet`,
  /// lib/fleet/): a known key, but unknown here.
  JavaScript,
}

/// One key of the config: its name, what it must be, and whether `restore()`
/// may give it beside `snapshot`.
struct Field {
  name: &'static str,
  kind: Kind,
  restore: bool,
}

const fn field(name: &'static str, kind: Kind) -> Field {
  Field { name, kind, restore: false }
}

/// Every config key, in the order messages list them: the one table the key
/// and type checks, the known-keys message and the restore rule read.
const FIELDS: [Field; 14] = [
  field("targetRate", Kind::Number),
  field("windowMs", Kind::Number),
  field("warningThreshold", Kind::Number),
  field("criticalThreshold", Kind::Number),
  field("minEvents", Kind::Number),
  field("resolutionMs", Kind::Number),
  field("hysteresis", Kind::Number),
  Field { name: "clock", kind: Kind::Clock, restore: true },
  field("alerts", Kind::Alerts),
  field("snapshot", Kind::String),
  Field { name: "now", kind: Kind::Number, restore: true },
  Field { name: "persist", kind: Kind::Persist, restore: true },
  field("shared", Kind::Name),
  field("fleet", Kind::JavaScript),
];

/// "targetRate, windowMs, …": the known keys, for messages.
fn known_keys() -> String {
  FIELDS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
}

/// The keys `restore()` may give beside `snapshot`.
fn restore_keys() -> Vec<&'static str> {
  FIELDS.iter().filter(|f| f.restore).map(|f| f.name).collect()
}

/// The TypeError for a value of the wrong type: "must be a number, got string".
fn wrong_type(key: &str, expected: ValueType, value: &Unknown) -> BudgetError {
  let article = if expected == ValueType::Object { "an" } else { "a" };
  BudgetError::invalid_type(format!("must be {article} {}, got {}", type_name(expected), describe(value))).at(key)
}
const RULE_KEYS: &str = "name, severity, longWindowMs, shortWindowMs, burnRate, minEvents";
const PERSIST_KEYS: &str = "path, intervalMs";

/// Checks keys and types of `raw`, then builds and validates the core config.
pub fn parse(raw: Option<Object>) -> std::result::Result<Plan, BudgetError> {
  let Some(raw) = raw else {
    return build(TrackerConfig::default());
  };
  // Every property is read once, here: a getter cannot pass the checks below
  // with one value and be converted with another.
  let raw = read_once(&raw).map_err(|e| BudgetError::invalid_type(e.reason))?;
  // Keys set to `undefined` are not given: they take their defaults.
  let mut keys = Vec::new();
  for key in Object::keys(&raw).map_err(|e| BudgetError::invalid_type(e.reason))? {
    let unknown = || BudgetError::invalid_value(format!("unknown config key '{key}'; known keys: {}", known_keys()));
    if key.contains('\0') {
      return Err(unknown());
    }
    let value: Unknown = raw.get_named_property(&key).map_err(|e| BudgetError::invalid_type(e.reason))?;
    let ty = value.get_type().map_err(|e| BudgetError::invalid_type(e.reason))?;
    if ty == ValueType::Undefined {
      continue;
    }
    keys.push(key.clone());
    // An array is an object to `typeof`, but never what a config field wants.
    let is_array = value.is_array().map_err(|e| BudgetError::invalid_type(e.reason))?;
    let Some(field) = FIELDS.iter().find(|f| f.name == key) else {
      return Err(unknown());
    };
    match field.kind {
      Kind::Number if ty != ValueType::Number => return Err(wrong_type(&key, ValueType::Number, &value)),
      Kind::String if ty != ValueType::String => return Err(wrong_type(&key, ValueType::String, &value)),
      Kind::Name if ty != ValueType::String => return Err(wrong_type(&key, ValueType::String, &value)),
      Kind::Name => well_formed(field.name, value)?,
      Kind::Persist if ty != ValueType::Object || is_array => return Err(wrong_type(&key, ValueType::Object, &value)),
      Kind::Persist => check_persist(value)?,
      Kind::Alerts => check_alerts(value)?,
      Kind::Clock if ty != ValueType::String => {
        return Err(
          BudgetError::invalid_type(format!("must be 'monotonic' or 'manual', got {}", describe(&value))).at("clock"),
        )
      }
      Kind::JavaScript => return Err(unknown()),
      Kind::Number | Kind::String | Kind::Clock => {}
    }
  }
  let input =
    unsafe { TrackerConfig::from_napi_value(raw.env(), raw.raw()) }.map_err(|e| BudgetError::invalid_type(e.reason))?;
  if input.snapshot.is_some() {
    let restore = restore_keys();
    if let Some(key) = keys.iter().find(|k| !restore.contains(&k.as_str()) && k.as_str() != "snapshot") {
      return Err(
        BudgetError::invalid_value(format!(
          "cannot be given with snapshot: the config comes from the snapshot (only {} may)",
          restore.join(", ")
        ))
        .at(key),
      );
    }
  } else if input.now.is_some() {
    return Err(BudgetError::invalid_value("is only for restoring: give it with snapshot").at("now"));
  }
  if let Some(name) = &input.shared {
    if name.is_empty() {
      return Err(BudgetError::invalid_value("must be a non-empty string").at("shared"));
    }
    if let Some(key) = ["persist", "snapshot"].into_iter().find(|k| keys.iter().any(|given| given == k)) {
      return Err(
        BudgetError::invalid_value(
          "cannot be given to a shared tracker: save or restore it from one thread with a tracker of its own",
        )
        .at(key),
      );
    }
  }
  let given = keys.into_iter().filter(|k| k != "shared").collect();
  build(input).map(|plan| Plan { given, ..plan })
}

/// Checks the keys and types of `config.persist`.
fn check_persist(value: Unknown) -> std::result::Result<(), BudgetError> {
  let err = |e: napi::Error| BudgetError::invalid_type(e.reason);
  let persist: Object = unsafe { value.cast() }.map_err(err)?;
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
    let inner: Object = unsafe { value.cast() }?;
    let copied = if value.is_array()? {
      let len = inner.get_array_length()?;
      let mut array = env.create_array(len)?;
      for i in 0..len {
        let rule: Unknown = inner.get_element(i)?;
        if rule.get_type()? == ValueType::Object && !rule.is_array()? {
          array.set(i, copy_own(&env, &unsafe { rule.cast::<Object>() }?)?)?;
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
/// `Object::keys` lists, as `for…in` finds them), each read once. Keys go as
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
      check_status!(sys::napi_set_property(raw_env, to, key, value))?;
    }
  }
  Ok(copy)
}

/// Checks that a string option can be passed on exactly: no NUL byte (a path
/// cannot hold one) and no lone surrogate (UTF-8 has no form for it, so two
/// distinct strings would become one name or one file).
fn well_formed(field: &str, value: Unknown) -> std::result::Result<(), BudgetError> {
  let env = value.env();
  let mut len = 0usize;
  // SAFETY: a string value (checked by the caller) of the current scope.
  let status = unsafe { sys::napi_get_value_string_utf16(env, value.raw(), std::ptr::null_mut(), 0, &mut len) };
  if status != sys::Status::napi_ok {
    return Ok(()); // not a string: the type checks name it
  }
  let mut units = vec![0u16; len + 1];
  let mut written = 0usize;
  // SAFETY: `units` holds `len` code units and the terminator.
  unsafe { sys::napi_get_value_string_utf16(env, value.raw(), units.as_mut_ptr(), units.len(), &mut written) };
  units.truncate(written);
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
  let array: Object = unsafe { value.cast() }.map_err(err)?;
  let len = array.get_array_length().map_err(err)?;
  for i in 0..len {
    let rule: Unknown = array.get_element(i).map_err(err)?;
    let at = format!("alerts[{i}]");
    if rule.get_type().map_err(err)? != ValueType::Object || rule.is_array().map_err(err)? {
      return Err(BudgetError::invalid_type(format!("must be an object with {RULE_KEYS}")).at(&at));
    }
    let rule: Object = unsafe { rule.cast() }.map_err(err)?;
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

/// Rule `i` of `config.alerts`, its numbers checked.
fn alert_rule(i: usize, input: AlertRuleConfig) -> std::result::Result<AlertRule, BudgetError> {
  let at = |field: &str| format!("alerts[{i}].{field}");
  let severity = Severity::parse(&input.severity).ok_or_else(|| {
    BudgetError::invalid_value(format!("must be 'page' or 'ticket', got '{}'", input.severity)).at(&at("severity"))
  })?;
  Ok(AlertRule {
    long_window_ms: integer(&at("longWindowMs"), Some(input.long_window_ms), 0, MS)?,
    short_window_ms: integer(&at("shortWindowMs"), Some(input.short_window_ms), 0, MS)?,
    burn_rate: finite(&at("burnRate"), Some(input.burn_rate), 0.0)?,
    min_events: non_negative(&at("minEvents"), input.min_events, DEFAULT_ALERT_MIN_EVENTS)?,
    severity,
    name: input.name,
  })
}

fn build(input: TrackerConfig) -> std::result::Result<Plan, BudgetError> {
  let defaults = Config::default();
  let window_ms = integer("windowMs", input.window_ms, defaults.window_ms, MS)?;
  let config = Config {
    target_rate: finite("targetRate", input.target_rate, defaults.target_rate)?,
    window_ms,
    warning_threshold: finite("warningThreshold", input.warning_threshold, defaults.warning_threshold)?,
    critical_threshold: finite("criticalThreshold", input.critical_threshold, defaults.critical_threshold)?,
    min_events: non_negative("minEvents", input.min_events, 0)?,
    resolution_ms: integer("resolutionMs", input.resolution_ms, default_resolution_ms(window_ms), MS)?,
    alerts: input
      .alerts
      .map(|rules| rules.into_iter().enumerate().map(|(i, r)| alert_rule(i, r)).collect())
      .transpose()?,
  };
  config.validate()?;
  let clock = match input.clock.as_deref() {
    None | Some("monotonic") => ClockKind::Monotonic,
    Some("manual") => ClockKind::Manual,
    Some(other) => {
      return Err(BudgetError::invalid_value(format!("must be 'monotonic' or 'manual', got '{other}'")).at("clock"))
    }
  };
  let snapshot = input.snapshot.as_deref().map(Snapshot::parse).transpose()?;
  if input.now.is_some() && clock != ClockKind::Manual {
    return Err(
      BudgetError::invalid_value("needs clock: 'manual' (a real clock restores at the current time)").at("now"),
    );
  }
  let manual_start_ms = match (&snapshot, input.now) {
    (Some(s), Some(now)) => {
      let now = integer("now", Some(now), 0, "an integer of epoch ms")?;
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
  let persist = input
    .persist
    .map(|p| -> std::result::Result<Persist, BudgetError> {
      if p.path.is_empty() {
        return Err(BudgetError::invalid_value("must be a non-empty string").at("persist.path"));
      }
      let interval_ms = integer("persist.intervalMs", p.interval_ms, 60_000, MS)?;
      if interval_ms < 1 {
        return Err(BudgetError::out_of_range(format!("must be {MS}, got {interval_ms}")).at("persist.intervalMs"));
      }
      Ok(Persist { path: p.path.into(), interval_ms: interval_ms as u64 })
    })
    .transpose()?;
  let config = snapshot.as_ref().map_or(config, |s| s.config.clone());
  let hysteresis = finite("hysteresis", input.hysteresis, 0.0)?;
  if !(0.0..1.0).contains(&hysteresis) {
    return Err(BudgetError::out_of_range(format!("must be in [0, 1), got {}", js_number(hysteresis))).at("hysteresis"));
  }
  Ok(Plan { config, hysteresis, clock, snapshot, manual_start_ms, persist, shared: input.shared, given: Vec::new() })
}

/// What a duration field must be, for messages.
const MS: &str = "a positive integer of milliseconds";

fn finite(field: &str, value: Option<f64>, default: f64) -> std::result::Result<f64, BudgetError> {
  match value {
    None => Ok(default),
    Some(v) if v.is_finite() => Ok(v),
    Some(v) => Err(BudgetError::out_of_range(format!("must be a finite number, got {}", js_number(v))).at(field)),
  }
}

/// An integer within JS's exact range; `must_be` says what the field must be.
fn integer(field: &str, value: Option<f64>, default: i64, must_be: &str) -> std::result::Result<i64, BudgetError> {
  match value {
    None => Ok(default),
    Some(v) if v.is_finite() && v.fract() == 0.0 && v.abs() <= MAX_SAFE_INTEGER as f64 => Ok(v as i64),
    Some(v) => Err(BudgetError::out_of_range(format!("must be {must_be}, got {}", js_number(v))).at(field)),
  }
}

fn non_negative(field: &str, value: Option<f64>, default: u64) -> std::result::Result<u64, BudgetError> {
  const MUST_BE: &str = "a non-negative integer";
  let n = integer(field, value, default as i64, MUST_BE)?;
  u64::try_from(n).map_err(|_| BudgetError::out_of_range(format!("must be {MUST_BE}, got {n}")).at(field))
}
