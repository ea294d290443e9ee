//! The one place core errors become JS exceptions.

use budget_core::{BudgetError, ErrorKind};
use napi::{Env, Error, Status};

/// Throws `err` as a `TypeError`, `RangeError` or `Error` with its `code`, and
/// returns the pending-exception marker the generated glue passes through. A
/// field is named inside `config` (the constructor's argument).
pub fn throw(env: &Env, err: BudgetError) -> Error {
  throw_in(env, err, "config")
}

/// [`throw`], naming the field inside `root`: what the caller called the
/// argument (`restore(json, options): options`, `prometheusRules(slo): slo`).
pub fn throw_in(env: &Env, err: BudgetError, root: &str) -> Error {
  let mut message = err.render(root);
  // Messages quote user input (keys, names); a NUL byte would stop the throw.
  if message.contains('\0') {
    message = message.replace('\0', "\\0");
  }
  let thrown = match err.kind {
    ErrorKind::Type => env.throw_type_error(&message, Some(err.code)),
    ErrorKind::Range => env.throw_range_error(&message, Some(err.code)),
    ErrorKind::State | ErrorKind::Snapshot => env.throw_error(&message, Some(err.code)),
  };
  match thrown {
    Ok(()) => Error::new(Status::PendingException, message),
    Err(e) => e,
  }
}

/// Maps a core result, throwing its error.
pub fn or_throw<T>(env: &Env, r: budget_core::Result<T>) -> napi::Result<T> {
  r.map_err(|e| throw(env, e))
}
