//! Persist files in a temporary directory: atomic writes through symlinks,
//! bounded reads of regular files only, dead writers' temp files, the owner
//! lock and its messages, the starting core, and the saving thread.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use budget_core::persist::{
  ensure_saver, initial_core, read_persist_file, remove_stale_temp_files, save_all, schedule, write_atomically,
  Autosaved, Owner, PersistLock, Persisted, SaveTarget, MAX_SNAPSHOT_BYTES,
};
use budget_core::{BudgetError, Config, Event, Tracker};
use tempfile::TempDir;

fn temp_dir() -> TempDir {
  tempfile::tempdir().expect("a temp dir")
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
  let mut names: Vec<_> = fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
  names.sort();
  names
}

fn error<T>(result: Result<T, BudgetError>) -> BudgetError {
  match result {
    Ok(_) => panic!("expected an error"),
    Err(e) => e,
  }
}

const NOT_REGULAR: &str = "is not a regular file (a FIFO, device or directory?): persist.path must name a file";

#[test]
fn a_write_replaces_the_file_and_leaves_no_temp_file() {
  let dir = temp_dir();
  let path = dir.path().join("budget.json");
  write_atomically(&path, "one").unwrap();
  assert_eq!(fs::read_to_string(&path).unwrap(), "one");
  write_atomically(&path, "two").unwrap();
  assert_eq!(read_persist_file(&path).unwrap().as_deref(), Some("two"));
  assert_eq!(names(dir.path()), ["budget.json"]);
}

#[test]
fn a_missing_file_reads_as_none() {
  let dir = temp_dir();
  assert_eq!(read_persist_file(&dir.path().join("none.json")).unwrap(), None);
}

#[cfg(unix)]
#[test]
fn a_symlinked_path_writes_its_target_and_stays_a_link() {
  let dir = temp_dir();
  let link = dir.path().join("link.json");
  std::os::unix::fs::symlink("real.json", &link).unwrap();
  write_atomically(&link, "through").unwrap();
  assert_eq!(fs::read_link(&link).unwrap(), PathBuf::from("real.json"));
  assert_eq!(fs::read_to_string(dir.path().join("real.json")).unwrap(), "through");
  assert_eq!(read_persist_file(&link).unwrap().as_deref(), Some("through"));
}

#[test]
fn a_directory_is_neither_read_nor_written() {
  let dir = temp_dir();
  let path = dir.path().join("d");
  fs::create_dir(&path).unwrap();
  let written = error(write_atomically(&path, "x"));
  assert_eq!((written.code, written.message), ("ERR_PERSIST_WRITE", format!("{}: {NOT_REGULAR}", path.display())));
  let read = error(read_persist_file(&path));
  assert_eq!(read.message, format!("{}: {NOT_REGULAR}", path.display()));
  assert_eq!(names(&path), Vec::<String>::new());
}

#[cfg(target_os = "linux")]
#[test]
fn a_fifo_is_refused_without_waiting_for_a_writer() {
  let dir = temp_dir();
  let path = dir.path().join("fifo");
  let made = std::process::Command::new("mkfifo").arg(&path).status().expect("mkfifo runs");
  assert!(made.success());
  // A blocking open would wait here for a writer that never comes.
  let read = error(read_persist_file(&path));
  assert_eq!(read.message, format!("{}: {NOT_REGULAR}", path.display()));
  assert_eq!(error(write_atomically(&path, "x")).message, format!("{}: {NOT_REGULAR}", path.display()));
}

#[test]
fn a_file_over_256_mib_is_refused() {
  assert_eq!(MAX_SNAPSHOT_BYTES, 268_435_456);
  let dir = temp_dir();
  let path = dir.path().join("huge.json");
  // Sparse: no disk space is used.
  fs::File::create(&path).unwrap().set_len(MAX_SNAPSHOT_BYTES + 1).unwrap();
  let read = error(read_persist_file(&path));
  assert_eq!(read.code, "ERR_PERSIST_READ");
  assert_eq!(
    read.message,
    format!(
      "{}: is larger than the 256 MiB (268435456 bytes) a snapshot may hold: not a persist file?",
      path.display()
    )
  );
}

/// The pid of a process that has ended (and been reaped).
#[cfg(unix)]
fn dead_pid() -> u32 {
  let mut child = std::process::Command::new("true").spawn().expect("true runs");
  let pid = child.id();
  child.wait().unwrap();
  pid
}

#[cfg(unix)]
#[test]
fn only_dead_writers_temp_files_of_the_path_are_removed() {
  let dir = temp_dir();
  let path = dir.path().join("budget.json");
  let (dead, live) = (dead_pid(), std::process::id());
  let files = [
    format!(".budget.json.{dead}.0-00000000000000ab.tmp"),
    format!(".budget.json.{live}.1-00000000000000cd.tmp"),
    format!(".other.json.{dead}.0-00000000000000ef.tmp"),
    format!(".budget.json.{dead}.2-0000000000000012.txt"),
  ];
  for name in &files {
    fs::write(dir.path().join(name), "partial").unwrap();
  }
  remove_stale_temp_files(&path);
  let mut kept = files[1..].to_vec();
  kept.sort();
  assert_eq!(names(dir.path()), kept);
}

#[test]
fn one_owner_per_path_and_the_refusal_names_the_owner() {
  let dir = temp_dir();
  let path = dir.path().join("budget.json");
  let lock_path = dir.path().join("budget.json.lock");
  let pid = std::process::id();
  let held = PersistLock::take(&path, Owner::Tracker).unwrap();
  assert_eq!(fs::read_to_string(&lock_path).unwrap(), format!("{pid}\n"));

  let second = error(PersistLock::take(&path, Owner::Tracker));
  assert_eq!(second.code, "ERR_PERSIST_LOCKED");
  assert_eq!(
    second.message,
    format!(
      "{}: is in use by another tracker of this process (lock {}): one tracker owns a persist path; close() the \
       other first, or give each tracker its own path",
      path.display(),
      lock_path.display()
    )
  );
  let family = error(PersistLock::take(&path, Owner::Family));
  assert_eq!(
    family.message,
    format!(
      "{}: is in use by a tracker of this process (lock {}): a family and a tracker cannot share a persist path; \
       close() the other first, or give each its own path",
      path.display(),
      lock_path.display()
    )
  );

  drop(held);
  assert!(!lock_path.exists(), "the lock file goes with the lock");
  let family = PersistLock::take(&path, Owner::Family).unwrap();
  assert_eq!(fs::read_to_string(&lock_path).unwrap(), format!("{pid} family\n"));
  let tracker = error(PersistLock::take(&path, Owner::Tracker));
  assert!(tracker.message.contains("is in use by a family of this process"), "{}", tracker.message);
  drop(family);
}

#[cfg(unix)]
#[test]
fn two_links_to_one_file_share_its_lock() {
  let dir = temp_dir();
  let real = dir.path().join("real.json");
  let link = dir.path().join("link.json");
  std::os::unix::fs::symlink("real.json", &link).unwrap();
  let _held = PersistLock::take(&real, Owner::Tracker).unwrap();
  let refused = error(PersistLock::take(&link, Owner::Tracker));
  assert_eq!(refused.code, "ERR_PERSIST_LOCKED");
  assert!(refused.message.contains(&format!("(lock {}.lock)", real.display())), "{}", refused.message);
}

#[test]
fn an_unlocked_lock_file_left_behind_is_taken_over() {
  let dir = temp_dir();
  let path = dir.path().join("budget.json");
  let lock_path = dir.path().join("budget.json.lock");
  fs::write(&lock_path, "999999999 family\n").unwrap();
  let _held = PersistLock::take(&path, Owner::Tracker).unwrap();
  assert_eq!(fs::read_to_string(&lock_path).unwrap(), format!("{}\n", std::process::id()));
}

/// A default tracker with 90 successes and 10 failures at 1 s, as JSON.
fn saved_tracker(config: Config) -> String {
  let mut tracker = Tracker::new(config, 0).unwrap();
  tracker.record(1_000, 1_000, 90, 10, &mut Vec::<Event>::new());
  tracker.snapshot_json()
}

#[test]
fn a_tracker_starts_empty_from_its_file_or_from_a_snapshot() {
  let dir = temp_dir();
  let path = dir.path().join("budget.json");
  let config = Config::default();
  let fresh = initial_core(&config, None, Some(&path), true, 2_000).unwrap();
  assert_eq!((fresh.report().successes, fresh.report().failures), (0, 0));

  fs::write(&path, saved_tracker(config.clone())).unwrap();
  let restored = initial_core(&config, None, Some(&path), true, 2_000).unwrap();
  assert_eq!((restored.report().successes, restored.report().failures), (90, 10));

  let snapshot = budget_core::Snapshot::parse(&saved_tracker(config.clone())).unwrap();
  let elsewhere = dir.path().join("new.json");
  let given = initial_core(&config, Some(&snapshot), Some(&elsewhere), false, 2_000).unwrap();
  assert_eq!((given.report().successes, given.report().failures), (90, 10));
  assert!(!elsewhere.exists(), "starting writes nothing");
}

#[test]
fn a_snapshot_given_never_overwrites_a_file_at_the_path() {
  let dir = temp_dir();
  let path = dir.path().join("budget.json");
  fs::write(&path, "anything").unwrap();
  let snapshot = budget_core::Snapshot::parse(&saved_tracker(Config::default())).unwrap();
  let refused = error(initial_core(&Config::default(), Some(&snapshot), Some(&path), false, 2_000));
  assert_eq!(refused.code, "ERR_PERSIST_WRITE");
  assert_eq!(
    refused.message,
    format!(
      "{}: already exists: restore(json, {{ persist }}) never overwrites it; delete it, or restore from it with new \
       ErrorBudgetTracker({{ persist }})",
      path.display()
    )
  );
  assert_eq!(fs::read_to_string(&path).unwrap(), "anything");
}

#[test]
fn a_file_of_another_config_or_no_snapshot_is_refused() {
  let dir = temp_dir();
  let path = dir.path().join("budget.json");
  fs::write(&path, saved_tracker(Config::default())).unwrap();
  let one = error(initial_core(&Config { min_events: 5, ..Config::default() }, None, Some(&path), true, 2_000));
  assert_eq!(one.code, "ERR_SNAPSHOT_INVALID");
  assert_eq!(
    one.message,
    format!(
      "{} holds a tracker with another config (minEvents differs): delete the file or use the same config",
      path.display()
    )
  );
  // A 60 s window keeps the default resolution, not the default alert policy.
  let two = error(initial_core(&Config { window_ms: 60_000, ..Config::default() }, None, Some(&path), true, 2_000));
  assert!(two.message.contains("(windowMs, alerts differ)"), "{}", two.message);

  fs::write(&path, "{not json").unwrap();
  let corrupt = error(initial_core(&Config::default(), None, Some(&path), true, 2_000));
  assert_eq!(corrupt.code, "ERR_SNAPSHOT_INVALID");
  assert!(corrupt.message.starts_with(&format!("{}: ", path.display())), "{}", corrupt.message);
}

struct Target(PathBuf);

impl SaveTarget for Target {
  fn path(&self) -> &Path {
    &self.0
  }
  fn interval(&self) -> Duration {
    Duration::from_millis(250)
  }
}

#[test]
fn a_write_that_takes_nothing_writes_nothing() {
  let dir = temp_dir();
  let path = dir.path().join("budget.json");
  let persisted = Persisted::new(&Target(path.clone()));
  assert_eq!((persisted.path(), persisted.interval()), (path.as_path(), Duration::from_millis(250)));
  persisted.write(|| None).unwrap();
  assert!(!path.exists());
  persisted.write(|| Some("taken".into())).unwrap();
  assert_eq!(fs::read_to_string(&path).unwrap(), "taken");
}

/// A state that counts its autosaves, none once closed.
struct Counting {
  saves: AtomicUsize,
  closed: AtomicBool,
  interval: Duration,
}

impl Counting {
  fn new(interval: Duration) -> Arc<Counting> {
    Arc::new(Counting { saves: AtomicUsize::new(0), closed: AtomicBool::new(false), interval })
  }
  fn saves(&self) -> usize {
    self.saves.load(Ordering::SeqCst)
  }
}

impl Autosaved for Counting {
  fn is_closed(&self) -> bool {
    self.closed.load(Ordering::SeqCst)
  }
  fn autosave_interval(&self) -> Option<Duration> {
    Some(self.interval)
  }
  fn autosave(&self) -> Result<(), BudgetError> {
    if !self.is_closed() {
      self.saves.fetch_add(1, Ordering::SeqCst);
    }
    Ok(())
  }
}

/// Waits (real clock, generous bound) until `done`.
fn wait_for(done: impl Fn() -> bool) {
  let deadline = Instant::now() + Duration::from_secs(30);
  while !done() {
    assert!(Instant::now() < deadline, "not done within 30 s");
    std::thread::sleep(Duration::from_millis(5));
  }
}

#[test]
fn the_saving_thread_saves_each_interval_until_closed() {
  ensure_saver().unwrap();
  ensure_saver().unwrap();
  let state = Counting::new(Duration::from_millis(5));
  schedule(&state, state.interval);
  wait_for(|| state.saves() >= 3);
  state.closed.store(true, Ordering::SeqCst);
  let saves = state.saves();
  std::thread::sleep(Duration::from_millis(50));
  assert_eq!(state.saves(), saves, "a closed state leaves the schedule");
}

#[test]
fn the_saves_at_exit_are_this_threads_or_everyones() {
  ensure_saver().unwrap();
  let mine = Counting::new(Duration::from_secs(3_600));
  schedule(&mine, mine.interval);
  let theirs = Counting::new(Duration::from_secs(3_600));
  let scheduled = theirs.clone();
  std::thread::spawn(move || schedule(&scheduled, scheduled.interval)).join().unwrap();

  save_all(false);
  assert_eq!((mine.saves(), theirs.saves()), (1, 0));
  save_all(true);
  assert_eq!((mine.saves(), theirs.saves()), (2, 1));
}
