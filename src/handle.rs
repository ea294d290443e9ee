//! One JS object's hold on a tracker (the core's `handle::Handle`), telling V8
//! of the native memory it keeps alive.

use napi::{sys, Env};

use crate::listeners::Sink;
use crate::persist::Persisted;

/// A handle: the tracker it holds and whether it was closed.
pub type Handle = budget_core::handle::Handle<Sink, Persisted>;

/// Tells V8 the native memory `handle` keeps alive while open, so that the
/// collector feels trackers that are dropped without `close()`.
pub fn report_memory(handle: &Handle, env: &Env) {
  handle.report_memory(env.raw() as usize, adjust_external_memory);
}

/// `napi_adjust_external_memory` in the env at `env`, on its thread; a hint
/// to the collector: nothing to do when V8 declines it.
fn adjust_external_memory(env: usize, delta: i64) {
  let _ = Env::from_raw(env as sys::napi_env).adjust_external_memory(delta);
}
