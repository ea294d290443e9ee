//! One background thread for every real-clock tracker of the process that has
//! listeners. It sleeps until the earliest moment one of them could change
//! status on its own (the next expiry of a non-empty bucket), moves that
//! tracker to now, and lets its transitions travel the usual threadsafe path.
//! Records wake it only when they make that moment earlier.

use std::sync::{Arc, Once, Weak};
use std::thread;
use std::time::{Duration, Instant};

use crate::sync::{Condvar, Mutex};

use crate::state::TrackerState;

struct Schedule {
  trackers: Vec<Weak<TrackerState>>,
  /// Bumped by every `watch` and `poke`: a sleeper whose plan is older re-plans.
  generation: u64,
}

struct Timer {
  schedule: Mutex<Schedule>,
  wake: Condvar,
}

static TIMER: Timer =
  Timer { schedule: Mutex::new(Schedule { trackers: Vec::new(), generation: 0 }), wake: Condvar::new() };
static STARTED: Once = Once::new();

/// The timer, its thread started on first use.
fn timer() -> &'static Timer {
  STARTED.call_once(|| {
    thread::Builder::new().name("captcha-budget-timer".into()).spawn(run).expect("spawn the budget timer thread");
  });
  &TIMER
}

/// Starts watching `state` (idempotent per state: callers watch once).
pub fn watch(state: &Arc<TrackerState>) {
  let t = timer();
  let mut s = t.schedule.lock();
  s.trackers.push(Arc::downgrade(state));
  s.generation += 1;
  t.wake.notify_one();
}

/// Tells the timer a watched tracker's next change moved earlier.
pub fn poke() {
  if STARTED.is_completed() {
    TIMER.schedule.lock().generation += 1;
    TIMER.wake.notify_one();
  }
}

fn run() {
  let t = &TIMER;
  loop {
    let (trackers, generation) = {
      let mut s = t.schedule.lock();
      s.trackers.retain(|w| w.upgrade().is_some_and(|st| !st.is_closed()));
      (s.trackers.iter().filter_map(Weak::upgrade).collect::<Vec<_>>(), s.generation)
    };
    let mut deadline: Option<Instant> = None;
    for state in &trackers {
      // Delivers whatever changed by now, then asks for the next moment.
      if let Some(wait_ms) = state.tick() {
        let at = Instant::now() + Duration::from_millis(wait_ms.max(0) as u64);
        deadline = Some(deadline.map_or(at, |d| d.min(at)));
      }
    }
    drop(trackers);
    let mut s = t.schedule.lock();
    if s.generation != generation {
      continue;
    }
    match deadline {
      Some(d) => {
        t.wake.wait_until(&mut s, d);
      }
      None => t.wake.wait(&mut s),
    }
  }
}
