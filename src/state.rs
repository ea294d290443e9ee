//! The native state behind a tracker handle: the core tracker under a lock, its
//! clock, and the sinks of every handle with listeners. `Send + Sync`, so the
//! timer thread and other JS threads can reach it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use budget_core::{BudgetError, Clock, Event, ManualClock, MonotonicClock, Tracker};
use parking_lot::Mutex;

use crate::config::ClockKind;
use crate::listeners::Sink;
use crate::timer;

/// The clock of one tracker.
pub enum TrackerClock {
  Monotonic(MonotonicClock),
  Manual(ManualClock),
}

impl TrackerClock {
  /// A clock of `kind`; a manual one starts at 0.
  pub fn new(kind: ClockKind) -> Self {
    match kind {
      ClockKind::Monotonic => TrackerClock::Monotonic(MonotonicClock::new()),
      ClockKind::Manual => TrackerClock::Manual(ManualClock::new(0)),
    }
  }

  /// The current time, epoch ms.
  pub fn now_ms(&self) -> i64 {
    match self {
      TrackerClock::Monotonic(c) => c.now_ms(),
      TrackerClock::Manual(c) => c.now_ms(),
    }
  }
}

/// Shared native state of one tracker.
pub struct TrackerState {
  core: Mutex<Tracker>,
  pub clock: TrackerClock,
  closed: AtomicBool,
  /// Whether the timer thread watches this tracker (real clock, has listeners).
  watched: AtomicBool,
  sinks: Mutex<Vec<Arc<Sink>>>,
}

impl TrackerState {
  /// State for a validated core tracker.
  pub fn new(core: Tracker, clock: TrackerClock) -> Self {
    TrackerState {
      core: Mutex::new(core),
      clock,
      closed: AtomicBool::new(false),
      watched: AtomicBool::new(false),
      sinks: Mutex::new(Vec::new()),
    }
  }

  /// The clock's current time.
  pub fn now_ms(&self) -> i64 {
    self.clock.now_ms()
  }

  /// Whether `close()` was called.
  pub fn is_closed(&self) -> bool {
    self.closed.load(Ordering::Acquire)
  }

  /// Marks the tracker closed and drops every sink; returns false if it already was.
  pub fn close(&self) -> bool {
    let first = !self.closed.swap(true, Ordering::AcqRel);
    self.sinks.lock().clear();
    first
  }

  /// Fails with a clear error when the tracker is closed.
  pub fn check_open(&self, operation: &str) -> Result<(), BudgetError> {
    if self.is_closed() {
      Err(BudgetError::closed(operation))
    } else {
      Ok(())
    }
  }

  /// Runs `f` on the core moved to the clock's now, then sends every event
  /// it produced, in order, while still holding the lock (so concurrent
  /// callers cannot interleave their deliveries).
  pub fn with_core<R>(&self, f: impl FnOnce(&mut Tracker, i64, &mut Vec<Event>) -> R) -> R {
    let mut events = Vec::new();
    let mut core = self.core.lock();
    let now = self.clock.now_ms();
    core.advance(now, &mut events);
    let result = f(&mut core, now, &mut events);
    if !events.is_empty() {
      self.deliver(events);
    }
    result
  }

  fn deliver(&self, events: Vec<Event>) {
    let sinks = self.sinks.lock();
    for event in events {
      for sink in sinks.iter() {
        sink.send(event.clone());
      }
    }
  }

  /// Records at `at` (default now); wakes the timer if that brought the next
  /// time-driven change closer.
  pub fn record(&self, at: Option<i64>, successes: u64, failures: u64) {
    let watched = self.watched.load(Ordering::Relaxed);
    let closer = self.with_core(|core, now, out| {
      let before = if watched { core.next_change_ms() } else { None };
      core.record(now, at.unwrap_or(now), successes, failures, out);
      let after = if watched { core.next_change_ms() } else { None };
      matches!((before, after), (None, Some(_))) || matches!((before, after), (Some(b), Some(a)) if a < b)
    });
    if closer {
      timer::poke();
    }
  }

  /// Hands a real-clock tracker to the timer thread, once.
  pub fn watch(self: &Arc<Self>) {
    if matches!(self.clock, TrackerClock::Monotonic(_)) && !self.watched.swap(true, Ordering::AcqRel) {
      timer::watch(self);
    }
  }

  /// Timer step: moves to now (delivering transitions) and returns how many ms
  /// until the status could next change on its own, if ever.
  pub fn tick(&self) -> Option<i64> {
    if self.is_closed() {
      return None;
    }
    self.with_core(|core, now, _| core.next_change_ms().map(|t| t - now))
  }

  /// Adds a handle's sink.
  pub fn add_sink(&self, sink: Arc<Sink>) {
    self.sinks.lock().push(sink);
  }

  /// Removes a handle's sink.
  pub fn remove_sink(&self, sink: &Arc<Sink>) {
    self.sinks.lock().retain(|s| !Arc::ptr_eq(s, sink));
  }
}
