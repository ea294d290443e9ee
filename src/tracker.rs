//! The `ErrorBudgetTracker` class: argument checks and conversions around the
//! shared native state. All budget logic lives in `budget_core`.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use budget_core::event_kind::{event_names, EventKind};
use budget_core::state::Expected;
use budget_core::{BudgetError, CheckedConfig, Result as CoreResult};
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

use crate::args::{argument_name, count, describe, js_number, timestamp, type_name};
use crate::clock::TrackerClock;
use crate::config::{self, ClockKind};
use crate::env_hook::SinkCleanup;
use crate::error::{or_throw, throw, throw_in};
use crate::handle::Handle;
use crate::listeners::{ListenerTable, Pinned, Sink};
use crate::persist;
use crate::record::{record_at, record_js};
use crate::report::{AlertRuleInfo, BudgetReport, BudgetStatus, RecordedCounts};
use crate::state::{TrackerState, REGISTRY};

/// Listeners of this handle and the sink that brings transitions to them.
struct Listeners {
  table: Rc<RefCell<ListenerTable>>,
  /// Tells `close()` whether transitions are still queued for the table.
  sink: Arc<Sink>,
  /// Takes the sink off the tracker when dropped (or when the env is torn down).
  _cleanup: SinkCleanup,
  /// Keeps the tracker object alive while it listens.
  _pinned: Pinned,
}

/// Tracks success/failure events in a rolling window against an SLO target and
/// derives the error budget, its burn rate and a status; calls the listeners
/// registered with `on(status, cb)` when the status changes.
#[napi]
pub struct ErrorBudgetTracker {
  /// This object's hold on the (possibly shared) native state.
  pub(crate) handle: Arc<Handle>,
  listeners: Option<Listeners>,
}

#[napi]
impl ErrorBudgetTracker {
  /// Creates a tracker. Every config field is optional (see `TrackerConfig`)
  /// and read once; bad values throw a `TypeError` or `RangeError` naming the
  /// field. Called without `new` (or on an existing object) it throws a
  /// `TypeError` with code `ERR_CONSTRUCT_CALL_REQUIRED`.
  #[napi(constructor, ts_args_type = "config?: TrackerConfig")]
  pub fn new(env: Env, this: This, config: Option<Unknown>) -> napi::Result<Self> {
    // Before anything else: a refused call must change nothing.
    if !crate::fast_path::is_construct_call(&env, &this.object)? {
      let message = "ErrorBudgetTracker is a class: create trackers with new ErrorBudgetTracker(config); \
        calling it without new, or on an existing object (.call/.apply), is refused";
      let err = BudgetError {
        kind: budget_core::ErrorKind::Type,
        code: "ERR_CONSTRUCT_CALL_REQUIRED",
        field: None,
        message: message.into(),
      };
      return Err(throw(&env, err));
    }
    let raw = match config {
      None => None,
      Some(v) => match v.get_type()? {
        ValueType::Undefined => None,
        // An array is not a config (as for shared(name, config) in index.js).
        ValueType::Object if !v.is_array()? => Some(Object::from_unknown(v)?),
        _ => {
          let msg = format!("config must be an object, got {}", describe(&v));
          return Err(throw(&env, BudgetError::invalid_type(msg)));
        }
      },
    };
    // The package's own callers (restore(), prometheusRules()) say what they call this object.
    let root = match &raw {
      Some(object) => argument_name(&env, object)?,
      None => None,
    };
    let root = root.as_deref().unwrap_or("config");
    let plan = config::parse(raw).map_err(|e| throw_in(&env, e, root))?;
    let clock = crate::clock::clock_for(plan.clock);
    if let TrackerClock::Manual(manual) = &clock {
      manual.advance_to(plan.manual_start_ms);
    }
    if plan.persist.is_some() {
      // Before anything exists: a saving thread that cannot start creates nothing.
      or_throw(&env, persist::ensure_saver())?;
    }
    let create = || -> CoreResult<Arc<TrackerState>> {
      // Before the file is read: a second owner of the path is refused.
      let lock =
        plan.persist.as_ref().map(|p| persist::PersistLock::take(&p.path, persist::Owner::Tracker)).transpose()?;
      let mut core = persist::initial_core(&plan, clock.now_ms())?;
      core.set_status_hysteresis(plan.hysteresis);
      let state = Arc::new(TrackerState::new(core, clock));
      if let Some(lock) = lock {
        state.hold(Box::new(lock));
      }
      Ok(state)
    };
    let state = match &plan.shared {
      Some(name) => {
        let checked = CheckedConfig::new(plan.config.clone()).map_err(|e| throw_in(&env, e, root))?;
        let expected = Expected {
          config: &checked,
          real_clock: plan.clock == ClockKind::Monotonic,
          hysteresis: plan.hysteresis,
          given: &plan.given,
        };
        // A caller that gave a config must find the same config.
        let check = |state: &TrackerState| match plan.given.is_empty() {
          true => Ok(()),
          false => state.check_expected(name, &expected),
        };
        REGISTRY.attach(name, check, create).map_err(|e| throw_in(&env, e, root))?
      }
      None => {
        let state = create().map_err(|e| throw_in(&env, e, root))?;
        state.count_in();
        state
      }
    };
    let handle = Handle::adopt(state, &REGISTRY);
    // `record` and the report filler as own properties: raw Node-API
    // functions on the hot paths.
    crate::fast_path::install(&env, &this, &handle)?;
    crate::handle::report_memory(&handle, &env);
    if let Some(p) = &plan.persist {
      persist::exit_hooks(&env)?;
      crate::state::persist(&handle.tracker, p);
    }
    Ok(ErrorBudgetTracker { handle, listeners: None })
  }

  /// Records one solve: `true` for a success, `false` for a failure. `atMs`
  /// (epoch ms) replays a logged event: older than the window, it is counted in
  /// `report().dropped` only; later than now, it counts now (with the manual
  /// clock it moves time forward to `atMs` first). Costs under twice a bare
  /// Node-API call: each instance has its own `record` (a raw native function
  /// that keeps working when taken off its tracker, e.g.
  /// `const r = tracker.record`); this prototype method is the same checks
  /// through the ordinary glue. A `RangeError` (nothing recorded) when the
  /// tracker's recorded or dropped count would pass 2⁵³ − 1.
  #[napi(ts_args_type = "success: boolean, atMs?: number")]
  pub fn record(&self, env: Env, success: Unknown, at_ms: Option<Unknown>) -> napi::Result<()> {
    record_js::<false>(&env, &self.handle, success, at_ms).map(|_| ())
  }

  /// Records a batch of solves at once — `successes` and `failures`, each a
  /// non-negative integer — counted together in one bucket, at `atMs` (epoch
  /// ms, as for `record()`) or now. Status and alerts are evaluated once, after
  /// the whole batch, so a batch causes at most one status change. Bad input
  /// throws before anything is recorded: a `TypeError` for a non-number, a
  /// `RangeError` for a negative or fractional count or one above 2³² − 1,
  /// naming the argument; a `RangeError` when a count the tracker keeps
  /// (recorded successes or failures, dropped events) would pass 2⁵³ − 1.
  #[napi(ts_args_type = "successes: number, failures: number, atMs?: number")]
  pub fn record_many(
    &self,
    env: Env,
    successes: Unknown,
    failures: Unknown,
    at_ms: Option<Unknown>,
  ) -> napi::Result<()> {
    or_throw(&env, self.handle.check_open("recordMany"))?;
    let successes = or_throw(&env, count("recordMany(successes, failures): successes", successes))?;
    let failures = or_throw(&env, count("recordMany(successes, failures): failures", failures))?;
    let at = match at_ms {
      None => None,
      Some(v) => or_throw(&env, timestamp("recordMany(successes, failures, atMs): atMs", v))?,
    };
    or_throw(
      &env,
      record_at::<false>(&self.handle, at, successes, failures)
        .map_err(|e| e.prefixed("recordMany(successes, failures)")),
    )?;
    Ok(())
  }

  /// A late verdict: the target site rejected the token of a solve recorded
  /// as a success at `atMs` (epoch ms; the tracker's now when later, as
  /// `record()` stamps it). Turns one success of that solve's bucket into a
  /// failure, as if the failure had been recorded then (status, alerts and
  /// listeners follow), and returns `true`; `false`, nothing changed, when the
  /// solve is older than `verdictWindowMs`, its bucket has left the window, or
  /// that bucket holds no success. Does not move a manual clock. A `TypeError`
  /// / `RangeError` for an `atMs` that is not a finite number.
  #[napi(ts_args_type = "atMs: number")]
  pub fn reject(&self, env: Env, at_ms: Unknown) -> napi::Result<bool> {
    or_throw(&env, self.handle.check_open("reject"))?;
    let Some(at) = or_throw(&env, timestamp("reject(atMs): atMs", at_ms))? else {
      let msg = "reject(atMs): atMs must be a number of epoch ms, got undefined";
      return Err(throw(&env, BudgetError::invalid_type(msg)));
    };
    Ok(self.handle.with_core(|core, now, out| core.reject(now, at, out)))
  }

  /// Manual clock only: moves time to `ms` (epoch ms, not earlier than now),
  /// expiring events and queueing the time-driven transitions in order.
  #[napi(ts_args_type = "ms: number")]
  pub fn advance_to(&self, env: Env, ms: Unknown) -> napi::Result<()> {
    or_throw(&env, self.handle.check_open("advanceTo"))?;
    let TrackerClock::Manual(clock) = &self.handle.clock else {
      let msg = "advanceTo() needs a tracker created with clock: 'manual'";
      return Err(throw(&env, BudgetError::invalid_state(msg)));
    };
    let ms = match or_throw(&env, timestamp("advanceTo(ms): ms", ms))? {
      Some(ms) => ms,
      None => {
        return Err(throw(
          &env,
          BudgetError::invalid_type("advanceTo(ms): ms must be a number of epoch ms, got undefined"),
        ))
      }
    };
    let now = self.handle.now_ms();
    if ms < now {
      let msg = format!("advanceTo(ms): ms ({ms}) is earlier than the tracker's now ({now})");
      return Err(throw(&env, BudgetError::out_of_range(msg)));
    }
    clock.advance_to(ms);
    self.handle.catch_up();
    Ok(())
  }

  /// The tracker's current time, epoch ms.
  #[napi(getter)]
  pub fn now(&self) -> f64 {
    self.handle.read(|core| core.now_ms() as f64)
  }

  /// Events in the window now.
  #[napi(getter)]
  pub fn total(&self) -> f64 {
    self.handle.read(|core| core.counts().total() as f64)
  }

  /// Successes in the window now.
  #[napi(getter)]
  pub fn successes(&self) -> f64 {
    self.handle.read(|core| core.counts().successes as f64)
  }

  /// Failures in the window now.
  #[napi(getter)]
  pub fn failures(&self) -> f64 {
    self.handle.read(|core| core.counts().failures as f64)
  }

  /// successes / total (unrounded); 1 with no events.
  #[napi(getter)]
  pub fn current_rate(&self) -> f64 {
    self.handle.read(|core| core.budget().current_rate)
  }

  /// Failures the window may absorb: total × (1 − targetRate), unrounded.
  #[napi(getter)]
  pub fn budget_total(&self) -> f64 {
    self.handle.read(|core| core.budget().budget_total)
  }

  /// Failures still allowed: max(0, budgetTotal − failures), unrounded.
  #[napi(getter)]
  pub fn budget_remaining(&self) -> f64 {
    self.handle.read(|core| core.budget().budget_remaining)
  }

  /// budgetRemaining / budgetTotal in [0, 1]; with no budget, 1 if no failures else 0.
  #[napi(getter)]
  pub fn remaining_fraction(&self) -> f64 {
    self.handle.read(|core| core.budget().remaining_fraction)
  }

  /// failures / budgetTotal, unrounded: 1 spends the budget exactly over the
  /// window, 2 in half of it; 0 with no events, no budget, or below `minEvents`.
  #[napi(getter)]
  pub fn burn_rate(&self) -> f64 {
    self.handle.read(|core| core.budget().burn_rate)
  }

  /// The status now.
  #[napi(getter)]
  pub fn status(&self) -> BudgetStatus {
    self.handle.read(|core| core.budget().status.into())
  }

  /// The status after the latest change (starts `healthy`).
  #[napi(getter)]
  pub fn last_status(&self) -> BudgetStatus {
    self.handle.read(|core| core.last_status().into())
  }

  /// The report now, rounded as the reference tracker rounds it.
  #[napi]
  pub fn report(&self) -> BudgetReport {
    self.handle.read(|core| BudgetReport::new(&core.report(), &core.alert_snapshot()))
  }

  /// Every event ever recorded by outcome — in the window, aged out or dropped.
  #[napi(getter)]
  pub fn recorded(&self) -> RecordedCounts {
    self.handle.read(|core| {
      let c = core.recorded();
      RecordedCounts { successes: c.successes as f64, failures: c.failures as f64 }
    })
  }

  /// Successes ever turned into failures by `reject()` in this process: a
  /// counter (never down, not kept in snapshots).
  #[napi(getter)]
  pub fn rejected(&self) -> f64 {
    self.handle.read(|core| core.rejected() as f64)
  }

  /// The alert policy in force (the default one unless `config.alerts` was
  /// given), with its windows rounded to whole buckets.
  #[napi(getter)]
  pub fn alert_policy(&self) -> Vec<AlertRuleInfo> {
    self.handle.read(|core| core.alert_rules().zip(core.alert_gates()).map(|(r, g)| AlertRuleInfo::new(r, g)).collect())
  }

  /// Burn rate (unrounded) over the most recent `ms` (an integer from 1 to
  /// `windowMs`): O(1) for the alert policy's windows, O(buckets) otherwise.
  /// A raw rate: unlike the `burnRate` getter it is not 0 below `minEvents`.
  #[napi(ts_args_type = "ms: number")]
  pub fn burn_rate_over(&self, env: Env, ms: Unknown) -> napi::Result<f64> {
    let window_ms = self.handle.read(|core| core.config().window_ms);
    let must_be = format!("burnRateOver(ms): ms must be an integer of milliseconds from 1 to windowMs ({window_ms})");
    let ms = match ms.get_type()? {
      ValueType::Number => f64::from_unknown(ms)?,
      other => return Err(throw(&env, BudgetError::invalid_type(format!("{must_be}, got {}", type_name(other))))),
    };
    if !(ms.fract() == 0.0 && ms >= 1.0 && ms <= window_ms as f64) {
      return Err(throw(&env, BudgetError::out_of_range(format!("{must_be}, got {}", js_number(ms)))));
    }
    Ok(self.handle.read(|core| core.burn_rate_over(ms as i64)))
  }

  /// Calls `listener` each time `event` happens: a status name — called with the
  /// report when the status changes to it — or `'alert'` / `'resolve'` — called
  /// with an `AlertEvent` when an alert pair starts / stops firing. Listeners run
  /// later on this thread's event loop, never inside `record()`. Whatever a
  /// listener throws (an Error or any other value) becomes a process warning
  /// showing it (`process.on('warning')`), and the other listeners still run. Like an
  /// interval, a tracker with listeners stays alive until `close()` or its last
  /// `off()`, even with no other reference to it.
  #[napi(
    ts_generic_types = "E extends BudgetEvent",
    ts_args_type = "event: E, listener: BudgetListener<E>",
    ts_return_type = "this"
  )]
  pub fn on<'a>(&mut self, env: Env, this: This<'a>, status: Unknown, listener: Unknown) -> napi::Result<This<'a>> {
    or_throw(&env, self.handle.check_open("on"))?;
    let (status, listener) = or_throw(&env, listener_args("on", status, listener))?;
    let listener = listener.create_ref()?;
    if self.listeners.is_none() {
      let table = Rc::new(RefCell::new(ListenerTable::default()));
      let sink = Sink::new(&env, Rc::clone(&table))?;
      let cleanup = SinkCleanup::register(&env, &self.handle.tracker, &sink)?;
      let pinned = Pinned::new(&env, &this.object)?;
      self.handle.add_sink(Arc::clone(&sink));
      or_throw(&env, self.handle.tracker.watch())?;
      self.listeners = Some(Listeners { table, sink, _cleanup: cleanup, _pinned: pinned });
    }
    if let Some(l) = &self.listeners {
      l.table.borrow_mut().add(status, listener);
    }
    Ok(this)
  }

  /// Removes the most recent registration of `listener` for `event`.
  #[napi(
    ts_generic_types = "E extends BudgetEvent",
    ts_args_type = "event: E, listener: BudgetListener<E>",
    ts_return_type = "this"
  )]
  pub fn off<'a>(&mut self, env: Env, this: This<'a>, status: Unknown, listener: Unknown) -> napi::Result<This<'a>> {
    let (status, listener) = or_throw(&env, listener_args("off", status, listener))?;
    if let Some(l) = &self.listeners {
      let listener = listener.to_unknown();
      l.table.borrow_mut().remove(status, |registered| env.strict_equals(registered.borrow_back(&env)?, listener))?;
      if l.table.borrow().is_empty() {
        // The last listener gone: unpin the tracker and take its sink off.
        self.listeners = None;
      }
    }
    Ok(this)
  }

  /// Stops the tracker: detaches it from the timer, releases its listeners
  /// (and the hold they had on it) once the transitions already queued for
  /// them are delivered — nothing new is queued; later `record()` and `on()` throw
  /// `ERR_TRACKER_CLOSED`. With `persist` it first writes a final snapshot: if
  /// that fails it throws `ERR_PERSIST_WRITE` and the tracker stays open, so
  /// that nothing is lost (fix the path and close again). Idempotent.
  #[napi]
  pub fn close(&mut self, env: Env) -> napi::Result<()> {
    or_throw(&env, self.handle.tracker.final_save())?;
    self.handle.close();
    // Transitions queued before close() still reach the listeners: the table
    // is cleared now when nothing is queued, else after the last delivery
    // (the dispatcher holds it). Nothing new is queued once closed.
    if let Some(l) = self.listeners.take() {
      l.table.borrow_mut().close(l.sink.is_idle());
    }
    Ok(())
  }

  /// Whether `close()` was called.
  #[napi(getter)]
  pub fn closed(&self) -> bool {
    self.handle.is_closed()
  }
}

/// Checks `on`/`off` arguments: a known event name and a function.
fn listener_args<'a>(
  method: &str,
  event: Unknown<'a>,
  listener: Unknown<'a>,
) -> CoreResult<(EventKind, Function<'a, Unknown<'static>, Unknown<'static>>)> {
  let name = match event.get_type() {
    Ok(ValueType::String) => String::from_unknown(event).ok(),
    _ => None,
  };
  let Some(kind) = name.as_deref().and_then(EventKind::parse) else {
    // A string is the right type: an unknown name is a wrong value.
    let error = if name.is_some() { BudgetError::invalid_value } else { BudgetError::invalid_type };
    return Err(error(format!(
      "{method}(event, listener): event must be one of {}, got {}",
      event_names(),
      name
        .map(|n| format!("'{n}'"))
        .unwrap_or_else(|| type_name(event.get_type().unwrap_or(ValueType::Unknown)).into())
    )));
  };
  match listener.get_type() {
    Ok(ValueType::Function) => Ok((
      kind,
      Function::<Unknown<'static>, Unknown<'static>>::from_unknown(listener)
        .map_err(|e| BudgetError::invalid_type(e.reason))?,
    )),
    Ok(other) => Err(BudgetError::invalid_type(format!(
      "{method}(event, listener): listener must be a function, got {}",
      type_name(other)
    ))),
    Err(e) => Err(BudgetError::invalid_type(e.reason)),
  }
}

/// Snapshots: the state as JSON, and `save()` to the persist file.
#[napi]
impl ErrorBudgetTracker {
  /// The tracker's whole state as JSON (schema version 1: config with the alert
  /// policy, bucket counters with epoch-ms starts, totals, lifetime counters).
  /// `ErrorBudgetTracker.restore(json)` turns it back into a tracker.
  #[napi]
  pub fn snapshot(&self) -> String {
    self.handle.read(|core| core.snapshot_json())
  }

  /// Writes a snapshot to `persist.path` now (atomically). Throws
  /// `ERR_PERSIST_WRITE` when the file cannot be written, and
  /// `ERR_INVALID_STATE` when the tracker was created without `persist`.
  #[napi]
  pub fn save(&self, env: Env) -> napi::Result<()> {
    or_throw(&env, self.handle.tracker.save_now())
  }
}
