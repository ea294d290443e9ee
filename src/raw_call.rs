//! Raw Node-API helpers that every per-tracker function of `fast_path.rs` and
//! `fast_state.rs` shares: reading a call's arguments and the state bound to
//! it, making a number, taking a `Float64Array` argument, copying values out by
//! the fillers' protocol, and this thread's report buffer (`reportBuffer()`).
//! A module of their own so that the two callers import them, not each other.

use std::cell::Cell;
use std::ptr;

use budget_core::layout::{PairField, ReportField};
use napi::bindgen_prelude::*;
use napi::{sys, Env};

use crate::handle::Handle;

/// The first `N` arguments of a raw function's call (missing ones `undefined`),
/// how many were passed, and the tracker state given to `install`; `None` if
/// Node-API cannot say (nothing to do but return).
///
/// # Safety
/// `env` and `info` are those of a call of a function made by `fast_path::create`.
pub(crate) unsafe fn call_args<'a, const N: usize>(
  env: sys::napi_env,
  info: sys::napi_callback_info,
) -> Option<(usize, [sys::napi_value; N], &'a Handle)> {
  let mut argc = N;
  let mut argv = [ptr::null_mut(); N];
  let mut data = ptr::null_mut();
  // SAFETY: Node-API fills `argv` (missing arguments as `undefined`), sets
  // `argc` to the number passed, and gives back the data of `install`.
  let got = unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data) };
  if got != sys::Status::napi_ok || data.is_null() {
    return None;
  }
  // SAFETY: the function being called is reachable, so its finalizer has not
  // run and the `Arc` behind `data` is alive for the whole call.
  Some((argc, argv, unsafe { &*(data as *const Handle) }))
}

/// `value` as a JS number (`undefined` if Node-API cannot make one).
///
/// # Safety
/// On the JS thread, inside a callback.
#[inline(always)]
pub(crate) unsafe fn number(env: sys::napi_env, value: f64) -> sys::napi_value {
  let mut result = ptr::null_mut();
  // SAFETY: valid env and out-pointer; on failure `result` stays null (undefined).
  unsafe { sys::napi_create_double(env, value, &mut result) };
  result
}

/// The memory of `value`, a Float64Array over an ArrayBuffer, as (values,
/// length in f64); `None` after throwing a TypeError (`ERR_INVALID_ARG_TYPE`)
/// naming `call` for anything else. A SharedArrayBuffer is refused: another
/// thread may write it while this one does (`napi_is_arraybuffer` is false for one).
///
/// # Safety
/// On the JS thread, inside a callback; `value` is one of its arguments.
pub(crate) unsafe fn buffer_arg(env: sys::napi_env, value: sys::napi_value, call: &str) -> Option<(*mut f64, usize)> {
  let (mut kind, mut length, mut values, mut buffer) = (0, 0usize, ptr::null_mut(), ptr::null_mut());
  // SAFETY: out-pointers are valid; a non-typed-array fails with a status.
  let typed = unsafe {
    sys::napi_get_typedarray_info(env, value, &mut kind, &mut length, &mut values, &mut buffer, ptr::null_mut())
  };
  if typed != sys::Status::napi_ok || kind != sys::TypedarrayType::float64_array {
    let message = format!("{call}: buffer must be a Float64Array");
    let _ = Env::from_raw(env).throw_type_error(&message, Some("ERR_INVALID_ARG_TYPE"));
    return None;
  }
  let mut plain = false;
  // SAFETY: valid env and value.
  if unsafe { sys::napi_is_arraybuffer(env, buffer, &mut plain) } != sys::Status::napi_ok || !plain {
    let message = format!("{call}: buffer must be a Float64Array over an ArrayBuffer, not a SharedArrayBuffer");
    let _ = Env::from_raw(env).throw_type_error(&message, Some("ERR_INVALID_ARG_TYPE"));
    return None;
  }
  // A zero-length array may have no memory: nothing can be written there.
  Some(if values.is_null() { (ptr::null_mut(), 0) } else { (values as *mut f64, length) })
}

/// Copies `values` to `out` (`length` f64) if they fit, and returns how many
/// there are as a JS number: the protocol of every filler (`reportInto`,
/// `guardStateInto`, `scrapeInto`): a short buffer gets nothing, and its
/// caller a bigger one.
///
/// # Safety
/// On the JS thread, inside a callback; `out` is valid for `length` f64 writes
/// (or null with 0), not aliased by a Rust reference.
pub(crate) unsafe fn copy_out(env: sys::napi_env, values: &[f64], out: *mut f64, length: usize) -> sys::napi_value {
  if !out.is_null() && values.len() <= length {
    // SAFETY: `values.len()` ≤ `length` values, as the caller promised.
    unsafe { ptr::copy_nonoverlapping(values.as_ptr(), out, values.len()) };
  }
  // SAFETY: as the caller's.
  unsafe { number(env, values.len() as f64) }
}

/// Firing pairs this thread's report buffer has room for: a report with more
/// is filled into a buffer its caller passes (`lib/native/fast-report.js` keeps one).
pub const THREAD_BUFFER_PAIRS: usize = 64;
/// The length of this thread's report buffer, in f64.
const THREAD_BUFFER_LENGTH: usize = ReportField::COUNT + PairField::COUNT * THREAD_BUFFER_PAIRS;

/// This thread's report buffer (`reportBuffer()`): an ArrayBuffer the addon
/// created, its memory, and the reference that keeps it alive. Made once per
/// thread and never replaced, so every copy of the package's JavaScript on a
/// thread reads the buffer that `reportInto()` wrote; they never transfer it.
#[derive(Clone, Copy)]
struct ThreadBuffer {
  values: *mut f64,
  reference: sys::napi_ref,
}

thread_local! {
  static THREAD_BUFFER: Cell<ThreadBuffer> =
    const { Cell::new(ThreadBuffer { values: ptr::null_mut(), reference: ptr::null_mut() }) };
}

/// This thread's report buffer's memory and length in f64 (null and 0 until
/// `reportBuffer()` made it), for every filler called without a buffer.
pub(crate) fn thread_buffer() -> (*mut f64, usize) {
  let buffer = THREAD_BUFFER.with(Cell::get);
  if buffer.values.is_null() {
    (ptr::null_mut(), 0)
  } else {
    (buffer.values, THREAD_BUFFER_LENGTH)
  }
}

/// `reportBuffer(): ArrayBuffer` — this thread's report buffer (room for
/// `THREAD_BUFFER_PAIRS` firing pairs), made on first use.
unsafe extern "C" fn report_buffer(env: sys::napi_env, _info: sys::napi_callback_info) -> sys::napi_value {
  let buffer = THREAD_BUFFER.with(Cell::get);
  let mut array_buffer = ptr::null_mut();
  if !buffer.reference.is_null() {
    // SAFETY: a strong reference made below on this thread.
    unsafe { sys::napi_get_reference_value(env, buffer.reference, &mut array_buffer) };
    return array_buffer;
  }
  let (mut data, mut reference) = (ptr::null_mut(), ptr::null_mut());
  // SAFETY: valid env and out-pointers.
  unsafe {
    if sys::napi_create_arraybuffer(env, THREAD_BUFFER_LENGTH * 8, &mut data, &mut array_buffer) != sys::Status::napi_ok
      || sys::napi_create_reference(env, array_buffer, 1, &mut reference) != sys::Status::napi_ok
    {
      return ptr::null_mut();
    }
  }
  THREAD_BUFFER.with(|b| b.set(ThreadBuffer { values: data as *mut f64, reference }));
  array_buffer
}

/// Defines `reportBuffer` on the module's exports (a raw function, like the per-tracker ones).
pub fn export_report_buffer(exports: &Object) -> Result<()> {
  let property = Property::new()
    .with_utf8_name("reportBuffer")?
    .with_method(report_buffer)
    .with_property_attributes(PropertyAttributes::Default);
  let mut exports = *exports;
  exports.define_properties(&[property])
}
