//! Time sources. The core never reads a clock itself: every operation takes
//! `now` (epoch milliseconds) from one of these, so tests drive time by hand.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// A source of "now" in epoch milliseconds.
pub trait Clock: Send + Sync {
  /// The current time in epoch milliseconds.
  fn now_ms(&self) -> i64;
}

/// A monotonic ticker: milliseconds elapsed since some fixed start.
pub trait Ticker: Send + Sync {
  /// Milliseconds since the ticker's start; never decreases.
  fn elapsed_ms(&self) -> i64;
}

/// A wall clock: epoch milliseconds, which may jump (NTP step, DST, manual change).
pub trait WallClock: Send + Sync {
  /// Epoch milliseconds now.
  fn epoch_ms(&self) -> i64;
}

/// The process's real monotonic ticker (`std::time::Instant`).
pub struct InstantTicker(Instant);

impl Default for InstantTicker {
  fn default() -> Self {
    Self(Instant::now())
  }
}

impl Ticker for InstantTicker {
  fn elapsed_ms(&self) -> i64 {
    self.0.elapsed().as_millis() as i64
  }
}

/// The system wall clock.
pub struct SystemWallClock;

impl WallClock for SystemWallClock {
  fn epoch_ms(&self) -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
  }
}

/// Epoch milliseconds derived from a monotonic ticker anchored to the wall
/// clock once, at construction: later wall-clock jumps cannot move it, so they
/// can neither expire nor resurrect events.
pub struct MonotonicClock<T: Ticker = InstantTicker> {
  anchor_epoch_ms: i64,
  ticker: T,
}

impl MonotonicClock<InstantTicker> {
  /// A clock on the real `Instant`, anchored to the system wall clock now.
  pub fn new() -> Self {
    Self::anchored(&SystemWallClock, InstantTicker::default())
  }
}

impl Default for MonotonicClock<InstantTicker> {
  fn default() -> Self {
    Self::new()
  }
}

impl<T: Ticker> MonotonicClock<T> {
  /// A clock that reads `wall` once and then advances with `ticker` only.
  pub fn anchored(wall: &dyn WallClock, ticker: T) -> Self {
    Self { anchor_epoch_ms: wall.epoch_ms() - ticker.elapsed_ms(), ticker }
  }
}

impl<T: Ticker> Clock for MonotonicClock<T> {
  fn now_ms(&self) -> i64 {
    self.anchor_epoch_ms + self.ticker.elapsed_ms()
  }
}

/// A clock that moves only when told to: for tests and log replays.
#[derive(Default)]
pub struct ManualClock(AtomicI64);

impl ManualClock {
  /// A manual clock reading `start_ms`.
  pub fn new(start_ms: i64) -> Self {
    Self(AtomicI64::new(start_ms))
  }

  /// Moves the clock to `ms` if that is later than now; never moves it back.
  pub fn advance_to(&self, ms: i64) {
    self.0.fetch_max(ms, Ordering::Relaxed);
  }
}

impl Clock for ManualClock {
  fn now_ms(&self) -> i64 {
    self.0.load(Ordering::Relaxed)
  }
}

#[cfg(test)]
mod tests {
  use super::*;
  use std::sync::atomic::AtomicI64;

  struct FakeTicker(AtomicI64);
  impl Ticker for FakeTicker {
    fn elapsed_ms(&self) -> i64 {
      self.0.load(Ordering::Relaxed)
    }
  }
  struct FakeWall(AtomicI64);
  impl WallClock for FakeWall {
    fn epoch_ms(&self) -> i64 {
      self.0.load(Ordering::Relaxed)
    }
  }

  #[test]
  fn monotonic_clock_ignores_wall_clock_jumps() {
    let wall = FakeWall(AtomicI64::new(1_700_000_000_000));
    let clock = MonotonicClock::anchored(&wall, FakeTicker(AtomicI64::new(5)));
    assert_eq!(clock.now_ms(), 1_700_000_000_000);
    // An NTP step back an hour and a DST-like jump forward change nothing.
    wall.0.store(1_700_000_000_000 - 3_600_000, Ordering::Relaxed);
    assert_eq!(clock.now_ms(), 1_700_000_000_000);
    wall.0.store(1_700_000_000_000 + 7_200_000, Ordering::Relaxed);
    assert_eq!(clock.now_ms(), 1_700_000_000_000);
    // Only the ticker moves it.
    clock.ticker.0.store(1_005, Ordering::Relaxed);
    assert_eq!(clock.now_ms(), 1_700_000_001_000);
  }

  #[test]
  fn manual_clock_never_goes_back() {
    let clock = ManualClock::new(100);
    clock.advance_to(50);
    assert_eq!(clock.now_ms(), 100);
    clock.advance_to(250);
    assert_eq!(clock.now_ms(), 250);
  }
}
