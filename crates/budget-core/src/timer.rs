//! One background thread for every real-clock tracker of the process that has
//! listeners. Each watched tracker is in a schedule ordered by the earliest
//! moment it could change status on its own (the next expiry of a non-empty
//! bucket); the thread sleeps until the first of them, moves only the trackers
//! that are due to now (their transitions travel the usual threadsafe path),
//! and schedules them again. Work per wake-up is proportional to the trackers
//! due, not to those watched: an idle tracker (nothing in its window) is not
//! in the schedule at all, and one whose last listener goes leaves it.
//! Records wake the thread only when they make a tracker's moment earlier.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Weak};
use std::time::{Duration, Instant};

use crate::sync::{spawn, Condvar, Mutex};
use crate::BudgetError;

/// What the timer moves: a tracker's native state.
pub trait Ticks: Send + Sync {
  /// Moves to now (delivering transitions) and returns how many ms until the
  /// status could next change on its own, if ever.
  fn tick(&self) -> Option<i64>;
}

/// A watched tracker (by address) and when it is due, if it is scheduled.
struct Watched {
  state: Weak<dyn Ticks>,
  due: Option<(Instant, u64)>,
}

#[derive(Default)]
struct Schedule {
  watched: HashMap<usize, Watched>,
  /// (due, tie-breaker) → tracker address.
  due: BTreeMap<(Instant, u64), usize>,
  seq: u64,
  running: bool,
}

impl Schedule {
  /// Schedules tracker `key` at `at` unless it is due earlier already.
  /// Returns whether it became the first due.
  fn schedule(&mut self, key: usize, at: Instant) -> bool {
    let Some(entry) = self.watched.get_mut(&key) else { return false };
    if entry.due.is_some_and(|(due, _)| due <= at) {
      return false;
    }
    if let Some(old) = entry.due.take() {
      self.due.remove(&old);
    }
    self.seq += 1;
    entry.due = Some((at, self.seq));
    self.due.insert((at, self.seq), key);
    self.due.first_key_value().is_some_and(|(k, _)| *k == (at, self.seq))
  }
}

struct Timer {
  schedule: Mutex<Schedule>,
  wake: Condvar,
}

static TIMER: LazyLock<Timer> = LazyLock::new(|| Timer { schedule: Mutex::default(), wake: Condvar::new() });

fn key<T: ?Sized>(state: &T) -> usize {
  state as *const T as *const () as usize
}

/// Starts watching `state`, starting the thread on first use: a failed spawn
/// (a thread or pids limit) is an error, never an abort.
pub fn watch<T: Ticks + 'static>(state: &Arc<T>) -> Result<(), BudgetError> {
  let t = &*TIMER;
  let mut s = t.schedule.lock();
  if !s.running {
    spawn("budget-timer", run, "the timer thread", "the listener was not added")?;
    s.running = true;
  }
  let weak: Weak<dyn Ticks> = Arc::downgrade(state) as Weak<dyn Ticks>;
  s.watched.insert(key(&**state), Watched { state: weak, due: None });
  // Due now: the thread asks the tracker when it next could change.
  if s.schedule(key(&**state), Instant::now()) {
    t.wake.notify_one();
  }
  Ok(())
}

/// Stops watching `state`: the thread will not wake for it again.
pub fn unwatch<T: Ticks>(state: &T) {
  let mut s = TIMER.schedule.lock();
  if let Some(Watched { due: Some(due), .. }) = s.watched.remove(&key(state)) {
    s.due.remove(&due);
  }
}

/// Tells the timer a watched tracker's next change is `wait_ms` from now.
pub fn poke<T: Ticks>(state: &T, wait_ms: i64) {
  let at = Instant::now() + Duration::from_millis(wait_ms.max(0) as u64);
  let mut s = TIMER.schedule.lock();
  if s.schedule(key(state), at) {
    TIMER.wake.notify_one();
  }
}

fn run() {
  let t = &*TIMER;
  let mut s = t.schedule.lock();
  loop {
    let now = Instant::now();
    let mut due = Vec::new();
    while let Some(entry) = s.due.first_entry() {
      if entry.key().0 > now {
        break;
      }
      let key = entry.remove();
      if let Some(w) = s.watched.get_mut(&key) {
        w.due = None;
        due.push((key, w.state.clone()));
      }
    }
    if due.is_empty() {
      match s.due.first_key_value().map(|(k, _)| k.0) {
        Some(at) => {
          t.wake.wait_until(&mut s, at);
        }
        None => t.wake.wait(&mut s),
      }
      continue;
    }
    // Trackers are moved outside the schedule's lock (they take their own,
    // and `close()` takes theirs before this one).
    drop(s);
    let mut next = Vec::with_capacity(due.len());
    for (key, state) in due {
      let Some(state) = state.upgrade() else { continue };
      // Delivers whatever changed by now, then asks for the next moment.
      if let Some(wait_ms) = state.tick() {
        next.push((key, Instant::now() + Duration::from_millis(wait_ms.max(0) as u64)));
      }
    }
    s = t.schedule.lock();
    for (key, at) in next {
      s.schedule(key, at);
    }
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use std::sync::mpsc::{channel, Receiver, Sender};

  /// A state that reports each tick and then asks for no further one.
  struct Reporting(std::sync::Mutex<Sender<()>>);

  impl Ticks for Reporting {
    fn tick(&self) -> Option<i64> {
      let _ = self.0.lock().unwrap().send(());
      None
    }
  }

  fn reporting() -> (Arc<Reporting>, Receiver<()>) {
    let (sender, ticks) = channel();
    (Arc::new(Reporting(std::sync::Mutex::new(sender))), ticks)
  }

  /// Generous: the thread shares the machine with the other tests.
  const TICKED: Duration = Duration::from_secs(20);

  #[test]
  fn a_watched_state_is_ticked_at_once_and_again_when_poked() {
    let (state, ticks) = reporting();
    watch(&state).unwrap();
    ticks.recv_timeout(TICKED).expect("ticked when watched");
    poke(&*state, 0);
    ticks.recv_timeout(TICKED).expect("ticked when poked");
    unwatch(&*state);
  }

  #[test]
  fn an_unwatched_state_is_not_ticked_when_poked() {
    let (state, ticks) = reporting();
    watch(&state).unwrap();
    ticks.recv_timeout(TICKED).expect("ticked when watched");
    unwatch(&*state);
    poke(&*state, 0);
    assert!(ticks.recv_timeout(Duration::from_millis(300)).is_err(), "no tick after unwatch");
  }

  #[test]
  fn the_schedule_keeps_the_earlier_due_time() {
    let mut schedule = Schedule::default();
    let at = Instant::now();
    let state: Weak<dyn Ticks> = Weak::<Reporting>::new();
    schedule.watched.insert(1, Watched { state: state.clone(), due: None });
    schedule.watched.insert(2, Watched { state, due: None });
    assert!(schedule.schedule(1, at + Duration::from_secs(10)), "the only one: first");
    assert!(schedule.schedule(2, at + Duration::from_secs(5)), "earlier: first");
    assert!(!schedule.schedule(1, at + Duration::from_secs(20)), "later than its own: kept");
    assert!(schedule.schedule(1, at), "earlier than both: first");
    assert!(!schedule.schedule(3, at), "not watched: not scheduled");
    assert_eq!(schedule.due.values().copied().collect::<Vec<_>>(), vec![1, 2]);
  }
}
