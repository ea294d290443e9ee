//! Persist files, without Node-API: where a tracker starts from (`restore`),
//! the file itself (`file`: bounded reads of regular files only, atomic writes
//! through symlinks, the clean-up of dead processes' temp files), who owns a
//! path (`lock`: an OS lock shared by trackers and families), and the one
//! saving thread of the process (`saver`). The binding adds what needs Node:
//! the saves at process exit and on SIGTERM/SIGINT, and the JS functions.

mod file;
mod lock;
mod restore;
mod saver;

pub use file::{read_persist_file, remove_stale_temp_files, write_atomically, MAX_SNAPSHOT_BYTES};
pub use lock::{Owner, PersistLock};
pub use restore::initial_core;
pub use saver::{ensure_saver, save_all, schedule, Autosaved, Persisted, SaveTarget};

use std::path::Path;

use crate::{BudgetError, ErrorKind};

/// `ERR_PERSIST_WRITE` about `path`.
fn persist_error(path: &Path, message: String) -> BudgetError {
  BudgetError {
    kind: ErrorKind::State,
    code: "ERR_PERSIST_WRITE",
    field: None,
    message: format!("{}: {message}", path.display()),
  }
}

/// An I/O error of `path` while doing `what` to it: `ERR_PERSIST_READ` for a
/// read, else `ERR_PERSIST_WRITE`.
fn io_error(path: &Path, what: &str, e: std::io::Error) -> BudgetError {
  let mut error = persist_error(path, format!("cannot {what} it: {e}"));
  if what == "read" {
    error.code = "ERR_PERSIST_READ";
  }
  error
}

/// This process's id, to keep temporary files of processes apart.
#[cfg(not(target_os = "wasi"))]
fn process_tag() -> u64 {
  u64::from(std::process::id())
}

/// WASI has no process ids (`std::process::id()` panics there): the
/// wall-clock time this module instance first wrote, in ns, instead.
#[cfg(target_os = "wasi")]
fn process_tag() -> u64 {
  static TAG: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
  *TAG.get_or_init(|| {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.map_or(0, |d| d.as_nanos() as u64)
  })
}
