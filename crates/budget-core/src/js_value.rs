//! JavaScript values as the binding hands them to the checks ([`JsValue`]),
//! the words messages use for their kinds, and the checks of call arguments
//! (counts, timestamps) made on them. The binding only converts; what is
//! refused, and in which words, is decided here.

use crate::error::{BudgetError, Result};
use crate::field::{js_number, MAX_SAFE_INTEGER};

/// A JavaScript value: a primitive by value; an array by its elements and an
/// object by its enumerable string-keyed properties (as `for…in` lists them,
/// each read once), as deep as the checks look. Below that depth an array or
/// an object is given empty: only its kind is read.
#[derive(Debug, Clone, PartialEq)]
pub enum JsValue {
  Undefined,
  Null,
  Boolean(bool),
  Number(f64),
  /// The UTF-16 code units, as JavaScript holds them: a lone surrogate stays
  /// one, for [`well_formed`] to refuse.
  String(Vec<u16>),
  Symbol,
  Function,
  BigInt,
  External,
  Array(Vec<JsValue>),
  Object(Vec<(String, JsValue)>),
  /// A type Node-API did not name.
  Unknown,
}

impl JsValue {
  /// `typeof`'s word for the value (an array is an `object`).
  pub fn type_name(&self) -> &'static str {
    match self {
      JsValue::Undefined => "undefined",
      JsValue::Null => "null",
      JsValue::Boolean(_) => "boolean",
      JsValue::Number(_) => "number",
      JsValue::String(_) => "string",
      JsValue::Symbol => "symbol",
      JsValue::Function => "function",
      JsValue::BigInt => "bigint",
      JsValue::External => "external",
      JsValue::Array(_) | JsValue::Object(_) => "object",
      JsValue::Unknown => "unknown",
    }
  }

  /// The value's kind as lib/util/errors.js `describe()` names it: `array` for an
  /// array (never what an options object or a config wants), else `typeof`'s.
  pub fn describe(&self) -> &'static str {
    match self {
      JsValue::Array(_) => "array",
      other => other.type_name(),
    }
  }

  /// The string, with each lone surrogate replaced by U+FFFD (as Node-API's
  /// UTF-8 conversion does); `None` for any other value.
  pub fn text(&self) -> Option<String> {
    match self {
      JsValue::String(units) => Some(String::from_utf16_lossy(units)),
      _ => None,
    }
  }
}

/// Checks that a string option can be passed on exactly: no lone surrogate
/// (UTF-8 has no form for it, so two distinct strings would become one name
/// or one file) and, for a `…path` field, no NUL byte (a path cannot hold one).
pub fn well_formed(field: &str, units: &[u16]) -> Result<()> {
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
      Ok('\0') if field.ends_with("path") => {
        let at = units.iter().position(|&u| u == 0).unwrap_or(index);
        return Err(
          BudgetError::invalid_value(format!("must not contain a NUL byte (a file path cannot), found at index {at}"))
            .at(field),
        );
      }
      Ok(_) => {}
    }
  }
  Ok(())
}

/// A count argument: a non-negative integer, at most 2³² − 1 per batch.
pub fn count(what: &str, value: &JsValue) -> Result<u64> {
  // Capped per batch so that no run of batches can overflow the 64-bit counters.
  const MAX_BATCH: f64 = u32::MAX as f64;
  let must_be = "must be an integer from 0 to 4294967295";
  match *value {
    JsValue::Number(n) if n >= 0.0 && n.fract() == 0.0 && n <= MAX_BATCH => Ok(n as u64),
    JsValue::Number(n) => Err(BudgetError::out_of_range(format!("{what} {must_be}, got {}", js_number(n)))),
    ref other => Err(BudgetError::invalid_type(format!("{what} {must_be}, got {}", other.type_name()))),
  }
}

/// An optional epoch-ms timestamp argument: `undefined` is absent.
pub fn timestamp(what: &str, value: &JsValue) -> Result<Option<i64>> {
  match *value {
    JsValue::Undefined => Ok(None),
    JsValue::Number(ms) => finite_ms(what, ms).map(Some),
    ref other => {
      Err(BudgetError::invalid_type(format!("{what} must be a number of epoch ms, got {}", other.type_name())))
    }
  }
}

/// A boolean argument; the `TypeError` names `what` and the kind given.
pub fn boolean(what: &str, value: &JsValue) -> Result<bool> {
  match *value {
    JsValue::Boolean(b) => Ok(b),
    ref other => Err(BudgetError::invalid_type(format!("{what} must be a boolean, got {}", other.describe()))),
  }
}

/// A finite epoch-ms number, floored, within JS's exact integers; `None` if not.
/// The fast path uses it as is: a number it refuses goes to the checked path.
pub fn epoch_ms(ms: f64) -> Option<i64> {
  (ms.is_finite() && ms.abs() <= MAX_SAFE_INTEGER as f64).then(|| ms.floor() as i64)
}

/// [`epoch_ms`], with a `RangeError` naming `what` (e.g. `advanceTo(ms): ms`).
pub fn finite_ms(what: &str, ms: f64) -> Result<i64> {
  epoch_ms(ms).ok_or_else(|| {
    BudgetError::out_of_range(format!("{what} must be a finite number of epoch ms, got {}", js_number(ms)))
  })
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::ErrorKind;

  fn text(s: &str) -> JsValue {
    JsValue::String(s.encode_utf16().collect())
  }

  #[test]
  fn kinds_are_named_as_typeof_and_describe_name_them() {
    assert_eq!(JsValue::Array(vec![]).type_name(), "object");
    assert_eq!(JsValue::Array(vec![]).describe(), "array");
    assert_eq!(JsValue::Object(vec![]).describe(), "object");
    assert_eq!(JsValue::Null.describe(), "null");
    assert_eq!(JsValue::BigInt.describe(), "bigint");
    assert_eq!(text("x").describe(), "string");
  }

  #[test]
  fn a_lone_surrogate_becomes_the_replacement_character_in_text() {
    assert_eq!(JsValue::String(vec![0x61, 0xd800]).text().as_deref(), Some("a\u{fffd}"));
    assert_eq!(JsValue::Number(1.0).text(), None);
  }

  #[test]
  fn well_formed_refuses_lone_surrogates_everywhere_and_nul_in_paths() {
    let err = well_formed("shared", &[0x61, 0xdc00]).unwrap_err();
    assert_eq!(err.field.as_deref(), Some("shared"));
    assert_eq!(
      err.message,
      "must be well-formed Unicode: it has a lone surrogate (\\udc00) at index 1, which would make it the same as \
       another string"
    );
    assert!(well_formed("shared", &[0x61, 0, 0x62]).is_ok());
    let err = well_formed("persist.path", &[0x61, 0x62, 0]).unwrap_err();
    assert_eq!(err.message, "must not contain a NUL byte (a file path cannot), found at index 2");
    // A pair is one character: well-formed.
    assert!(well_formed("persist.path", &"a😀".encode_utf16().collect::<Vec<_>>()).is_ok());
  }

  #[test]
  fn counts_are_integers_from_0_to_2_pow_32_minus_1() {
    assert_eq!(count("n", &JsValue::Number(4294967295.0)).unwrap(), 4294967295);
    let err = count("n", &JsValue::Number(-1.0)).unwrap_err();
    assert_eq!(
      (err.kind, err.message.as_str()),
      (ErrorKind::Range, "n must be an integer from 0 to 4294967295, got -1")
    );
    let err = count("n", &JsValue::Number(f64::INFINITY)).unwrap_err();
    assert_eq!(err.message, "n must be an integer from 0 to 4294967295, got Infinity");
    let err = count("n", &JsValue::Array(vec![])).unwrap_err();
    assert_eq!(
      (err.kind, err.message.as_str()),
      (ErrorKind::Type, "n must be an integer from 0 to 4294967295, got object")
    );
  }

  #[test]
  fn timestamps_are_finite_epoch_ms_floored_and_undefined_is_absent() {
    assert_eq!(timestamp("at", &JsValue::Undefined).unwrap(), None);
    assert_eq!(timestamp("at", &JsValue::Number(1.9)).unwrap(), Some(1));
    assert_eq!(timestamp("at", &JsValue::Number(-1.5)).unwrap(), Some(-2));
    let err = timestamp("at", &JsValue::Number(f64::NAN)).unwrap_err();
    assert_eq!((err.kind, err.message.as_str()), (ErrorKind::Range, "at must be a finite number of epoch ms, got NaN"));
    let err = timestamp("at", &JsValue::Number(9007199254740992.0)).unwrap_err();
    assert_eq!(err.message, "at must be a finite number of epoch ms, got 9007199254740992");
    let err = timestamp("at", &JsValue::Null).unwrap_err();
    assert_eq!((err.kind, err.message.as_str()), (ErrorKind::Type, "at must be a number of epoch ms, got null"));
  }

  #[test]
  fn booleans_name_an_array_as_one() {
    assert!(boolean("ok", &JsValue::Boolean(true)).unwrap());
    let err = boolean("record(success): success", &JsValue::Array(vec![])).unwrap_err();
    assert_eq!(err.message, "record(success): success must be a boolean, got array");
  }
}
