//! Floor callbacks for the benchmark: what a Node-API call costs before any
//! work is done. `readBool(b)` reads one boolean argument and returns
//! `undefined` — the least a `record(success)` can do. `readBoolData(b)` does
//! the same through callback data and an `argc` of 2, the exact shape of the
//! addon's raw `record`, so the difference between the two is the shape.
//! `readBool2`/`readBool3` are `readBool` again as distinct functions.

use std::ffi::c_void;
use std::ptr;

use napi_sys::*;

unsafe extern "C" fn read_bool(env: napi_env, info: napi_callback_info) -> napi_value {
  let mut argc = 1usize;
  let mut argv = [ptr::null_mut(); 1];
  napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), ptr::null_mut());
  let mut value = false;
  napi_get_value_bool(env, argv[0], &mut value);
  std::hint::black_box(value);
  ptr::null_mut()
}

unsafe extern "C" fn read_bool_data(env: napi_env, info: napi_callback_info) -> napi_value {
  let mut argc = 2usize;
  let mut argv = [ptr::null_mut(); 2];
  let mut data: *mut c_void = ptr::null_mut();
  napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), ptr::null_mut(), &mut data);
  let mut value = false;
  napi_get_value_bool(env, argv[0], &mut value);
  std::hint::black_box((value, argc, data));
  ptr::null_mut()
}


unsafe fn export(env: napi_env, exports: napi_value, name: &str, cb: napi_callback) {
  let mut f = ptr::null_mut();
  napi_create_function(env, name.as_ptr().cast(), name.len() as isize, cb, ptr::null_mut(), &mut f);
  napi_set_named_property(env, exports, format!("{name}\0").as_ptr().cast(), f);
}

/// Node-API module entry point.
#[no_mangle]
pub unsafe extern "C" fn napi_register_module_v1(env: napi_env, exports: napi_value) -> napi_value {
  export(env, exports, "readBool", Some(read_bool));
  export(env, exports, "readBoolData", Some(read_bool_data));
  // Two more functions of the same callback, as distinct JS functions: a call
  // site cycling through three of them is polymorphic, like one call site
  // recording into several trackers.
  export(env, exports, "readBool2", Some(read_bool));
  export(env, exports, "readBool3", Some(read_bool));
  exports
}
