//! Snapshots from JS, restoring on start, and autosave. Writes are atomic
//! (temp file, fsync, rename, fsync of the directory) and ordered: a tracker's
//! snapshots reach its file in the order they were taken. One saving thread
//! serves every persisted tracker of the process; the native state owns its
//! autosave, and its final save happens when it closes (`close()`, the last
//! handle collected, environment teardown, process exit: see `exit_hooks`).

use std::collections::BinaryHeap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Weak};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use budget_core::alerts::policy_for;
use budget_core::{BudgetError, ErrorKind, Snapshot, Tracker};
use napi::bindgen_prelude::{FnArgs, Function};
use napi::Env;
use napi_derive::napi;
use parking_lot::{Condvar, Mutex};

use crate::config::{ClockKind, Persist, Plan};
use crate::error::or_throw;
use crate::state::TrackerState;
use crate::tracker::ErrorBudgetTracker;

#[napi]
impl ErrorBudgetTracker {
  /// The tracker's whole state as JSON (schema version 1: config with the alert
  /// policy, bucket counters with epoch-ms starts, totals, lifetime counters).
  /// `ErrorBudgetTracker.restore(json)` turns it back into a tracker.
  #[napi]
  pub fn snapshot(&self) -> String {
    self.handle.with_core(|core, _, _| core.snapshot_json())
  }

  /// Writes a snapshot to `persist.path` now (atomically). Throws
  /// `ERR_PERSIST_WRITE` when the file cannot be written, and
  /// `ERR_INVALID_STATE` when the tracker was created without `persist`.
  #[napi]
  pub fn save(&self, env: Env) -> napi::Result<()> {
    or_throw(&env, self.handle.shared.save_now())
  }
}

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
  let (wanted, saved) = (policy_for(&plan.config)?, policy_for(&snapshot.config)?);
  let differences = crate::shared::config_differences((&plan.config, &wanted), (&snapshot.config, &saved));
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
  BudgetError { kind: ErrorKind::State, code: "ERR_PERSIST_WRITE", message: format!("{}: {message}", path.display()) }
}

fn write_error(path: &Path, what: &str, e: std::io::Error) -> BudgetError {
  persist_error(path, format!("cannot {what} it: {e}"))
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

/// The persist file's text, `None` when there is none. Never blocks on a FIFO
/// or device: anything but a regular file (after symlinks) is refused.
fn read_persist_file(path: &Path) -> Result<Option<String>, BudgetError> {
  let mut file = match OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path) {
    Ok(file) => file,
    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
    Err(e) => return Err(write_error(path, "read", e)),
  };
  let meta = file.metadata().map_err(|e| write_error(path, "read", e))?;
  if !meta.is_file() {
    return Err(not_regular(path));
  }
  let mut text = String::new();
  file.read_to_string(&mut text).map_err(|e| write_error(path, "read", e))?;
  Ok(Some(text))
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
fn remove_stale_temp_files(path: &Path) {
  let Ok(target) = write_target(path) else { return };
  let (dir, prefix) = temp_prefix(&target);
  let Ok(entries) = fs::read_dir(&dir) else { return };
  for entry in entries.flatten() {
    let name = entry.file_name();
    let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)).and_then(|r| r.strip_suffix(".tmp")) else {
      continue;
    };
    let Some(pid) = rest.split('.').next().and_then(|p| p.parse::<libc::pid_t>().ok()) else { continue };
    // SAFETY: signal 0 only checks whether the process exists.
    let gone = pid > 0
      && unsafe { libc::kill(pid, 0) } != 0
      && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
    if gone {
      let _ = fs::remove_file(entry.path());
    }
  }
}

/// Replaces `path` (or the file it links to) with `contents` so that a crash
/// at any moment leaves either the old file or the new one, never a torn one.
pub fn write_atomically(path: &Path, contents: &str) -> Result<(), BudgetError> {
  let target = write_target(path)?;
  let (dir, prefix) = temp_prefix(&target);
  // Unique per write: two trackers (or threads) may save to the same path.
  static WRITES: AtomicU64 = AtomicU64::new(0);
  let n = WRITES.fetch_add(1, Ordering::Relaxed);
  let tmp = dir.join(format!("{prefix}{}.{n}.tmp", std::process::id()));
  let result = (|| {
    let mut file = File::create(&tmp)?;
    file.write_all(contents.as_bytes())?;
    file.sync_all()?;
    fs::rename(&tmp, &target)?;
    // The rename itself is durable only once the directory is synced.
    File::open(&dir)?.sync_all()
  })();
  if result.is_err() {
    let _ = fs::remove_file(&tmp);
  }
  result.map_err(|e| write_error(path, "write", e))
}

/// The autosave settings of one tracker, owned by its native state.
pub struct Persisted {
  path: PathBuf,
  interval: Duration,
  /// Held from taking a snapshot until it is written: snapshots reach the
  /// file in the order they were taken, so the last write is the newest.
  writing: Mutex<()>,
}

impl Persisted {
  /// Settings for `persist`.
  pub fn new(persist: &Persist) -> Self {
    Persisted {
      path: persist.path.clone(),
      interval: Duration::from_millis(persist.interval_ms),
      writing: Mutex::new(()),
    }
  }

  /// Takes a snapshot with `take` and writes it, in order with every other
  /// write of this tracker. `take` returns `None` to skip the write.
  pub fn write(&self, take: impl FnOnce() -> Option<String>) -> Result<(), BudgetError> {
    let _in_order = self.writing.lock();
    let Some(json) = take() else { return Ok(()) };
    test_hooks::delay_write();
    write_atomically(&self.path, &json)
  }
}

/// Test-only pause between taking a snapshot and writing it, in the saving
/// thread only (`CAPTCHA_BUDGET_TEST_SAVE_DELAY_MS`): how the specs make an
/// autosave race `close()`.
mod test_hooks {
  use std::sync::LazyLock;
  use std::time::Duration;

  static DELAY: LazyLock<Option<Duration>> =
    LazyLock::new(|| std::env::var("CAPTCHA_BUDGET_TEST_SAVE_DELAY_MS").ok()?.parse().ok().map(Duration::from_millis));

  thread_local!(static IN_SAVER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });

  pub fn mark_saver_thread() {
    IN_SAVER.with(|s| s.set(true));
  }

  pub fn delay_write() {
    if let Some(delay) = *DELAY {
      if IN_SAVER.with(|s| s.get()) {
        std::thread::sleep(delay);
      }
    }
  }
}

/// One tracker's next autosave.
struct Due {
  at: Instant,
  seq: u64,
  state: Weak<TrackerState>,
}

impl PartialEq for Due {
  fn eq(&self, other: &Self) -> bool {
    (self.at, self.seq) == (other.at, other.seq)
  }
}
impl Eq for Due {}
impl PartialOrd for Due {
  fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
    Some(self.cmp(other))
  }
}
/// Reversed: `BinaryHeap` pops the earliest first.
impl Ord for Due {
  fn cmp(&self, other: &Self) -> std::cmp::Ordering {
    (other.at, other.seq).cmp(&(self.at, self.seq))
  }
}

#[derive(Default)]
struct Queue {
  due: BinaryHeap<Due>,
  seq: u64,
  running: bool,
  /// Every persisted tracker and the thread that created it, for the saves
  /// at process exit (pruned as trackers go).
  all: Vec<(ThreadId, Weak<TrackerState>)>,
}

/// The one saving thread and its queue.
struct Saver {
  queue: Mutex<Queue>,
  wake: Condvar,
}

static SAVER: LazyLock<Saver> = LazyLock::new(|| Saver { queue: Mutex::default(), wake: Condvar::new() });

/// Starts the saving thread unless it runs. A failed spawn (a thread or pids
/// limit) is an error for the caller to throw, never an abort.
pub fn ensure_saver() -> Result<(), BudgetError> {
  let mut queue = SAVER.queue.lock();
  if queue.running {
    return Ok(());
  }
  std::thread::Builder::new().name("captcha-budget-saver".into()).spawn(run_saver).map_err(|e| BudgetError {
    kind: ErrorKind::State,
    code: "ERR_THREAD_SPAWN",
    message: format!("cannot start the autosave thread: {e} (a thread or process limit?); nothing was created"),
  })?;
  queue.running = true;
  Ok(())
}

/// Schedules `state`'s autosaves (after `ensure_saver`).
pub fn schedule(state: &Arc<TrackerState>, interval: Duration) {
  let mut queue = SAVER.queue.lock();
  queue.seq += 1;
  let due = Due { at: Instant::now() + interval, seq: queue.seq, state: Arc::downgrade(state) };
  queue.due.push(due);
  queue.all.retain(|(_, w)| w.strong_count() > 0);
  queue.all.push((std::thread::current().id(), Arc::downgrade(state)));
  SAVER.wake.notify_one();
}

/// Saves every open persisted tracker now (`everywhere`), or those created by
/// this thread: what a process or worker about to exit does.
fn save_all(everywhere: bool) {
  let me = std::thread::current().id();
  let states: Vec<_> = SAVER
    .queue
    .lock()
    .all
    .iter()
    .filter(|(thread, _)| everywhere || *thread == me)
    .filter_map(|(_, w)| w.upgrade())
    .collect();
  for state in states {
    if let Err(e) = state.autosave() {
      eprintln!("captcha-error-budget: the save at exit failed: {}", e.message);
    }
  }
}

/// Installs, once per JS environment, the saves that no finalizer would make:
/// `process.on('exit')` (natural exit and `process.exit()`) saves this
/// thread's persisted trackers, and on the main thread `SIGTERM` and `SIGINT`
/// listeners save every one of the process, then — when no other listener
/// would handle the signal — let it terminate the process as it would have.
pub fn exit_hooks(env: &Env) -> napi::Result<()> {
  thread_local!(static INSTALLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
  if INSTALLED.with(|i| i.get()) {
    return Ok(());
  }
  let save_mine = env.create_function_from_closure::<(), (), _>("saveBudgetTrackers", |_| {
    save_all(false);
    Ok(())
  })?;
  let save_every = env.create_function_from_closure::<(), (), _>("saveAllBudgetTrackers", |_| {
    save_all(true);
    Ok(())
  })?;
  let install: Function<FnArgs<(SaveFn, SaveFn)>, ()> = env.run_script(INSTALL_EXIT_HOOKS)?;
  install.call(FnArgs::from((save_mine, save_every)))?;
  INSTALLED.with(|i| i.set(true));
  Ok(())
}

/// A native function of no arguments that saves trackers.
type SaveFn<'a> = Function<'a, (), ()>;

const INSTALL_EXIT_HOOKS: &str = r#"(saveMine, saveEvery) => {
  process.on('exit', () => saveMine())
  const threads = process.getBuiltinModule?.('node:worker_threads')
  if (threads && !threads.isMainThread) return // signals reach the main thread only
  for (const signal of ['SIGTERM', 'SIGINT']) {
    const onSignal = () => {
      saveEvery()
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal)
        process.kill(process.pid, signal)
      }
    }
    process.on(signal, onSignal)
  }
}"#;

fn run_saver() {
  test_hooks::mark_saver_thread();
  let mut queue = SAVER.queue.lock();
  loop {
    let Some(next) = queue.due.peek() else {
      SAVER.wake.wait(&mut queue);
      continue;
    };
    if next.at > Instant::now() {
      let at = next.at;
      SAVER.wake.wait_until(&mut queue, at);
      continue;
    }
    let Due { state, .. } = queue.due.pop().expect("peeked");
    // A tracker gone or closed has had its final save: it leaves the queue.
    let Some(state) = state.upgrade().filter(|s| !s.is_closed()) else { continue };
    let interval = state.autosave_interval();
    drop(queue);
    if let Err(e) = state.autosave() {
      eprintln!("captcha-error-budget: autosave failed: {}", e.message);
    }
    queue = SAVER.queue.lock();
    queue.seq += 1;
    let seq = queue.seq;
    if let Some(interval) = interval {
      queue.due.push(Due { at: Instant::now() + interval, seq, state: Arc::downgrade(&state) });
    }
    // The last strong reference may be ours: dropping it closes the state
    // (a final save) — outside the queue's lock.
    drop(queue);
    drop(state);
    queue = SAVER.queue.lock();
  }
}

impl Persisted {
  /// The autosave interval.
  pub fn interval(&self) -> Duration {
    self.interval
  }

  /// The persist path.
  pub fn path(&self) -> &Path {
    &self.path
  }

  /// Holds off every other write of this tracker.
  pub fn lock(&self) -> parking_lot::MutexGuard<'_, ()> {
    self.writing.lock()
  }
}
