//! Snapshots from JS, restoring on start, and autosave: atomic writes (temp
//! file, fsync, rename, fsync of the directory) from a small thread per
//! persisted tracker, plus a final write on `close()`.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;
use std::time::Duration;

use budget_core::alerts::policy_for;
use budget_core::{BudgetError, Snapshot, Tracker};
use napi::Env;
use napi_derive::napi;
use parking_lot::{Condvar, Mutex};

use crate::config::{Persist, Plan};
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
    let Some(autosave) = &self.autosave else {
      return Err(crate::error::throw(&env, BudgetError::invalid_state("save() needs a tracker created with persist")));
    };
    or_throw(&env, autosave.save_now())
  }
}

/// The core a new tracker starts from: the snapshot given, else the persist
/// file when it exists (its config must match), else an empty window.
pub fn initial_core(plan: &Plan, now_ms: i64) -> Result<Tracker, BudgetError> {
  if let Some(snapshot) = &plan.snapshot {
    return Tracker::from_snapshot(snapshot, now_ms);
  }
  let Some(persist) = &plan.persist else {
    return Tracker::new(plan.config.clone(), now_ms);
  };
  let text = match fs::read_to_string(&persist.path) {
    Ok(text) => text,
    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Tracker::new(plan.config.clone(), now_ms),
    Err(e) => return Err(write_error(&persist.path, "read", e)),
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
  Tracker::from_snapshot(&snapshot, now_ms)
}

fn write_error(path: &Path, what: &str, e: std::io::Error) -> BudgetError {
  BudgetError {
    kind: budget_core::ErrorKind::State,
    code: if what == "read" { "ERR_PERSIST_READ" } else { "ERR_PERSIST_WRITE" },
    field: None,
    message: format!("cannot {what} {}: {e}", path.display()),
  }
}

/// Replaces `path` with `contents` so that a crash at any moment leaves either
/// the old file or the new one, never a torn one.
pub fn write_atomically(path: &Path, contents: &str) -> std::io::Result<()> {
  let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
  let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("snapshot");
  // Unique per write: two trackers (or threads) may save to the same path.
  static WRITES: AtomicU64 = AtomicU64::new(0);
  let n = WRITES.fetch_add(1, Ordering::Relaxed);
  let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
  let result = (|| {
    let mut file = File::create(&tmp)?;
    file.write_all(contents.as_bytes())?;
    file.sync_all()?;
    fs::rename(&tmp, path)?;
    // The rename itself is durable only once the directory is synced.
    File::open(dir)?.sync_all()
  })();
  if result.is_err() {
    let _ = fs::remove_file(&tmp);
  }
  result
}

struct Shared {
  path: std::path::PathBuf,
  state: Weak<TrackerState>,
  stopped: Mutex<bool>,
  wake: Condvar,
  /// Serialises the thread's writes with `save()` and `close()`.
  writing: Mutex<()>,
}

/// The autosave of one tracker: a thread that saves every interval until stopped.
pub struct Autosave {
  shared: Arc<Shared>,
  thread: Option<JoinHandle<()>>,
}

impl Autosave {
  /// Starts saving `state` to `persist.path` every `persist.interval_ms`.
  pub fn start(state: &Arc<TrackerState>, persist: &Persist) -> Autosave {
    let shared = Arc::new(Shared {
      path: persist.path.clone(),
      state: Arc::downgrade(state),
      stopped: Mutex::new(false),
      wake: Condvar::new(),
      writing: Mutex::new(()),
    });
    let interval = Duration::from_millis(persist.interval_ms);
    let worker = Arc::clone(&shared);
    let thread = std::thread::Builder::new()
      .name("captcha-budget-autosave".into())
      .spawn(move || loop {
        {
          let mut stopped = worker.stopped.lock();
          if !*stopped {
            worker.wake.wait_for(&mut stopped, interval);
          }
          if *stopped {
            return;
          }
        }
        match save(&worker) {
          Ok(true) => {}
          Ok(false) => return, // the tracker is gone
          Err(e) => eprintln!("captcha-error-budget: autosave failed: {}", e.message),
        }
      })
      .expect("spawn the autosave thread");
    Autosave { shared, thread: Some(thread) }
  }

  /// Saves now, from the calling thread.
  pub fn save_now(&self) -> Result<(), BudgetError> {
    save(&self.shared).map(|_| ())
  }

  /// Stops the thread (after any write under way).
  pub fn stop(&mut self) {
    *self.shared.stopped.lock() = true;
    self.shared.wake.notify_all();
    if let Some(thread) = self.thread.take() {
      let _ = thread.join();
    }
  }
}

impl Drop for Autosave {
  fn drop(&mut self) {
    *self.shared.stopped.lock() = true;
    self.shared.wake.notify_all();
  }
}

/// Writes one snapshot; `Ok(false)` when the tracker no longer exists.
fn save(shared: &Shared) -> Result<bool, BudgetError> {
  let Some(state) = shared.state.upgrade() else {
    return Ok(false);
  };
  let json = state.with_core(|core, _, _| core.snapshot_json());
  let _one_writer = shared.writing.lock();
  write_atomically(&shared.path, &json).map_err(|e| write_error(&shared.path, "write", e))?;
  Ok(true)
}
