//! The parser behind `captcha-budget replay` (lib/cli/replay/reader.js): one chunk
//! of a solve log in, typed arrays of its events out. Internal: left out of the
//! package's types, reached through `require('./native.js')` by the reader only.

use budget_core::BudgetError;
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use solve_log::{parse_chunk_after, LogFields, LogFormat};

use crate::error::throw;

/// Parses the complete lines of `chunk` (a Buffer) of a JSON Lines or CSV solve
/// log; see `crates/solve-log/src/lib.rs`.
///
/// - `format`: `'jsonl'` or `'csv'`;
/// - `fields`: `[ts, ok, type, ...more]` field names (JSON keys; CSV: for
///   messages); `more`, the further `--by` fields, join the type (`LogFields::more`);
/// - `csvColumns`: CSV only, `[ts, ok, type, ...more]` column indices, `-1` if absent;
/// - `firstLine`: the 1-based number of the chunk's first line;
/// - `last`: the input ends here, so a final line without a newline counts.
/// - `latestMs`: the latest timestamp of the earlier chunks (default none): a
///   timestamp over 366 days after the latest before it is a bad line.
///
/// Returns `{ ts: Float64Array, ok: Uint8Array, typeIndex: Uint32Array, types:
/// string[], badLines: { line, message }[], lines, consumed, latestMs }`: `consumed`
/// bytes (whole lines) were read, the rest belongs to the next chunk; `latestMs`
/// is the latest timestamp so far, for the next chunk.
#[napi(skip_typescript)]
// Only JavaScript calls it: `cargo test` builds no registration, so Rust sees no caller.
#[cfg_attr(test, allow(dead_code))]
// The JavaScript call's positional arguments, one by one.
#[allow(clippy::too_many_arguments)]
pub fn parse_log_chunk<'env>(
  env: &'env Env,
  chunk: BufferSlice<'_>,
  format: String,
  fields: Vec<String>,
  csv_columns: Option<Vec<i32>>,
  first_line: f64,
  last: bool,
  latest_ms: Option<f64>,
) -> Result<Object<'env>> {
  let mut names = fields.into_iter();
  let (Some(ts), Some(ok), Some(ty)) = (names.next(), names.next(), names.next()) else {
    return Err(throw(env, BudgetError::invalid_value("parseLogChunk: fields must be [ts, ok, type, ...more]")));
  };
  let fields = LogFields { ts, ok, ty, more: names.collect() };
  let format = match (format.as_str(), csv_columns.as_deref()) {
    ("jsonl", _) => LogFormat::JsonLines(fields),
    ("csv", Some(&[ts, ok, ty, ref more @ ..])) if ts >= 0 && ok >= 0 && more.len() == fields.more.len() => {
      let more = more.iter().map(|&c| usize::try_from(c).ok()).collect();
      LogFormat::Csv { fields, ts: ts as usize, ok: ok as usize, ty: usize::try_from(ty).ok(), more }
    }
    _ => {
      return Err(throw(
        env,
        BudgetError::invalid_value(
          "parseLogChunk: format must be 'jsonl', or 'csv' with csvColumns [ts, ok, type, ...more]",
        ),
      ))
    }
  };
  let parsed = parse_chunk_after(&chunk, &format, first_line as u64, last, latest_ms.unwrap_or(f64::NEG_INFINITY));

  let mut out = Object::new(env)?;
  out.set_named_property("ts", Float64Array::new(parsed.ts))?;
  out.set_named_property("ok", Uint8Array::new(parsed.ok))?;
  out.set_named_property("typeIndex", Uint32Array::new(parsed.type_index))?;
  out.set_named_property("types", parsed.types)?;
  let mut bad = env.create_array(parsed.bad_lines.len() as u32)?;
  for (i, line) in parsed.bad_lines.into_iter().enumerate() {
    let mut item = Object::new(env)?;
    item.set_named_property("line", line.line as f64)?;
    item.set_named_property("message", line.message)?;
    bad.set(i as u32, item)?;
  }
  out.set_named_property("badLines", bad)?;
  out.set_named_property("lines", parsed.lines as f64)?;
  out.set_named_property("consumed", parsed.consumed as f64)?;
  out.set_named_property("latestMs", parsed.latest_ms)?;
  Ok(out)
}
