//! The pure core of captcha-error-budget: a bucketed rolling window, the error
//! budget computed from it, status transitions, and clocks; with the report
//! layouts the JavaScript reads (`layout`), and what the binding needs that
//! needs no Node-API: the config read from JS values (`plan`, `js_value`), the
//! locks, timer thread, tracker state, handles and shared-tracker registry
//! (`sync`, `timer`, `state`, `handle`, `registry`, `listener_table`) and the
//! persist files and saving thread (`persist`). The napi binding is a thin layer
//! over these.

pub mod alerts;
pub mod budget;
pub mod checked;
pub mod clock;
pub mod config;
pub mod error;
pub mod event_kind;
pub mod field;
pub mod handle;
pub mod js_value;
pub mod layout;
pub mod lease;
pub mod listener_table;
pub mod persist;
pub mod plan;
pub mod registry;
pub mod rule;
pub mod state;
pub mod sync;
pub mod timer;
pub mod tracker;
pub mod tracker_clock;
pub mod watch;
pub mod window;

pub use alerts::{AlertGate, AlertRule, Severity};
pub use budget::{Budget, Counts, Status};
pub use checked::CheckedConfig;
pub use clock::{Clock, ManualClock, MonotonicClock};
pub use config::{Config, Settings};
pub use error::{BudgetError, ErrorKind, Result};
pub use tracker::{
  AlertSnapshot, Event, EventSink, Evidence, FiringAlert, FleetBucket, FleetDelta, FleetLedger, QuietLease, Report,
  Snapshot, Tracker, Transition,
};
pub use window::Placement;
