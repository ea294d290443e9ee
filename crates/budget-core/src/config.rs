//! The tracker's configuration: the one table of its fields ([`FIELDS`]:
//! name, kind, range, default, doc, and which other fields each goes with),
//! the config a tracker keeps ([`Config`], the one in snapshots), what a
//! tracker is built from ([`Settings`]: the config and the status hysteresis,
//! which snapshots do not keep), and the rules on which fields may be given
//! together ([`check_combination`]).
//!
//! The config reader ([`crate::plan`]): its type checks, messages and defaults read the table;
//! so do `configFields()` and the spec that holds `TrackerConfig` in the
//! `.d.ts` and README's config table to it (`__test__/tracker/config-table.spec.js`).

use crate::error::{BudgetError, Result};
use crate::field::{DefaultValue, Kind, Range, Unit, NON_NEGATIVE, POSITIVE_MS};
use crate::rule::AlertRule;

pub use crate::field::MAX_SAFE_INTEGER;

/// The `verdictWindowMs` default: 15 minutes, about as long as solver
/// providers accept a report of a bad answer (2Captcha's limit).
pub const DEFAULT_VERDICT_WINDOW_MS: i64 = 900_000;

/// The largest number of buckets a window may have (16 bytes each: 16 MiB).
pub const MAX_BUCKETS: i64 = 1_000_000;

/// One field of the JS config: a row of [`FIELDS`].
#[derive(Debug, Clone, Copy)]
pub struct Field {
  /// The key, as JavaScript spells it.
  pub name: &'static str,
  /// What its value must be in JavaScript.
  pub kind: Kind,
  /// The values it allows.
  pub range: Range,
  /// What it is when not given.
  pub default: DefaultValue,
  /// One line on what it does.
  pub doc: &'static str,
  /// Whether it may be given beside `snapshot` (the config then comes from
  /// the snapshot): what `restore()` accepts.
  pub with_snapshot: bool,
  /// Whether it may be given with `shared` (a shared tracker is saved and
  /// restored by a tracker of its own).
  pub with_shared: bool,
  /// Where a number field's value goes.
  pub slot: Slot,
}

/// Where the value of a field goes once checked.
#[derive(Debug, Clone, Copy)]
pub enum Slot {
  /// A number of [`Config`] (kept in snapshots).
  Config { get: fn(&Config) -> f64, set: fn(&mut Config, f64) },
  /// A number of [`Settings`] beside the config (not kept in snapshots).
  Settings { get: fn(&Settings) -> f64, set: fn(&mut Settings, f64) },
  /// A field of a special type [`crate::plan`] reads itself (`clock`, `alerts`,
  /// `snapshot`, `now`, `persist`, `shared`), or one the JavaScript takes
  /// off before the native constructor (`fleet`).
  Binding,
}

/// A row with the common flags: not with `snapshot`, fine with `shared`, read by [`crate::plan`].
const fn row(name: &'static str, kind: Kind, range: Range, default: DefaultValue, doc: &'static str) -> Field {
  Field { name, kind, range, default, doc, with_snapshot: false, with_shared: true, slot: Slot::Binding }
}

/// A number of [`Config`].
const fn number(name: &'static str, range: Range, default: DefaultValue, doc: &'static str, slot: Slot) -> Field {
  Field { slot, ..row(name, Kind::Number, range, default, doc) }
}

/// A fraction in [0, 1], at most `at_most` when given.
const fn unit_interval(at_most: Option<&'static str>) -> Range {
  Range::Real { min: 0.0, min_open: false, max: 1.0, max_open: false, at_most }
}

/// Every config key, in the order messages list them: the one table the key,
/// type and range checks, the defaults, the known-keys message, the
/// combination rules, `configFields()` and the docs' checks read.
pub const FIELDS: [Field; 15] = [
  number(
    "targetRate",
    Range::Real { min: 0.0, min_open: true, max: 1.0, max_open: false, at_most: None },
    DefaultValue::Number(0.95),
    "Fraction of solves that must succeed.",
    Slot::Config { get: |c| c.target_rate, set: |c, v| c.target_rate = v },
  ),
  number(
    "windowMs",
    POSITIVE_MS,
    DefaultValue::Number(3_600_000.0),
    "Rolling window length (1 h, the article's; most pipelines want 24 h: docs/choosing-an-slo.md).",
    Slot::Config { get: |c| c.window_ms as f64, set: |c, v| c.window_ms = v as i64 },
  ),
  number(
    "warningThreshold",
    unit_interval(None),
    DefaultValue::Number(0.5),
    "Remaining-budget fraction below which the status is `warning`.",
    Slot::Config { get: |c| c.warning_threshold, set: |c, v| c.warning_threshold = v },
  ),
  number(
    "criticalThreshold",
    unit_interval(Some("warningThreshold")),
    DefaultValue::Number(0.1),
    "Remaining-budget fraction below which the status is `critical`.",
    Slot::Config { get: |c| c.critical_threshold, set: |c, v| c.critical_threshold = v },
  ),
  number(
    "minEvents",
    NON_NEGATIVE,
    DefaultValue::Number(0.0),
    "Below this many events in the window the status is `healthy` and the burn rate 0 (~100 for low volume).",
    Slot::Config { get: |c| c.min_events as f64, set: |c, v| c.min_events = v as u64 },
  ),
  number(
    "resolutionMs",
    Range::Integer { min: Some(1), unit: Unit::Ms, at_most: Some("windowMs") },
    DefaultValue::Derived {
      text: "max(1, floor(windowMs / 43200))",
      from: "windowMs",
      compute: |w| default_resolution_ms(w as i64) as f64,
    },
    "Bucket width of the window, at most 1 000 000 buckets per window.",
    Slot::Config { get: |c| c.resolution_ms as f64, set: |c, v| c.resolution_ms = v as i64 },
  ),
  number(
    "hysteresis",
    Range::Real { min: 0.0, min_open: false, max: 1.0, max_open: true, at_most: None },
    DefaultValue::Number(0.0),
    "Status hysteresis: a status gets worse at once, better only this far past its threshold. Not kept in snapshots.",
    Slot::Settings { get: |s| s.hysteresis, set: |s, v| s.hysteresis = v },
  ),
  number(
    "verdictWindowMs",
    Range::Integer { min: Some(0), unit: Unit::Ms, at_most: None },
    DefaultValue::Number(DEFAULT_VERDICT_WINDOW_MS as f64),
    "How long after a solve `reject()` may still turn it into a failure (15 min: what providers accept reports for).",
    Slot::Config { get: |c| c.verdict_window_ms as f64, set: |c, v| c.verdict_window_ms = v as i64 },
  ),
  Field {
    with_snapshot: true,
    ..row(
      "clock",
      Kind::Choice,
      Range::OneOf(&["monotonic", "manual"]),
      DefaultValue::Text("monotonic"),
      "Real time from a monotonic clock, or time that moves only through `record(…, atMs)` and `advanceTo()`.",
    )
  },
  row(
    "alerts",
    Kind::Alerts,
    Range::Any,
    DefaultValue::Described("the default policy"),
    "The multiwindow burn-rate alert pairs (docs/alert-policy.md); `[]` for none.",
  ),
  Field {
    with_shared: false,
    ..row(
      "snapshot",
      Kind::String,
      Range::Any,
      DefaultValue::None,
      "`snapshot()` JSON to restore from (what `restore()` passes).",
    )
  },
  Field {
    with_snapshot: true,
    ..row(
      "now",
      Kind::Number,
      Range::Integer { min: None, unit: Unit::EpochMs, at_most: None },
      DefaultValue::Described("the snapshot's savedAt"),
      "With `snapshot` and the manual clock: the time to restore at, not before the snapshot's `savedAt`.",
    )
  },
  Field {
    with_snapshot: true,
    with_shared: false,
    ..row(
      "persist",
      Kind::Persist,
      Range::Any,
      DefaultValue::None,
      "Autosave to a file, restored from on start (docs/persistence.md).",
    )
  },
  row(
    "shared",
    Kind::Name,
    Range::NonEmpty,
    DefaultValue::None,
    "The name of a process-wide tracker shared by every thread.",
  ),
  Field {
    with_shared: false,
    ..row(
      "fleet",
      Kind::JavaScript,
      Range::Any,
      DefaultValue::None,
      "One budget for every worker through Redis (docs/fleet.md).",
    )
  },
];

/// The row of the field called `name`.
pub fn field(name: &str) -> Option<&'static Field> {
  FIELDS.iter().find(|f| f.name == name)
}

/// "targetRate, windowMs, …": the known keys, for messages.
pub fn known_keys() -> String {
  FIELDS.iter().map(|f| f.name).collect::<Vec<_>>().join(", ")
}

/// The keys that may be given beside `snapshot` (what `restore()` accepts).
pub fn restore_keys() -> Vec<&'static str> {
  FIELDS.iter().filter(|f| f.with_snapshot).map(|f| f.name).collect()
}

/// The rules on which fields go together, given the keys given (in the
/// caller's order) and whether the clock asked for is the manual one:
///
/// - with `snapshot`, only the fields marked `with_snapshot` (`clock`, `now`,
///   `persist`): the config comes from the snapshot;
/// - `now` only with `snapshot`, and only with the manual clock;
/// - with `shared`, none of the fields marked not `with_shared` (`snapshot`,
///   `persist`).
///
/// The error is a `TypeError` (`ERR_INVALID_ARG_VALUE`) about the first key
/// that breaks a rule.
pub fn check_combination(given: &[&str], manual_clock: bool) -> Result<()> {
  let has = |name: &str| given.contains(&name);
  if has("snapshot") {
    let restore = restore_keys();
    if let Some(key) = given.iter().find(|k| **k != "snapshot" && !restore.contains(k)) {
      return Err(
        BudgetError::invalid_value(format!(
          "cannot be given with snapshot: the config comes from the snapshot (only {} may)",
          restore.join(", ")
        ))
        .at(key),
      );
    }
  } else if has("now") {
    return Err(BudgetError::invalid_value("is only for restoring: give it with snapshot").at("now"));
  }
  if has("shared") {
    if let Some(f) = FIELDS.iter().find(|f| !f.with_shared && has(f.name)) {
      return Err(
        BudgetError::invalid_value(
          "cannot be given to a shared tracker: save or restore it from one thread with a tracker of its own",
        )
        .at(f.name),
      );
    }
  }
  if has("now") && !manual_clock {
    return Err(
      BudgetError::invalid_value("needs clock: 'manual' (a real clock restores at the current time)").at("now"),
    );
  }
  Ok(())
}

/// Checks the strings given (`text` gives each field's, `None` when not
/// given) against their ranges, in table order: `clock` one of its choices,
/// `shared` not empty.
pub fn check_texts<'a>(text: impl Fn(&str) -> Option<&'a str>) -> Result<()> {
  for f in &FIELDS {
    if let Some(value) = text(f.name) {
      f.range.check_text(f.name, value)?;
    }
  }
  Ok(())
}

/// A validated tracker configuration: what a snapshot keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
  /// Fraction of events that must succeed, in (0, 1].
  pub target_rate: f64,
  /// Length of the rolling window in milliseconds.
  pub window_ms: i64,
  /// Remaining-budget fraction below which the status is `warning`.
  pub warning_threshold: f64,
  /// Remaining-budget fraction below which the status is `critical`.
  pub critical_threshold: f64,
  /// Below this many events in the window the tracker reports `healthy` and burn rate 0.
  pub min_events: u64,
  /// Width of one bucket of the window in milliseconds.
  pub resolution_ms: i64,
  /// The alert policy; `None` for the default one (see `alerts::default_policy`).
  pub alerts: Option<Vec<AlertRule>>,
  /// How long after its stamp a success may still be rejected (`Tracker::reject`), ms.
  pub verdict_window_ms: i64,
}

impl Default for Config {
  /// The table's defaults (0.95, 1 h, 0.5, 0.1, 0, 83 ms, the default policy).
  fn default() -> Self {
    Settings::default().config
  }
}

/// The default bucket width: a 43 200th of the window, at least 1 ms (83 ms for
/// an hour, 2 s for a day, 1 min for 30 days), so that the shortest default
/// alert window (the twelfth of window / 720, window / 8640) spans 5 buckets.
/// The table's `resolutionMs` default.
pub fn default_resolution_ms(window_ms: i64) -> i64 {
  (window_ms / 43_200).max(1)
}

impl Config {
  /// Number of buckets in the ring: enough to hold every bucket that can be
  /// inside the window at once.
  pub fn bucket_count(&self) -> usize {
    ((self.window_ms + self.resolution_ms - 1) / self.resolution_ms) as usize
  }

  /// Checks every field's range (the table's, in table order), then that the
  /// window holds at most [`MAX_BUCKETS`] buckets; the message names the field
  /// and the allowed range.
  pub fn validate(&self) -> Result<()> {
    check_ranges(|f| match f.slot {
      Slot::Config { get, .. } => Some(get(self)),
      _ => None,
    })
  }
}

/// The number of each [`Slot::Config`] / [`Slot::Settings`] field in table
/// order (`value` gives it, `None` for the fields not checked), each against
/// its range, then the bucket count.
fn check_ranges(value: impl Fn(&Field) -> Option<f64>) -> Result<()> {
  let by_name = |name: &str| field(name).and_then(&value).unwrap_or(f64::NAN);
  for f in &FIELDS {
    if let Some(v) = value(f) {
      f.range.check_number(f.name, v, by_name)?;
    }
  }
  let (window_ms, resolution_ms) = (by_name("windowMs") as i64, by_name("resolutionMs") as i64);
  let buckets = (window_ms + resolution_ms - 1) / resolution_ms;
  if buckets > MAX_BUCKETS {
    return Err(
      BudgetError::out_of_range(format!(
        "/ resolutionMs must be at most {MAX_BUCKETS} buckets, got {buckets}: raise resolutionMs"
      ))
      .at("windowMs"),
    );
  }
  Ok(())
}

/// What a tracker is built from: its [`Config`] (kept in snapshots) and its
/// status hysteresis (not kept: a restored tracker takes the one it is given).
/// The binding builds the core tracker from `config` (or the snapshot's) and
/// sets `hysteresis` on it (`Tracker::set_status_hysteresis`).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
  /// The config.
  pub config: Config,
  /// Status hysteresis, in [0, 1): 0 keeps the reference's exact semantics.
  pub hysteresis: f64,
}

impl Default for Settings {
  /// Every field at its table default.
  fn default() -> Self {
    Settings::from_numbers(|_| None, || Ok(None)).expect("the table's defaults are in range")
  }
}

impl Settings {
  /// Settings from the numbers given (`number` gives each field's, `None`
  /// when not given: the table's default) and the alert rules `alerts` gives
  /// (`None`: the default policy). In table order, each number given is
  /// converted (finite; an integer within JavaScript's exact range); then the
  /// rules are read; then every number is checked against its range, and the
  /// bucket count.
  pub fn from_numbers(
    number: impl Fn(&str) -> Option<f64>,
    alerts: impl FnOnce() -> Result<Option<Vec<AlertRule>>>,
  ) -> Result<Settings> {
    let mut values: Vec<(&'static str, f64)> = Vec::new();
    for f in FIELDS.iter().filter(|f| !matches!(f.slot, Slot::Binding)) {
      let value = match (number(f.name), f.default) {
        (Some(given), _) => f.range.convert(f.name, given)?,
        (None, DefaultValue::Number(n)) => n,
        (None, DefaultValue::Derived { from, compute, .. }) => {
          compute(values.iter().find(|(name, _)| *name == from).map_or(f64::NAN, |v| v.1))
        }
        (None, other) => unreachable!("a number field's default is a number, not {other:?}"),
      };
      values.push((f.name, value));
    }
    let alerts = alerts()?;
    check_ranges(|f| values.iter().find(|(name, _)| *name == f.name).map(|v| v.1))?;
    let config = Config {
      target_rate: 0.0,
      window_ms: 0,
      warning_threshold: 0.0,
      critical_threshold: 0.0,
      min_events: 0,
      resolution_ms: 0,
      alerts,
      verdict_window_ms: 0,
    };
    let mut settings = Settings { config, hysteresis: 0.0 };
    for (f, (_, value)) in FIELDS.iter().filter(|f| !matches!(f.slot, Slot::Binding)).zip(values) {
      match f.slot {
        Slot::Config { set, .. } => set(&mut settings.config, value),
        Slot::Settings { set, .. } => set(&mut settings, value),
        Slot::Binding => {}
      }
    }
    Ok(settings)
  }

  /// Checks the config and the hysteresis, each field against its range in
  /// table order.
  pub fn validate(&self) -> Result<()> {
    check_ranges(|f| match f.slot {
      Slot::Config { get, .. } => Some(get(&self.config)),
      Slot::Settings { get, .. } => Some(get(self)),
      Slot::Binding => None,
    })
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn with(f: impl FnOnce(&mut Config)) -> Result<()> {
    let mut c = Config::default();
    f(&mut c);
    c.validate()
  }

  #[test]
  fn defaults_are_the_reference_defaults() {
    let c = Config::default();
    assert_eq!((c.target_rate, c.window_ms, c.warning_threshold, c.critical_threshold), (0.95, 3_600_000, 0.5, 0.1));
    assert_eq!((c.min_events, c.resolution_ms, c.bucket_count()), (0, 83, 43_374));
    assert!(c.validate().is_ok());
  }

  #[test]
  fn rejects_each_out_of_range_field_by_name() {
    type Edit = Box<dyn FnOnce(&mut Config)>;
    let cases: [(&str, Edit); 8] = [
      ("targetRate", Box::new(|c| c.target_rate = 0.0)),
      ("targetRate", Box::new(|c| c.target_rate = 1.01)),
      ("targetRate", Box::new(|c| c.target_rate = f64::NAN)),
      ("warningThreshold", Box::new(|c| c.warning_threshold = 1.5)),
      ("criticalThreshold", Box::new(|c| c.critical_threshold = -0.1)),
      ("criticalThreshold (0.6) must not exceed", Box::new(|c| c.critical_threshold = 0.6)),
      ("windowMs", Box::new(|c| c.window_ms = 0)),
      (
        "resolutionMs (2000) must not exceed",
        Box::new(|c| {
          c.window_ms = 1000;
          c.resolution_ms = 2000
        }),
      ),
    ];
    for (needle, f) in cases {
      let err = with(f).unwrap_err();
      assert_eq!(err.code, "ERR_OUT_OF_RANGE");
      let message = err.render("config");
      assert!(message.contains(needle), "{message} should name {needle}");
    }
  }

  #[test]
  fn accepts_the_edges() {
    assert!(with(|c| c.target_rate = 1.0).is_ok());
    assert!(with(|c| {
      c.warning_threshold = 0.0;
      c.critical_threshold = 0.0
    })
    .is_ok());
    assert!(with(|c| c.resolution_ms = c.window_ms).is_ok());
  }

  #[test]
  fn bounds_the_bucket_count() {
    let err = with(|c| {
      c.window_ms = 86_400_000;
      c.resolution_ms = 1
    })
    .unwrap_err();
    assert!(err.message.contains("at most 1000000 buckets"));
  }

  /// The settings from these numbers (the others at their defaults, the default policy).
  fn settings(given: &[(&str, f64)]) -> Result<Settings> {
    Settings::from_numbers(|name| given.iter().find(|(n, _)| *n == name).map(|g| g.1), || Ok(None))
  }

  /// The message of the error these numbers give, as `config.…` (or "ok").
  fn message(given: &[(&str, f64)]) -> String {
    match settings(given) {
      Ok(_) => "ok".into(),
      Err(e) => format!("{} {}", e.code, e.render("config")),
    }
  }

  #[test]
  fn the_table_lists_every_key_once_in_message_order() {
    assert_eq!(
      known_keys(),
      "targetRate, windowMs, warningThreshold, criticalThreshold, minEvents, resolutionMs, hysteresis, \
       verdictWindowMs, clock, alerts, snapshot, now, persist, shared, fleet"
    );
    assert_eq!(restore_keys(), ["clock", "now", "persist"]);
    for (i, f) in FIELDS.iter().enumerate() {
      // A bound or a derived default names an earlier number field: it is set and checked first.
      let earlier = |name: &str| FIELDS[..i].iter().any(|e| e.name == name && !matches!(e.slot, Slot::Binding));
      if let Some(bound) = f.range.at_most() {
        assert!(earlier(bound), "{}: at most {bound}", f.name);
      }
      if let DefaultValue::Derived { from, .. } = f.default {
        assert!(earlier(from), "{}: derived from {from}", f.name);
      }
      // A number that goes into the settings has a number default.
      if !matches!(f.slot, Slot::Binding) {
        assert_eq!(f.kind, Kind::Number, "{}", f.name);
        assert!(matches!(f.default, DefaultValue::Number(_) | DefaultValue::Derived { .. }), "{}", f.name);
      }
      assert!(!f.doc.is_empty() && !f.doc.contains('\n'), "{}: one line", f.name);
    }
  }

  #[test]
  fn the_defaults_are_the_tables() {
    let s = Settings::default();
    assert_eq!(s.hysteresis, 0.0);
    assert_eq!(s.config, Config::default());
    assert_eq!(s.config.alerts, None);
    // resolutionMs: max(1, floor(windowMs / 43200)): 1 h → 83, 24 h → 2000, 30 d → 60 000, 1 s → 1.
    for (window_ms, resolution_ms) in [(3_600_000.0, 83), (86_400_000.0, 2000), (2_592_000_000.0, 60_000), (1000.0, 1)]
    {
      assert_eq!(settings(&[("windowMs", window_ms)]).unwrap().config.resolution_ms, resolution_ms);
    }
    // Each default as the docs print it.
    let texts: Vec<(&str, String)> = FIELDS.iter().map(|f| (f.name, f.default.text())).collect();
    let expected = [
      ("targetRate", "0.95"),
      ("windowMs", "3 600 000"),
      ("warningThreshold", "0.5"),
      ("criticalThreshold", "0.1"),
      ("minEvents", "0"),
      ("resolutionMs", "max(1, floor(windowMs / 43200))"),
      ("hysteresis", "0"),
      ("verdictWindowMs", "900 000"),
      ("clock", "'monotonic'"),
      ("alerts", "the default policy"),
      ("snapshot", "none"),
      ("now", "the snapshot's savedAt"),
      ("persist", "none"),
      ("shared", "none"),
      ("fleet", "none"),
    ];
    assert_eq!(texts, expected.map(|(n, t)| (n, t.to_string())));
  }

  #[test]
  fn numbers_given_are_set_where_they_belong() {
    let given = [
      ("targetRate", 0.99),
      ("windowMs", 86_400_000.0),
      ("warningThreshold", 0.4),
      ("criticalThreshold", 0.2),
      ("minEvents", 100.0),
      ("resolutionMs", 60_000.0),
      ("hysteresis", 0.05),
    ];
    let s = settings(&given).unwrap();
    let c = &s.config;
    assert_eq!((c.target_rate, c.window_ms, c.warning_threshold, c.critical_threshold), (0.99, 86_400_000, 0.4, 0.2));
    assert_eq!((c.min_events, c.resolution_ms, s.hysteresis), (100, 60_000, 0.05));
    // -0 is 0 for an integer (and prints so).
    assert_eq!(settings(&[("minEvents", -0.0)]).unwrap().config.min_events, 0);
  }

  #[test]
  fn each_range_edge_is_in_or_out_as_the_table_says() {
    const RANGE: &str = "ERR_OUT_OF_RANGE config";
    let cases: [(&[(&str, f64)], String); 40] = [
      // targetRate in (0, 1]
      (&[("targetRate", 1.0)], "ok".into()),
      (&[("targetRate", 1e-9)], "ok".into()),
      (&[("targetRate", 0.0)], format!("{RANGE}.targetRate must be in (0, 1], got 0")),
      (&[("targetRate", 1.0000000000000002)], format!("{RANGE}.targetRate must be in (0, 1], got 1.0000000000000002")),
      (&[("targetRate", f64::NAN)], format!("{RANGE}.targetRate must be a finite number, got NaN")),
      // windowMs: a positive integer (1 ms: one bucket of 1 ms)
      (&[("windowMs", 1.0)], "ok".into()),
      (&[("windowMs", 9_007_199_254_740_991.0)], "ok".into()),
      (&[("windowMs", 0.0)], format!("{RANGE}.windowMs must be a positive integer of milliseconds, got 0")),
      (&[("windowMs", -1.0)], format!("{RANGE}.windowMs must be a positive integer of milliseconds, got -1")),
      (&[("windowMs", 1.5)], format!("{RANGE}.windowMs must be a positive integer of milliseconds, got 1.5")),
      (
        &[("windowMs", 9_007_199_254_740_992.0)],
        format!("{RANGE}.windowMs must be a positive integer of milliseconds, got 9007199254740992"),
      ),
      // warningThreshold in [0, 1]; criticalThreshold in [0, 1] and at most warningThreshold
      (&[("warningThreshold", 1.0)], "ok".into()),
      (&[("warningThreshold", 0.0), ("criticalThreshold", 0.0)], "ok".into()),
      (&[("warningThreshold", 1.1)], format!("{RANGE}.warningThreshold must be in [0, 1], got 1.1")),
      (&[("warningThreshold", -0.1)], format!("{RANGE}.warningThreshold must be in [0, 1], got -0.1")),
      (
        &[("warningThreshold", 0.05)],
        format!("{RANGE}.criticalThreshold (0.1) must not exceed warningThreshold (0.05)"),
      ),
      (&[("criticalThreshold", 0.5)], "ok".into()),
      (
        &[("criticalThreshold", 0.50001)],
        format!("{RANGE}.criticalThreshold (0.50001) must not exceed warningThreshold (0.5)"),
      ),
      (&[("criticalThreshold", -0.1)], format!("{RANGE}.criticalThreshold must be in [0, 1], got -0.1")),
      // minEvents: a non-negative integer
      (&[("minEvents", 0.0)], "ok".into()),
      (&[("minEvents", 9_007_199_254_740_991.0)], "ok".into()),
      (&[("minEvents", -1.0)], format!("{RANGE}.minEvents must be a non-negative integer, got -1")),
      (&[("minEvents", 2.5)], format!("{RANGE}.minEvents must be a non-negative integer, got 2.5")),
      // resolutionMs: a positive integer, at most windowMs, at most 1 000 000 buckets
      (&[("windowMs", 1000.0), ("resolutionMs", 1000.0)], "ok".into()),
      (
        &[("windowMs", 1000.0), ("resolutionMs", 1001.0)],
        format!("{RANGE}.resolutionMs (1001) must not exceed windowMs (1000)"),
      ),
      (&[("resolutionMs", 0.0)], format!("{RANGE}.resolutionMs must be a positive integer of milliseconds, got 0")),
      (&[("windowMs", 1_000_000.0), ("resolutionMs", 1.0)], "ok".into()),
      (
        &[("windowMs", 1_000_001.0), ("resolutionMs", 1.0)],
        format!("{RANGE}.windowMs / resolutionMs must be at most 1000000 buckets, got 1000001: raise resolutionMs"),
      ),
      // 2 000 001 ms in 2 ms buckets: 1 000 001 (the last one partial).
      (
        &[("windowMs", 2_000_001.0), ("resolutionMs", 2.0)],
        format!("{RANGE}.windowMs / resolutionMs must be at most 1000000 buckets, got 1000001: raise resolutionMs"),
      ),
      // hysteresis in [0, 1)
      (&[("hysteresis", 0.0)], "ok".into()),
      (&[("hysteresis", -0.0)], "ok".into()),
      (&[("hysteresis", 0.999)], "ok".into()),
      (&[("hysteresis", 1.0)], format!("{RANGE}.hysteresis must be in [0, 1), got 1")),
      (&[("hysteresis", -0.01)], format!("{RANGE}.hysteresis must be in [0, 1), got -0.01")),
      (&[("hysteresis", f64::INFINITY)], format!("{RANGE}.hysteresis must be a finite number, got Infinity")),
      // verdictWindowMs: a non-negative integer of ms (0: no verdict is taken), not bound by windowMs
      (&[("verdictWindowMs", 0.0)], "ok".into()),
      (&[("windowMs", 1000.0), ("verdictWindowMs", 9_007_199_254_740_991.0)], "ok".into()),
      (
        &[("verdictWindowMs", -1.0)],
        format!("{RANGE}.verdictWindowMs must be a non-negative integer of milliseconds, got -1"),
      ),
      (
        &[("verdictWindowMs", 0.5)],
        format!("{RANGE}.verdictWindowMs must be a non-negative integer of milliseconds, got 0.5"),
      ),
      // Every number is converted before any is range-checked, in table order.
      (
        &[("targetRate", 5.0), ("windowMs", 1.5)],
        format!("{RANGE}.windowMs must be a positive integer of milliseconds, got 1.5"),
      ),
    ];
    for (given, expected) in cases {
      assert_eq!(message(given), expected, "{given:?}");
    }
  }

  #[test]
  fn the_rules_are_read_after_the_conversions_and_before_the_ranges() {
    let rules = || Err(BudgetError::invalid_type("must be an array").at("alerts"));
    let with_rules = |given: &[(&str, f64)]| {
      Settings::from_numbers(|name| given.iter().find(|(n, _)| *n == name).map(|g| g.1), rules)
        .unwrap_err()
        .render("config")
    };
    assert_eq!(with_rules(&[("targetRate", 5.0)]), "config.alerts must be an array");
    assert_eq!(with_rules(&[("windowMs", 1.5)]), "config.windowMs must be a positive integer of milliseconds, got 1.5");
  }

  #[test]
  fn settings_validate_checks_the_hysteresis_and_config_validate_does_not_see_it() {
    let mut s = Settings::default();
    assert!(s.validate().is_ok());
    s.hysteresis = 1.0;
    assert_eq!(s.validate().unwrap_err().render("config"), "config.hysteresis must be in [0, 1), got 1");
    assert!(s.config.validate().is_ok());
    s.config.window_ms = 0;
    assert_eq!(
      s.validate().unwrap_err().render("config"),
      "config.windowMs must be a positive integer of milliseconds, got 0"
    );
  }

  #[test]
  fn the_combination_rules() {
    let rule = |given: &[&str], manual: bool| match check_combination(given, manual) {
      Ok(()) => "ok".to_string(),
      Err(e) => format!("{} {}", e.code, e.render("config")),
    };
    const VALUE: &str = "ERR_INVALID_ARG_VALUE config";
    const SNAPSHOT: &str =
      "cannot be given with snapshot: the config comes from the snapshot (only clock, now, persist may)";
    const SHARED: &str =
      "cannot be given to a shared tracker: save or restore it from one thread with a tracker of its own";
    let cases: [(&[&str], bool, String); 13] = [
      (&[], false, "ok".into()),
      (&["targetRate", "windowMs", "hysteresis", "clock", "alerts", "persist"], false, "ok".into()),
      (&["snapshot", "clock", "now", "persist"], true, "ok".into()),
      (&["snapshot"], false, "ok".into()),
      // The first key (in the caller's order) that breaks a rule is named.
      (&["snapshot", "clock", "targetRate", "alerts"], false, format!("{VALUE}.targetRate {SNAPSHOT}")),
      (&["hysteresis", "snapshot"], false, format!("{VALUE}.hysteresis {SNAPSHOT}")),
      (&["shared", "snapshot"], false, format!("{VALUE}.shared {SNAPSHOT}")),
      (&["now"], true, format!("{VALUE}.now is only for restoring: give it with snapshot")),
      (
        &["snapshot", "now"],
        false,
        format!("{VALUE}.now needs clock: 'manual' (a real clock restores at the current time)"),
      ),
      (&["snapshot", "now", "clock"], true, "ok".into()),
      (&["shared", "targetRate", "clock", "hysteresis"], false, "ok".into()),
      (&["persist", "shared"], false, format!("{VALUE}.persist {SHARED}")),
      (&["shared", "persist", "clock"], true, format!("{VALUE}.persist {SHARED}")),
    ];
    for (given, manual, expected) in cases {
      assert_eq!(rule(given, manual), expected, "{given:?}");
    }
  }

  #[test]
  fn texts_are_checked_against_their_choices() {
    let texts = |clock: Option<&'static str>, shared: Option<&'static str>| {
      check_texts(|name| match name {
        "clock" => clock,
        "shared" => shared,
        _ => None,
      })
      .map_err(|e| e.render("config"))
    };
    assert_eq!(texts(Some("manual"), Some("a")), Ok(()));
    assert_eq!(texts(None, None), Ok(()));
    assert_eq!(texts(Some("wall"), None), Err("config.clock must be 'monotonic' or 'manual', got 'wall'".into()));
    assert_eq!(
      texts(Some("Manual"), Some("")),
      Err("config.clock must be 'monotonic' or 'manual', got 'Manual'".into())
    );
    assert_eq!(texts(None, Some("")), Err("config.shared must be a non-empty string".into()));
  }
}
