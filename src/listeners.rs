//! Listener dispatch: transitions travel from whichever thread produced them
//! to the JS thread that registered the listeners, through one threadsafe
//! function per (tracker handle, thread), so they arrive in the order they happened.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, ThreadId};

use budget_core::{Event, Status as CoreStatus};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{sys, Env};

use crate::report::{AlertEvent, BudgetReport};

type Listener = Rc<FunctionRef<Unknown<'static>, Unknown<'static>>>;

/// What a listener listens to: a status, or an alert starting or stopping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
  Status(CoreStatus),
  Alert,
  Resolve,
}

/// The names of the event kinds, by `EventKind::index`: the core's statuses
/// (`Status::ALL`, the one list), then the two alert events.
fn kind_name(index: usize) -> &'static str {
  match CoreStatus::ALL.get(index) {
    Some(status) => status.as_str(),
    None => ["alert", "resolve"].get(index - CoreStatus::ALL.len()).copied().unwrap_or("?"),
  }
}

/// The names `on()` and `off()` accept, quoted, for messages.
pub fn event_names() -> String {
  (0..CoreStatus::ALL.len() + 2).map(|i| format!("'{}'", kind_name(i))).collect::<Vec<_>>().join(", ")
}

impl EventKind {
  /// The kind called `name`, if any.
  pub fn parse(name: &str) -> Option<EventKind> {
    match name {
      "alert" => Some(EventKind::Alert),
      "resolve" => Some(EventKind::Resolve),
      _ => CoreStatus::parse(name).map(EventKind::Status),
    }
  }

  fn index(self) -> usize {
    match self {
      EventKind::Status(s) => s.index(),
      EventKind::Alert => CoreStatus::ALL.len(),
      EventKind::Resolve => CoreStatus::ALL.len() + 1,
    }
  }

  fn of(event: &Event) -> EventKind {
    match event {
      Event::Status(t, _) => EventKind::Status(t.to),
      Event::Alert { fired: true, .. } => EventKind::Alert,
      Event::Alert { fired: false, .. } => EventKind::Resolve,
    }
  }
}

/// The listeners of one tracker handle, by event kind. Lives on its JS thread only.
#[derive(Default)]
pub struct ListenerTable {
  by_kind: [Vec<Listener>; 6],
  /// Set by `close` while transitions are still queued: the last delivery clears the table.
  closing: bool,
}

impl ListenerTable {
  /// Adds `listener` for `kind`.
  pub fn add(&mut self, kind: EventKind, listener: FunctionRef<Unknown<'static>, Unknown<'static>>) {
    self.by_kind[kind.index()].push(Rc::new(listener));
  }

  /// Removes the most recently added registration of `listener` for `kind`.
  pub fn remove(&mut self, env: &Env, kind: EventKind, listener: Unknown) -> Result<bool> {
    let list = &mut self.by_kind[kind.index()];
    for i in (0..list.len()).rev() {
      let registered = list[i].borrow_back(env)?;
      if env.strict_equals(registered, listener)? {
        list.remove(i);
        return Ok(true);
      }
    }
    Ok(false)
  }

  fn for_kind(&self, index: usize) -> Vec<Listener> {
    self.by_kind[index].clone()
  }

  /// The tracker handle closed: drops every listener now when nothing is
  /// queued for them (`idle`), else once the queued transitions are delivered.
  pub fn close(&mut self, idle: bool) {
    if idle {
      self.by_kind.iter_mut().for_each(Vec::clear);
    } else {
      self.closing = true;
    }
  }

  /// Whether no listener is registered.
  pub fn is_empty(&self) -> bool {
    self.by_kind.iter().all(Vec::is_empty)
  }
}

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
          let f = listener.borrow_back(ctx.env)?;
          // SAFETY: on the JS thread, inside a callback, with values of this scope.
          if unsafe { call_listener(ctx.env, f.raw(), report.raw(), kind) } == Delivery::Stopping {
            // The thread is being torn down (worker terminated, process.exit()
            // in a worker): JS cannot run, and that is no listener's fault.
            break;
          }
        }
        delivered.delivered();
        if table.borrow().closing && delivered.pending.load(Ordering::Acquire) == 0 {
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

  /// Queues `event` for the listeners; never blocks, never calls JS.
  pub fn send(&self, event: Event) {
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

/// Calls `listener(report)`. Whatever it throws (an Error, a Symbol, a string,
/// `null`, `undefined`…) becomes a process warning (`process.on('warning')`)
/// showing the thrown value, and the other listeners still run. A call that
/// fails without a thrown value means the thread is stopping: nothing is reported.
///
/// # Safety
/// `env` is the current callback's env, on its JS thread; the values belong to it.
unsafe fn call_listener(env: &Env, listener: sys::napi_value, report: sys::napi_value, kind: usize) -> Delivery {
  let raw = env.raw();
  let mut undefined = std::ptr::null_mut();
  let mut result = std::ptr::null_mut();
  unsafe {
    sys::napi_get_undefined(raw, &mut undefined);
    if sys::napi_call_function(raw, undefined, listener, 1, &report, &mut result) == sys::Status::napi_ok {
      return Delivery::Done;
    }
    match take_exception(raw) {
      Some(thrown) => report_listener_error(raw, thrown, kind),
      None => Delivery::Stopping,
    }
  }
}

/// The pending exception, cleared; `None` when there is none (a call refused
/// because JS cannot run). `throw undefined` is `Some(undefined)`.
unsafe fn take_exception(env: sys::napi_env) -> Option<sys::napi_value> {
  let mut pending = false;
  unsafe {
    if sys::napi_is_exception_pending(env, &mut pending) != sys::Status::napi_ok || !pending {
      return None;
    }
    let mut thrown = std::ptr::null_mut();
    (sys::napi_get_and_clear_last_exception(env, &mut thrown) == sys::Status::napi_ok).then_some(thrown)
  }
}

/// Reports what a listener threw as a process warning: an Error as itself (as
/// `emitWarning` shows errors), any other value described in a message.
unsafe fn report_listener_error(env: sys::napi_env, thrown: sys::napi_value, kind: usize) -> Delivery {
  let mut is_error = false;
  unsafe { sys::napi_is_error(env, thrown, &mut is_error) };
  let described = if is_error { None } else { Some(unsafe { describe(env, thrown) }) };
  let event = kind_name(kind);
  let warning = match &described {
    None => Some(thrown),
    Some(what) => unsafe { js_string(env, &format!("an ErrorBudgetTracker '{event}' listener threw {what}")) },
  };
  let emitted = warning.and_then(|warning| unsafe {
    let process = property(env, global(env)?, c"process")?;
    let emit = property(env, process, c"emitWarning")?;
    let mut result = std::ptr::null_mut();
    (sys::napi_call_function(env, process, emit, 1, &warning, &mut result) == sys::Status::napi_ok).then_some(())
  });
  if emitted.is_some() {
    return Delivery::Done;
  }
  if unsafe { take_exception(env) }.is_none() && !unsafe { can_run_js(env) } {
    return Delivery::Stopping;
  }
  // emitWarning itself threw (replaced, or its own listeners failed): stderr is all that is left.
  let what = described.unwrap_or_else(|| "an Error".into());
  eprintln!("captcha-error-budget: an ErrorBudgetTracker '{event}' listener threw {what}, and process.emitWarning failed to report it");
  Delivery::Done
}

/// A readable form of a thrown value that is not an Error: strings quoted,
/// everything else as `String(value)` shows it (`Symbol(x)`, `null`, `42`).
unsafe fn describe(env: sys::napi_env, value: sys::napi_value) -> String {
  let mut ty = sys::ValueType::napi_undefined;
  unsafe { sys::napi_typeof(env, value, &mut ty) };
  let shown = unsafe {
    global(env)
      .and_then(|g| property(env, g, c"String"))
      .and_then(|string| {
        let mut result = std::ptr::null_mut();
        let called = sys::napi_call_function(env, value, string, 1, &value, &mut result);
        (called == sys::Status::napi_ok).then_some(result)
      })
      .and_then(|s| rust_string(env, s))
  };
  let Some(shown) = shown else {
    unsafe { take_exception(env) };
    return "a value that String() cannot show".into();
  };
  match ty {
    sys::ValueType::napi_string => format!("'{shown}'"),
    sys::ValueType::napi_bigint => format!("{shown}n"),
    _ => shown,
  }
}

/// Whether JS can run on this thread now (false once its teardown began).
unsafe fn can_run_js(env: sys::napi_env) -> bool {
  unsafe { global(env).and_then(|g| property(env, g, c"Object")).is_some() }
}

unsafe fn global(env: sys::napi_env) -> Option<sys::napi_value> {
  let mut g = std::ptr::null_mut();
  (unsafe { sys::napi_get_global(env, &mut g) } == sys::Status::napi_ok).then_some(g)
}

unsafe fn property(env: sys::napi_env, object: sys::napi_value, name: &std::ffi::CStr) -> Option<sys::napi_value> {
  let mut value = std::ptr::null_mut();
  (unsafe { sys::napi_get_named_property(env, object, name.as_ptr(), &mut value) } == sys::Status::napi_ok)
    .then_some(value)
}

unsafe fn js_string(env: sys::napi_env, text: &str) -> Option<sys::napi_value> {
  let mut value = std::ptr::null_mut();
  let status = unsafe { sys::napi_create_string_utf8(env, text.as_ptr().cast(), text.len() as isize, &mut value) };
  (status == sys::Status::napi_ok).then_some(value)
}

unsafe fn rust_string(env: sys::napi_env, value: sys::napi_value) -> Option<String> {
  let mut len = 0usize;
  unsafe {
    if sys::napi_get_value_string_utf8(env, value, std::ptr::null_mut(), 0, &mut len) != sys::Status::napi_ok {
      return None;
    }
    let mut buf = vec![0u8; len + 1];
    let mut written = 0usize;
    if sys::napi_get_value_string_utf8(env, value, buf.as_mut_ptr().cast(), buf.len(), &mut written)
      != sys::Status::napi_ok
    {
      return None;
    }
    buf.truncate(written);
    Some(String::from_utf8_lossy(&buf).into_owned())
  }
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
      // SAFETY: on the env's JS thread, inside a call.
      unsafe { warn_pinned(env.raw(), pinned) };
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
unsafe fn warn_pinned(env: sys::napi_env, pinned: usize) {
  let message = format!(
    "{pinned} ErrorBudgetTracker objects with listeners are alive: a tracker with listeners stays alive (like an \
     interval) until close() or its last off(), even with no reference to it. close() every tracker you drop"
  );
  let emitted = unsafe {
    let args =
      [js_string(env, &message), js_string(env, "PinnedTrackersWarning"), js_string(env, "CAPTCHA_BUDGET_PINNED")];
    (|| {
      let args = [args[0]?, args[1]?, args[2]?];
      let process = property(env, global(env)?, c"process")?;
      let emit = property(env, process, c"emitWarning")?;
      let mut result = std::ptr::null_mut();
      (sys::napi_call_function(env, process, emit, 3, args.as_ptr(), &mut result) == sys::Status::napi_ok).then_some(())
    })()
  };
  if emitted.is_none() {
    unsafe { take_exception(env) };
    eprintln!("captcha-error-budget: {message}");
  }
}
