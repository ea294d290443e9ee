//! The vocabulary of the config table ([`crate::config::FIELDS`]): what a
//! field's value must be in JavaScript ([`Kind`]), the values it allows
//! ([`Range`]), what it is when not given ([`DefaultValue`]), and the checks and
//! texts made from them. The error messages, the `.d.ts` and the docs all read
//! the same phrases ([`Range::text`], [`DefaultValue::text`]).

use crate::error::{BudgetError, Result};

/// The largest integer a JS number holds exactly.
pub const MAX_SAFE_INTEGER: i64 = 9_007_199_254_740_991;

/// What a config value must be in JavaScript, checked before its range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
  /// A number.
  Number,
  /// A string.
  String,
  /// A string that names something (a shared tracker): well-formed Unicode.
  Name,
  /// A string, one of the [`Range::OneOf`] choices.
  Choice,
  /// An array of alert rules ([`crate::plan`] checks each rule's keys).
  Alerts,
  /// An object `{ path, intervalMs? }` ([`crate::plan`] checks its keys).
  Persist,
  /// Taken off by the JavaScript before the native constructor (`fleet`,
  /// lib/fleet/): a known key, never one the native side accepts.
  JavaScript,
}

impl Kind {
  /// Its name in `configFields()`: `'number'`, `'string'`, `'name'`,
  /// `'choice'`, `'alerts'`, `'persist'` or `'javascript'`.
  pub fn name(self) -> &'static str {
    match self {
      Kind::Number => "number",
      Kind::String => "string",
      Kind::Name => "name",
      Kind::Choice => "choice",
      Kind::Alerts => "alerts",
      Kind::Persist => "persist",
      Kind::JavaScript => "javascript",
    }
  }
}

/// What a number is counted in, for messages and docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
  /// A plain number.
  None,
  /// A duration in milliseconds.
  Ms,
  /// A time: milliseconds since the epoch.
  EpochMs,
}

/// The values a field allows, as data: the checks, their messages and the
/// documented range are all made from it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
  /// Whatever its kind allows (a special type checks its own insides).
  Any,
  /// A non-empty string.
  NonEmpty,
  /// A finite number from `min` to `max`, each end open or closed, and at most
  /// the value of the field `at_most` (an earlier field of the table).
  Real { min: f64, min_open: bool, max: f64, max_open: bool, at_most: Option<&'static str> },
  /// An integer within JavaScript's exact range, at least `min` (any when
  /// `None`), counted in `unit`, and at most the value of the field `at_most`.
  Integer { min: Option<i64>, unit: Unit, at_most: Option<&'static str> },
  /// One of these strings.
  OneOf(&'static [&'static str]),
}

/// A positive integer of milliseconds (a duration).
pub const POSITIVE_MS: Range = Range::Integer { min: Some(1), unit: Unit::Ms, at_most: None };
/// An integer ≥ 0.
pub const NON_NEGATIVE: Range = Range::Integer { min: Some(0), unit: Unit::None, at_most: None };
/// Any finite number (a range checked elsewhere, as an alert rule's burn rate is).
pub const FINITE: Range =
  Range::Real { min: f64::NEG_INFINITY, min_open: false, max: f64::INFINITY, max_open: false, at_most: None };

impl Range {
  /// What a value must be, as messages say it after "must be " and the docs
  /// show it: `in (0, 1]`, `a positive integer of milliseconds, at most
  /// windowMs`, `'monotonic' or 'manual'`; empty for [`Range::Any`].
  pub fn text(&self) -> String {
    let at_most = |bound: Option<&str>| bound.map(|b| format!(", at most {b}")).unwrap_or_default();
    match *self {
      Range::Any => String::new(),
      Range::NonEmpty => "a non-empty string".into(),
      Range::Real { at_most: bound, .. } => format!("in {}{}", self.interval(), at_most(bound)),
      Range::Integer { at_most: bound, .. } => format!("{}{}", self.noun(), at_most(bound)),
      Range::OneOf(choices) => one_of(choices),
    }
  }

  /// `(0, 1]`: the interval of a [`Range::Real`] (empty for other ranges).
  fn interval(&self) -> String {
    match *self {
      Range::Real { min, min_open, max, max_open, .. } => {
        format!("{}{min}, {max}{}", if min_open { '(' } else { '[' }, if max_open { ')' } else { ']' })
      }
      _ => String::new(),
    }
  }

  /// `a positive integer of milliseconds`: what a [`Range::Integer`] must be,
  /// without its `at_most` bound.
  fn noun(&self) -> String {
    let Range::Integer { min, unit, .. } = *self else { return String::new() };
    let base = match min {
      None => "an integer".to_string(),
      Some(0) => "a non-negative integer".to_string(),
      Some(1) => "a positive integer".to_string(),
      Some(n) => format!("an integer ≥ {n}"),
    };
    let unit = match unit {
      Unit::None => "",
      Unit::Ms => " of milliseconds",
      Unit::EpochMs => " of epoch ms",
    };
    format!("{base}{unit}")
  }

  /// A number given for this field, before its range is checked: finite for a
  /// [`Range::Real`]; for a [`Range::Integer`] an integer within JavaScript's
  /// exact range (−0 is 0). The error is a `RangeError` saying what the field
  /// must be; `field` names it.
  pub fn convert(&self, field: &str, value: f64) -> Result<f64> {
    match self {
      Range::Integer { .. } => {
        if value.is_finite() && value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER as f64 {
          Ok(value as i64 as f64)
        } else {
          Err(BudgetError::out_of_range(format!("must be {}, got {}", self.noun(), js_number(value))).at(field))
        }
      }
      _ if value.is_finite() => Ok(value),
      _ => Err(BudgetError::out_of_range(format!("must be a finite number, got {}", js_number(value))).at(field)),
    }
  }

  /// Checks a number (converted, or read from a config built in Rust) against
  /// this range; `bound` gives the value of the field named by `at_most`.
  pub fn check_number(&self, field: &str, value: f64, bound: impl Fn(&str) -> f64) -> Result<()> {
    let (inside, at_most) = match *self {
      Range::Real { min, min_open, max, max_open, at_most } => {
        let above = if min_open { value > min } else { value >= min };
        let below = if max_open { value < max } else { value <= max };
        (above && below, at_most)
      }
      Range::Integer { min, at_most, .. } => {
        let whole = value.is_finite() && value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER as f64;
        (whole && min.is_none_or(|m| value >= m as f64), at_most)
      }
      _ => (true, None),
    };
    if !inside {
      let must_be = match self {
        Range::Real { .. } => format!("in {}", self.interval()),
        _ => self.noun(),
      };
      let hint = self.percentage_hint(value);
      return Err(BudgetError::out_of_range(format!("must be {must_be}, got {}{hint}", js_number(value))).at(field));
    }
    if let Some(other) = at_most {
      let limit = bound(other);
      if value > limit {
        return Err(
          BudgetError::out_of_range(format!("({}) must not exceed {other} ({})", js_number(value), js_number(limit)))
            .at(field),
        );
      }
    }
    Ok(())
  }

  /// For a fraction range (`(0, 1]`, `[0, 1]`) given a percentage (from 2 to
  /// 100; just above 1 is more likely a slip than 1 %): the fraction meant, as `: a fraction, not a percentage (such as
  /// 0.99 for 99 %)`; empty otherwise.
  fn percentage_hint(&self, value: f64) -> String {
    let Range::Real { max, max_open: false, .. } = *self else { return String::new() };
    if max != 1.0 || !(2.0..=100.0).contains(&value) {
      return String::new();
    }
    // Rounded to 8 decimals: 96.7 / 100 is 0.9670000000000001 in binary.
    let fraction = (value / 100.0 * 1e8).round() / 1e8;
    format!(": a fraction, not a percentage (such as {} for {} %)", js_number(fraction), js_number(value))
  }

  /// The TypeError text for a number field given something else (`got`, as
  /// `describe` names it; `text` the value when it is a string): for a duration
  /// in milliseconds, the unit and the number to write, read from a duration
  /// such as `'1h'` when it is one (`(write 3_600_000)`), else an example.
  pub fn not_a_number(&self, got: &str, text: Option<&str>) -> String {
    let Range::Integer { unit: Unit::Ms, .. } = *self else { return format!("must be a number, got {got}") };
    match text.and_then(duration_ms) {
      Some(ms) => format!(
        "must be a number of milliseconds, got {got} '{}' (write {})",
        text.unwrap_or_default().trim(),
        js_literal(ms)
      ),
      None => format!("must be a number of milliseconds (such as 3_600_000 for 1 h), got {got}"),
    }
  }

  /// Checks a string given for this field: one of the choices of a
  /// [`Range::OneOf`] (else a `TypeError`, `ERR_INVALID_ARG_VALUE`, listing
  /// them), non-empty for [`Range::NonEmpty`].
  pub fn check_text(&self, field: &str, value: &str) -> Result<()> {
    match *self {
      Range::OneOf(choices) if !choices.contains(&value) => {
        Err(BudgetError::invalid_value(format!("must be {}, got '{value}'", one_of(choices))).at(field))
      }
      Range::NonEmpty if value.is_empty() => Err(BudgetError::invalid_value("must be a non-empty string").at(field)),
      _ => Ok(()),
    }
  }

  /// The smallest and largest values the range itself allows (its `at_most`
  /// bound aside), with whether each end is excluded: for `configFields()`.
  pub fn bounds(&self) -> (Option<f64>, bool, Option<f64>, bool) {
    match *self {
      Range::Real { min, min_open, max, max_open, .. } => (Some(min), min_open, Some(max), max_open),
      Range::Integer { min, .. } => (min.map(|m| m as f64), false, Some(MAX_SAFE_INTEGER as f64), false),
      _ => (None, false, None, false),
    }
  }

  /// The field this one may not exceed, if any.
  pub fn at_most(&self) -> Option<&'static str> {
    match *self {
      Range::Real { at_most, .. } | Range::Integer { at_most, .. } => at_most,
      _ => None,
    }
  }
}

/// `'a' or 'b'`, `'a', 'b' or 'c'`.
fn one_of(choices: &[&str]) -> String {
  let quoted: Vec<String> = choices.iter().map(|c| format!("'{c}'")).collect();
  match quoted.split_last() {
    None => String::new(),
    Some((last, [])) => last.clone(),
    Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
  }
}

/// What a field is when it is not given.
#[derive(Debug, Clone, Copy)]
pub enum DefaultValue {
  /// Nothing: the feature is off (`persist`, `shared`, …).
  None,
  /// This number.
  Number(f64),
  /// This string (`clock: 'monotonic'`).
  Text(&'static str),
  /// Computed from the field `from` (already set: an earlier field of the
  /// table) by `compute`; `text` is the formula, as the docs show it.
  Derived { text: &'static str, from: &'static str, compute: fn(f64) -> f64 },
  /// Decided elsewhere, as `text` says (the default alert policy, the
  /// snapshot's `savedAt`).
  Described(&'static str),
}

impl DefaultValue {
  /// The default as the docs show it: `0.95`, `3 600 000`, `'monotonic'`,
  /// `max(1, floor(windowMs / 43200))`, `none`.
  pub fn text(&self) -> String {
    match *self {
      DefaultValue::None => "none".into(),
      DefaultValue::Number(n) => grouped(n),
      DefaultValue::Text(s) => format!("'{s}'"),
      DefaultValue::Derived { text, .. } | DefaultValue::Described(text) => text.into(),
    }
  }
}

/// `n` as JavaScript prints it, an integer of five digits or more in groups
/// of three separated by spaces (`3 600 000`), as the docs write numbers.
fn grouped(n: f64) -> String {
  let text = js_number(n);
  if n.fract() != 0.0 || n.abs() < 10_000.0 || text.contains('e') {
    return text;
  }
  let (sign, digits) = text.split_at(usize::from(n < 0.0));
  let mut out = String::from(sign);
  for (i, d) in digits.chars().enumerate() {
    if i > 0 && (digits.len() - i) % 3 == 0 {
      out.push(' ');
    }
    out.push(d);
  }
  out
}

/// A duration as people write it, `'1h'`, `'30d'`, `'90 s'`, `'1.5h'` (a unit of
/// ms, s, m, h, d or w), in whole milliseconds; `None` for anything else.
pub fn duration_ms(text: &str) -> Option<i64> {
  let text = text.trim();
  let split = text.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
  let (number, unit) = (text[..split].parse::<f64>().ok()?, text[split..].trim());
  let factor = match unit {
    "ms" => 1.0,
    "s" => 1000.0,
    "m" | "min" => 60_000.0,
    "h" => 3_600_000.0,
    "d" => 86_400_000.0,
    "w" => 604_800_000.0,
    _ => return None,
  };
  let ms = number * factor;
  (ms >= 1.0 && ms.fract() == 0.0 && ms <= MAX_SAFE_INTEGER as f64).then_some(ms as i64)
}

/// An integer as a JavaScript literal with `_` every three digits: `3_600_000`.
pub fn js_literal(n: i64) -> String {
  let digits = n.unsigned_abs().to_string();
  let mut out = String::new();
  for (i, c) in digits.chars().enumerate() {
    if i > 0 && (digits.len() - i).is_multiple_of(3) {
      out.push('_');
    }
    out.push(c);
  }
  if n < 0 {
    format!("-{out}")
  } else {
    out
  }
}

/// A number as messages print it: as Rust prints it, `Infinity` and
/// `-Infinity` as JavaScript does.
pub fn js_number(n: f64) -> String {
  match n {
    f64::INFINITY => "Infinity".into(),
    f64::NEG_INFINITY => "-Infinity".into(),
    n => n.to_string(),
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  const UNIT: Range = Range::Real { min: 0.0, min_open: true, max: 1.0, max_open: false, at_most: None };

  #[test]
  fn texts_say_what_a_value_must_be() {
    assert_eq!(UNIT.text(), "in (0, 1]");
    let half_open = Range::Real { min: 0.0, min_open: false, max: 1.0, max_open: true, at_most: Some("x") };
    assert_eq!(half_open.text(), "in [0, 1), at most x");
    assert_eq!(POSITIVE_MS.text(), "a positive integer of milliseconds");
    assert_eq!(NON_NEGATIVE.text(), "a non-negative integer");
    assert_eq!(Range::Integer { min: None, unit: Unit::EpochMs, at_most: None }.text(), "an integer of epoch ms");
    assert_eq!(
      Range::Integer { min: Some(5), unit: Unit::None, at_most: Some("y") }.text(),
      "an integer ≥ 5, at most y"
    );
    assert_eq!(Range::OneOf(&["a", "b", "c"]).text(), "'a', 'b' or 'c'");
    assert_eq!(Range::OneOf(&["a"]).text(), "'a'");
    assert_eq!(Range::Any.text(), "");
  }

  #[test]
  fn defaults_print_as_the_docs_write_them() {
    let texts: Vec<String> = [
      DefaultValue::Number(0.95),
      DefaultValue::Number(0.0),
      DefaultValue::Number(9999.0),
      DefaultValue::Number(10_000.0),
      DefaultValue::Number(3_600_000.0),
      DefaultValue::Number(-123_456.0),
      DefaultValue::Text("monotonic"),
      DefaultValue::None,
      DefaultValue::Described("the default policy"),
    ]
    .iter()
    .map(DefaultValue::text)
    .collect();
    assert_eq!(
      texts,
      ["0.95", "0", "9999", "10 000", "3 600 000", "-123 456", "'monotonic'", "none", "the default policy"]
    );
  }

  #[test]
  fn convert_takes_finite_numbers_and_exact_integers() {
    assert_eq!(UNIT.convert("f", 7.5), Ok(7.5)); // the range comes later
    let nan = UNIT.convert("f", f64::NAN).unwrap_err();
    assert_eq!(
      (nan.code, nan.render("config").as_str()),
      ("ERR_OUT_OF_RANGE", "config.f must be a finite number, got NaN")
    );
    assert_eq!(POSITIVE_MS.convert("w", -3.0), Ok(-3.0));
    assert!(POSITIVE_MS.convert("w", -0.0).unwrap().is_sign_positive());
    assert_eq!(POSITIVE_MS.convert("w", 9_007_199_254_740_991.0), Ok(9_007_199_254_740_991.0));
    let above = POSITIVE_MS.convert("w", 9_007_199_254_740_992.0).unwrap_err();
    assert_eq!(above.message, "must be a positive integer of milliseconds, got 9007199254740992");
    assert_eq!(
      POSITIVE_MS.convert("w", 1.5).unwrap_err().message,
      "must be a positive integer of milliseconds, got 1.5"
    );
    assert_eq!(
      POSITIVE_MS.convert("w", f64::NEG_INFINITY).unwrap_err().message,
      "must be a positive integer of milliseconds, got -Infinity"
    );
  }

  #[test]
  fn check_number_holds_each_edge() {
    let none = |_: &str| 0.0;
    assert!(UNIT.check_number("f", 1.0, none).is_ok());
    assert!(UNIT.check_number("f", 1e-300, none).is_ok());
    assert_eq!(UNIT.check_number("f", 0.0, none).unwrap_err().message, "must be in (0, 1], got 0");
    assert_eq!(UNIT.check_number("f", 1.0000001, none).unwrap_err().message, "must be in (0, 1], got 1.0000001");
    assert!(POSITIVE_MS.check_number("w", 1.0, none).is_ok());
    assert_eq!(
      POSITIVE_MS.check_number("w", 0.0, none).unwrap_err().message,
      "must be a positive integer of milliseconds, got 0"
    );
    assert!(NON_NEGATIVE.check_number("n", 0.0, none).is_ok());
    assert_eq!(
      NON_NEGATIVE.check_number("n", -1.0, none).unwrap_err().message,
      "must be a non-negative integer, got -1"
    );
    let capped = Range::Integer { min: Some(1), unit: Unit::Ms, at_most: Some("windowMs") };
    let window = |name: &str| if name == "windowMs" { 1000.0 } else { f64::NAN };
    assert!(capped.check_number("r", 1000.0, window).is_ok());
    let over = capped.check_number("r", 1001.0, window).unwrap_err();
    assert_eq!(
      (over.code, over.render("config").as_str()),
      ("ERR_OUT_OF_RANGE", "config.r (1001) must not exceed windowMs (1000)")
    );
  }

  #[test]
  fn a_percentage_for_a_fraction_says_the_fraction_meant() {
    let none = |_: &str| 0.0;
    assert_eq!(
      UNIT.check_number("f", 99.0, none).unwrap_err().message,
      "must be in (0, 1], got 99: a fraction, not a percentage (such as 0.99 for 99 %)"
    );
    assert_eq!(
      UNIT.check_number("f", 96.7, none).unwrap_err().message,
      "must be in (0, 1], got 96.7: a fraction, not a percentage (such as 0.967 for 96.7 %)"
    );
    // Not a percentage: no hint.
    assert_eq!(UNIT.check_number("f", 101.0, none).unwrap_err().message, "must be in (0, 1], got 101");
    assert_eq!(UNIT.check_number("f", -5.0, none).unwrap_err().message, "must be in (0, 1], got -5");
    assert_eq!(UNIT.check_number("f", 1.5, none).unwrap_err().message, "must be in (0, 1], got 1.5");
  }

  #[test]
  fn a_duration_string_for_milliseconds_names_the_number_to_write() {
    assert_eq!(
      POSITIVE_MS.not_a_number("string", Some("1h")),
      "must be a number of milliseconds, got string '1h' (write 3_600_000)"
    );
    assert_eq!(
      POSITIVE_MS.not_a_number("string", Some(" 30d ")),
      "must be a number of milliseconds, got string '30d' (write 2_592_000_000)"
    );
    assert_eq!(
      POSITIVE_MS.not_a_number("string", Some("an hour")),
      "must be a number of milliseconds (such as 3_600_000 for 1 h), got string"
    );
    assert_eq!(
      POSITIVE_MS.not_a_number("boolean", None),
      "must be a number of milliseconds (such as 3_600_000 for 1 h), got boolean"
    );
    assert_eq!(UNIT.not_a_number("string", Some("1h")), "must be a number, got string");
    let parsed: Vec<Option<i64>> =
      ["1h", "1.5h", "90 s", "500ms", "2w", "10m", "0.5ms", "0h", "h", "1 hour", "1e3s"].map(duration_ms).to_vec();
    assert_eq!(
      parsed,
      [
        Some(3_600_000),
        Some(5_400_000),
        Some(90_000),
        Some(500),
        Some(1_209_600_000),
        Some(600_000),
        None,
        None,
        None,
        None,
        None
      ]
    );
    assert_eq!([1, 999, 1000, 86_400_000, -1234].map(js_literal), ["1", "999", "1_000", "86_400_000", "-1_234"]);
  }

  #[test]
  fn check_text_lists_the_choices() {
    let clock = Range::OneOf(&["monotonic", "manual"]);
    assert!(clock.check_text("clock", "manual").is_ok());
    let wall = clock.check_text("clock", "wall").unwrap_err();
    assert_eq!(
      (wall.code, wall.render("config").as_str()),
      ("ERR_INVALID_ARG_VALUE", "config.clock must be 'monotonic' or 'manual', got 'wall'")
    );
    assert_eq!(Range::NonEmpty.check_text("shared", "").unwrap_err().message, "must be a non-empty string");
    assert!(Range::NonEmpty.check_text("shared", "x").is_ok());
  }
}
