//! One call for what a caller would otherwise read getter by getter: each
//! tracker's `guardStateInto` (what one `guard()` decision reads) and
//! `scrapeInto` (what one Prometheus scrape reads), raw Node-API functions
//! bound to the tracker's state like `record` and `reportInto`
//! (`fast_path.rs`), made by `guardFillers` for a tracker that guards or is
//! scraped (`lib/native/fast-state.js` keeps them). Each bare call costs
//! about as much as one getter, so a decision that read `closed`, `now`,
//! `status` and `total` (and the recent burn rate) in 4–5 calls, or a scrape
//! that read 6 figures and one burn rate per alert window, reads one buffer.
//!
//! Both write into a `Float64Array` the caller passes, or without one (or with
//! `undefined`) into this thread's report buffer (`reportBuffer()`), and return
//! how many values they take; a buffer too short gets nothing (the caller
//! grows it and asks again), as `reportInto`. The layouts are
//! `budget_core::layout`'s `GuardField` and `ScrapeField` (then `ScrapePairField`
//! per pair, `ScrapeWindowField` per window), exported by `seamContract()`.

use std::ptr;

use budget_core::layout::{self, GuardField};
use napi::bindgen_prelude::{Array, FromNapiValue, Unknown};
use napi::{sys, Env};

use crate::fast_path::{create, record_stamped};
use crate::raw_call::{buffer_arg, call_args, copy_out, thread_buffer};
use crate::tracker::ErrorBudgetTracker;

/// The buffer a filler writes into: its first argument (`argv[0]`), or this
/// thread's when it is missing or `undefined`; `None` after throwing.
///
/// # Safety
/// On the JS thread, inside a callback; `value` is one of its arguments.
unsafe fn target(env: sys::napi_env, argc: usize, value: sys::napi_value, call: &str) -> Option<(*mut f64, usize)> {
  let mut kind = sys::ValueType::napi_undefined;
  // SAFETY: valid env and value; a failure leaves `undefined`, then refused by `buffer_arg`.
  if argc == 0
    || (unsafe { sys::napi_typeof(env, value, &mut kind) } == sys::Status::napi_ok
      && kind == sys::ValueType::napi_undefined)
  {
    return Some(thread_buffer());
  }
  // SAFETY: as the caller's.
  unsafe { buffer_arg(env, value, call) }
}

/// Most ms a span may be: `Number.MAX_SAFE_INTEGER`.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// `recentMs` of `guardStateInto`: `Ok(None)` for missing or `undefined`, the
/// integer otherwise; `Err` after throwing a TypeError / RangeError naming it.
///
/// # Safety
/// On the JS thread, inside a callback; `value` is one of its arguments.
unsafe fn recent_ms(env: sys::napi_env, argc: usize, value: sys::napi_value) -> Result<Option<i64>, ()> {
  let mut kind = sys::ValueType::napi_undefined;
  // SAFETY: valid env and value.
  if argc < 2 || unsafe { sys::napi_typeof(env, value, &mut kind) } != sys::Status::napi_ok {
    return Ok(None);
  }
  let must_be = "guardStateInto(buffer, recentMs): recentMs must be an integer of ms from 1 to 2^53 − 1";
  match kind {
    sys::ValueType::napi_undefined => Ok(None),
    sys::ValueType::napi_number => {
      let mut ms = 0f64;
      // SAFETY: a number.
      unsafe { sys::napi_get_value_double(env, value, &mut ms) };
      if ms.fract() == 0.0 && (1.0..=MAX_SAFE_INTEGER).contains(&ms) {
        return Ok(Some(ms as i64));
      }
      let message = format!("{must_be}, got {}", crate::args::js_number(ms));
      let _ = Env::from_raw(env).throw_range_error(&message, Some("ERR_OUT_OF_RANGE"));
      Err(())
    }
    _ => {
      let _ =
        Env::from_raw(env).throw_type_error(&format!("{must_be}, got a non-number"), Some("ERR_INVALID_ARG_TYPE"));
      Err(())
    }
  }
}

/// `guardStateInto(buffer?: Float64Array, recentMs?: number): number` — the
/// guard state now by `GuardField` (the recent burn rate only with `recentMs`
/// and while exhausted: `layout::guard_state`). Checks both arguments before
/// reading anything.
pub(crate) unsafe extern "C" fn guard_state_into(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  // SAFETY: called by Node-API as the function `create` made.
  let Some((argc, argv, state)) = (unsafe { call_args::<2>(env, info) }) else {
    return ptr::null_mut();
  };
  // SAFETY: on the JS thread, inside this callback; both are its arguments.
  let Some((out, length)) = (unsafe { target(env, argc, argv[0], "guardStateInto(buffer)") }) else {
    return ptr::null_mut();
  };
  let Ok(recent_ms) = (unsafe { recent_ms(env, argc, argv[1]) }) else {
    return ptr::null_mut();
  };
  let mut values = state.read(|core| layout::guard_state(core, recent_ms));
  values[GuardField::Closed as usize] = state.is_closed() as u8 as f64;
  // SAFETY: `out` is valid for `length` f64 (a Float64Array's memory or the thread buffer).
  unsafe { copy_out(env, &values, out, length) }
}

/// `scrapeInto(buffer?: Float64Array): number` — the scrape buffer now
/// (`layout::scrape`): its length is `ScrapeField`'s count, plus
/// `ScrapePairField`'s per pair of the policy, plus `ScrapeWindowField`'s
/// per distinct window.
pub(crate) unsafe extern "C" fn scrape_into(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  // SAFETY: called by Node-API as the function `create` made.
  let Some((argc, argv, state)) = (unsafe { call_args::<1>(env, info) }) else {
    return ptr::null_mut();
  };
  // SAFETY: on the JS thread, inside this callback.
  let Some((out, length)) = (unsafe { target(env, argc, argv[0], "scrapeInto(buffer)") }) else {
    return ptr::null_mut();
  };
  let values = state.read(layout::scrape);
  // SAFETY: `out` is valid for `length` f64 (a Float64Array's memory or the thread buffer).
  unsafe { copy_out(env, &values, out, length) }
}

/// `guardFillers(tracker): [guardStateInto, scrapeInto, recordStamped]` — the
/// tracker's guard-state and scrape fillers (above) and its stamped
/// `record`, bound to its state like `record` (`lib/native/fast-state.js` keeps
/// them per tracker, made on its first guard() or scrape).
// Called from JS only: unused in `cargo test` builds.
#[cfg_attr(test, allow(dead_code))]
#[napi_derive::napi(js_name = "guardFillers")]
pub fn guard_fillers<'env>(env: &'env Env, tracker: &ErrorBudgetTracker) -> napi::Result<Array<'env>> {
  let state = &tracker.handle;
  let functions = [
    create(env, c"guardStateInto", guard_state_into, state)?,
    create(env, c"scrapeInto", scrape_into, state)?,
    create(env, c"recordStamped", record_stamped, state)?,
  ];
  let mut array = env.create_array(functions.len() as u32)?;
  for (index, function) in functions.into_iter().enumerate() {
    // SAFETY: a function just made on this thread's env.
    array.set(index as u32, unsafe { Unknown::from_napi_value(env.raw(), function) }?)?;
  }
  Ok(array)
}
