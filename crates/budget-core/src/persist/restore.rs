//! Where a new tracker starts from: a snapshot given, the persist file, or nothing.

use std::fs;
use std::path::Path;

use super::{io_error, persist_error, read_persist_file, remove_stale_temp_files};
use crate::{BudgetError, CheckedConfig, Config, Snapshot, Tracker};

/// The core a new tracker of `config` starts from: `snapshot` when given
/// (then nothing may exist at `persist_path` yet), else the file at
/// `persist_path` when it exists (its config must match; temp files of dead
/// writers are deleted first), else an empty window. With the real clock
/// (`real_clock`), a snapshot saved later than `now_ms` (a clock that was
/// ahead, then corrected) is taken as saved at `now_ms`, see
/// [`Snapshot::saved_no_later_than`]; a manual clock is the caller's to move.
pub fn initial_core(
  config: &Config,
  snapshot: Option<&Snapshot>,
  persist_path: Option<&Path>,
  real_clock: bool,
  now_ms: i64,
) -> Result<Tracker, BudgetError> {
  let restore = |snapshot: Snapshot| {
    let snapshot = if real_clock { snapshot.saved_no_later_than(now_ms) } else { snapshot };
    Tracker::from_snapshot(&snapshot, now_ms)
  };
  if let Some(snapshot) = snapshot {
    if let Some(path) = persist_path {
      refuse_existing(path)?;
    }
    return restore(snapshot.clone());
  }
  let Some(path) = persist_path else {
    return Tracker::new(config.clone(), now_ms);
  };
  remove_stale_temp_files(path);
  let Some(text) = read_persist_file(path)? else {
    return Tracker::new(config.clone(), now_ms);
  };
  let snapshot =
    Snapshot::parse(&text).map_err(|e| BudgetError::snapshot(format!("{}: {}", path.display(), e.message)))?;
  let (wanted, saved) = (CheckedConfig::new(config.clone())?, CheckedConfig::new(snapshot.config.clone())?);
  let differences = wanted.differences(&saved);
  if !differences.is_empty() {
    return Err(BudgetError::snapshot(format!(
      "{} holds a tracker with another config ({} differ{}): delete the file or use the same config",
      path.display(),
      differences.join(", "),
      if differences.len() == 1 { "s" } else { "" }
    )));
  }
  restore(snapshot)
}

/// `restore(json, { persist })` starts from `json`: a file already at the
/// path (another tracker's state, or anything else) is never overwritten.
fn refuse_existing(path: &Path) -> Result<(), BudgetError> {
  match fs::symlink_metadata(path) {
    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
    Err(e) => Err(io_error(path, "inspect", e)),
    Ok(_) => Err(persist_error(
      path,
      "already exists: restore(json, { persist }) never overwrites it; delete it, or restore from it with \
       new ErrorBudgetTracker({ persist })"
        .into(),
    )),
  }
}
