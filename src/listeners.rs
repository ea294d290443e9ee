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
use napi::{check_status, sys, Env};

use crate::report::{AlertEvent, BudgetReport};

type Listener = Rc<FunctionRef<Unknown<'static>, Unknown<'static>>>;

/// What a listener listens to: a status, or an alert starting or stopping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
  Status(CoreStatus),
  Alert,
  Resolve,
}

/// The names `on()` and `off()` accept.
pub const EVENT_NAMES: &str = "'healthy', 'warning', 'critical', 'exhausted', 'alert', 'resolve'";

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
      EventKind::Alert => 4,
      EventKind::Resolve => 5,
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

  /// Whether no listener is registered.
  pub fn is_empty(&self) -> bool {
    self.by_kind.iter().all(Vec::is_empty)
  }

  /// Drops every listener reference.
  pub fn clear(&mut self) {
    self.by_kind.iter_mut().for_each(Vec::clear);
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
          if let Err(err) = f.call(unsafe { report.cast::<Unknown<'static>>() }?) {
            surface_listener_error(ctx.env, err);
          }
        }
        delivered.delivered();
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

  /// Queues `event` for the listeners; never blocks, never calls JS.
  pub fn send(&self, event: Event) {
    self.keepalive.queued();
    if self.tsfn.call(event, ThreadsafeFunctionCallMode::NonBlocking) != napi::Status::Ok {
      // The environment is closing: nothing will run the call.
      self.keepalive.pending.fetch_sub(1, Ordering::AcqRel);
    }
  }
}

/// A throwing listener must not stop the others: report its error as a
/// process warning (`process.on('warning')`), never swallow it.
fn surface_listener_error(env: &Env, err: napi::Error) {
  let value = JsError::from(err).into_unknown(*env);
  let emitted = (|| -> Result<()> {
    let process: Object = env.get_global()?.get_named_property("process")?;
    let emit: Function<Unknown, Unknown> = process.get_named_property("emitWarning")?;
    emit.apply(process, value)?;
    Ok(())
  })();
  if emitted.is_err() {
    // Both failing: the thread is being torn down (worker terminated) or JS cannot run.
    eprintln!(
      "captcha-error-budget: a listener failed and process.emitWarning could not report it (thread shutting down?)"
    );
  }
}

/// A strong reference to a tracker object while it has listeners: like an
/// interval, a listening tracker stays alive (and its listeners keep firing)
/// until `close()` or its last `off()`, even with no other reference to it.
pub struct Pinned {
  env: sys::napi_env,
  reference: sys::napi_ref,
}

impl Pinned {
  /// Pins `object` in `env`.
  pub fn new(env: &Env, object: &Object) -> Result<Pinned> {
    let mut reference = std::ptr::null_mut();
    // SAFETY: valid env and object, on their JS thread.
    check_status!(unsafe { sys::napi_create_reference(env.raw(), object.raw(), 1, &mut reference) })?;
    Ok(Pinned { env: env.raw(), reference })
  }
}

impl Drop for Pinned {
  fn drop(&mut self) {
    // SAFETY: created by `new` in this env; dropped on the env's thread (by
    // close(), off() or the object's finalizer), once.
    unsafe { sys::napi_delete_reference(self.env, self.reference) };
  }
}
