//! The clock a tracker's config asks for. The clocks themselves (manual,
//! precise and coarse monotonic) are the core's `tracker_clock` module.

pub use budget_core::tracker_clock::TrackerClock;

use crate::config::ClockKind;

/// A clock of `kind`; a manual one starts at 0.
pub fn clock_for(kind: ClockKind) -> TrackerClock {
  match kind {
    ClockKind::Monotonic => TrackerClock::real(),
    ClockKind::Manual => TrackerClock::manual(),
  }
}
