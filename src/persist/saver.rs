//! The one saving thread of the process, the autosave settings each
//! persisted tracker's native state owns, and the saves at process exit and
//! on SIGTERM/SIGINT that no finalizer would make.

use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Weak};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use crate::sync::{spawn, Condvar, Mutex};
use budget_core::BudgetError;
use napi::bindgen_prelude::{FnArgs, Function};
use napi::Env;

use super::write_atomically;
use crate::config::Persist;

/// What the saving thread saves: a persisted tracker's native state.
pub trait Autosaved: Send + Sync {
  /// Whether the tracker is closed (its final save then wrote the newest state).
  fn is_closed(&self) -> bool;
  /// The autosave interval, if persisted.
  fn autosave_interval(&self) -> Option<Duration>;
  /// One autosave: the snapshot now, unless closed meanwhile.
  fn autosave(&self) -> Result<(), BudgetError>;
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
/// limit) is an error for the caller to throw, never an abort.
pub fn ensure_saver() -> Result<(), BudgetError> {
  let mut queue = SAVER.queue.lock();
  if queue.running {
    return Ok(());
  }
  spawn("captcha-budget-saver", run_saver, "the autosave thread", "nothing was created")?;
  queue.running = true;
  Ok(())
}

/// Schedules `state`'s autosaves (after `ensure_saver`).
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
    // The last strong reference may be ours (its handles closed it meanwhile):
    // freeing the state happens outside the queue's lock.
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
  pub fn lock(&self) -> crate::sync::MutexGuard<'_, ()> {
    self.writing.lock()
  }
}
