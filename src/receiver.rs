//! The class's members on the native prototype, each with a receiver check in
//! front of its napi-rs glue. (The figures read on hot paths do not come
//! through here: `lib/tracker.js` reads them through each tracker's own
//! `figure` function, `fast_path.rs`; `napi_unwrap` alone costs more than a
//! bare Node-API call.)
//!
//! On a wrong receiver (`Object.getOwnPropertyDescriptor(proto, 'total').get
//! .call({})`, an unbound method) the glue says "Failed to unwrap exclusive
//! reference of `ErrorBudgetTracker` type"; every member here throws instead a
//! `TypeError` with code `ERR_INVALID_THIS` naming the member and saying how to
//! call it. A member called with no receiver (`undefined` or `null`) gets the
//! global object from V8, and is told it got `undefined`.

use std::cell::RefCell;
use std::collections::HashSet;
use std::ffi::{c_void, CString};
use std::hash::{BuildHasherDefault, Hasher};
use std::ptr;

use napi::bindgen_prelude::*;
use napi::{check_status, sys, Env};

use crate::tracker::ErrorBudgetTracker;

/// A hasher for addresses: they are distinct and aligned, so a multiply is enough.
#[derive(Default)]
struct AddressHasher(u64);

impl Hasher for AddressHasher {
  fn finish(&self) -> u64 {
    self.0
  }
  fn write(&mut self, _: &[u8]) {
    unreachable!("only addresses are hashed")
  }
  fn write_usize(&mut self, n: usize) {
    self.0 = (n as u64 >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15);
  }
}

thread_local! {
  /// The addresses of this thread's live trackers that a checked unwrap has
  /// confirmed: `napi_unwrap` also unwraps objects of the addon's other class
  /// (and of other addons), so its pointer is trusted only once it is known.
  static KNOWN: RefCell<HashSet<usize, BuildHasherDefault<AddressHasher>>> = RefCell::default();
}

/// Forgets a tracker being dropped (its address may be reused by another object).
pub fn forget(tracker: *const ErrorBudgetTracker) {
  // During thread teardown the set may be gone already: nothing to forget then.
  let _ = KNOWN.try_with(|known| known.borrow_mut().remove(&(tracker as usize)));
}

/// The tracker `this` wraps, if it is one.
///
/// # Safety
/// `env` and `this` are valid, on the JS thread.
unsafe fn tracker_of<'a>(env: sys::napi_env, this: sys::napi_value) -> Option<&'a ErrorBudgetTracker> {
  let mut wrapped = ptr::null_mut();
  // SAFETY: valid env and value; a status (no exception) when nothing is wrapped.
  if this.is_null() || unsafe { sys::napi_unwrap(env, this, &mut wrapped) } != sys::Status::napi_ok {
    return None;
  }
  let address = wrapped as usize;
  if !KNOWN.with(|known| known.borrow().contains(&address)) {
    // First sight: napi-rs's own checked unwrap says whether it is a tracker.
    // SAFETY: valid env and value.
    let instance = unsafe { ClassInstance::<ErrorBudgetTracker>::from_napi_value(env, this) }.ok()?;
    let checked = &*instance as *const ErrorBudgetTracker as usize;
    if checked != address {
      return None;
    }
    KNOWN.with(|known| known.borrow_mut().insert(address));
  }
  // SAFETY: a live tracker of this thread (dropped ones are forgotten); only
  // read, and nothing on this thread holds it mutably while JS runs a getter.
  Some(unsafe { &*(wrapped as *const ErrorBudgetTracker) })
}

/// What a wrong receiver is, for messages.
///
/// # Safety
/// `env` and `value` are valid.
unsafe fn describe_receiver(env: sys::napi_env, value: sys::napi_value) -> String {
  let mut kind = sys::ValueType::napi_undefined;
  // SAFETY: valid env and value.
  unsafe { sys::napi_typeof(env, value, &mut kind) };
  let mut global = ptr::null_mut();
  let mut is_global = false;
  // SAFETY: valid env and out-pointers.
  unsafe {
    sys::napi_get_global(env, &mut global);
    sys::napi_strict_equals(env, value, global, &mut is_global);
  }
  let not = "that is not an ErrorBudgetTracker";
  // V8 hands a native function a primitive receiver boxed (`snapshot.call(5)`).
  if kind == sys::ValueType::napi_object {
    for (constructor, name) in
      [("Number", "number"), ("String", "string"), ("Boolean", "boolean"), ("Symbol", "symbol"), ("BigInt", "bigint")]
    {
      let (mut ctor, mut is) = (ptr::null_mut(), false);
      let c_name = CString::new(constructor).unwrap_or_default();
      // SAFETY: valid env and out-pointers; a failure leaves `is` false.
      unsafe {
        sys::napi_get_named_property(env, global, c_name.as_ptr(), &mut ctor);
        sys::napi_instanceof(env, value, ctor, &mut is);
      }
      if is {
        return format!("a {name}");
      }
    }
  }
  match kind {
    _ if is_global => "undefined".into(),
    sys::ValueType::napi_undefined => "undefined".into(),
    sys::ValueType::napi_null => "null".into(),
    sys::ValueType::napi_object => format!("an object {not}"),
    sys::ValueType::napi_function => format!("a function {not}"),
    other => format!("a {}", crate::args::type_name(ValueType::from(other))),
  }
}

/// The message for `member` (`report()`, `the total getter`) called on `receiver`.
pub fn invalid_this_message(member: &str, receiver: &str) -> String {
  let how = member
    .strip_suffix("()")
    .map(|method| format!(": call it as tracker.{method}(), or bind it to the tracker"))
    .unwrap_or_default();
  format!("{member} needs an ErrorBudgetTracker as this, got {receiver}{how}")
}

/// Throws the `ERR_INVALID_THIS` TypeError for `member` called on `receiver`.
///
/// # Safety
/// `env` and `receiver` are valid, inside a callback.
unsafe fn throw_invalid_this(env: sys::napi_env, member: &str, receiver: sys::napi_value) -> sys::napi_value {
  // SAFETY: as the caller's.
  let got = unsafe { describe_receiver(env, receiver) };
  let message = invalid_this_message(member, &got);
  let _ = Env::from_raw(env).throw_type_error(&message, Some("ERR_INVALID_THIS"));
  ptr::null_mut()
}

/// `this` of a call, and up to `N` arguments with how many were passed.
///
/// # Safety
/// `env` and `info` are a callback's.
unsafe fn call_info<const N: usize>(
  env: sys::napi_env,
  info: sys::napi_callback_info,
) -> (sys::napi_value, usize, [sys::napi_value; N], *mut c_void) {
  let (mut argc, mut argv, mut this, mut data) = (N, [ptr::null_mut(); N], ptr::null_mut(), ptr::null_mut());
  // SAFETY: valid out-pointers; on failure `this` stays null (a wrong receiver).
  unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), &mut this, &mut data) };
  (this, argc, argv, data)
}

/// What a checked member forwards to: the glue it replaced and its name in messages.
struct Forward {
  original: sys::napi_ref,
  member: String,
}

/// A checked member: the receiver checked here, then the glue called with the
/// same `this` and arguments.
unsafe extern "C" fn checked_member(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  // SAFETY: called by Node-API as a function made by `forwarder`.
  let (this, argc, argv, data) = unsafe { call_info::<4>(env, info) };
  // SAFETY: `data` is the `Forward` of this function, alive while it is.
  let forward = unsafe { &*(data as *const Forward) };
  // SAFETY: valid env and value.
  if unsafe { tracker_of(env, this) }.is_none() {
    // SAFETY: inside a callback.
    return unsafe { throw_invalid_this(env, &forward.member, this) };
  }
  let mut args = argv.to_vec();
  if argc > args.len() {
    args = vec![ptr::null_mut(); argc];
    let mut n = argc;
    // SAFETY: room for every argument.
    unsafe { sys::napi_get_cb_info(env, info, &mut n, args.as_mut_ptr(), ptr::null_mut(), ptr::null_mut()) };
  }
  args.truncate(argc);
  let (mut original, mut result) = (ptr::null_mut(), ptr::null_mut());
  // SAFETY: valid env, reference and values; an exception the glue throws
  // stays pending and propagates.
  unsafe {
    sys::napi_get_reference_value(env, forward.original, &mut original);
    sys::napi_call_function(env, this, original, args.len(), args.as_ptr(), &mut result);
  }
  result
}

/// Finalizer of a checked member: drops its `Forward` and the reference it holds.
unsafe extern "C" fn release_forward(env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
  // SAFETY: `data` came from `Box::into_raw` in `forwarder` and is released only here.
  let forward = unsafe { Box::from_raw(data as *mut Forward) };
  // SAFETY: valid env; the reference belongs to this function alone.
  unsafe { sys::napi_delete_reference(env, forward.original) };
}

/// A checked function in front of `original`.
fn forwarder(env: &Env, name: &str, member: String, original: sys::napi_value) -> Result<sys::napi_value> {
  let raw = env.raw();
  let mut reference = ptr::null_mut();
  // SAFETY: valid env and value.
  check_status!(unsafe { sys::napi_create_reference(raw, original, 1, &mut reference) }, "cannot keep {name}")?;
  let data = Box::into_raw(Box::new(Forward { original: reference, member })) as *mut c_void;
  let mut func = ptr::null_mut();
  let c_name = CString::new(name).unwrap_or_default();
  // SAFETY: valid env and out-pointer; `data` is released by the finalizer,
  // or here if attaching it fails.
  unsafe {
    let created =
      sys::napi_create_function(raw, c_name.as_ptr(), name.len() as isize, Some(checked_member), data, &mut func);
    if created != sys::Status::napi_ok
      || sys::napi_add_finalizer(raw, func, data, Some(release_forward), ptr::null_mut(), ptr::null_mut())
        != sys::Status::napi_ok
    {
      release_forward(raw, data, ptr::null_mut());
      return Err(Error::new(Status::GenericFailure, format!("cannot check the receiver of {name}")));
    }
  }
  Ok(func)
}

/// Replaces every getter and method of the native prototype (as napi-rs
/// defined them) with its checked form: a receiver check in front of its glue.
/// Attributes (enumerable, configurable, writable) stay as they were.
pub fn finish_prototype(env: &Env, proto: &mut Object) -> Result<()> {
  let object: Unknown = env.get_global()?.get_named_property("Object")?;
  let object: Object = unsafe { object.cast() }?;
  let own_names: Function<Unknown, Unknown> = object.get_named_property("getOwnPropertyNames")?;
  let describe: Function<FnArgs<(Unknown, Unknown)>, Unknown> =
    object.get_named_property("getOwnPropertyDescriptor")?;
  let names: Vec<String> = unsafe { own_names.call(proto.to_unknown())?.cast::<Vec<String>>() }?;
  let mut properties = Vec::new();
  let mut c_names = Vec::new();
  for name in names {
    if name == "constructor" {
      continue;
    }
    let key = env.create_string(&name)?.to_unknown();
    let descriptor: Object = unsafe { describe.call((proto.to_unknown(), key).into())?.cast() }?;
    let enumerable: bool = descriptor.get_named_property("enumerable")?;
    let configurable: bool = descriptor.get_named_property("configurable")?;
    let mut attributes = sys::PropertyAttributes::default;
    if enumerable {
      attributes |= sys::PropertyAttributes::enumerable;
    }
    if configurable {
      attributes |= sys::PropertyAttributes::configurable;
    }
    let getter: Unknown = descriptor.get_named_property("get")?;
    let value: Unknown = descriptor.get_named_property("value")?;
    let c_name = CString::new(name.as_str()).map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
    let mut property = sys::napi_property_descriptor {
      utf8name: c_name.as_ptr(),
      name: ptr::null_mut(),
      method: None,
      getter: None,
      setter: None,
      value: ptr::null_mut(),
      attributes,
      data: ptr::null_mut(),
    };
    if getter.get_type()? == ValueType::Function {
      // A checked function as the getter: defined through the object view.
      let checked = forwarder(env, &name, format!("the {name} getter"), getter.raw())?;
      define_getter(env, proto, &name, checked, enumerable, configurable)?;
      continue;
    } else if value.get_type()? == ValueType::Function {
      let writable: bool = descriptor.get_named_property("writable")?;
      if writable {
        property.attributes |= sys::PropertyAttributes::writable;
      }
      property.value = forwarder(env, &name, format!("{name}()"), value.raw())?;
    } else {
      continue;
    }
    properties.push(property);
    c_names.push(c_name);
  }
  // SAFETY: valid env, object and descriptors (their names live in `c_names`).
  check_status!(
    unsafe { sys::napi_define_properties(env.raw(), proto.raw(), properties.len(), properties.as_ptr()) },
    "cannot finish the class"
  )
}

/// Defines `name` on `proto` as an accessor whose getter is the function `get`
/// (Node-API defines accessors from callbacks only, so through `Object.defineProperty`).
fn define_getter(
  env: &Env,
  proto: &Object,
  name: &str,
  get: sys::napi_value,
  enumerable: bool,
  configurable: bool,
) -> Result<()> {
  let object: Unknown = env.get_global()?.get_named_property("Object")?;
  let object: Object = unsafe { object.cast() }?;
  let define: Function<FnArgs<(Unknown, Unknown, Unknown)>, Unknown> = object.get_named_property("defineProperty")?;
  let mut descriptor = Object::new(env)?;
  // SAFETY: a function value of this env.
  descriptor.set_named_property("get", unsafe { Unknown::from_raw_unchecked(env.raw(), get) })?;
  descriptor.set_named_property("enumerable", enumerable)?;
  descriptor.set_named_property("configurable", configurable)?;
  let key = env.create_string(name)?.to_unknown();
  define.call((proto.to_unknown(), key, descriptor.to_unknown()).into())?;
  Ok(())
}
