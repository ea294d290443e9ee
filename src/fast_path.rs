//! The hot paths of `record()` and `report()`: raw Node-API functions per
//! tracker, outside the generated glue.
//!
//! A `#[napi]` method unwraps `this` and registers borrow guards on every call
//! (≈200 ns); a bare Node-API callback costs ≈15–30 ns. So each tracker gets
//! its own `record` function, defined as an own property of the instance by
//! the constructor, whose callback data is a strong reference to the tracker's
//! native state (`Arc<Handle>`, leaked into a raw pointer). The
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
//!
//! `report()`: building a 15-property object through Node-API costs ≈3 µs
//! (each property interns its name and walks V8's map transitions), while a
//! JavaScript object literal costs tens of ns. So `lib/native/fast-report.js` builds
//! the report in JavaScript from numbers this module writes into a
//! `Float64Array`, through a second own function stored under
//! `Symbol.for('captcha-error-budget.reportInto')` (layout: `report_into`).

use std::collections::HashMap;
use std::ffi::{c_void, CStr};
use std::ptr;
use std::sync::Arc;

use budget_core::Tracker;
use napi::bindgen_prelude::*;
use napi::{check_status, sys, Env};

use crate::args::registered_symbol;
use crate::handle::Handle;
use crate::raw_call::{buffer_arg, call_args, number, thread_buffer};
use budget_core::layout::{
  self, Figure, GuardField, PairField, ReportField, ScrapeField, ScrapePairField, ScrapeWindowField,
};

/// The registered symbol the report filler is stored under (`lib/native/fast-report.js`
/// reads it from [`contract`]).
pub const REPORT_INTO_SYMBOL: &str = "captcha-error-budget.reportInto";
/// The registered symbol the figure reader is stored under (`lib/tracker/tracker.js`'s getters).
pub const FIGURE_SYMBOL: &str = "captcha-error-budget.figure";
/// The registered symbol under which the prototype keeps its own `record`.
pub const NATIVE_RECORD_SYMBOL: &str = "captcha-error-budget.nativeRecord";

/// At module load: keeps the prototype's `record` under a registered symbol,
/// so that the constructor can tell a subclass that overrides `record`.
pub fn remember_prototype_record(env: &Env, proto: &mut Object) -> Result<()> {
  let record: Unknown = proto.get_named_property("record")?;
  let key = registered_symbol(env, NATIVE_RECORD_SYMBOL)?;
  // Configurable: lib/tracker/tracker.js's class defines its own, the checked `record`.
  let property =
    Property::new().with_name(env, key)?.with_value(&record).with_property_attributes(PropertyAttributes::Configurable);
  proto.define_properties(&[property])
}

/// Whether the constructor was called to construct: `this` is a new object
/// that inherits the class's prototype (`new ErrorBudgetTracker()`, or a
/// subclass), not the global object or another object (a call without `new`,
/// `.call(obj)`), and not already a tracker (`.call(tracker)`, which would
/// re-point its `record` and report filler at another state).
pub fn is_construct_call(env: &Env, this: &Object) -> Result<bool> {
  let mut existing = ptr::null_mut();
  // SAFETY: valid env and object; a status (no exception) when nothing is wrapped.
  if unsafe { sys::napi_unwrap(env.raw(), this.raw(), &mut existing) } == sys::Status::napi_ok {
    return Ok(false);
  }
  let prototype_record: Unknown = this.get_property(registered_symbol(env, NATIVE_RECORD_SYMBOL)?)?;
  Ok(prototype_record.get_type()? == ValueType::Function)
}

/// Defines `record` on `this` (writable, configurable, not enumerable, like a
/// class method), the report filler and the figure reader under their
/// symbols, all as functions bound to `state`. A subclass that overrides
/// `record` keeps its override: an own property would shadow it, so it gets the
/// filler only. The guard's and the scrape's functions are not made here but by
/// `fast_state::guard_fillers`, for the trackers that guard or are scraped: three more
/// functions on every tracker grew a process making and closing 20 000 of them
/// by 25 MiB of RSS before a collection.
pub fn install(env: &Env, this: &Object, state: &Arc<Handle>) -> Result<()> {
  let inherited: Unknown = this.get_named_property("record")?;
  let prototype_record: Unknown = this.get_property(registered_symbol(env, NATIVE_RECORD_SYMBOL)?)?;
  let overridden = !env.strict_equals(inherited, prototype_record)?;
  let attributes = PropertyAttributes::Writable | PropertyAttributes::Configurable;
  let bound = |key: Unknown, value| Property::new().with_name(env, key)?.with_napi_value(env, value);
  let mut properties = vec![
    bound(registered_symbol(env, REPORT_INTO_SYMBOL)?, create(env, c"reportInto", report_into, state)?)?,
    bound(registered_symbol(env, FIGURE_SYMBOL)?, create(env, c"figure", figure, state)?)?,
  ];
  if !overridden {
    properties
      .push(Property::new().with_utf8_name("record")?.with_napi_value(env, create(env, c"record", record, state)?)?);
  }
  let properties: Vec<Property> =
    properties.into_iter().map(|property| property.with_property_attributes(attributes)).collect();
  let mut this = *this;
  this.define_properties(&properties)
}

/// A function whose callback data is a strong reference to `state`, released
/// by a finalizer when the function is collected.
pub(crate) fn create(
  env: &Env,
  name: &CStr,
  callback: unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value,
  state: &Arc<Handle>,
) -> Result<sys::napi_value> {
  let raw_env = env.raw();
  let data = Arc::into_raw(Arc::clone(state)) as *mut c_void;
  let mut func = ptr::null_mut();
  // SAFETY: valid env and out-pointer; `data` is released exactly once: by
  // `release` once attached, by us if attaching fails.
  unsafe {
    let len = name.to_bytes().len() as isize;
    let created = sys::napi_create_function(raw_env, name.as_ptr(), len, Some(callback), data, &mut func);
    let attached = created == sys::Status::napi_ok
      && sys::napi_add_finalizer(raw_env, func, data, Some(release), ptr::null_mut(), ptr::null_mut())
        == sys::Status::napi_ok;
    if !attached {
      drop(Arc::from_raw(data as *const Handle));
      check_status!(created, "cannot create {name:?}")?;
      return Err(Error::new(Status::GenericFailure, format!("cannot attach {name:?} to its tracker state")));
    }
  }
  Ok(func)
}

/// Finalizer of a `record` function: drops its reference to the state.
unsafe extern "C" fn release(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
  // SAFETY: `data` came from `Arc::into_raw` in `install` and is released only here.
  drop(unsafe { Arc::from_raw(data as *const Handle) });
}

/// `record(success, atMs?)`.
unsafe extern "C" fn record(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  // SAFETY: as `record_into`'s.
  unsafe { record_into::<false>(env, info) }
}

/// `recordStamped(success, atMs?): number` — `record()` that returns the stamp
/// recorded at (epoch ms, tracker time: `Handle::record`), so that a caller
/// that needs it (`guard()`'s verdict) neither reads the clock again nor
/// passes it back as `atMs`, which takes the lock. A function of its own:
/// making the number (a heap number: epoch ms is no small integer) costs
/// ≈20 ns, half again a plain `record()`, which returns `undefined`.
pub(crate) unsafe extern "C" fn record_stamped(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  // SAFETY: as `record_into`'s.
  unsafe { record_into::<true>(env, info) }
}

/// The stamp as what `record` (`STAMPED` false: `undefined`) or
/// `recordStamped` returns.
///
/// # Safety
/// On the JS thread, inside a callback.
#[inline(always)]
unsafe fn stamped<const STAMPED: bool>(env: sys::napi_env, stamp: i64) -> sys::napi_value {
  // SAFETY: as the caller's.
  if STAMPED {
    unsafe { number(env, stamp as f64) }
  } else {
    ptr::null_mut()
  }
}

/// `record` and `recordStamped`: one record, through the lease when it can.
///
/// # Safety
/// Called by Node-API as a function `create` made.
#[inline(always)]
unsafe fn record_into<const STAMPED: bool>(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  // SAFETY: called by Node-API as the function `create` made.
  let Some((argc, argv, state)) = (unsafe { call_args::<2>(env, info) }) else {
    return ptr::null_mut();
  };
  let mut success = false;
  // A failed read (not a boolean) returns a status and throws nothing.
  let boolean = unsafe { sys::napi_get_value_bool(env, argv[0], &mut success) } == sys::Status::napi_ok;
  // Most records: through the lease, no lock (`lease.rs`). A closed tracker's
  // lease is closed (settled by `close()`), as is a shared one's (never granted).
  if boolean && argc == 1 {
    if let Some(stamp) = state.tracker.lease.try_record(&state.tracker.clock, success) {
      return unsafe { stamped::<STAMPED>(env, stamp) };
    }
  }
  if !boolean || state.is_closed() {
    return unsafe { slow::<STAMPED>(env, state, argv) };
  }
  let (successes, failures) = (success as u64, !success as u64);
  if argc == 1 {
    return match state.record::<STAMPED>(None, successes, failures) {
      Ok(stamp) => unsafe { stamped::<STAMPED>(env, stamp) },
      Err(_) => unsafe { slow::<STAMPED>(env, state, argv) }, // throws the refusal, naming the counter
    };
  }
  // `record(ok, atMs)` replays: a finite number, as the slow path would take it.
  let mut at_ms = 0f64;
  if unsafe { sys::napi_get_value_double(env, argv[1], &mut at_ms) } == sys::Status::napi_ok {
    if let Some(at) = crate::args::epoch_ms(at_ms) {
      return match crate::record::record_at::<STAMPED>(state, Some(at), successes, failures) {
        Ok(stamp) => unsafe { stamped::<STAMPED>(env, stamp) },
        Err(_) => unsafe { slow::<STAMPED>(env, state, argv) },
      };
    }
  }
  unsafe { slow::<STAMPED>(env, state, argv) }
}

/// Everything else goes through the prototype method's checks (closed
/// tracker, wrong types, `undefined`/`null` atMs, out-of-range numbers).
#[cold]
unsafe fn slow<const STAMPED: bool>(env: sys::napi_env, state: &Handle, argv: [sys::napi_value; 2]) -> sys::napi_value {
  let result = (|| {
    // SAFETY: both values come from this call's arguments.
    let success = unsafe { Unknown::from_napi_value(env, argv[0]) }?;
    let at_ms = unsafe { Option::<Unknown>::from_napi_value(env, argv[1]) }?;
    crate::record::record_js::<STAMPED>(&Env::from_raw(env), state, success, at_ms)
  })();
  match result {
    // SAFETY: on the JS thread, inside this callback.
    Ok(stamp) => unsafe { stamped::<STAMPED>(env, stamp as i64) },
    Err(err) => {
      // SAFETY: on the JS thread, inside a callback; a pending exception is left as is.
      unsafe { JsError::from(err).throw_into(env) };
      ptr::null_mut()
    }
  }
}

/// `figure(index): number` — the figure `Figure` `index` now; `NaN` for an
/// index out of range or not an int32 (`lib/tracker/tracker.js` passes the contract's indexes).
unsafe extern "C" fn figure(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  // SAFETY: called by Node-API as the function `create` made.
  let Some((_, argv, state)) = (unsafe { call_args::<1>(env, info) }) else {
    return ptr::null_mut();
  };
  let mut index = -1i32;
  // SAFETY: valid env and value; a non-number leaves `index` at -1.
  unsafe { sys::napi_get_value_int32(env, argv[0], &mut index) };
  let value = match Figure::from_index(index) {
    Some(Figure::Closed) => state.is_closed() as u8 as f64,
    Some(figure) => state.read(|core| layout::figure(core, figure)),
    None => f64::NAN,
  };
  // SAFETY: on the JS thread, inside this callback.
  unsafe { number(env, value) }
}

/// Values before the firing alerts in the report buffer.
const REPORT_HEAD: usize = ReportField::COUNT;
/// Values of each firing pair.
const REPORT_PAIR: usize = PairField::COUNT;

/// `reportInto(buffer?: Float64Array): number` — writes the report now into
/// `buffer`, or without one into this thread's buffer (`reportBuffer`, what
/// `lib/native/fast-report.js` uses), and returns how many values it takes; when
/// that is more than the buffer's length, writes nothing (the caller grows the
/// buffer and asks again). A Float64Array over a SharedArrayBuffer is a TypeError.
unsafe extern "C" fn report_into(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  // SAFETY: called by Node-API as the function `create` made.
  let Some((argc, argv, state)) = (unsafe { call_args::<1>(env, info) }) else {
    return ptr::null_mut();
  };
  if argc == 0 {
    // SAFETY: on the JS thread, as the caller's.
    return unsafe { report_into_thread_buffer(env, state) };
  }
  // SAFETY: as the caller's.
  let Some((values, length)) = (unsafe { buffer_arg(env, argv[0], "reportInto(buffer)") }) else {
    return ptr::null_mut();
  };
  // SAFETY: as the caller's; `values` holds `length` f64 (a Float64Array's own memory).
  unsafe { fill(env, state, values, length) }
}

/// Writes the report into `values` (`length` f64, may be null with 0) and
/// returns how many values it takes, as a JS number.
///
/// # Safety
/// On the JS thread; `values` is valid for `length` f64 writes, not aliased by a Rust reference.
unsafe fn fill(env: sys::napi_env, state: &Handle, values: *mut f64, length: usize) -> sys::napi_value {
  let length = if values.is_null() { 0 } else { length };
  // SAFETY: as the caller's.
  let needed = state.with_core(|core, _, _| unsafe { write_report(core, values, length) });
  // SAFETY: as the caller's.
  unsafe { number(env, needed as f64) }
}

/// `reportInto()` with no argument: the report into this thread's buffer
/// (none yet: nothing written). Skips the typed-array checks of a buffer
/// argument (≈ a third of the cost of a fill).
///
/// # Safety
/// On the JS thread, inside a callback.
unsafe fn report_into_thread_buffer(env: sys::napi_env, state: &Handle) -> sys::napi_value {
  let (values, length) = thread_buffer();
  // SAFETY: the buffer's memory, kept alive by its reference; `length` f64.
  unsafe { fill(env, state, values, length) }
}

/// The report buffer: the head by `ReportField`, then per firing pair its values
/// by `PairField` — the fields of `BudgetReport`.
/// Written through the raw pointer `out` (valid for `length` f64), never a
/// Rust reference to memory JavaScript owns; nothing when `length` is short.
///
/// # Safety
/// `out` is valid for `length` aligned f64 writes (or `length` is 0).
unsafe fn write_report(core: &Tracker, out: *mut f64, length: usize) -> usize {
  let (report, alerts) = core.report_and_alerts();
  let needed = REPORT_HEAD + REPORT_PAIR * alerts.firing.len();
  if length < needed {
    return needed;
  }
  let head = layout::report_head(&report, &alerts);
  // SAFETY: `needed` ≤ `length` values, as the caller promised.
  unsafe { ptr::copy_nonoverlapping(head.as_ptr(), out, REPORT_HEAD) };
  for (i, firing) in alerts.firing.iter().enumerate() {
    let pair = layout::pair_values(core, firing);
    // SAFETY: as above: pair `i` ends at most at `needed`.
    unsafe { ptr::copy_nonoverlapping(pair.as_ptr(), out.add(REPORT_HEAD + REPORT_PAIR * i), REPORT_PAIR) };
  }
  needed
}

/// The contract between this module and the package's JavaScript
/// (`lib/native/contract.js` checks it at load): the registered symbols they share,
/// the layouts of the report, guard-state and scrape buffers and the figure
/// indexes, the status order.
#[napi_derive::napi(object, object_to_js = true, object_from_js = false)]
pub struct SeamContract {
  /// `Symbol.for` key of each tracker's report filler.
  pub report_into_symbol: String,
  /// `Symbol.for` key of each tracker's figure reader.
  pub figure_symbol: String,
  /// `Symbol.for` key under which the prototype keeps its own `record`.
  pub native_record_symbol: String,
  /// `Symbol.for` key under which the package's callers name a config (`restore(json, options): options`).
  pub argument_name_symbol: String,
  /// The report buffer's head: each field's index (`ReportField`).
  pub report_layout: HashMap<String, u32>,
  /// Each firing pair's values after the head: each value's index (`PairField`).
  pub pair_layout: HashMap<String, u32>,
  /// The figures of `figure(index)`: each figure's index (`Figure`).
  pub figure_layout: HashMap<String, u32>,
  /// The guard-state buffer: each value's index (`GuardField`).
  pub guard_layout: HashMap<String, u32>,
  /// The scrape buffer's head: each value's index (`ScrapeField`); `pairs`
  /// pairs (`scrapePairLayout`) and then `windows` windows (`scrapeWindowLayout`) follow it.
  pub scrape_layout: HashMap<String, u32>,
  /// Each pair's values after the scrape buffer's head (`ScrapePairField`).
  pub scrape_pair_layout: HashMap<String, u32>,
  /// Each window's values after the pairs (`ScrapeWindowField`).
  pub scrape_window_layout: HashMap<String, u32>,
  /// The status names by index (`Status::ALL`).
  pub statuses: Vec<String>,
}

/// The seam's contract, for `lib/native/contract.js` to check at load.
#[napi_derive::napi(skip_typescript)]
#[cfg_attr(test, allow(dead_code))]
pub fn seam_contract() -> SeamContract {
  SeamContract {
    report_into_symbol: REPORT_INTO_SYMBOL.into(),
    figure_symbol: FIGURE_SYMBOL.into(),
    native_record_symbol: NATIVE_RECORD_SYMBOL.into(),
    argument_name_symbol: crate::args::ARGUMENT_NAME_SYMBOL.into(),
    report_layout: ReportField::to_js(),
    pair_layout: PairField::to_js(),
    figure_layout: Figure::to_js(),
    guard_layout: GuardField::to_js(),
    scrape_layout: ScrapeField::to_js(),
    scrape_pair_layout: ScrapePairField::to_js(),
    scrape_window_layout: ScrapeWindowField::to_js(),
    statuses: budget_core::Status::ALL.iter().map(|s| s.as_str().to_string()).collect(),
  }
}
