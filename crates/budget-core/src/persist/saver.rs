//! The one saving thread of the process and the autosave settings each
//! persisted tracker's state owns; `save_all`, for the saves a process or
//! worker about to exit makes (the binding installs those hooks).

use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Weak};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use super::write_atomically;
use crate::sync::{spawn, Condvar, Mutex, MutexGuard};
use crate::BudgetError;

/// What the saving thread saves: a persisted tracker's state.
pub trait Autosaved: Send + Sync {
  /// Whether the tracker is closed (its final save then wrote the newest state).
  fn is_closed(&self) -> bool;
  /// The autosave interval, if persisted.
  fn autosave_interval(&self) -> Option<Duration>;
  /// One autosave: the snapshot now, unless closed meanwhile.
  fn autosave(&self) -> Result<(), BudgetError>;
}

/// Where a tracker saves and how often: the binding's checked `persist` option.
pub trait SaveTarget {
  /// The persist file.
  fn path(&self) -> &Path;
  /// The time between autosaves.
  fn interval(&self) -> Duration;
}

/// The autosave settings of one tracker, owned by its state.
pub struct Persisted {
  path: PathBuf,
  interval: Duration,
  /// Held from taking a snapshot until it is written: snapshots reach the
  /// file in the order they were taken, so the last write is the newest.
  writing: Mutex<()>,
}

impl Persisted {
  /// Settings for `target`.
  pub fn new(target: &impl SaveTarget) -> Self {
    Persisted { path: target.path().to_path_buf(), interval: target.interval(), writing: Mutex::new(()) }
  }

  /// Takes a snapshot with `take` and writes it, in order with every other
  /// write of this tracker. `take` returns `None` to skip the write.
  pub fn write(&self, take: impl FnOnce() -> Option<String>) -> Result<(), BudgetError> {
    let _in_order = self.writing.lock();
    let Some(json) = take() else { return Ok(()) };
    test_hooks::delay_write();
    write_atomically(&self.path, &json)
  }

  /// The autosave interval.
  pub fn interval(&self) -> Duration {
    self.interval
  }

  /// The persist path.
  pub fn path(&self) -> &Path {
    &self.path
  }

  /// Holds off every other write of this tracker.
  pub fn lock(&self) -> MutexGuard<'_, ()> {
    self.writing.lock()
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
  state: Weak<dyn Autosaved>,
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
  all: Vec<(ThreadId, Weak<dyn Autosaved>)>,
}

/// The one saving thread and its queue.
struct Saver {
  queue: Mutex<Queue>,
  wake: Condvar,
}

static SAVER: LazyLock<Saver> = LazyLock::new(|| Saver { queue: Mutex::default(), wake: Condvar::new() });

/// Starts the saving thread unless it runs. A failed spawn (a thread or pids
/// limit) is an `ERR_THREAD_SPAWN` error for the caller to throw, never an abort.
pub fn ensure_saver() -> Result<(), BudgetError> {
  let mut queue = SAVER.queue.lock();
  if queue.running {
    return Ok(());
  }
  spawn("captcha-budget-saver", run_saver, "the autosave thread", "nothing was created")?;
  queue.running = true;
  Ok(())
}

/// Schedules `state`'s autosaves every `interval` (after [`ensure_saver`]),
/// and remembers it, with the calling thread, for [`save_all`]. It leaves the
/// schedule when it is closed or freed.
pub fn schedule<T: Autosaved + 'static>(state: &Arc<T>, interval: Duration) {
  let state: Arc<dyn Autosaved> = state.clone();
  let mut queue = SAVER.queue.lock();
  queue.seq += 1;
  let due = Due { at: Instant::now() + interval, seq: queue.seq, state: Arc::downgrade(&state) };
  queue.due.push(due);
  queue.all.retain(|(_, w)| w.strong_count() > 0);
  queue.all.push((std::thread::current().id(), Arc::downgrade(&state)));
  SAVER.wake.notify_one();
}

/// Saves every open persisted tracker now (`everywhere`), or those scheduled
/// from this thread: what a process or worker about to exit does. A failed
/// save is reported on stderr, and the others are still made.
pub fn save_all(everywhere: bool) {
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
    // The last strong reference may be ours (its handles closed it meanwhile):
    // freeing the state happens outside the queue's lock.
    drop(queue);
    drop(state);
    queue = SAVER.queue.lock();
  }
}
