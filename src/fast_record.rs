//! The hot path of `record()`: a raw Node-API function per tracker, outside
//! the generated glue.
//!
//! A `#[napi]` method unwraps `this` and registers borrow guards on every call
//! (≈200 ns); a bare Node-API callback costs ≈15–30 ns. So each tracker gets
//! its own `record` function, defined as an own property of the instance by
//! the constructor, whose callback data is a strong reference to the tracker's
//! native state (`Arc<TrackerState>`, leaked into a raw pointer). The
//! reference is released by a finalizer attached to the function object, so
//! the state lives exactly as long as the function can be called — also when
//! the function outlives its tracker (`const r = t.record; t = null`), and
//! with no process-wide state, so worker threads come and go freely.
//!
//! `this` is never read: the function records into its own tracker however it
//! is called. Anything but the plain `record(boolean)` / `record(boolean,
//! number)` on an open tracker falls back to the same checks and messages as
//! the prototype's `record` (`ErrorBudgetTracker.prototype.record`, still a
//! `#[napi]` method).

use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::{check_status, sys, Env};

use crate::state::{TrackerClock, TrackerState};

/// Defines `record` on `this` (writable, configurable, not enumerable, like a
/// class method) as a function bound to `state`.
pub fn install(env: &Env, this: &Object, state: &Arc<TrackerState>) -> Result<()> {
  let raw_env = env.raw();
  let data = Arc::into_raw(Arc::clone(state)) as *mut c_void;
  let mut func = ptr::null_mut();
  // SAFETY: valid env and out-pointer; `data` is released exactly once: by
  // `release` once attached, by us if attaching fails.
  unsafe {
    let created = sys::napi_create_function(raw_env, c"record".as_ptr(), 6, Some(record), data, &mut func);
    let attached = created == sys::Status::napi_ok
      && sys::napi_add_finalizer(raw_env, func, data, Some(release), ptr::null_mut(), ptr::null_mut())
        == sys::Status::napi_ok;
    if !attached {
      drop(Arc::from_raw(data as *const TrackerState));
      check_status!(created, "cannot create record()")?;
      return Err(Error::new(Status::GenericFailure, "cannot attach record() to its tracker state"));
    }
    let property = sys::napi_property_descriptor {
      utf8name: c"record".as_ptr(),
      name: ptr::null_mut(),
      method: None,
      getter: None,
      setter: None,
      value: func,
      attributes: sys::PropertyAttributes::writable | sys::PropertyAttributes::configurable,
      data: ptr::null_mut(),
    };
    check_status!(sys::napi_define_properties(raw_env, this.raw(), 1, &property), "cannot define record()")
  }
}

/// Finalizer of a `record` function: drops its reference to the state.
unsafe extern "C" fn release(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
  // SAFETY: `data` came from `Arc::into_raw` in `install` and is released only here.
  drop(unsafe { Arc::from_raw(data as *const TrackerState) });
}

/// `record(success, atMs?)`.
unsafe extern "C" fn record(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  let mut argc = 2usize;
  let mut argv = [ptr::null_mut(); 2];
  let mut data = ptr::null_mut();
  // SAFETY: Node-API fills `argv` (missing arguments as `undefined`), sets
  // `argc` to the number passed, and gives back the data of `install`.
  let got = unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data) };
  if got != sys::Status::napi_ok || data.is_null() {
    return ptr::null_mut();
  }
  // SAFETY: the function being called is reachable, so its finalizer has not
  // run and the `Arc` behind `data` is alive for the whole call.
  let state = unsafe { &*(data as *const TrackerState) };
  let mut success = false;
  // A failed read (not a boolean) returns a status and throws nothing.
  if state.is_closed() || unsafe { sys::napi_get_value_bool(env, argv[0], &mut success) } != sys::Status::napi_ok {
    return unsafe { slow(env, state, argv) };
  }
  let (successes, failures) = (success as u64, !success as u64);
  if argc == 1 {
    state.record(None, successes, failures);
    return ptr::null_mut();
  }
  // `record(ok, atMs)` replays: a finite number, as the slow path would take it.
  let mut at_ms = 0f64;
  if unsafe { sys::napi_get_value_double(env, argv[1], &mut at_ms) } == sys::Status::napi_ok {
    if let Ok(at) = crate::tracker::finite_ms("", at_ms) {
      if let TrackerClock::Manual(clock) = &state.clock {
        clock.advance_to(at);
      }
      state.record(Some(at), successes, failures);
      return ptr::null_mut();
    }
  }
  unsafe { slow(env, state, argv) }
}

/// Everything else goes through the prototype method's checks (closed
/// tracker, wrong types, `undefined`/`null` atMs, out-of-range numbers).
#[cold]
unsafe fn slow(env: sys::napi_env, state: &TrackerState, argv: [sys::napi_value; 2]) -> sys::napi_value {
  let result = (|| {
    // SAFETY: both values come from this call's arguments.
    let success = unsafe { Unknown::from_napi_value(env, argv[0]) }?;
    let at_ms = unsafe { Option::<Unknown>::from_napi_value(env, argv[1]) }?;
    crate::tracker::record_js(&Env::from_raw(env), state, success, at_ms)
  })();
  if let Err(err) = result {
    // SAFETY: on the JS thread, inside a callback; a pending exception is left as is.
    unsafe { JsError::from(err).throw_into(env) };
  }
  ptr::null_mut()
}
