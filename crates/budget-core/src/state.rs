//! The native state behind a tracker's handles: the core tracker under a lock,
//! its clock, the sinks of every handle with listeners, its autosave and the
//! open-handle count. `Send + Sync`, so the timer thread and other threads
//! reach it. Generic over what needs Node-API: a [`Sink`] (the binding's
//! threadsafe function) and a [`Saver`] (its persist file).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use crate::lease::Lease;
use crate::registry::Shared;
use crate::sync::{Mutex, MutexGuard};
use crate::timer::{self, Ticks};
use crate::tracker_clock::TrackerClock;
use crate::watch::{ChangeLog, Watchers};
use crate::{BudgetError, CheckedConfig, Config, Counts, Event, Placement, Snapshot, Tracker};

/// Where a handle's transitions go: its listeners, on their own thread.
pub trait Sink: Send + Sync + 'static {
  /// Queues `event`; never blocks (it runs under the tracker's lock).
  fn send(&self, event: Event);
}

/// A persisted tracker's file: every write in the order its snapshot was taken.
pub trait Saver: Send + Sync + 'static {
  /// Writes the snapshot `take` returns (`None`: nothing), in order with every
  /// other write of the tracker.
  fn write(&self, take: impl FnOnce() -> Option<String>) -> Result<(), BudgetError>;
  /// As `write`, then `then` only if the snapshot was written, still before
  /// any other write.
  fn write_then(&self, take: impl FnOnce() -> Option<String>, then: impl FnOnce()) -> Result<(), BudgetError>;
}

/// Bytes counted for what `native_bytes` does not itemise: allocation
/// headers, the `Arc`, an empty sink list.
const ALLOCATION_OVERHEAD: usize = 256;

/// The core a closed tracker keeps in place of its own: one bucket.
fn placeholder_core(now_ms: i64) -> Result<Tracker, BudgetError> {
  Tracker::new(Config { window_ms: 1, resolution_ms: 1, alerts: Some(Vec::new()), ..Config::default() }, now_ms)
}

/// Shared native state of one tracker, delivering to sinks `S`, saving through `P`.
pub struct TrackerState<S: Sink, P: Saver> {
  core: Mutex<Tracker>,
  /// The tracker's clock (manual, or real and as cheap as its buckets allow).
  pub clock: TrackerClock,
  closed: AtomicBool,
  /// Open handles (JS objects) on this tracker: the last to close closes it.
  open_handles: AtomicUsize,
  /// The registry name of a shared tracker.
  registry_name: OnceLock<String>,
  /// Whether the timer thread watches this tracker (real clock, has listeners).
  watched: AtomicBool,
  sinks: Mutex<Vec<Arc<S>>>,
  /// Autosave, owned here so that it lives exactly as long as the tracker.
  saver: OnceLock<P>,
  /// The persist path's lock, held until the final save is written.
  owner: Mutex<Option<Box<dyn Send>>>,
  /// A closed tracker's state as of `close()`: its buckets are freed at once
  /// (`core` becomes a one-bucket placeholder) and reads rebuild it from here.
  frozen: Mutex<Option<Box<Snapshot>>>,
  /// The owner thread's lock-free records (`lease.rs`): settled by whoever
  /// takes `core` next, before anything else.
  pub lease: Lease,
  /// The families told when the window counts change (`watch.rs`).
  watchers: Watchers,
}

/// The config a new handle of a shared tracker asked for: the config with its
/// alert policy, whether its clock is real, and the keys it gave.
pub struct Expected<'a> {
  /// The config with its alert policy.
  pub config: &'a CheckedConfig,
  /// Whether it asked for the real clock.
  pub real_clock: bool,
  /// `config.hysteresis` (0 when not given).
  pub hysteresis: f64,
  /// The config keys it gave.
  pub given: &'a [String],
}

impl<S: Sink, P: Saver> TrackerState<S, P> {
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
      saver: OnceLock::new(),
      owner: Mutex::new(None),
      frozen: Mutex::new(None),
      lease: Lease::default(),
      watchers: Watchers::default(),
    }
  }

  /// Native bytes this tracker holds while open, and the window's part of
  /// them (which follows the events: `window.rs`), reported to V8 as external
  /// memory by each handle: this struct, the core's allocations, and a
  /// little for the allocator's headers and the sinks.
  pub fn native_bytes(&self) -> (i64, i64) {
    let core = self.core.lock();
    let fixed = std::mem::size_of::<Self>() + ALLOCATION_OVERHEAD;
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
  /// buckets and, with a saver, writes the final snapshot (reporting a
  /// failure on stderr: nobody is left to throw to). Idempotent.
  fn close(&self) {
    let final_save = match self.saver.get() {
      Some(saver) => saver.write(|| self.freeze()),
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

  /// Keeps `lock` (the persist path's) until the tracker closes (or is freed).
  pub fn hold(&self, lock: Box<dyn Send>) {
    *self.owner.lock() = Some(lock);
  }

  /// `close()` with a saver: writes the final snapshot first and closes only
  /// if that worked (else the error, and the tracker stays open: nothing lost).
  /// Without one, nothing to do.
  pub fn final_save(&self) -> Result<(), BudgetError> {
    let Some(saver) = self.saver.get() else { return Ok(()) };
    let take = || (!self.is_closed()).then(|| self.read(|core| core.snapshot_json()));
    saver.write_then(take, || {
      self.freeze();
    })
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
    if self.watchers.any_clean() {
      // The counts stop here: a family reads them once more.
      self.watchers.mark();
    }
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

  /// Sets up autosave through `saver`; false (and nothing changed) when one
  /// was set up already. The caller schedules the autosaves.
  pub fn set_saver(&self, saver: P) -> bool {
    self.saver.set(saver).is_ok()
  }

  /// The saver, once set up.
  pub fn saver(&self) -> Option<&P> {
    self.saver.get()
  }

  /// `save()`: a snapshot now, in order with the autosaves.
  pub fn save_now(&self) -> Result<(), BudgetError> {
    let Some(saver) = self.saver.get() else {
      return Err(BudgetError::invalid_state("save() needs a tracker created with persist"));
    };
    saver.write(|| Some(self.read(|core| core.snapshot_json())))
  }

  /// One autosave: the snapshot now, unless closed meanwhile (the final save
  /// then wrote the newest state).
  pub fn autosave(&self) -> Result<(), BudgetError> {
    let Some(saver) = self.saver.get() else { return Ok(()) };
    saver.write(|| (!self.is_closed()).then(|| self.read(|core| core.snapshot_json())))
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
    mut core: MutexGuard<'_, Tracker>,
    f: impl FnOnce(&mut Tracker, i64, &mut Vec<Event>) -> R,
  ) -> R {
    let mut events = Vec::new();
    // Watched by a family that has read the counts: what they were, to tell it if they change.
    let mut seen = self.watchers.any_clean().then(|| core.counts());
    self.lease.settle(&mut core, &mut events);
    let now = self.clock.now_ms();
    core.advance(now, &mut events);
    self.tell_watchers(&mut seen, &core);
    let result = f(&mut core, now, &mut events);
    self.tell_watchers(&mut seen, &core);
    if !events.is_empty() {
      self.deliver(events);
    }
    result
  }

  /// Marks the watches dirty if the counts differ from `seen` or a lease is
  /// open (its records are not in the counts yet); else `seen` stays. Asked
  /// before and after `f`, so that a family's read (`watched_counts`, which
  /// cleans its watch in `f`) is not taken for a change by the expiries before it.
  #[inline]
  fn tell_watchers(&self, seen: &mut Option<Counts>, core: &Tracker) {
    if let Some(before) = *seen {
      if before != core.counts() || self.lease.is_open() {
        self.watchers.mark();
        *seen = None;
      }
    }
  }

  /// A family's read of the counts (`watch.rs`): `log`'s watch of this tracker
  /// (as `id`) turns clean, and the window counts are returned with, on a real
  /// clock, the ms until they change by expiry alone (its oldest events
  /// leaving the window): `None` when nothing is there to leave, on a manual
  /// clock (whose time moves only by calls that tell the watchers) and once
  /// closed (the counts stay as they were at `close()`).
  pub fn watched_counts(&self, log: &Arc<ChangeLog>, id: u32) -> (Counts, Option<i64>) {
    let real = self.clock.is_real() && !self.is_closed();
    self.with_core(|core, now, _| {
      self.watchers.clean(log, id);
      let expiry = if real { core.window_expiry_ms().map(|at| at - now) } else { None };
      (core.counts(), expiry)
    })
  }

  /// `log`'s family no longer holds this tracker: it is told of no more changes.
  pub fn unwatch_counts(&self, log: &Arc<ChangeLog>) {
    let _core = self.core.lock();
    self.watchers.remove(log);
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
  /// the handle to follow in V8's external memory. `Err` (nothing recorded)
  /// when a counter would pass 2^53 − 1: the time the refused record was at
  /// (`refusal` says which counter). Plain numbers, so that the hot path
  /// returns in registers.
  #[inline]
  pub fn record_measured(&self, at: Option<i64>, successes: u64, failures: u64) -> Result<i64, i64> {
    self.record_locked(at, successes, failures, None)
  }

  /// `record_measured` that also hands back the stamp recorded at: `at`, or
  /// the clock's now without one, no later than the tracker's now (a later
  /// `at` counts now), for a caller that needs it (`recordStamped`, a guard's
  /// verdict). Apart from `record_measured`, so that a plain record neither
  /// computes the stamp nor carries it out of the lock (which cost it 1–5 %).
  #[inline]
  pub fn record_stamped(&self, at: Option<i64>, successes: u64, failures: u64) -> Result<(i64, i64), i64> {
    let mut stamp = 0;
    self.record_locked(at, successes, failures, Some(&mut stamp)).map(|bytes| (bytes, stamp))
  }

  /// `record_measured`, and `record_stamped` when given where to write the
  /// stamp. One function, not one per caller: a second copy of this body
  /// (a const generic) made the compiler keep `Tracker::record` out of line,
  /// a call more on every locked record.
  #[inline(never)]
  fn record_locked(&self, at: Option<i64>, successes: u64, failures: u64, stamp: Option<&mut i64>) -> Result<i64, i64> {
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
      if let Some(stamp) = stamp {
        // As `Tracker::record` places it: a later `at` counts at the tracker's now.
        *stamp = at.min(core.now_ms());
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
  pub fn add_sink(&self, sink: Arc<S>) {
    self.sinks.lock().push(sink);
  }

  /// Removes a handle's sink; without sinks, nothing is left to watch for.
  pub fn remove_sink(&self, sink: &Arc<S>) {
    let mut sinks = self.sinks.lock();
    sinks.retain(|s| !Arc::ptr_eq(s, sink));
    if sinks.is_empty() {
      self.unwatch();
    }
  }

  /// Checks that this shared tracker (`name`) has the config a new handle
  /// asked for: the error names the fields that differ (those the caller
  /// gave; all of them if only derived ones do, such as the default
  /// resolution or alert policy).
  pub fn check_expected(&self, name: &str, expected: &Expected) -> Result<(), BudgetError> {
    let mut fields = self.read(|core| core.checked_config()).differences(expected.config);
    if self.clock.is_real() != expected.real_clock {
      fields.push("clock");
    }
    if self.read(|core| core.status_hysteresis()) != expected.hysteresis {
      fields.push("hysteresis");
    }
    if fields.iter().any(|f| expected.given.iter().any(|g| g == f)) {
      fields.retain(|f| expected.given.iter().any(|g| g == f));
    }
    if fields.is_empty() {
      return Ok(());
    }
    Err(BudgetError::invalid_value(format!(
      "shared tracker '{name}' already exists with another config ({} differ); attach with shared('{name}') \
       without a config, or use the same config",
      fields.join(", ")
    )))
  }
}

impl<S: Sink, P: Saver> Ticks for TrackerState<S, P> {
  fn tick(&self) -> Option<i64> {
    if self.is_closed() {
      return None;
    }
    self.with_core(|core, now, _| core.next_change_ms().map(|t| t - now))
  }
}

impl<S: Sink, P: Saver> Shared for TrackerState<S, P> {
  fn is_closed(&self) -> bool {
    TrackerState::is_closed(self)
  }

  fn count_in(&self) {
    TrackerState::count_in(self)
  }

  fn count_out(&self) -> bool {
    TrackerState::count_out(self)
  }

  fn name(&self, name: &str) {
    let _ = self.registry_name.set(name.to_string());
  }

  fn registry_name(&self) -> Option<&str> {
    self.registry_name.get().map(String::as_str)
  }
}

/// The persist file as a tracker's saver: every write in order, under the
/// file's own lock.
impl Saver for crate::persist::Persisted {
  fn write(&self, take: impl FnOnce() -> Option<String>) -> Result<(), BudgetError> {
    crate::persist::Persisted::write(self, take)
  }

  fn write_then(&self, take: impl FnOnce() -> Option<String>, then: impl FnOnce()) -> Result<(), BudgetError> {
    let _in_order = self.lock();
    let Some(json) = take() else { return Ok(()) };
    crate::persist::write_atomically(self.path(), &json)?;
    then();
    Ok(())
  }
}

/// What the saving thread asks of a persisted tracker.
impl<S: Sink> crate::persist::Autosaved for TrackerState<S, crate::persist::Persisted> {
  fn is_closed(&self) -> bool {
    TrackerState::is_closed(self)
  }

  fn autosave_interval(&self) -> Option<std::time::Duration> {
    self.saver().map(crate::persist::Persisted::interval)
  }

  fn autosave(&self) -> Result<(), BudgetError> {
    TrackerState::autosave(self)
  }
}
