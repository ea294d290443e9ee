//! The one error type of the core. The binding maps `kind` to a JS error class.

use std::fmt;

/// Which JS error class an error becomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
  /// A value of the wrong type (JS `TypeError`).
  Type,
  /// A value outside its allowed range (JS `RangeError`).
  Range,
  /// An operation the tracker's state forbids (JS `Error`).
  State,
  /// A snapshot that cannot be restored (JS `Error`, code `ERR_SNAPSHOT_INVALID`).
  Snapshot,
}

/// An error with a stable `code`, the field it is about (if any) and what is allowed.
///
/// The field is a path inside the caller's argument (`targetRate`,
/// `alerts[0].burnRate`, `persist.path`); the binding renders it after the name
/// the caller gave that argument (`config`, `options` for `restore()`, `slo`
/// for `prometheusRules()`): see [`BudgetError::render`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetError {
  /// Which JS error class it becomes.
  pub kind: ErrorKind,
  /// A stable code (`ERR_…`), set as the JS error's `code`.
  pub code: &'static str,
  /// The field the error is about, as a path inside the argument; `None` for
  /// errors about no field (a closed tracker, a corrupt snapshot).
  pub field: Option<String>,
  /// What is wrong: after the field when there is one, else the whole message.
  pub message: String,
}

impl BudgetError {
  /// A wrong type: `code` is `ERR_INVALID_ARG_TYPE`.
  pub fn invalid_type(message: impl Into<String>) -> Self {
    Self { kind: ErrorKind::Type, code: "ERR_INVALID_ARG_TYPE", field: None, message: message.into() }
  }

  /// A value of the right type that is not allowed (an unknown key or status, a
  /// bad combination of fields, a NUL byte in a path): a `TypeError` with code
  /// `ERR_INVALID_ARG_VALUE`, as Node's own APIs throw for such values.
  pub fn invalid_value(message: impl Into<String>) -> Self {
    Self { kind: ErrorKind::Type, code: "ERR_INVALID_ARG_VALUE", field: None, message: message.into() }
  }

  /// A value out of range: `code` is `ERR_OUT_OF_RANGE`.
  pub fn out_of_range(message: impl Into<String>) -> Self {
    Self { kind: ErrorKind::Range, code: "ERR_OUT_OF_RANGE", field: None, message: message.into() }
  }

  /// An operation the tracker's setup does not allow: `code` is `ERR_INVALID_STATE`.
  pub fn invalid_state(message: impl Into<String>) -> Self {
    Self { kind: ErrorKind::State, code: "ERR_INVALID_STATE", field: None, message: message.into() }
  }

  /// A corrupt, truncated, wrong-version or inconsistent snapshot.
  pub fn snapshot(message: impl Into<String>) -> Self {
    Self { kind: ErrorKind::Snapshot, code: "ERR_SNAPSHOT_INVALID", field: None, message: message.into() }
  }

  /// An operation on a closed tracker: `code` is `ERR_TRACKER_CLOSED`.
  pub fn closed(operation: &str) -> Self {
    Self {
      kind: ErrorKind::State,
      code: "ERR_TRACKER_CLOSED",
      field: None,
      message: format!("cannot call {operation}() on a closed ErrorBudgetTracker"),
    }
  }
}

impl BudgetError {
  /// The same error about `field` (a path such as `targetRate` or `alerts[0]`);
  /// a field already set is taken as inside it (`persist` + `path` is `persist.path`).
  pub fn at(mut self, field: &str) -> Self {
    self.field = Some(match self.field.take() {
      None => field.to_string(),
      Some(inner) if inner.starts_with('[') => format!("{field}{inner}"),
      Some(inner) => format!("{field}.{inner}"),
    });
    self
  }

  /// The message as the caller reads it: the field after `root`, the name the
  /// caller gave the argument (`config`, `restore(json, options): options`).
  pub fn render(&self, root: &str) -> String {
    match &self.field {
      None => self.message.clone(),
      Some(field) if field.starts_with('[') => format!("{root}{field} {}", self.message),
      Some(field) => format!("{root}.{field} {}", self.message),
    }
  }

  /// The same error with `what: ` (the call, e.g. `record(success)`) before its message.
  pub fn prefixed(mut self, what: &str) -> Self {
    self.message = format!("{what}: {}", self.message);
    self
  }
}

impl fmt::Display for BudgetError {
  fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    write!(f, "{} ({})", self.render("config"), self.code)
  }
}

impl std::error::Error for BudgetError {}

/// Result of core operations.
pub type Result<T> = std::result::Result<T, BudgetError>;
