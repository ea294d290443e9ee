//! The binding's side of persistence: the core's `budget_core::persist` (files,
//! lock, saving thread) read from a checked `Plan`, and the saves at process
//! exit and on SIGTERM/SIGINT, which only Node's `process` can hook.

use budget_core::persist::save_all;
use budget_core::{BudgetError, Tracker};
use napi::bindgen_prelude::{FnArgs, Function};
use napi::Env;

use crate::config::{ClockKind, Plan};

pub use budget_core::persist::{ensure_saver, schedule, Owner, PersistLock, Persisted};

/// The core a new tracker starts from: `config.snapshot`, else the persist
/// file, else an empty window (see `budget_core::persist::initial_core`).
pub fn initial_core(plan: &Plan, now_ms: i64) -> Result<Tracker, BudgetError> {
  let path = plan.persist.as_ref().map(|p| p.path.as_path());
  let real_clock = plan.clock == ClockKind::Monotonic;
  budget_core::persist::initial_core(&plan.config, plan.snapshot.as_ref(), path, real_clock, now_ms)
}

/// Installs, once per JS environment, the saves that no finalizer would make:
/// `process.on('exit')` (natural exit and `process.exit()`) saves this
/// thread's persisted trackers, and on the main thread `SIGTERM` and `SIGINT`
/// listeners save every one of the process, then — when no other listener
/// would handle the signal — let it terminate the process as it would have.
pub fn exit_hooks(env: &Env) -> napi::Result<()> {
  thread_local!(static INSTALLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
  if INSTALLED.with(|i| i.get()) {
    return Ok(());
  }
  let save_mine = env.create_function_from_closure::<(), (), _>("saveBudgetTrackers", |_| {
    save_all(false);
    Ok(())
  })?;
  let save_every = env.create_function_from_closure::<(), (), _>("saveAllBudgetTrackers", |_| {
    save_all(true);
    Ok(())
  })?;
  let install: Function<FnArgs<(SaveFn, SaveFn)>, ()> = env.run_script(INSTALL_EXIT_HOOKS)?;
  install.call(FnArgs::from((save_mine, save_every)))?;
  INSTALLED.with(|i| i.set(true));
  Ok(())
}

/// A native function of no arguments that saves trackers.
type SaveFn<'a> = Function<'a, (), ()>;

const INSTALL_EXIT_HOOKS: &str = r#"(saveMine, saveEvery) => {
  process.on('exit', () => saveMine())
  const threads = process.getBuiltinModule?.('node:worker_threads')
  if (threads && !threads.isMainThread) return // signals reach the main thread only
  for (const signal of ['SIGTERM', 'SIGINT']) {
    const onSignal = () => {
      saveEvery()
      if (process.listenerCount(signal) === 1) {
        process.removeListener(signal, onSignal)
        process.kill(process.pid, signal)
      }
    }
    process.on(signal, onSignal)
  }
}"#;
