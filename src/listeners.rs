//! Listener dispatch: transitions travel from whichever thread produced them
//! to the JS thread that registered the listeners, through one threadsafe
//! function per (tracker handle, thread), so they arrive in the order they happened.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, ThreadId};

use budget_core::event_kind::{kind_name, EventKind};
use budget_core::Event;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Env};

use crate::report::{AlertEvent, BudgetReport};

/// The listeners of one tracker handle, by event kind. Lives on its JS thread only.
pub type ListenerTable = budget_core::listener_table::ListenerTable<FunctionRef<Unknown<'static>, Unknown<'static>>>;

/// Keeps the event loop alive while a transition produced on the JS thread
/// itself is queued, so a script that records and ends still sees it; an idle
/// tracker leaves the loop free to exit.
struct Keepalive {
  env: usize,
  owner: ThreadId,
  tsfn: AtomicPtr<sys::napi_threadsafe_function__>,
  pending: AtomicUsize,
  referred: AtomicBool,
}

impl Keepalive {
  fn queued(&self) {
    self.pending.fetch_add(1, Ordering::AcqRel);
    if thread::current().id() == self.owner && !self.referred.swap(true, Ordering::AcqRel) {
      unsafe { sys::napi_ref_threadsafe_function(self.env as sys::napi_env, self.tsfn.load(Ordering::Acquire)) };
    }
  }

  fn delivered(&self) {
    if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 && self.referred.swap(false, Ordering::AcqRel) {
      unsafe { sys::napi_unref_threadsafe_function(self.env as sys::napi_env, self.tsfn.load(Ordering::Acquire)) };
    }
  }
}

type Payload = Either<BudgetReport, AlertEvent>;
type DispatchFn = ThreadsafeFunction<Event, (), FnArgs<(u32, Payload)>, napi::Status, false, true>;

/// The sending end of one handle's listeners; any thread may `send`.
pub struct Sink {
  tsfn: DispatchFn,
  keepalive: Arc<Keepalive>,
}

impl Sink {
  /// Creates the sink and the JS-side dispatcher that calls `table`'s listeners.
  pub fn new(env: &Env, table: Rc<RefCell<ListenerTable>>) -> Result<Arc<Sink>> {
    let keepalive = Arc::new(Keepalive {
      env: env.raw() as usize,
      owner: thread::current().id(),
      tsfn: AtomicPtr::new(std::ptr::null_mut()),
      pending: AtomicUsize::new(0),
      referred: AtomicBool::new(false),
    });
    let delivered = Arc::clone(&keepalive);
    let dispatcher =
      env.create_function_from_closure::<FnArgs<(u32, Payload)>, (), _>("dispatchBudgetEvent", move |ctx| {
        let kind = ctx.get::<u32>(0)? as usize;
        let report: Unknown = ctx.get(1)?;
        // Copy the list first: a listener may call on()/off() re-entrantly.
        let listeners = table.borrow().for_kind(kind);
        for listener in listeners {
          let f = listener.borrow_back(ctx.env)?.to_unknown();
          let delivery = match try_call(ctx.env, f, None, &[report]) {
            Call::Returned(_) => Delivery::Done,
            Call::Threw(thrown) => report_listener_error(ctx.env, thrown, kind),
            Call::CannotRun => Delivery::Stopping,
          };
          if delivery == Delivery::Stopping {
            // The thread is being torn down (worker terminated, process.exit()
            // in a worker): JS cannot run, and that is no listener's fault.
            break;
          }
        }
        delivered.delivered();
        if table.borrow().is_closing() && delivered.pending.load(Ordering::Acquire) == 0 {
          table.borrow_mut().close(true);
        }
        Ok(())
      })?;
    let tsfn: DispatchFn =
      dispatcher.build_threadsafe_function::<Event>().weak::<true>().callee_handled::<false>().build_callback(
        |ctx| {
          let event: Event = ctx.value;
          let kind = EventKind::of(&event).index() as u32;
          let payload = match &event {
            Event::Status(t, alerts) => Either::A(BudgetReport::new(&t.report, alerts)),
            Event::Alert { fired, alert, report, alerts } => Either::B(AlertEvent::new(*fired, alert, report, alerts)),
          };
          Ok(FnArgs::from((kind, payload)))
        },
      )?;
    keepalive.tsfn.store(tsfn.handle.get_raw(), Ordering::Release);
    Ok(Arc::new(Sink { tsfn, keepalive }))
  }

  /// Whether no transition is queued for the listeners.
  pub fn is_idle(&self) -> bool {
    self.keepalive.pending.load(Ordering::Acquire) == 0
  }
}

impl budget_core::state::Sink for Sink {
  /// Queues `event` for the listeners; never blocks, never calls JS.
  fn send(&self, event: Event) {
    self.keepalive.queued();
    if self.tsfn.call(event, ThreadsafeFunctionCallMode::NonBlocking) != napi::Status::Ok {
      // The environment is closing: nothing will run the call.
      self.keepalive.pending.fetch_sub(1, Ordering::AcqRel);
    }
  }
}

/// How a listener call went, for the dispatcher.
#[derive(Debug, PartialEq, Eq)]
enum Delivery {
  /// The listener returned, or threw and that was reported.
  Done,
  /// JS cannot run on this thread any more: stop calling listeners.
  Stopping,
}

/// How a JS call went.
enum Call<'e> {
  Returned(Unknown<'e>),
  /// It threw this value (`throw undefined` included).
  Threw(Unknown<'e>),
  /// It was refused without a thrown value: JS cannot run on this thread any more.
  CannotRun,
}

/// `f.apply(this, args)` (`this` undefined when `None`), catching what it throws. The listener path's one raw
/// call: napi-rs turns a throw into its `Error` (stringifying the value, which
/// may run user code or throw again), where this needs the thrown value itself,
/// told apart from a call refused because the thread is stopping.
fn try_call<'e>(env: &'e Env, f: Unknown<'e>, this: Option<Unknown<'e>>, args: &[Unknown<'e>]) -> Call<'e> {
  let argv: Vec<sys::napi_value> = args.iter().map(|arg| arg.raw()).collect();
  let mut result = std::ptr::null_mut();
  // SAFETY: values of `env`, on its JS thread (they borrow it); the result is of `env`.
  unsafe {
    let mut receiver = this.map_or(std::ptr::null_mut(), |this| this.raw());
    if this.is_none() {
      sys::napi_get_undefined(env.raw(), &mut receiver);
    }
    let status = sys::napi_call_function(env.raw(), receiver, f.raw(), argv.len(), argv.as_ptr(), &mut result);
    if status == sys::Status::napi_ok {
      return Call::Returned(Unknown::from_raw_unchecked(env.raw(), result));
    }
  }
  take_exception(env).map_or(Call::CannotRun, Call::Threw)
}

/// The pending exception, cleared; `None` when there is none (a call refused
/// because JS cannot run). `throw undefined` is `Some(undefined)`.
fn take_exception(env: &Env) -> Option<Unknown<'_>> {
  let mut pending = false;
  let mut thrown = std::ptr::null_mut();
  // SAFETY: on the env's JS thread; what is cleared is a value of `env`.
  unsafe {
    if sys::napi_is_exception_pending(env.raw(), &mut pending) != sys::Status::napi_ok || !pending {
      return None;
    }
    (sys::napi_get_and_clear_last_exception(env.raw(), &mut thrown) == sys::Status::napi_ok)
      .then(|| Unknown::from_raw_unchecked(env.raw(), thrown))
  }
}

/// Reports what a listener threw as a process warning (`process.on('warning')`):
/// an Error as itself (as `emitWarning` shows errors), any other value (a
/// Symbol, a string, `null`, `undefined`…) described in a message; the other
/// listeners still run.
fn report_listener_error(env: &Env, thrown: Unknown, kind: usize) -> Delivery {
  let described = if thrown.is_error().unwrap_or(false) { None } else { Some(describe(env, thrown)) };
  let event = kind_name(kind);
  let warning = match &described {
    None => Some(thrown),
    Some(what) => {
      env.create_string(format!("an ErrorBudgetTracker '{event}' listener threw {what}")).ok().map(|s| s.to_unknown())
    }
  };
  if warning.is_some_and(|warning| emit_warning(env, &[warning])) {
    return Delivery::Done;
  }
  if take_exception(env).is_none() && !can_run_js(env) {
    return Delivery::Stopping;
  }
  // emitWarning itself threw (replaced, or its own listeners failed): stderr is all that is left.
  let what = described.unwrap_or_else(|| "an Error".into());
  eprintln!("captcha-error-budget: an ErrorBudgetTracker '{event}' listener threw {what}, and process.emitWarning failed to report it");
  Delivery::Done
}

/// `process.emitWarning(...args)`; whether it returned.
fn emit_warning(env: &Env, args: &[Unknown]) -> bool {
  let Some(process) = global_property(env, "process") else { return false };
  let Ok(emit) = Object::from_unknown(process).and_then(|p| p.get_named_property::<Unknown>("emitWarning")) else {
    return false;
  };
  matches!(try_call(env, emit, Some(process), args), Call::Returned(_))
}

/// A readable form of a thrown value that is not an Error: strings quoted,
/// everything else as `String(value)` shows it (`Symbol(x)`, `null`, `42`).
fn describe(env: &Env, value: Unknown) -> String {
  let shown = global_property(env, "String").and_then(|string| match try_call(env, string, Some(value), &[value]) {
    Call::Returned(result) => napi::JsString::from_unknown(result).and_then(|s| s.into_utf8()?.into_owned()).ok(),
    _ => None,
  });
  let Some(shown) = shown else {
    take_exception(env);
    return "a value that String() cannot show".into();
  };
  match value.get_type() {
    Ok(ValueType::String) => format!("'{shown}'"),
    Ok(ValueType::BigInt) => format!("{shown}n"),
    _ => shown,
  }
}

/// Whether JS can run on this thread now (false once its teardown began).
fn can_run_js(env: &Env) -> bool {
  global_property(env, "Object").is_some()
}

/// `globalThis[name]`.
fn global_property<'e>(env: &'e Env, name: &str) -> Option<Unknown<'e>> {
  env.get_global().ok()?.get_named_property::<Unknown>(name).ok()
}

/// A strong reference to a tracker object while it has listeners: like an
/// interval, a listening tracker stays alive (and its listeners keep firing)
/// until `close()` or its last `off()`, even with no other reference to it.
/// Visible, as Node's `MaxListenersExceededWarning`: when [`PIN_WARNING_AT`]
/// trackers of the process are pinned at once, one process warning (once per
/// process) says so and that `close()` frees them.
pub struct Pinned {
  env: sys::napi_env,
  /// `None` once released.
  reference: Option<ObjectRef<false>>,
}

/// How many pinned trackers at once make the warning (each holds its window
/// until `close()`: up to 675 KiB for a default one).
pub const PIN_WARNING_AT: usize = 1000;

/// Trackers pinned now, in every environment of the process.
static PINNED: AtomicUsize = AtomicUsize::new(0);
/// Whether the warning was emitted (once per process).
static PIN_WARNED: AtomicBool = AtomicBool::new(false);

impl Pinned {
  /// Pins `object` in `env`.
  pub fn new(env: &Env, object: &Object) -> Result<Pinned> {
    let reference = object.create_ref::<false>()?;
    let pinned = PINNED.fetch_add(1, Ordering::AcqRel) + 1;
    if pinned >= PIN_WARNING_AT && !PIN_WARNED.swap(true, Ordering::AcqRel) {
      warn_pinned(env, pinned);
    }
    Ok(Pinned { env: env.raw(), reference: Some(reference) })
  }
}

impl Drop for Pinned {
  fn drop(&mut self) {
    PINNED.fetch_sub(1, Ordering::AcqRel);
    // Created by `new` in this env; dropped on the env's thread (by close(),
    // off() or the object's finalizer).
    if let Some(reference) = self.reference.take() {
      let _ = reference.unref(&Env::from_raw(self.env));
    }
  }
}

/// `process.emitWarning(message, 'PinnedTrackersWarning', 'CAPTCHA_BUDGET_PINNED')`;
/// on stderr if that fails.
fn warn_pinned(env: &Env, pinned: usize) {
  let message = format!(
    "{pinned} ErrorBudgetTracker objects with listeners are alive: a tracker with listeners stays alive (like an \
     interval) until close() or its last off(), even with no reference to it. close() every tracker you drop"
  );
  let args = [message.as_str(), "PinnedTrackersWarning", "CAPTCHA_BUDGET_PINNED"]
    .map(|text| env.create_string(text).map(|s| s.to_unknown()));
  let emitted = match args {
    [Ok(message), Ok(name), Ok(code)] => emit_warning(env, &[message, name, code]),
    _ => false,
  };
  if !emitted {
    take_exception(env);
    eprintln!("captcha-error-budget: {message}");
  }
}
