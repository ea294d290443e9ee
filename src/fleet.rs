//! The native side of `config.fleet`: a `FleetLink` drains this tracker's
//! counts for a push and installs the fleet's window after it (the ledger is
//! `budget_core::FleetLedger`; the Redis side is JavaScript, lib/fleet/). A
//! `BudgetFamily`'s fleet is a `FleetLink` per child plus one `FamilyFleet`:
//! the SLO, bucket width and clock the children share, read without a tracker.
//! Internal: index.js does not export them.

use std::sync::Arc;

use crate::sync::Mutex;
use budget_core::config::MAX_SAFE_INTEGER;
use budget_core::tracker_clock::TrackerClock;
use budget_core::{BudgetError, Counts, FleetBucket, FleetLedger};
use napi::Env;
use napi_derive::napi;

use crate::error::or_throw;
use crate::state::TrackerState;
use crate::tracker::ErrorBudgetTracker;

/// One tracker's link to its fleet: the ledger of what was pushed.
#[napi]
pub struct FleetLink {
  state: Arc<TrackerState>,
  ledger: Mutex<FleetLedger>,
}

/// Links `tracker` to a fleet with buckets of `bucketMs` (undefined: the
/// default width); a bad width throws a RangeError naming `config.fleet.bucketMs`.
// Called from JS only: unused in `cargo test` builds.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn fleet_link(env: Env, tracker: &ErrorBudgetTracker, bucket_ms: Option<f64>) -> napi::Result<FleetLink> {
  let state = Arc::clone(&tracker.handle.tracker);
  let ledger = state.read(|core| FleetLedger::new(core.config(), bucket_ms.map(|ms| ms as i64)));
  Ok(FleetLink { state, ledger: Mutex::new(or_throw(&env, ledger)?) })
}

/// The snapshot JSON of an empty tracker with the config a fleet stores in
/// Redis (`configJson`, a snapshot's config), saved at `savedAtMs`: what
/// `gate --redis` restores before adding the fleet's buckets. A config that
/// is not one throws `ERR_SNAPSHOT_INVALID`.
// Called from JS only: unused in `cargo test` builds.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn fleet_empty_snapshot(env: Env, config_json: String, saved_at_ms: f64) -> napi::Result<String> {
  or_throw(&env, budget_core::Snapshot::empty_json(&config_json, saved_at_ms as i64))
}

#[napi]
impl FleetLink {
  /// The fleet bucket width, ms.
  #[napi(getter)]
  pub fn bucket_ms(&self) -> f64 {
    self.ledger.lock().bucket_ms() as f64
  }

  /// The tracker's window, ms (the fleet's SLO).
  #[napi(getter)]
  pub fn window_ms(&self) -> f64 {
    self.state.read(|core| core.config().window_ms) as f64
  }

  /// The tracker's target rate (the fleet's SLO).
  #[napi(getter)]
  pub fn target_rate(&self) -> f64 {
    self.state.read(|core| core.config().target_rate)
  }

  /// The tracker's config as a snapshot's `config` object (JSON): what the
  /// fleet stores beside its counts.
  #[napi(getter)]
  pub fn config_json(&self) -> String {
    self.state.read(|core| core.config_json())
  }

  /// The oldest live fleet bucket index now (the store drops older ones).
  #[napi(getter)]
  pub fn oldest_bucket(&self) -> f64 {
    let ledger = self.ledger.lock();
    self.state.read(|core| ledger.live_range(core).0 as f64)
  }

  /// Takes the counts recorded since the last drain: [index, successes, failures, …]
  /// (successes negative when a success pushed before was rejected since).
  #[napi]
  pub fn drain(&self) -> Vec<f64> {
    let mut ledger = self.ledger.lock();
    let buckets = self.state.read(|core| ledger.drain(core));
    buckets.iter().flat_map(|b| [b.index as f64, b.successes as f64, b.failures as f64]).collect()
  }

  /// Successes and failures recorded and not drained yet: [successes, failures].
  #[napi]
  pub fn undrained(&self) -> Vec<f64> {
    let ledger = self.ledger.lock();
    let c = self.state.read(|core| ledger.undrained(core));
    vec![c.successes as f64, c.failures as f64]
  }

  /// Installs the fleet's buckets, [index, successes, failures, …]: all of
  /// the fleet's non-empty ones when `complete`, else those changed since the
  /// last apply. The changes this causes reach the listeners as usual. A count
  /// that is not a whole number from 0 to 2^53 − 1, or counts adding up past
  /// it, throw a RangeError (`ERR_OUT_OF_RANGE`) and change nothing.
  #[napi]
  pub fn apply(&self, env: Env, flat: Vec<f64>, complete: bool) -> napi::Result<()> {
    let whole = |x: f64| x.is_finite() && x.fract() == 0.0 && (0.0..=MAX_SAFE_INTEGER as f64).contains(&x.abs());
    let mut fleet = Vec::with_capacity(flat.len() / 3);
    for c in flat.chunks_exact(3) {
      if !whole(c[0]) || !whole(c[1]) || c[1] < 0.0 || !whole(c[2]) || c[2] < 0.0 {
        let err = BudgetError::out_of_range(format!(
          "fleet bucket [{}, {}, {}]: each must be a whole number, the counts from 0 to 2^53 − 1",
          c[0], c[1], c[2]
        ));
        return or_throw(&env, Err(err));
      }
      fleet.push(FleetBucket { index: c[0] as i64, counts: Counts { successes: c[1] as u64, failures: c[2] as u64 } });
    }
    let mut ledger = self.ledger.lock();
    let (applied, next_change) = self.state.with_core(|core, now, events| {
      let applied = ledger.apply(core, &fleet, complete, events);
      (applied, core.next_change_ms().map(|at| at - now))
    });
    or_throw(&env, applied)?;
    // The next time-driven change may be earlier now (the timer ignores
    // trackers it does not watch).
    if let Some(wait_ms) = next_change {
      crate::timer::poke(&*self.state, wait_ms);
    }
    Ok(())
  }
}

/// A family's side of its fleet: what every child's `FleetLink` shares — the
/// SLO, the bucket width — and the clock the family's syncs read on a real
/// clock, kept without a tracker.
#[napi]
pub struct FamilyFleet {
  ledger: FleetLedger,
  window_ms: i64,
  target_rate: f64,
  config_json: String,
  clock: TrackerClock,
}

/// A family's fleet of buckets of `bucketMs` (undefined: the default width),
/// for children of `tracker`'s config (the tracker the family's option checks
/// make: only its config is read, and it may be closed after). A bad width
/// throws a RangeError naming `config.fleet.bucketMs`, as `fleetLink()` does.
// Called from JS only: unused in `cargo test` builds.
#[cfg_attr(test, allow(dead_code))]
#[napi]
pub fn family_fleet(env: Env, tracker: &ErrorBudgetTracker, bucket_ms: Option<f64>) -> napi::Result<FamilyFleet> {
  let (ledger, window_ms, target_rate, config_json) = tracker.handle.tracker.read(|core| {
    let config = core.config();
    (FleetLedger::new(config, bucket_ms.map(|ms| ms as i64)), config.window_ms, config.target_rate, core.config_json())
  });
  Ok(FamilyFleet { ledger: or_throw(&env, ledger)?, window_ms, target_rate, config_json, clock: TrackerClock::real() })
}

#[napi]
impl FamilyFleet {
  /// The fleet bucket width, ms.
  #[napi(getter)]
  pub fn bucket_ms(&self) -> f64 {
    self.ledger.bucket_ms() as f64
  }

  /// The children's window, ms.
  #[napi(getter)]
  pub fn window_ms(&self) -> f64 {
    self.window_ms as f64
  }

  /// The children's target rate.
  #[napi(getter)]
  pub fn target_rate(&self) -> f64 {
    self.target_rate
  }

  /// The children's config as a snapshot's `config` object (JSON).
  #[napi(getter)]
  pub fn config_json(&self) -> String {
    self.config_json.clone()
  }

  /// The real clock's time, epoch ms, as a tracker's (a manual family reads its own).
  #[napi(getter)]
  pub fn now(&self) -> f64 {
    self.clock.now_ms() as f64
  }

  /// The oldest live fleet bucket at `nowMs` (the store drops older ones).
  #[napi]
  pub fn oldest_bucket_at(&self, now_ms: f64) -> f64 {
    self.ledger.oldest_live_at(self.window_ms, now_ms as i64) as f64
  }
}
