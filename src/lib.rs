//! Node.js binding of captcha-error-budget over the pure `budget_core` crate:
//! napi-rs glue for the native class and its arguments (JS values in, JS
//! objects out), and what only Node can do: threadsafe listener dispatch, the
//! per-environment clean-up, the saves at exit and on signals. The state, the
//! config checks, persistence and the timer are the core's. Raw
//! Node-API is the one documented exception, for the hot paths only
//! (`fast_path.rs`: each tracker's `record`, report fill and `figure`); outside
//! them it is kept to what napi-rs has no safe form of (listeners.rs's
//! `try_call`, which keeps a thrown value as it is; env_hook.rs's cleanup hooks,
//! which napi-rs leaks on removal; the listeners' keepalive ref/unref, which
//! napi-rs has only as deprecated `&mut` methods). The class's JavaScript side is `lib/tracker/tracker.js`.

mod args;
mod clock;
mod config;
mod env_hook;
mod error;
mod family;
mod fast_path;
mod fast_state;
mod fleet;
mod handle;
mod listeners;
mod persist;
mod persist_file;
mod policy;
mod raw_call;
mod record;
mod replay;
mod report;
mod state;
mod tracker;

// The binding's locks and its timer thread: no napi in them.
use budget_core::{sync, timer};

pub use report::{BudgetReport, BudgetStatus};
pub use tracker::ErrorBudgetTracker;

use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

/// Finishes the class once the module's exports exist: `Symbol.dispose`, and
/// the prototype's `record` remembered for the fast path. (Receivers are
/// checked by `lib/tracker/tracker.js`, the class's JavaScript side.)
#[napi(module_exports)]
pub fn finish_class(exports: Object, env: Env) -> napi::Result<()> {
  let ctor: Unknown = exports.get_named_property("ErrorBudgetTracker")?;
  // Classes and `Symbol` are functions: read their properties through the object view.
  let ctor = Object::from_unknown(ctor)?;
  let mut proto: Object = ctor.get_named_property("prototype")?;
  install_dispose(&env, &mut proto)?;
  fast_path::remember_prototype_record(&env, &mut proto)?;
  raw_call::export_report_buffer(&exports)?;
  Ok(())
}

/// Makes `tracker[Symbol.dispose]()` the same as `tracker.close()`, so
/// `using tracker = new ErrorBudgetTracker()` closes it at scope exit.
fn install_dispose(env: &Env, proto: &mut Object) -> napi::Result<()> {
  let close: Unknown = proto.get_named_property("close")?;
  let symbol: Unknown = env.get_global()?.get_named_property("Symbol")?;
  let symbol = Object::from_unknown(symbol)?;
  let dispose: Unknown = symbol.get_named_property("dispose")?;
  if dispose.get_type()? == ValueType::Symbol {
    proto.set_property(dispose, close)?;
  }
  Ok(())
}
