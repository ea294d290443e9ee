//! `record()` without the tracker's lock, on the thread that owns the tracker
//! (the binding's raw `record`, `src/fast_path.rs`; the lock is the binding's
//! `TrackerState`'s).
//!
//! An uncontended lock costs ≈12 ns here (two atomic read-modify-writes), as
//! much as the whole Node-API call. Most records change nothing but two
//! counters: the core's quiet region (`budget_core::QuietLease`) says how many
//! successes and failures can be recorded at now, in the newest bucket, before
//! any status or alert could change, and until when. After a record under the
//! lock, the thread that made it takes that region as a *lease*; its next
//! records, while the clock is before the lease's end and its counts last,
//! only bump two counters here — plain loads and stores, no atomic
//! read-modify-write, no lock.
//!
//! Whoever takes the tracker's lock next *settles* the lease first: stops it,
//! and hands its counts to the core in one record at the lease's time (which
//! the quiet region covers, so nothing is re-evaluated), before the core moves
//! in time. So every reader sees every record, in its bucket, and every
//! decision is the one the locked path would take.
//!
//! Another thread (the timer, the autosave thread) that settles must not race
//! a record in progress. The owner marks its record `busy` and then looks
//! whether the lease is still open, with no fence (a compiler fence only); the
//! other thread closes the lease, then makes every thread of the process pass
//! a full memory barrier (Linux `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`)
//! and then waits while `busy`: either the owner saw the lease closed, or its
//! record completes before the counts are read (Dekker's algorithm with an
//! asymmetric fence, as in Linux's RCU and folly's `asymmetricHeavyBarrier`).
//! Where that system call is missing (other systems, an old kernel, a seccomp
//! filter) no lease is ever granted and `record()` takes the lock, as before.
//! Shared trackers (`ErrorBudgetTracker.shared`) record from several threads:
//! they never lease either.

use std::sync::atomic::{compiler_fence, AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering::*};

use crate::tracker::{Event, QuietLease, Tracker};
use crate::tracker_clock::TrackerClock;
use crate::window::Placement;

/// One tracker's lease. Its limits and time are written under the lock of
/// the tracker (`grant`, `settle`) while the lease is closed; its counts by the
/// owner's `try_record` only.
#[derive(Default)]
pub struct Lease {
  /// Whether the owner may record through the lease. Set and cleared under
  /// the core's lock only.
  open: AtomicBool,
  /// The owner is inside `try_record` (see the module's doc).
  busy: AtomicBool,
  /// Successes and failures recorded through the lease, not yet settled.
  successes: AtomicU64,
  failures: AtomicU64,
  /// The lease's limits (`QuietLease`).
  max_successes: AtomicU64,
  max_failures: AtomicU64,
  max_events: AtomicU64,
  until_ms: AtomicI64,
  at_ms: AtomicI64,
  /// The owner thread's token (`thread_token`).
  owner: AtomicUsize,
}

impl Lease {
  /// One record of `success` through the lease at the clock's now: the
  /// clock's reading it was recorded at if done (the caller does nothing
  /// else; `record()` hands it back to JavaScript, which would otherwise read
  /// the clock again to stamp what it recorded), `None` if the lease is
  /// closed, over or spent (the caller takes the lock). On the owner thread only.
  #[inline(always)]
  pub fn try_record(&self, clock: &TrackerClock, success: bool) -> Option<i64> {
    self.busy.store(true, Relaxed);
    // The light side of the asymmetric fence: `busy` is stored before `open`
    // is loaded, in program order (the heavy side is `settle`'s membarrier).
    compiler_fence(SeqCst);
    let mut stamp = None;
    if self.open.load(Relaxed) {
      let now = clock.now_ms();
      if now < self.until_ms.load(Relaxed) {
        let (s, f) = (self.successes.load(Relaxed), self.failures.load(Relaxed));
        if s + f < self.max_events.load(Relaxed) {
          if success {
            if s < self.max_successes.load(Relaxed) {
              self.successes.store(s + 1, Relaxed);
              stamp = Some(now);
            }
          } else if f < self.max_failures.load(Relaxed) {
            self.failures.store(f + 1, Relaxed);
            stamp = Some(now);
          }
        }
      }
    }
    // Release: a settler that sees `busy` false sees the counts.
    self.busy.store(false, Release);
    stamp
  }

  /// Whether the owner may record through the lease now (its records are then
  /// not in the core's counts yet). Under the core's lock.
  #[inline]
  pub fn is_open(&self) -> bool {
    self.open.load(Relaxed)
  }

  /// Opens a lease on `core`'s quiet region for the calling thread, if it has
  /// one and the system has the heavy fence. Under the core's lock, after
  /// `settle` (the lease is closed and its counts are 0).
  pub fn grant(&self, core: &mut Tracker) {
    debug_assert!(!self.open.load(Relaxed));
    if !heavy_fence::available() {
      return;
    }
    let Some(QuietLease { successes, failures, events, at_ms, until_ms }) = core.quiet_lease() else { return };
    self.max_successes.store(successes, Relaxed);
    self.max_failures.store(failures, Relaxed);
    self.max_events.store(events, Relaxed);
    self.until_ms.store(until_ms, Relaxed);
    self.at_ms.store(at_ms, Relaxed);
    self.owner.store(thread_token(), Relaxed);
    self.open.store(true, Relaxed);
  }

  /// Closes the lease and records what was recorded through it into `core`
  /// (at the lease's time, before the core moves: see the module's doc).
  /// Under the core's lock, from any thread.
  #[inline]
  pub fn settle(&self, core: &mut Tracker, events: &mut Vec<Event>) {
    if self.open.load(Relaxed) {
      self.close_and_settle(core, events);
    }
  }

  #[cold]
  fn close_and_settle(&self, core: &mut Tracker, events: &mut Vec<Event>) {
    self.open.store(false, Relaxed);
    if self.owner.load(Relaxed) != thread_token() {
      // The owner may be inside `try_record`: after the fence it either sees
      // the lease closed or is seen `busy`, and then is waited for.
      heavy_fence::run();
      while self.busy.load(Acquire) {
        std::thread::yield_now();
      }
    }
    let (s, f) = (self.successes.load(Relaxed), self.failures.load(Relaxed));
    self.successes.store(0, Relaxed);
    self.failures.store(0, Relaxed);
    if s + f > 0 {
      let placement = core.record(core.now_ms(), self.at_ms.load(Relaxed), s, f, events);
      debug_assert_eq!(placement, Placement::Counted, "a lease stays within the counts' limits");
    }
  }
}

/// A number that tells the calling thread from every other live thread (the
/// address of a thread-local).
fn thread_token() -> usize {
  thread_local! {
    static TOKEN: u8 = const { 0 };
  }
  TOKEN.with(|t| t as *const u8 as usize)
}

/// The heavy side of the asymmetric fence: every running thread of the
/// process passes a full memory barrier before `run` returns.
#[cfg(target_os = "linux")]
mod heavy_fence {
  use std::sync::atomic::{AtomicBool, Ordering};
  use std::sync::OnceLock;

  const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_int = 1 << 3;
  const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_int = 1 << 4;

  /// Set if the fence ever failed after registering: no more leases.
  static BROKEN: AtomicBool = AtomicBool::new(false);

  /// Whether the process is registered for expedited private membarriers
  /// (Linux ≥ 4.14; asked once).
  pub fn available() -> bool {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    // SAFETY: a system call with integer arguments only.
    *REGISTERED.get_or_init(|| unsafe {
      libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0
    }) && !BROKEN.load(Ordering::Relaxed)
  }

  pub fn run() {
    // SAFETY: a system call with integer arguments only.
    if unsafe { libc::syscall(libc::SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) } != 0 {
      // Not expected once registered. No lease is granted from now on; this
      // one is settled after a pause long enough for any record in progress.
      BROKEN.store(true, Ordering::Relaxed);
      std::thread::sleep(std::time::Duration::from_millis(10));
    }
  }
}

/// Elsewhere no lease is granted, so nothing ever needs the fence.
#[cfg(not(target_os = "linux"))]
mod heavy_fence {
  pub fn available() -> bool {
    false
  }

  pub fn run() {}
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::config::Config;
  use crate::tracker_clock::TrackerClock;
  use std::sync::{Arc, Mutex};

  /// A tracker with 1 s buckets over an hour and no alert policy, 10 failures
  /// in 1 000 at 95 % (healthy: 10 / (1 000 × 0.05) = 0.2 of the budget spent),
  /// on a manual clock at `now`. It stays healthy with any successes and up to
  /// 15 more failures: 25 / (1 015 × 0.05) = 0.493 spent, 26 / (1 016 × 0.05) =
  /// 0.512 is past the warning's 0.5. The quiet region grants 14 of them (its
  /// guess, `quiet.rs`, stays a failure short of the exact edge).
  fn tracker(now: i64) -> (Tracker, TrackerClock) {
    let config = Config { window_ms: 3_600_000, resolution_ms: 1_000, alerts: Some(vec![]), ..Config::default() };
    let mut core = Tracker::new(config, now).unwrap();
    core.record(now, now, 990, 10, &mut Vec::<Event>::new());
    let clock = TrackerClock::manual();
    if let TrackerClock::Manual(c) = &clock {
      c.advance_to(now);
    }
    (core, clock)
  }

  #[test]
  fn records_through_a_lease_reach_the_tracker_when_it_is_settled() {
    if !heavy_fence::available() {
      return; // no lease is ever granted here: nothing to test
    }
    let (mut core, clock) = tracker(1_500);
    let lease = Lease::default();
    lease.grant(&mut core);
    assert!(lease.open.load(Relaxed));
    assert_eq!(lease.until_ms.load(Relaxed), 2_000, "the end of the bucket of 1 500");
    for i in 0..1_000 {
      assert_eq!(lease.try_record(&clock, i % 100 != 0), Some(1_500), "stamped at the clock's now");
    }
    // Not in the tracker yet; settling closes the lease and records them at its time.
    assert_eq!(core.counts().total(), 1_000);
    let mut events = Vec::new();
    lease.settle(&mut core, &mut events);
    assert!(events.is_empty());
    assert_eq!((core.counts().successes, core.counts().failures), (990 + 990, 10 + 10));
    assert_eq!(core.recorded().total(), 2_000);
    assert_eq!(lease.try_record(&clock, true), None, "closed once settled");
    assert_eq!(core.counts().total(), 2_000);
  }

  #[test]
  fn a_lease_ends_at_its_time_and_when_its_counts_are_spent() {
    if !heavy_fence::available() {
      return;
    }
    let (mut core, clock) = tracker(1_500);
    let lease = Lease::default();
    lease.grant(&mut core);
    let TrackerClock::Manual(manual) = &clock else { unreachable!() };
    manual.advance_to(1_999);
    assert_eq!(lease.try_record(&clock, true), Some(1_999), "stamped at the clock's now, not the lease's time");
    manual.advance_to(2_000);
    assert_eq!(lease.try_record(&clock, true), None, "the next bucket is past the lease");
    // Spent: 14 more failures are leased (see `tracker`), not 15.
    let (mut core, clock) = tracker(1_500);
    let lease = Lease::default();
    lease.grant(&mut core);
    for _ in 0..14 {
      assert!(lease.try_record(&clock, false).is_some());
    }
    assert_eq!(lease.try_record(&clock, false), None);
    assert!(lease.try_record(&clock, true).is_some(), "successes are still leased");
  }

  /// The owner records through its lease (taking the lock only when it is
  /// over) while another thread settles it under the lock, closing it 500
  /// times: every record is counted exactly once.
  #[test]
  fn another_thread_settles_a_lease_in_use_without_losing_a_record() {
    if !heavy_fence::available() {
      return; // no lease is ever granted here: the loop below would not end
    }
    const SETTLES: u64 = 500;
    let (core, clock) = tracker(1_500);
    let shared = Arc::new((Mutex::new(core), Lease::default(), clock));
    let settles = Arc::new(AtomicU64::new(0));
    let settler = {
      let (shared, settles) = (Arc::clone(&shared), Arc::clone(&settles));
      std::thread::spawn(move || {
        while settles.load(Relaxed) < SETTLES {
          let mut core = shared.0.lock().unwrap();
          // Counted when it closes an open lease (one the owner may be using).
          let open = shared.1.open.load(Relaxed);
          shared.1.settle(&mut core, &mut Vec::new());
          drop(core);
          settles.fetch_add(open as u64, Relaxed);
          std::thread::yield_now();
        }
      })
    };
    let (mut fast, mut locked, mut failures) = (0u64, 0u64, 0u64);
    let mut i = 0u64;
    while settles.load(Relaxed) < SETTLES {
      i += 1;
      let success = !i.is_multiple_of(1_000); // 1 failure in 1 000: healthy, nearer and nearer 99.9 %
      failures += !success as u64;
      if shared.1.try_record(&shared.2, success).is_some() {
        fast += 1;
        continue;
      }
      locked += 1;
      let mut core = shared.0.lock().unwrap();
      let mut events = Vec::new();
      shared.1.settle(&mut core, &mut events);
      let now = core.now_ms();
      core.record(now, now, success as u64, !success as u64, &mut events);
      shared.1.grant(&mut core);
    }
    settler.join().unwrap();
    let mut core = shared.0.lock().unwrap();
    shared.1.settle(&mut core, &mut Vec::new());
    assert_eq!(core.recorded().total(), 1_000 + i, "fast {fast}, locked {locked}");
    assert_eq!(core.counts().failures, 10 + failures);
    assert!(fast > 0, "no record went through a lease");
  }
}
