//! The one place core errors become JS exceptions.

use budget_core::{BudgetError, ErrorKind};
use napi::{Env, Error, Status};

/// Throws `err` as a `TypeError`, `RangeError` or `Error` with its `code`, and
/// returns the pending-exception marker the generated glue passes through.
pub fn throw(env: &Env, mut err: BudgetError) -> Error {
  // Messages quote user input (keys, names); a NUL byte would stop the throw.
  if err.message.contains('\0') {
    err.message = err.message.replace('\0', "\\0");
  }
  let thrown = match err.kind {
    ErrorKind::Type => env.throw_type_error(&err.message, Some(err.code)),
    ErrorKind::Range => env.throw_range_error(&err.message, Some(err.code)),
    ErrorKind::State | ErrorKind::Snapshot => env.throw_error(&err.message, Some(err.code)),
  };
  match thrown {
    Ok(()) => Error::new(Status::PendingException, err.message),
    Err(e) => e,
  }
}

/// Maps a core result, throwing its error.
pub fn or_throw<T>(env: &Env, r: budget_core::Result<T>) -> napi::Result<T> {
  r.map_err(|e| throw(env, e))
}
