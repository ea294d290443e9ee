//! Per-environment cleanup of listeners. A tracker may be shared with other
//! threads, so a worker that exits (or is terminated) must take its sinks off
//! the tracker itself: one Node-API env cleanup hook per sink, registered in
//! the worker's own environment (never a process-wide "installed once" flag),
//! and unregistered when the handle lets go of its listeners first.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use napi::{sys, Env, Error, Status};

use crate::listeners::Sink;
use crate::state::TrackerState;

struct HookData {
  state: Weak<TrackerState>,
  sink: Weak<Sink>,
  /// Set by the environment's teardown, which then owns nothing more of it.
  ran: AtomicBool,
}

impl HookData {
  fn detach(&self) {
    if let (Some(state), Some(sink)) = (self.state.upgrade(), self.sink.upgrade()) {
      state.remove_sink(&sink);
    }
  }
}

/// Takes a sink off its tracker when dropped, or when its environment is torn
/// down, whichever comes first. Lives on (and is dropped on) its JS thread.
pub struct SinkCleanup {
  env: sys::napi_env,
  data: Arc<HookData>,
  /// The hook's own reference to `data`, handed to Node-API.
  registered: *const HookData,
}

impl SinkCleanup {
  /// Registers the hook for `sink` of `state` in `env`.
  pub fn register(env: &Env, state: &Arc<TrackerState>, sink: &Arc<Sink>) -> napi::Result<SinkCleanup> {
    let data =
      Arc::new(HookData { state: Arc::downgrade(state), sink: Arc::downgrade(sink), ran: AtomicBool::new(false) });
    let registered = Arc::into_raw(Arc::clone(&data));
    // SAFETY: valid env; `registered` stays alive until the hook runs or is removed.
    let status = unsafe { sys::napi_add_env_cleanup_hook(env.raw(), Some(on_teardown), registered as *mut c_void) };
    if status != sys::Status::napi_ok {
      // SAFETY: not registered: the reference is still ours.
      drop(unsafe { Arc::from_raw(registered) });
      return Err(Error::new(Status::from(status), "cannot add an env cleanup hook".to_string()));
    }
    Ok(SinkCleanup { env: env.raw(), data, registered })
  }
}

impl Drop for SinkCleanup {
  fn drop(&mut self) {
    self.data.detach();
    if self.data.ran.load(Ordering::Acquire) {
      return;
    }
    // SAFETY: same env, function and argument as registered, on the env's thread.
    let removed =
      unsafe { sys::napi_remove_env_cleanup_hook(self.env, Some(on_teardown), self.registered as *mut c_void) };
    if removed == sys::Status::napi_ok {
      // SAFETY: the hook will not run: its reference is ours to release.
      drop(unsafe { Arc::from_raw(self.registered) });
    }
  }
}

unsafe extern "C" fn on_teardown(arg: *mut c_void) {
  // SAFETY: `arg` is the reference `register` handed over; the hook runs once.
  let data = unsafe { Arc::from_raw(arg as *const HookData) };
  data.ran.store(true, Ordering::Release);
  data.detach();
}
