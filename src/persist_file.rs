//! The persist file's lock, read and atomic write for `BudgetFamily`
//! (lib/family/): the ones a tracker's persist path uses, so that a family and
//! a tracker on one path exclude each other and a family's file is read and
//! written with the same care (no FIFO or device, no planted temp file).
//! Internal: index.js does not export it.

use std::path::Path;

use napi::Env;
use napi_derive::napi;

use crate::error::or_throw;
use budget_core::persist::{self, Owner, PersistLock};

/// A family's hold on its persist path (`persistFileLock(path)`), until `release()`.
#[napi]
pub struct PersistFileLock {
  lock: Option<PersistLock>,
}

#[napi]
impl PersistFileLock {
  /// Gives the path up (deletes the lock file, then unlocks); again is a no-op.
  #[napi]
  pub fn release(&mut self) {
    self.lock = None;
  }
}

/// Takes the persist lock of `path` for a family: `ERR_PERSIST_LOCKED` when a
/// tracker or family (of any process) holds it; a dead holder's lock is taken over.
// Called from JS only: unused in `cargo test` builds.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn persist_file_lock(env: Env, path: String) -> napi::Result<PersistFileLock> {
  let lock = or_throw(&env, PersistLock::take(Path::new(&path), Owner::Family))?;
  Ok(PersistFileLock { lock: Some(lock) })
}

/// The text of the persist file at `path`, `null` when there is none; temp
/// files of dead writers are deleted first. Refuses what a tracker refuses:
/// anything but a regular file (a FIFO is never waited on), over 256 MiB.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn persist_file_read(env: Env, path: String) -> napi::Result<Option<String>> {
  persist::remove_stale_temp_files(Path::new(&path));
  or_throw(&env, persist::read_persist_file(Path::new(&path)))
}

/// Replaces the file at `path` (or the file it links to) with `contents`
/// atomically, as a tracker's save does.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn persist_file_write(env: Env, path: String, contents: String) -> napi::Result<()> {
  or_throw(&env, persist::write_atomically(Path::new(&path), &contents))
}
