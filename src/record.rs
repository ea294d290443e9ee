//! Recording from JavaScript: the checks of `record()` and the one way a
//! timestamped record moves a manual clock. Used by the class's methods and by
//! the fast path's slow branch, so that both refuse and record alike.

use budget_core::Result as CoreResult;
use napi::bindgen_prelude::*;
use napi::Env;

use crate::args::{boolean, timestamp};
use crate::clock::TrackerClock;
use crate::error::or_throw;
use crate::handle::Handle;

/// Records `successes` and `failures` at `at` (epoch ms) or now, and returns,
/// when `STAMPED`, the stamp recorded at, else 0 (`Handle::record`). With `at`
/// on a manual clock, the clock moves there first: `record(ok, atMs)` replays time.
#[inline(always)]
pub fn record_at<const STAMPED: bool>(
  state: &Handle,
  at: Option<i64>,
  successes: u64,
  failures: u64,
) -> CoreResult<i64> {
  if let (Some(at), TrackerClock::Manual(clock)) = (at, &state.clock) {
    clock.advance_to(at);
  }
  state.record::<STAMPED>(at, successes, failures)
}

/// `record(success, atMs?)` on `state`: the checks, in order, then the record;
/// when `STAMPED`, the stamp recorded at (epoch ms), else 0 (`record_at`).
/// Shared by the prototype method and the raw function's slow path.
pub fn record_js<const STAMPED: bool>(
  env: &Env,
  state: &Handle,
  success: Unknown,
  at_ms: Option<Unknown>,
) -> napi::Result<f64> {
  or_throw(env, state.check_open("record"))?;
  let success = or_throw(env, boolean("record(success): success", success))?;
  let at = match at_ms {
    None => None,
    Some(v) => or_throw(env, timestamp("record(success, atMs): atMs", v))?,
  };
  let (successes, failures) = if success { (1, 0) } else { (0, 1) };
  let stamp =
    or_throw(env, record_at::<STAMPED>(state, at, successes, failures).map_err(|e| e.prefixed("record(success)")))?;
  Ok(stamp as f64)
}
