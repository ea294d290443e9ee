//! The native state behind a tracker's handles (`state.rs`) and the registry
//! of shared trackers (`registry.rs`) and a JS object's hold on one
//! (`handle.rs`): last close closes (and saves), weak references, transitions
//! to every sink in order, records from threads, memory given back.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use budget_core::handle::Handle;
use budget_core::registry::Registry;
use budget_core::state::{Expected, Saver, Sink, TrackerState};
use budget_core::tracker_clock::TrackerClock;
use budget_core::{BudgetError, CheckedConfig, Config, Event, Snapshot, Status, Tracker};
use Status::{Exhausted, Healthy};

/// Collects the status transitions it is sent, as (from, to, at).
#[derive(Default)]
struct Collecting(Mutex<Vec<(Status, Status, i64)>>);

impl Sink for Collecting {
  fn send(&self, event: Event) {
    if let Event::Status(t, _) = event {
      self.0.lock().unwrap().push((t.from, t.to, t.report.at_ms));
    }
  }
}

impl Collecting {
  fn seen(&self) -> Vec<(Status, Status, i64)> {
    self.0.lock().unwrap().clone()
  }
}

/// Keeps what it writes; refuses to while `failing`.
#[derive(Default)]
struct Keeping {
  written: Mutex<Vec<String>>,
  failing: AtomicBool,
}

impl Saver for Keeping {
  fn write(&self, take: impl FnOnce() -> Option<String>) -> Result<(), BudgetError> {
    self.write_then(take, || ())
  }

  fn write_then(&self, take: impl FnOnce() -> Option<String>, then: impl FnOnce()) -> Result<(), BudgetError> {
    let mut written = self.written.lock().unwrap();
    let Some(json) = take() else { return Ok(()) };
    if self.failing.load(Ordering::Acquire) {
      return Err(BudgetError::invalid_state("disk full"));
    }
    written.push(json);
    then();
    Ok(())
  }
}

type State = TrackerState<Collecting, Keeping>;

/// No alert pairs: only status transitions. Target 0.95, 1 h window, 83 ms buckets.
fn config() -> Config {
  Config { alerts: Some(Vec::new()), ..Config::default() }
}

/// A state on a manual clock at 0.
fn state() -> Arc<State> {
  Arc::new(TrackerState::new(Tracker::new(config(), 0).unwrap(), TrackerClock::manual()))
}

fn advance(state: &State, ms: i64) {
  let TrackerClock::Manual(clock) = &state.clock else { panic!("manual clock") };
  clock.advance_to(ms);
}

/// (successes, failures) in the window of a snapshot's JSON.
fn counts_in(json: &str) -> (u64, u64) {
  let snapshot = Snapshot::parse(json).unwrap();
  let counts = Tracker::from_snapshot(&snapshot, snapshot.saved_at_ms).unwrap().counts();
  (counts.successes, counts.failures)
}

#[test]
fn every_sink_gets_each_transition_in_order_until_it_is_removed() {
  let state = state();
  let (first, second) = (Arc::new(Collecting::default()), Arc::new(Collecting::default()));
  state.add_sink(Arc::clone(&first));
  state.add_sink(Arc::clone(&second));
  // One failure: budget 1 × 0.05, none left → exhausted.
  state.record_measured(None, 0, 1).unwrap();
  advance(&state, 1_000);
  // 99 successes more: budget 100 × 0.05 = 5, 4 left = 0.8 ≥ 0.5 → healthy.
  state.record_measured(None, 99, 0).unwrap();
  let expected = vec![(Healthy, Exhausted, 0), (Exhausted, Healthy, 1_000)];
  assert_eq!(first.seen(), expected);
  assert_eq!(second.seen(), expected);
  state.remove_sink(&second);
  advance(&state, 2_000);
  state.record_measured(None, 0, 5).unwrap();
  // 6 failures of 105: budget 5.25, none left → exhausted; the removed sink hears nothing.
  assert_eq!(first.seen().last(), Some(&(Healthy, Exhausted, 2_000)));
  assert_eq!(second.seen().len(), 2);
}

/// The locked path of `record()` hands back the stamp it recorded at, which
/// JavaScript would otherwise read the clock again for (a guard's verdict).
#[test]
fn a_record_returns_the_stamp_it_was_recorded_at() {
  let state = state();
  advance(&state, 5_000);
  assert_eq!(state.record_stamped(None, 1, 0).unwrap().1, 5_000, "the clock's now");
  assert_eq!(state.record_stamped(Some(4_200), 1, 0).unwrap().1, 4_200, "an earlier at, as given");
  // A later `at` counts now (the clock stays: a real clock's caller never moves it).
  assert_eq!(state.record_stamped(Some(9_000), 0, 1).unwrap().1, 5_000, "a later at counts at now");
  assert_eq!(state.read(|core| core.recorded().total()), 3);
}

#[test]
fn the_last_handle_to_close_closes_and_makes_the_final_save() {
  let state = state();
  assert!(state.set_saver(Keeping::default()));
  assert!(!state.set_saver(Keeping::default()), "one saver");
  state.count_in();
  state.count_in();
  state.record_measured(None, 3, 1).unwrap();
  assert!(!state.count_out(), "one handle still open");
  assert!(!state.is_closed());
  assert!(state.saver().unwrap().written.lock().unwrap().is_empty());
  assert!(state.count_out(), "the last one");
  assert!(state.is_closed());
  let written = state.saver().unwrap().written.lock().unwrap().clone();
  assert_eq!(written.len(), 1);
  assert_eq!(counts_in(&written[0]), (3, 1));
  // Closed: stands still at close(), reads its frozen state, saves nothing more.
  advance(&state, 10_000);
  assert_eq!(state.read(|core| (core.counts().total(), core.now_ms())), (4, 0));
  state.autosave().unwrap();
  assert_eq!(state.saver().unwrap().written.lock().unwrap().len(), 1);
}

#[test]
fn a_failed_final_save_leaves_the_tracker_open() {
  let state = state();
  state.set_saver(Keeping { failing: AtomicBool::new(true), ..Keeping::default() });
  state.record_measured(None, 2, 0).unwrap();
  let error = state.final_save().unwrap_err();
  assert_eq!(error.message, "disk full");
  assert!(!state.is_closed());
  state.saver().unwrap().failing.store(false, Ordering::Release);
  state.final_save().unwrap();
  assert!(state.is_closed());
  state.final_save().unwrap();
  assert_eq!(state.saver().unwrap().written.lock().unwrap().len(), 1, "saved once");
}

#[test]
fn save_now_needs_a_saver() {
  let error = state().save_now().unwrap_err();
  assert_eq!(error.code, "ERR_INVALID_STATE");
  assert_eq!(error.message, "save() needs a tracker created with persist");
}

#[test]
fn the_registry_finds_an_open_tracker_and_lets_go_of_it() {
  let registry = Registry::<State>::new();
  let created = AtomicUsize::new(0);
  let create = || {
    created.fetch_add(1, Ordering::AcqRel);
    Ok(state())
  };
  let a = registry.attach("a", |_| Ok(()), create).unwrap();
  let b = registry.attach("a", |_| Ok(()), create).unwrap();
  assert!(Arc::ptr_eq(&a, &b));
  assert_eq!(created.load(Ordering::Acquire), 1);
  assert!(registry.is_open("a"));
  // A refused check counts nothing in.
  let refused = registry.attach("a", |_| Err(BudgetError::invalid_value("no")), create);
  assert_eq!(refused.err().map(|e| e.message), Some("no".into()));
  assert!(!registry.count_out(&a));
  assert!(registry.count_out(&b), "two handles counted in, two out");
  assert!(a.is_closed());
  assert!(!registry.is_open("a"), "the last close freed the name");
  let c = registry.attach("a", |_| Ok(()), create).unwrap();
  assert!(!Arc::ptr_eq(&a, &c));
  // Weak: dropped without a close, the name is free again.
  drop((a, b, c));
  assert!(!registry.is_open("a"));
  registry.attach("a", |_| Ok(()), create).unwrap();
  assert_eq!(created.load(Ordering::Acquire), 3);
}

#[test]
fn a_tracker_outside_the_registry_is_counted_out_by_itself() {
  let registry = Registry::<State>::new();
  let state = state();
  state.count_in();
  assert!(registry.count_out(&state));
  assert!(state.is_closed());
}

#[test]
fn another_config_is_refused_by_the_fields_the_caller_gave() {
  let state = state();
  let other = CheckedConfig::new(Config { window_ms: 60_000, min_events: 5, ..config() }).unwrap();
  let given = ["windowMs".to_string()];
  let expected = Expected { config: &other, real_clock: false, hysteresis: 0.0, given: &given };
  let error = state.check_expected("a", &expected).unwrap_err();
  assert_eq!(error.code, "ERR_INVALID_ARG_VALUE");
  assert!(error.message.starts_with("shared tracker 'a' already exists with another config (windowMs differ);"));
  // Only derived fields differ: all of them are named.
  let expected = Expected { config: &other, real_clock: true, hysteresis: 0.0, given: &[] };
  let error = state.check_expected("a", &expected).unwrap_err();
  assert!(error.message.contains("(windowMs, minEvents, clock differ)"), "{}", error.message);
  let same = CheckedConfig::new(config()).unwrap();
  state.check_expected("a", &Expected { config: &same, real_clock: false, hysteresis: 0.0, given: &given }).unwrap();
}

#[test]
fn records_from_threads_all_count_and_every_sink_hears_the_same_order() {
  let registry = Registry::<State>::new();
  let state = registry.attach("threads", |_| Ok(()), || Ok(state())).unwrap();
  let (first, second) = (Arc::new(Collecting::default()), Arc::new(Collecting::default()));
  state.add_sink(Arc::clone(&first));
  state.add_sink(Arc::clone(&second));
  let threads: Vec<_> = (0..4)
    .map(|i| {
      let state = Arc::clone(&state);
      // Thread i records a failure every (i + 2)th record, starting with one.
      std::thread::spawn(move || {
        for n in 0..1_000 {
          let failure = n % (i + 2) == 0;
          state.record_measured(None, !failure as u64, failure as u64).unwrap();
        }
      })
    })
    .collect();
  threads.into_iter().for_each(|t| t.join().unwrap());
  // 1000 records each; failures: 500 + 334 + 250 + 200.
  let counts = state.read(|core| core.counts());
  assert_eq!((counts.successes, counts.failures), (4_000 - 1_284, 1_284));
  let seen = first.seen();
  assert_eq!(seen, second.seen());
  assert!(!seen.is_empty());
  // A chain: each transition starts where the one before ended.
  assert_eq!(seen[0].0, Healthy);
  assert!(seen.windows(2).all(|w| w[0].1 == w[1].0), "{seen:?}");
  assert!(registry.count_out(&state));
}

/// Every memory adjustment handles made, as (env, delta).
static ADJUSTED: Mutex<Vec<(usize, i64)>> = Mutex::new(Vec::new());

fn adjust(env: usize, delta: i64) {
  ADJUSTED.lock().unwrap().push((env, delta));
}

#[test]
fn each_handle_closes_once_gives_its_memory_back_and_the_last_closes_the_tracker() {
  static REGISTRY: Registry<State> = Registry::new();
  let state = REGISTRY.attach("handles", |_| Ok(()), || Ok(state())).unwrap();
  let first = Handle::adopt(state, &REGISTRY);
  let second = Handle::adopt(REGISTRY.attach("handles", |_| Ok(()), || unreachable!()).unwrap(), &REGISTRY);
  let (bytes, window_before) = first.native_bytes();
  first.report_memory(7, adjust);
  first.record::<false>(None, 1, 0).unwrap();
  // The first record fills a bucket: the window's bytes grow, and V8 is told.
  let grown = first.native_bytes().1 - window_before;
  assert!(grown > 0);
  first.close();
  first.close();
  assert!(first.is_closed(), "this handle");
  assert_eq!(first.check_open("record").unwrap_err().code, "ERR_TRACKER_CLOSED");
  assert!(!second.is_closed(), "the tracker is still open for the other");
  let mine: Vec<_> = ADJUSTED.lock().unwrap().iter().copied().filter(|(env, _)| *env == 7).collect();
  assert_eq!(mine, vec![(7, bytes), (7, grown), (7, -bytes - grown)], "what was reported, given back once");
  let tracker = Arc::clone(&second.tracker);
  // Collected without close(): the last handle closes the tracker, frees the name.
  drop(second);
  assert!(tracker.is_closed());
  assert!(!REGISTRY.is_open("handles"));
  assert_eq!(tracker.read(|core| core.counts().successes), 1);
}
