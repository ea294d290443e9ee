//! The clock of a tracker: the manual one, the precise monotonic one, or the
//! coarse monotonic one where its lag fits in a bucket. Here in the core (not
//! the binding) so that `cargo test -p budget-core` tests it without building
//! the napi crates a second time.

#[cfg(not(target_os = "linux"))]
use std::sync::OnceLock;

use crate::clock::{Clock, ManualClock, MonotonicClock, Ticker, WallClock};

/// The clock of one tracker.
pub enum TrackerClock {
  Monotonic(MonotonicClock),
  /// The monotonic clock read coarsely, for trackers whose buckets are at
  /// least `TICKS_PER_BUCKET` kernel ticks wide (see `CoarseTicker`).
  Coarse(MonotonicClock<CoarseTicker>),
  Manual(ManualClock),
}

impl TrackerClock {
  /// The real clock: precise monotonic time anchored to the wall clock now.
  pub fn real() -> Self {
    TrackerClock::Monotonic(MonotonicClock::new())
  }

  /// A manual clock, starting at 0.
  pub fn manual() -> Self {
    TrackerClock::Manual(ManualClock::new(0))
  }

  /// The current time, epoch ms.
  #[inline]
  pub fn now_ms(&self) -> i64 {
    match self {
      TrackerClock::Coarse(c) => c.now_ms(),
      TrackerClock::Monotonic(c) => c.now_ms(),
      TrackerClock::Manual(c) => c.now_ms(),
    }
  }

  /// Whether time moves by itself (not the manual clock).
  pub fn is_real(&self) -> bool {
    !matches!(self, TrackerClock::Manual(_))
  }

  /// The cheapest clock as good as this one for buckets of `resolution_ms`: a
  /// real clock becomes a coarse one when its lag fits in a bucket, continuing
  /// from this clock's current reading.
  pub fn cheapest_for(self, resolution_ms: i64) -> Self {
    match self {
      TrackerClock::Monotonic(precise) if CoarseTicker::fits(resolution_ms) => {
        TrackerClock::Coarse(MonotonicClock::anchored(&Reading(precise.now_ms()), CoarseTicker::new()))
      }
      other => other,
    }
  }
}

/// Milliseconds from `CLOCK_MONOTONIC_COARSE`, the kernel's monotonic time as of
/// its last timekeeping update: read from the vDSO in about 5 ns, where a
/// precise reading (`Instant::now()`, TSC-based) costs 30–40 ns on this machine
/// kind — most of a `record()` budget. It is monotonic and, like `Instant`,
/// immune to wall-clock steps (same clock base as `CLOCK_MONOTONIC`), and never
/// leads real time. It lags it by about a tick (`clock_getres`: 4 ms at HZ=250);
/// measured here over 57 M reads, 3 to 7 ms, under 2 ticks. So it is used only
/// when a bucket spans `TICKS_PER_BUCKET` ticks (16 ms here; the default
/// resolution of any window of 11.5 min or more): a record then lands in its
/// true bucket or the one before — within one bucket of its true time, the
/// window's own granularity. (A clock cached by a helper thread would be
/// cheaper still, but its lag grows without bound whenever that thread is not
/// scheduled.)
pub struct CoarseTicker {
  /// A precise `CLOCK_MONOTONIC` reading at creation: elapsed time starts
  /// from the true start, so readings never run ahead of real time.
  start_ns: i64,
}

impl CoarseTicker {
  fn new() -> Self {
    CoarseTicker { start_ns: precise_ns() }
  }

  /// Whether `TICKS_PER_BUCKET` kernel ticks fit in `resolution_ms`.
  fn fits(resolution_ms: i64) -> bool {
    tick_ns().is_some_and(|tick| tick * TICKS_PER_BUCKET <= resolution_ms.saturating_mul(1_000_000))
  }
}

impl Ticker for CoarseTicker {
  #[inline]
  fn elapsed_ms(&self) -> i64 {
    (coarse_ns() - self.start_ns).max(0) / 1_000_000
  }
}

/// Ticks of lag a bucket must hold before the coarse clock is used: twice the
/// worst lag measured (see `CoarseTicker`).
const TICKS_PER_BUCKET: i64 = 4;

/// The coarse clock's tick, ns.
#[cfg(target_os = "linux")]
#[allow(clippy::unnecessary_cast)] // time_t and c_long are narrower on 32-bit targets
fn tick_ns() -> Option<i64> {
  let mut res = libc::timespec { tv_sec: 0, tv_nsec: 0 };
  // SAFETY: `res` is a valid timespec to write to.
  let ok = unsafe { libc::clock_getres(libc::CLOCK_MONOTONIC_COARSE, &mut res) } == 0;
  (ok && (res.tv_sec > 0 || res.tv_nsec > 0)).then(|| res.tv_sec as i64 * 1_000_000_000 + res.tv_nsec as i64)
}

#[cfg(target_os = "linux")]
#[inline]
fn precise_ns() -> i64 {
  read_ns(libc::CLOCK_MONOTONIC)
}

#[cfg(target_os = "linux")]
#[inline]
fn coarse_ns() -> i64 {
  read_ns(libc::CLOCK_MONOTONIC_COARSE)
}

#[cfg(target_os = "linux")]
#[inline]
#[allow(clippy::unnecessary_cast)] // time_t and c_long are narrower on 32-bit targets
fn read_ns(clock: libc::clockid_t) -> i64 {
  let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
  // SAFETY: `ts` is a valid timespec to write to; both clocks exist on Linux ≥ 2.6.32.
  unsafe { libc::clock_gettime(clock, &mut ts) };
  ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

// Elsewhere (macOS, Windows, WASI) `CLOCK_MONOTONIC_COARSE` does not exist: no
// tick, so `fits` is always false and trackers keep the precise `Instant`
// clock. Should a `CoarseTicker` still be made, it reads the same portable
// monotonic clock, so it too is monotonic and never ahead of real time.
#[cfg(not(target_os = "linux"))]
fn tick_ns() -> Option<i64> {
  None
}

#[cfg(not(target_os = "linux"))]
fn precise_ns() -> i64 {
  static BASE: OnceLock<std::time::Instant> = OnceLock::new();
  BASE.get_or_init(std::time::Instant::now).elapsed().as_nanos() as i64
}

#[cfg(not(target_os = "linux"))]
fn coarse_ns() -> i64 {
  precise_ns()
}

/// A fixed reading, to anchor a clock where another one stands.
struct Reading(i64);

impl WallClock for Reading {
  fn epoch_ms(&self) -> i64 {
    self.0
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn coarse_ticker_is_monotonic_and_never_ahead_of_the_precise_clock() {
    let precise = std::time::Instant::now();
    let coarse = CoarseTicker::new();
    let tick_ms = tick_ns().expect("CLOCK_MONOTONIC_COARSE") / 1_000_000;
    // The margin the clock choice relies on (a bucket of TICKS_PER_BUCKET ticks).
    let allowed_lag = TICKS_PER_BUCKET * tick_ms;
    let mut last = 0;
    // Every bound is one-sided against pauses: a precise read before the coarse
    // one can only make the coarse reading look fresher, one after it only
    // later, so a descheduled test thread cannot fail it. The loop ends on a
    // sample whose `before` is past 200 ms, so the lag bound also proves the
    // coarse clock advanced that far (no wall-time deadline to miss).
    loop {
      let before = precise.elapsed().as_millis() as i64;
      let elapsed = coarse.elapsed_ms();
      let after = precise.elapsed().as_millis() as i64;
      assert!(elapsed >= last, "went back from {last} to {elapsed}");
      // Started after `precise`: never more than its elapsed time.
      assert!(elapsed <= after, "{elapsed} ahead of {after}");
      assert!(before - elapsed < allowed_lag, "lagged {} ms, tick {tick_ms} ms", before - elapsed);
      last = elapsed;
      if before >= 200 {
        break;
      }
    }
    assert!(last > 200 - allowed_lag, "advanced only to {last} ms");
  }

  #[test]
  fn the_coarse_clock_is_used_only_when_its_lag_fits_in_a_bucket() {
    let tick_ms = tick_ns().unwrap() / 1_000_000;
    assert!(CoarseTicker::fits(TICKS_PER_BUCKET * tick_ms));
    assert!(!CoarseTicker::fits(TICKS_PER_BUCKET * tick_ms - 1));
    let clock = TrackerClock::Monotonic(MonotonicClock::new());
    let before = clock.now_ms();
    let cheap = TrackerClock::Monotonic(MonotonicClock::new()).cheapest_for(2_000);
    assert!(matches!(cheap, TrackerClock::Coarse(_)));
    assert!(cheap.now_ms() >= before);
    let precise = TrackerClock::Monotonic(MonotonicClock::new()).cheapest_for(1);
    assert!(matches!(precise, TrackerClock::Monotonic(_)));
    let kept = TrackerClock::Manual(ManualClock::new(5)).cheapest_for(2_000);
    assert!(matches!(kept, TrackerClock::Manual(_)));
  }
}
