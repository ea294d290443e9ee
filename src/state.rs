//! The native state behind a tracker handle: the core tracker under a lock, its
//! clock, and the sinks of every handle with listeners. `Send + Sync`, so the
//! timer thread and other JS threads can reach it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use crate::sync::Mutex;
use budget_core::lease::Lease;
use budget_core::{BudgetError, Config, Event, Placement, Snapshot, Tracker};

use crate::clock::TrackerClock;
use crate::config::Persist;
use crate::listeners::Sink;
use crate::persist::{self, Persisted};
use crate::timer;

/// Bytes counted for what `native_bytes` does not itemise: allocation
/// headers, the `Arc`, an empty sink list.
const ALLOCATION_OVERHEAD: usize = 256;

/// The core a closed tracker keeps in place of its own: one bucket.
fn placeholder_core(now_ms: i64) -> Result<Tracker, BudgetError> {
  Tracker::new(Config { window_ms: 1, resolution_ms: 1, alerts: Some(Vec::new()), ..Config::default() }, now_ms)
}

/// Shared native state of one tracker.
pub struct TrackerState {
  core: Mutex<Tracker>,
  pub clock: TrackerClock,
  closed: AtomicBool,
  /// Open handles (JS objects) on this tracker: the last to close closes it.
  open_handles: AtomicUsize,
  /// The registry name of a shared tracker.
  registry_name: OnceLock<String>,
  /// Whether the timer thread watches this tracker (real clock, has listeners).
  watched: AtomicBool,
  sinks: Mutex<Vec<Arc<Sink>>>,
  /// Autosave, owned here so that it lives exactly as long as the tracker.
  persisted: OnceLock<Persisted>,
  /// The persist path's lock, held until the final save is written.
  owner: Mutex<Option<persist::PersistLock>>,
  /// A closed tracker's state as of `close()`: its buckets are freed at once
  /// (`core` becomes a one-bucket placeholder) and reads rebuild it from here.
  frozen: Mutex<Option<Box<Snapshot>>>,
  /// The owner thread's lock-free records (`lease.rs`): settled by whoever
  /// takes `core` next, before anything else.
  pub lease: Lease,
}

impl TrackerState {
  /// State for a validated core tracker (a real clock may be swapped for a
  /// cheaper one that is as good at the tracker's resolution).
  pub fn new(core: Tracker, clock: TrackerClock) -> Self {
    let clock = clock.cheapest_for(core.config().resolution_ms);
    TrackerState {
      core: Mutex::new(core),
      clock,
      closed: AtomicBool::new(false),
      open_handles: AtomicUsize::new(0),
      registry_name: OnceLock::new(),
      watched: AtomicBool::new(false),
      sinks: Mutex::new(Vec::new()),
      persisted: OnceLock::new(),
      owner: Mutex::new(None),
      frozen: Mutex::new(None),
      lease: Lease::default(),
    }
  }

  /// Native bytes this tracker holds while open, and the window's part of
  /// them (which follows the events: `window.rs`), reported to V8 as external
  /// memory by each handle: this struct, the core's allocations, and a
  /// little for the allocator's headers and the sinks.
  pub fn native_bytes(&self) -> (i64, i64) {
    let core = self.core.lock();
    let fixed = std::mem::size_of::<TrackerState>() + ALLOCATION_OVERHEAD;
    ((fixed + core.heap_bytes()) as i64, core.window_bytes() as i64)
  }

  /// The clock's current time.
  pub fn now_ms(&self) -> i64 {
    self.clock.now_ms()
  }

  /// Whether `close()` was called.
  #[inline]
  pub fn is_closed(&self) -> bool {
    self.closed.load(Ordering::Acquire)
  }

  /// Marks the tracker closed, drops every sink, stops watching it, frees its
  /// buckets and, with `persist`, writes the final snapshot (reporting a
  /// failure on stderr: nobody is left to throw to). Idempotent.
  fn close(&self) {
    let final_save = match self.persisted.get() {
      Some(persisted) => persisted.write(|| self.freeze()),
      None => {
        self.freeze();
        Ok(())
      }
    };
    if let Err(e) = final_save {
      eprintln!("captcha-error-budget: the final save failed: {}", e.message);
    }
    // Only now: the next owner reads what the final save wrote.
    self.owner.lock().take();
  }

  /// Keeps the persist path's lock until the tracker closes (or is freed).
  pub fn hold(&self, lock: persist::PersistLock) {
    *self.owner.lock() = Some(lock);
  }

  /// `close()` with `persist`: writes the final snapshot first and closes only
  /// if that worked (else the error, and the tracker stays open: nothing lost).
  /// Without `persist`, nothing to do.
  pub fn final_save(&self) -> Result<(), BudgetError> {
    let Some(persisted) = self.persisted.get() else { return Ok(()) };
    let _in_order = persisted.lock();
    if self.is_closed() {
      return Ok(());
    }
    persist::write_atomically(persisted.path(), &self.read(|core| core.snapshot_json()))?;
    self.freeze();
    Ok(())
  }

  /// Closes (once): moves to now, delivering what changed, then marks the
  /// state closed and swaps its core for a placeholder, keeping the state as a
  /// snapshot. Returns that snapshot's JSON the first time.
  fn freeze(&self) -> Option<String> {
    let mut events = Vec::new();
    let mut core = self.core.lock();
    if self.closed.swap(true, Ordering::AcqRel) {
      return None;
    }
    self.lease.settle(&mut core, &mut events);
    let now = self.clock.now_ms();
    core.advance(now, &mut events);
    if !events.is_empty() {
      self.deliver(events);
    }
    self.sinks.lock().clear();
    let json = core.snapshot_json();
    // Kept as a snapshot only if it rebuilds (it always should); else the
    // core stays as it is.
    let rebuilt = Snapshot::parse(&json).and_then(|s| Tracker::from_snapshot(&s, s.saved_at_ms).map(|_| s));
    if let (Ok(snapshot), Ok(placeholder)) = (rebuilt, placeholder_core(core.now_ms())) {
      *core = placeholder;
      *self.frozen.lock() = Some(Box::new(snapshot));
    }
    drop(core);
    // After the core's lock: the timer thread takes its own lock, then cores.
    self.unwatch();
    Some(json)
  }

  /// Sets up autosave to `persist` (the saving thread already runs: see
  /// `persist::ensure_saver`).
  pub fn persist(self: &Arc<Self>, persist: &Persist) {
    if self.persisted.set(Persisted::new(persist)).is_ok() {
      persist::schedule(self, Duration::from_millis(persist.interval_ms));
    }
  }

  /// `save()`: a snapshot now, in order with the autosaves.
  pub fn save_now(&self) -> Result<(), BudgetError> {
    let Some(persisted) = self.persisted.get() else {
      return Err(BudgetError::invalid_state("save() needs a tracker created with persist"));
    };
    persisted.write(|| Some(self.read(|core| core.snapshot_json())))
  }

  /// Counts a new handle in.
  pub fn count_in(&self) {
    self.open_handles.fetch_add(1, Ordering::AcqRel);
  }

  /// Counts a handle out; the last one closes the tracker (returns true then).
  pub fn count_out(&self) -> bool {
    let last = self.open_handles.fetch_sub(1, Ordering::AcqRel) == 1;
    if last {
      self.close();
    }
    last
  }

  /// Names a shared tracker (once, before its first handle).
  pub fn set_registry_name(&self, name: &str) {
    let _ = self.registry_name.set(name.to_string());
  }

  /// The registry name of a shared tracker (counted out through the registry).
  pub fn registry_name(&self) -> Option<&str> {
    self.registry_name.get().map(String::as_str)
  }

  /// Runs `f` on the core moved to the clock's now, then sends every event
  /// it produced, in order, while still holding the lock (so concurrent
  /// callers cannot interleave their deliveries).
  /// A closed tracker stands still at its `close()` and produces no events.
  #[inline]
  pub fn with_core<R>(&self, f: impl FnOnce(&mut Tracker, i64, &mut Vec<Event>) -> R) -> R {
    let mut core = self.core.lock();
    if self.is_closed() {
      return self.with_closed_core(&mut core, f);
    }
    self.with_live_core(core, f)
  }

  /// `with_core` for callers that only look at the core.
  #[inline]
  pub fn read<R>(&self, f: impl FnOnce(&Tracker) -> R) -> R {
    self.with_core(|core, _, _| f(core))
  }

  /// Moves the core to the clock's now, delivering what changed.
  pub fn catch_up(&self) {
    self.with_core(|_, _, _| ())
  }

  /// `with_core` without the closed check, for `record()` (which checked
  /// before: one that races a `close()` lands in the placeholder, unseen).
  #[inline]
  fn with_live_core<R>(
    &self,
    mut core: crate::sync::MutexGuard<'_, Tracker>,
    f: impl FnOnce(&mut Tracker, i64, &mut Vec<Event>) -> R,
  ) -> R {
    let mut events = Vec::new();
    self.lease.settle(&mut core, &mut events);
    let now = self.clock.now_ms();
    core.advance(now, &mut events);
    let result = f(&mut core, now, &mut events);
    if !events.is_empty() {
      self.deliver(events);
    }
    result
  }

  #[cold]
  fn with_closed_core<R>(&self, core: &mut Tracker, f: impl FnOnce(&mut Tracker, i64, &mut Vec<Event>) -> R) -> R {
    let mut ignored = Vec::new();
    let rebuilt = self.frozen.lock().as_ref().and_then(|s| Tracker::from_snapshot(s, s.saved_at_ms).ok());
    match rebuilt {
      Some(mut tracker) => {
        let now = tracker.now_ms();
        f(&mut tracker, now, &mut ignored)
      }
      None => {
        let now = core.now_ms();
        f(core, now, &mut ignored)
      }
    }
  }

  #[cold]
  fn deliver(&self, events: Vec<Event>) {
    let sinks = self.sinks.lock();
    for event in events {
      for sink in sinks.iter() {
        sink.send(event.clone());
      }
    }
  }

  /// Records at `at` (default now); wakes the timer if that brought the next
  /// time-driven change closer; then, on a tracker only this thread records
  /// into, leases the quiet region left (`lease.rs`) for the next records.
  /// The locked path of `record()`: one lock, one clock read, and usually no
  /// allocation (events are rare).
  /// `Ok`: the window's heap bytes after it (a field read under the lock), for
  /// the handle to follow in V8's external memory (`Handle::record`). `Err`
  /// (nothing recorded) when a counter would pass 2^53 − 1: the time the
  /// refused record was at (`refusal` says which counter). Plain numbers, so
  /// that the hot path returns in registers.
  #[inline]
  pub fn record_measured(&self, at: Option<i64>, successes: u64, failures: u64) -> Result<i64, i64> {
    let watched = self.watched.load(Ordering::Relaxed);
    // A shared tracker records from several threads: no lease.
    let lease = self.registry_name.get().is_none();
    // The hot path carries plain numbers out of the lock: the error of a
    // refusal (rare) is built after it, in `refusal`.
    let (closer, refused_at, bytes) = self.with_live_core(self.core.lock(), |core, now, out| {
      let before = if watched { core.next_change_ms() } else { None };
      let at = at.unwrap_or(now);
      if core.record(now, at, successes, failures, out) == Placement::Refused {
        return (None, Some(at), core.window_bytes());
      }
      let after = if watched { core.next_change_ms() } else { None };
      if lease {
        self.lease.grant(core);
      }
      let closer = match (before, after) {
        (None, Some(a)) => Some(a - now),
        (Some(b), Some(a)) if a < b => Some(a - now),
        _ => None,
      };
      (closer, None, core.window_bytes())
    });
    if let Some(wait_ms) = closer {
      timer::poke(self, wait_ms);
    }
    match refused_at {
      None => Ok(bytes as i64),
      Some(at) => Err(at),
    }
  }

  /// Why a record at `at` was refused, naming the counter it would take past
  /// 2^53 − 1 (asked again under the lock: counters only grow).
  #[cold]
  pub fn refusal(&self, at: i64, successes: u64, failures: u64) -> BudgetError {
    self.read(|core| core.refusal(at, successes, failures)).unwrap_or_else(|| {
      BudgetError::out_of_range("a count would pass 2^53 − 1, the most a count may reach; nothing was recorded")
    })
  }

  /// Hands a real-clock tracker to the timer thread (until its last sink
  /// goes or it closes). Fails only when the timer thread cannot start.
  pub fn watch(self: &Arc<Self>) -> Result<(), BudgetError> {
    // Under the sinks' lock, as `remove_sink`: a last sink leaving on one
    // thread cannot unwatch a tracker another thread is starting to watch.
    let _sinks = self.sinks.lock();
    if self.clock.is_real() && !self.is_closed() && !self.watched.swap(true, Ordering::AcqRel) {
      if let Err(e) = timer::watch(self) {
        self.watched.store(false, Ordering::Release);
        return Err(e);
      }
    }
    Ok(())
  }

  /// Takes the tracker off the timer: it wakes for it no more.
  fn unwatch(&self) {
    if self.watched.swap(false, Ordering::AcqRel) {
      timer::unwatch(self);
    }
  }

  /// Adds a handle's sink.
  pub fn add_sink(&self, sink: Arc<Sink>) {
    self.sinks.lock().push(sink);
  }

  /// Removes a handle's sink; without sinks, nothing is left to watch for.
  pub fn remove_sink(&self, sink: &Arc<Sink>) {
    let mut sinks = self.sinks.lock();
    sinks.retain(|s| !Arc::ptr_eq(s, sink));
    if sinks.is_empty() {
      self.unwatch();
    }
  }
}

impl timer::Ticks for TrackerState {
  fn tick(&self) -> Option<i64> {
    if self.is_closed() {
      return None;
    }
    self.with_core(|core, now, _| core.next_change_ms().map(|t| t - now))
  }
}

impl persist::Autosaved for TrackerState {
  fn is_closed(&self) -> bool {
    TrackerState::is_closed(self)
  }

  fn autosave_interval(&self) -> Option<Duration> {
    self.persisted.get().map(Persisted::interval)
  }

  fn autosave(&self) -> Result<(), BudgetError> {
    let Some(persisted) = self.persisted.get() else { return Ok(()) };
    persisted.write(|| (!self.is_closed()).then(|| self.read(|core| core.snapshot_json())))
  }
}
