//! Restoring on start, and the persist file: atomic writes
//! (temp file, fsync, rename, fsync of the directory) through symlinks, only
//! to regular files, and the clean-up of temp files of dead processes. The
//! saving thread and the exit hooks are in `saver`.

mod saver;

pub use saver::{ensure_saver, exit_hooks, schedule, Autosaved, Persisted};

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use budget_core::{BudgetError, CheckedConfig, ErrorKind, Snapshot, Tracker};

use crate::config::{ClockKind, Plan};

/// The core a new tracker starts from: the snapshot given, else the persist
/// file when it exists (its config must match), else an empty window. With
/// the real clock, a snapshot saved later than `now_ms` (a clock that was
/// ahead, then corrected) is taken as saved at `now_ms`, see
/// `Snapshot::saved_no_later_than`; a manual clock is the caller's to move.
pub fn initial_core(plan: &Plan, now_ms: i64) -> Result<Tracker, BudgetError> {
  let restore = |snapshot: Snapshot| {
    let snapshot = if plan.clock == ClockKind::Monotonic { snapshot.saved_no_later_than(now_ms) } else { snapshot };
    Tracker::from_snapshot(&snapshot, now_ms)
  };
  if let Some(snapshot) = &plan.snapshot {
    if let Some(persist) = &plan.persist {
      refuse_existing(&persist.path)?;
    }
    return restore(snapshot.clone());
  }
  let Some(persist) = &plan.persist else {
    return Tracker::new(plan.config.clone(), now_ms);
  };
  remove_stale_temp_files(&persist.path);
  let Some(text) = read_persist_file(&persist.path)? else {
    return Tracker::new(plan.config.clone(), now_ms);
  };
  let snapshot =
    Snapshot::parse(&text).map_err(|e| BudgetError::snapshot(format!("{}: {}", persist.path.display(), e.message)))?;
  let (wanted, saved) = (CheckedConfig::new(plan.config.clone())?, CheckedConfig::new(snapshot.config.clone())?);
  let differences = wanted.differences(&saved);
  if !differences.is_empty() {
    return Err(BudgetError::snapshot(format!(
      "{} holds a tracker with another config ({} differ{}): delete the file or use the same config",
      persist.path.display(),
      differences.join(", "),
      if differences.len() == 1 { "s" } else { "" }
    )));
  }
  restore(snapshot)
}

fn persist_error(path: &Path, message: String) -> BudgetError {
  BudgetError {
    kind: ErrorKind::State,
    code: "ERR_PERSIST_WRITE",
    field: None,
    message: format!("{}: {message}", path.display()),
  }
}

fn write_error(path: &Path, what: &str, e: std::io::Error) -> BudgetError {
  let mut error = persist_error(path, format!("cannot {what} it: {e}"));
  if what == "read" {
    error.code = "ERR_PERSIST_READ";
  }
  error
}

/// `restore(json, { persist })` starts from `json`: a file already at the
/// path (another tracker's state, or anything else) is never overwritten.
fn refuse_existing(path: &Path) -> Result<(), BudgetError> {
  match fs::symlink_metadata(path) {
    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
    Err(e) => Err(write_error(path, "inspect", e)),
    Ok(_) => Err(persist_error(
      path,
      "already exists: restore(json, { persist }) never overwrites it; delete it, or restore from it with \
       new ErrorBudgetTracker({ persist })"
        .into(),
    )),
  }
}

/// Who owns a persist path: a tracker, or a `BudgetFamily` (whose file holds
/// the family's snapshot). Both take the same lock, so they exclude each other.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Owner {
  Tracker,
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
/// a second owner gets. Held
/// from before the file is read until the tracker's final save; the kernel
/// drops it when the process ends, however it ends, so a lock of a dead
/// process (`kill -9`, a crash) is simply taken over. Dropping it deletes the
/// lock file, then releases the lock.
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
      written.map_err(|e| write_error(path, "lock", e))?;
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

/// The most bytes a persist file (or a snapshot `gate` reads) may hold: 256
/// MiB, thrice the largest snapshot (a million buckets of 2^53 − 1 counts).
pub const MAX_SNAPSHOT_BYTES: u64 = 256 << 20;

/// The persist file's text, `None` when there is none. Never blocks on a FIFO
/// or device: anything but a regular file (after symlinks) is refused, and so is
/// one larger than [`MAX_SNAPSHOT_BYTES`].
pub fn read_persist_file(path: &Path) -> Result<Option<String>, BudgetError> {
  let file = match open_nonblocking(path) {
    Ok(file) => file,
    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
    Err(e) => return Err(write_error(path, "read", e)),
  };
  let meta = file.metadata().map_err(|e| write_error(path, "read", e))?;
  if !meta.is_file() {
    return Err(not_regular(path));
  }
  let too_large = || {
    let mut error = persist_error(
      path,
      format!("is larger than the 256 MiB ({MAX_SNAPSHOT_BYTES} bytes) a snapshot may hold: not a persist file?"),
    );
    error.code = "ERR_PERSIST_READ";
    error
  };
  if meta.len() > MAX_SNAPSHOT_BYTES {
    return Err(too_large());
  }
  let mut text = String::new();
  // Never past the maximum, should the file grow while it is read.
  file.take(MAX_SNAPSHOT_BYTES + 1).read_to_string(&mut text).map_err(|e| write_error(path, "read", e))?;
  if text.len() as u64 > MAX_SNAPSHOT_BYTES {
    return Err(too_large());
  }
  Ok(Some(text))
}

/// Opens `path` for reading without blocking on a FIFO or device (whose
/// `open` would wait for a writer); the caller refuses what is not a file.
#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
  use std::os::unix::fs::OpenOptionsExt;
  OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)
}

/// Elsewhere (Windows, WASI) there are no FIFOs to block on.
#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
  OpenOptions::new().read(true).open(path)
}

/// Whether the process that wrote a temp file tagged `tag` has ended.
#[cfg(unix)]
fn writer_is_gone(tag: &str) -> bool {
  let Ok(pid) = tag.parse::<libc::pid_t>() else { return false };
  // SAFETY: signal 0 only checks whether the process exists.
  pid > 0 && unsafe { libc::kill(pid, 0) } != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

/// Without a way to ask whether a writer still runs, its files are kept.
#[cfg(not(unix))]
fn writer_is_gone(_tag: &str) -> bool {
  false
}

fn not_regular(path: &Path) -> BudgetError {
  persist_error(path, "is not a regular file (a FIFO, device or directory?): persist.path must name a file".into())
}

/// Where writes to `path` go: through symlinks (a symlinked persist path
/// writes its target, and stays a symlink), to a regular file or nothing.
fn write_target(path: &Path) -> Result<PathBuf, BudgetError> {
  let mut target = path.to_path_buf();
  for _ in 0..40 {
    match fs::symlink_metadata(&target) {
      Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(target),
      Err(e) => return Err(write_error(path, "inspect", e)),
      Ok(meta) if meta.file_type().is_symlink() => {
        let link = fs::read_link(&target).map_err(|e| write_error(path, "follow", e))?;
        target = target.parent().unwrap_or(Path::new("")).join(link);
      }
      Ok(meta) if meta.is_file() => return Ok(target),
      Ok(_) => return Err(not_regular(path)),
    }
  }
  Err(persist_error(path, "has too many levels of symbolic links".into()))
}

/// The temporary files of a write to `path` in progress (or interrupted).
fn temp_prefix(path: &Path) -> (PathBuf, String) {
  let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_path_buf();
  let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "snapshot".into());
  (dir, format!(".{name}."))
}

/// Deletes the temporary files that writes to `path` by processes no longer
/// running left behind (a `kill -9` between creating and renaming one).
pub fn remove_stale_temp_files(path: &Path) {
  let Ok(target) = write_target(path) else { return };
  let (dir, prefix) = temp_prefix(&target);
  let Ok(entries) = fs::read_dir(&dir) else { return };
  for entry in entries.flatten() {
    let name = entry.file_name();
    let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)).and_then(|r| r.strip_suffix(".tmp")) else {
      continue;
    };
    let gone = rest.split('.').next().is_some_and(writer_is_gone);
    if gone {
      let _ = fs::remove_file(entry.path());
    }
  }
}

/// Makes a rename in `dir` durable (Unix: fsync of the directory).
#[cfg(unix)]
fn sync_dir(dir: &Path) -> std::io::Result<()> {
  File::open(dir)?.sync_all()
}

/// Windows and WASI cannot open a directory as a file: the rename stands as is.
#[cfg(not(unix))]
fn sync_dir(_dir: &Path) -> std::io::Result<()> {
  Ok(())
}

/// Replaces `path` (or the file it links to) with `contents` so that a crash
/// at any moment leaves either the old file or the new one, never a torn one.
pub fn write_atomically(path: &Path, contents: &str) -> Result<(), BudgetError> {
  let target = write_target(path)?;
  let (dir, prefix) = temp_prefix(&target);
  // Unique per write (two trackers or threads may save to the same path) and
  // unpredictable, and created only where nothing is: a planted file or
  // symlink at the name fails the write instead of receiving it.
  static WRITES: AtomicU64 = AtomicU64::new(0);
  let n = WRITES.fetch_add(1, Ordering::Relaxed);
  let secret = getrandom::u64().map_err(|e| persist_error(path, format!("cannot name a temp file: {e}")))?;
  let tmp = dir.join(format!("{prefix}{}.{n}-{secret:016x}.tmp", process_tag()));
  let result = (|| {
    let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
    file.write_all(contents.as_bytes())?;
    file.sync_all()?;
    fs::rename(&tmp, &target)?;
    sync_dir(&dir)
  })();
  if result.is_err() {
    let _ = fs::remove_file(&tmp);
  }
  result.map_err(|e| write_error(path, "write", e))
}
