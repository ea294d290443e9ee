//! Reading call arguments: each JS value converted into the core's
//! `JsValue`, whose checks and words for JS value kinds are the core's
//! (`budget_core::js_value`); and the registered symbols.

use budget_core::js_value::{self, JsValue};
use budget_core::{BudgetError, Result as CoreResult};
use napi::bindgen_prelude::JsValue as _; // `is_array`: the name `JsValue` is the core's here
use napi::bindgen_prelude::*;
use napi::Env;

/// A number as JavaScript prints it where Rust differs (`Infinity`, not `inf`).
pub use budget_core::field::js_number;
pub use budget_core::js_value::epoch_ms;

/// `value` for the core's checks: an array's elements and an object's
/// properties (see [`properties`]) read `depth` levels down; below that, an
/// array or an object is only its kind.
pub fn js_value(value: Unknown, depth: u8) -> Result<JsValue> {
  Ok(match value.get_type()? {
    ValueType::Boolean => JsValue::Boolean(bool::from_unknown(value)?),
    ValueType::Number => JsValue::Number(f64::from_unknown(value)?),
    ValueType::String => JsValue::String(Utf16String::from_unknown(value)?.to_vec()),
    ValueType::Object if depth == 0 => kind(if value.is_array()? { None } else { Some(ValueType::Object) }),
    ValueType::Object if value.is_array()? => {
      let array = Object::from_unknown(value)?;
      let items = (0..array.get_array_length()?).map(|i| js_value(array.get_element(i)?, depth - 1));
      JsValue::Array(items.collect::<Result<_>>()?)
    }
    ValueType::Object => JsValue::Object(properties(&Object::from_unknown(value)?, |_| depth - 1)?),
    other => kind(Some(other)),
  })
}

/// The properties of `object` as `for…in` lists them, each read once (a
/// getter cannot pass the checks with one value and be used with another),
/// the value of `key` read `depth(key)` levels down. Keys go as JS values: a
/// key with a NUL byte is read, and refused by name by the checks.
pub fn properties(object: &Object, depth: impl Fn(&str) -> u8) -> Result<Vec<(String, JsValue)>> {
  let names = object.get_property_names()?;
  let mut properties = Vec::new();
  for i in 0..names.get_array_length()? {
    let key: Unknown = names.get_element(i)?;
    // Read as UTF-16 and made lossy here, not by the engine's UTF-8 encoder:
    // V8 and WASI's emnapi write a lone surrogate differently.
    let name = String::from_utf16_lossy(&Utf16String::from_unknown(key)?);
    let value = js_value(object.get_property(key)?, depth(&name))?;
    properties.push((name, value));
  }
  Ok(properties)
}

/// A value of type `ty` with nothing in it, for its kind's words (`None`: an array).
fn kind(ty: Option<ValueType>) -> JsValue {
  match ty {
    None => JsValue::Array(Vec::new()),
    Some(ValueType::Undefined) => JsValue::Undefined,
    Some(ValueType::Null) => JsValue::Null,
    Some(ValueType::Boolean) => JsValue::Boolean(false),
    Some(ValueType::Number) => JsValue::Number(0.0),
    Some(ValueType::String) => JsValue::String(Vec::new()),
    Some(ValueType::Symbol) => JsValue::Symbol,
    Some(ValueType::Object) => JsValue::Object(Vec::new()),
    Some(ValueType::Function) => JsValue::Function,
    Some(ValueType::External) => JsValue::External,
    Some(ValueType::BigInt) => JsValue::BigInt,
    Some(_) => JsValue::Unknown,
  }
}

/// `typeof`-style name of a JS value type, for messages. Where the value itself
/// is at hand use [`describe`], which also tells arrays apart.
pub fn type_name(ty: ValueType) -> &'static str {
  kind(Some(ty)).type_name()
}

/// The name of `value`'s kind as lib/util/errors.js `describe()` gives it: `'array'`
/// for an array, else `typeof`'s.
pub fn describe(value: &Unknown) -> &'static str {
  let ty = if value.is_array().unwrap_or(false) { None } else { Some(value.get_type().unwrap_or(ValueType::Unknown)) };
  kind(ty).describe()
}

/// `value` read for an argument check: only its kind, or its number.
fn argument(value: Unknown) -> CoreResult<JsValue> {
  js_value(value, 0).map_err(|e| BudgetError::invalid_type(e.reason))
}

/// A count argument: a non-negative integer, at most 2³² − 1 per batch.
pub fn count(what: &str, v: Unknown) -> CoreResult<u64> {
  js_value::count(what, &argument(v)?)
}

/// An optional epoch-ms timestamp argument: `undefined` is absent.
pub fn timestamp(what: &str, v: Unknown) -> CoreResult<Option<i64>> {
  js_value::timestamp(what, &argument(v)?)
}

/// A boolean argument.
pub fn boolean(what: &str, v: Unknown) -> CoreResult<bool> {
  js_value::boolean(what, &argument(v)?)
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
/// a config the name of the argument it came from (lib/util/errors.js ARGUMENT_NAME).
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
