//! The persist file: read only when it is a regular file of a bounded size,
//! written atomically (a temp file created exclusively, fsync, rename, fsync of
//! the directory) through symlinks, and the temp files of dead writers deleted.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::{io_error, persist_error, process_tag};
use crate::BudgetError;

/// The most bytes a persist file (or a snapshot `gate` reads) may hold: 256
/// MiB, thrice the largest snapshot (a million buckets of 2^53 − 1 counts).
pub const MAX_SNAPSHOT_BYTES: u64 = 256 << 20;

/// The persist file's text, `None` when there is none. Never blocks on a FIFO
/// or device: anything but a regular file (after symlinks) is refused, and so is
/// one larger than [`MAX_SNAPSHOT_BYTES`] (`ERR_PERSIST_READ`).
pub fn read_persist_file(path: &Path) -> Result<Option<String>, BudgetError> {
  let file = match open_nonblocking(path) {
    Ok(file) => file,
    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
    Err(e) => return Err(io_error(path, "read", e)),
  };
  let meta = file.metadata().map_err(|e| io_error(path, "read", e))?;
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
  file.take(MAX_SNAPSHOT_BYTES + 1).read_to_string(&mut text).map_err(|e| io_error(path, "read", e))?;
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
pub(super) fn write_target(path: &Path) -> Result<PathBuf, BudgetError> {
  let mut target = path.to_path_buf();
  for _ in 0..40 {
    match fs::symlink_metadata(&target) {
      Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(target),
      Err(e) => return Err(io_error(path, "inspect", e)),
      Ok(meta) if meta.file_type().is_symlink() => {
        let link = fs::read_link(&target).map_err(|e| io_error(path, "follow", e))?;
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
/// running left behind (a `kill -9` between creating and renaming one):
/// `.<name>.<pid>.<n>-<random>.tmp` beside the file `path` leads to.
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
/// Anything but a regular file (or nothing) at the end of the links is
/// refused; errors are `ERR_PERSIST_WRITE`.
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
  result.map_err(|e| io_error(path, "write", e))
}
