//! Who owns a persist path: an OS lock on `<file>.lock`, taken by trackers and
//! families alike, so they exclude each other.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::file::write_target;
use super::{io_error, persist_error, process_tag};
use crate::{BudgetError, ErrorKind};

/// Who owns a persist path: a tracker, or a `BudgetFamily` (whose file holds
/// the family's snapshot). Both take the same lock, so they exclude each other.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Owner {
  /// An `ErrorBudgetTracker` with `persist`.
  Tracker,
  /// A `BudgetFamily` with `persist`.
  Family,
}

impl Owner {
  fn noun(self) -> &'static str {
    match self {
      Owner::Tracker => "tracker",
      Owner::Family => "family",
    }
  }
}

/// The exclusive ownership of a persist path: an OS lock (`flock` on Unix,
/// `LockFileEx` on Windows) on `<file>.lock` beside the persist file, which
/// holds the owner's process id (and ` family` for a family) for the message
/// a second owner gets. Held from before the file is read until the owner's
/// final save; the kernel drops it when the process ends, however it ends, so
/// a lock of a dead process (`kill -9`, a crash) is simply taken over.
/// Dropping it deletes the lock file, then releases the lock.
pub struct PersistLock {
  /// The open, locked lock file (`None` where the platform has no locks: WASI).
  file: Option<File>,
  path: PathBuf,
}

impl PersistLock {
  /// Takes the lock of `path` (a persist path; through symlinks, so two links
  /// to one file share one lock) for `owner`, or says who holds it:
  /// `ERR_PERSIST_LOCKED`. What the lock file says is only for that message:
  /// a stale file (its process gone, whatever pid it names) is taken over.
  pub fn take(path: &Path, owner: Owner) -> Result<PersistLock, BudgetError> {
    // A path that cannot be resolved is reported by the read or write that follows.
    let Ok(target) = write_target(path) else { return Ok(PersistLock { file: None, path: path.to_path_buf() }) };
    let mut name = target.file_name().map(|n| n.to_os_string()).unwrap_or_else(|| "snapshot".into());
    name.push(".lock");
    let lock_path = target.with_file_name(name);
    // A retry only when the previous owner deleted the file between our open and our lock.
    for _ in 0..16 {
      // Where no lock file can be made (a missing or read-only directory, a path
      // through a file), or no lock taken (WASI has none), the path is used
      // unlocked: reading and writing it then fail on their own, with their own error.
      let unlocked = || Ok(PersistLock { file: None, path: lock_path.clone() });
      let Ok(mut file) = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&lock_path) else {
        return unlocked();
      };
      match file.try_lock() {
        Ok(()) => {}
        Err(fs::TryLockError::WouldBlock) => return Err(locked_error(path, &lock_path, &mut file, owner)),
        Err(fs::TryLockError::Error(_)) => return unlocked(),
      }
      if !same_file(&file, &lock_path) {
        continue;
      }
      let tag = match owner {
        Owner::Tracker => format!("{}\n", process_tag()),
        Owner::Family => format!("{} family\n", process_tag()),
      };
      let written = file.set_len(0).and_then(|()| file.write_all(tag.as_bytes()));
      written.map_err(|e| io_error(path, "lock", e))?;
      return Ok(PersistLock { file: Some(file), path: lock_path });
    }
    Err(persist_error(path, format!("cannot lock {}: it keeps being replaced", lock_path.display())))
  }
}

impl Drop for PersistLock {
  fn drop(&mut self) {
    // Deleted while still locked (on Unix): whoever opens it later locks a new file.
    if cfg!(unix) && self.file.is_some() {
      let _ = fs::remove_file(&self.path);
    }
    self.file = None;
  }
}

/// Whether the open `file` is still the one at `path` (Unix: same device and inode).
#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
  use std::os::unix::fs::MetadataExt;
  match (file.metadata(), fs::metadata(path)) {
    (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
    _ => false,
  }
}

/// Windows cannot delete an open file: it is always the one at its path.
#[cfg(not(unix))]
fn same_file(_file: &File, _path: &Path) -> bool {
  true
}

/// `ERR_PERSIST_LOCKED`: `path` has an owner, named by the pid (and kind) in
/// its lock file; `wanted_by` is the one refused.
fn locked_error(path: &Path, lock_path: &Path, file: &mut File, wanted_by: Owner) -> BudgetError {
  let mut text = String::new();
  let _ = Read::by_ref(file).take(40).read_to_string(&mut text);
  let mut words = text.split_whitespace();
  let pid = words.next().and_then(|w| w.parse::<u64>().ok());
  let held_by = if words.next() == Some("family") { Owner::Family } else { Owner::Tracker };
  let owner = match pid {
    Some(pid) if pid == process_tag() && held_by == wanted_by => format!("another {} of this process", held_by.noun()),
    Some(pid) if pid == process_tag() => format!("a {} of this process", held_by.noun()),
    Some(pid) => format!("process {pid}"),
    None => "another process".to_owned(),
  };
  let rule = if held_by == wanted_by {
    format!("one {0} owns a persist path; close() the other first, or give each {0} its own path", wanted_by.noun())
  } else {
    "a family and a tracker cannot share a persist path; close() the other first, or give each its own path".to_owned()
  };
  BudgetError {
    kind: ErrorKind::State,
    code: "ERR_PERSIST_LOCKED",
    field: None,
    message: format!("{}: is in use by {owner} (lock {}): {rule}", path.display(), lock_path.display()),
  }
}
