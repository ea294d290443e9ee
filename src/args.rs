//! Reading call arguments: the checks shared by the class's methods, the config
//! reader and the fast path, and the words their messages use for JS values.

use budget_core::config::MAX_SAFE_INTEGER;
use budget_core::{BudgetError, Result as CoreResult};
use napi::bindgen_prelude::*;
use napi::Env;

/// A number as JavaScript prints it where Rust differs (`Infinity`, not `inf`).
pub use budget_core::field::js_number;

/// `typeof`-style name of a JS value type, for messages. Where the value itself
/// is at hand use [`describe`], which also tells arrays apart.
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

/// The name of `value`'s type as lib/errors.js `describe()` gives it: `'array'`
/// for an array (an array is not a config or an options object), else `typeof`.
pub fn describe(value: &Unknown) -> &'static str {
  if value.is_array().unwrap_or(false) {
    return "array";
  }
  type_name(value.get_type().unwrap_or(ValueType::Unknown))
}

/// A count argument: a non-negative integer, at most 2³² − 1 per batch.
pub fn count(what: &str, v: Unknown) -> CoreResult<u64> {
  // Capped per batch so that no run of batches can overflow the 64-bit counters.
  const MAX_BATCH: f64 = u32::MAX as f64;
  let must_be = "must be an integer from 0 to 4294967295";
  match v.get_type() {
    Ok(ValueType::Number) => {
      let n = f64::from_unknown(v).map_err(|e| BudgetError::invalid_type(e.reason))?;
      if n >= 0.0 && n.fract() == 0.0 && n <= MAX_BATCH {
        Ok(n as u64)
      } else {
        Err(BudgetError::out_of_range(format!("{what} {must_be}, got {}", js_number(n))))
      }
    }
    Ok(other) => Err(BudgetError::invalid_type(format!("{what} {must_be}, got {}", type_name(other)))),
    Err(e) => Err(BudgetError::invalid_type(e.reason)),
  }
}

/// An optional epoch-ms timestamp argument: `undefined` is absent.
pub fn timestamp(what: &str, v: Unknown) -> CoreResult<Option<i64>> {
  match v.get_type() {
    Ok(ValueType::Undefined) => Ok(None),
    Ok(ValueType::Number) => {
      let ms = f64::from_unknown(v).map_err(|e| BudgetError::invalid_type(e.reason))?;
      finite_ms(what, ms).map(Some)
    }
    Ok(other) => {
      Err(BudgetError::invalid_type(format!("{what} must be a number of epoch ms, got {}", type_name(other))))
    }
    Err(e) => Err(BudgetError::invalid_type(e.reason)),
  }
}

/// A finite epoch-ms number, floored, within JS's exact integers; `None` if not.
/// The fast path uses it as is: a number it refuses goes to the checked path.
pub fn epoch_ms(ms: f64) -> Option<i64> {
  (ms.is_finite() && ms.abs() <= MAX_SAFE_INTEGER as f64).then(|| ms.floor() as i64)
}

/// [`epoch_ms`], with a `RangeError` naming `what` (e.g. `advanceTo(ms): ms`).
pub fn finite_ms(what: &str, ms: f64) -> CoreResult<i64> {
  epoch_ms(ms).ok_or_else(|| {
    BudgetError::out_of_range(format!("{what} must be a finite number of epoch ms, got {}", js_number(ms)))
  })
}

/// `Symbol.for(name)`.
pub fn registered_symbol<'a>(env: &'a Env, name: &str) -> Result<Unknown<'a>> {
  // `Symbol` is a function: read its `for` through the object view.
  let symbol: Unknown = env.get_global()?.get_named_property("Symbol")?;
  let symbol = Object::from_unknown(symbol)?;
  let symbol_for: Function<&str, Unknown> = symbol.get_named_property("for")?;
  symbol_for.call(name)
}

/// The registered symbol under which the package's own JavaScript callers give
/// a config the name of the argument it came from (lib/errors.js ARGUMENT_NAME).
pub const ARGUMENT_NAME_SYMBOL: &str = "captcha-error-budget.argumentName";

/// What the caller calls `config` in messages (`restore(json, options): options`),
/// if it said; a symbol key, so no config key can clash with it.
pub fn argument_name(env: &Env, config: &Object) -> Result<Option<String>> {
  let key = registered_symbol(env, ARGUMENT_NAME_SYMBOL)?;
  let value: Unknown = config.get_property(key)?;
  Ok(match value.get_type()? {
    ValueType::String => Some(String::from_unknown(value)?),
    _ => None,
  })
}
