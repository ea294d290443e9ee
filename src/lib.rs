//! Node.js binding of captcha-error-budget: a thin napi-rs layer over the pure
//! `budget_core` crate (argument checks, listener dispatch, the JS class).

mod config;
mod error;
mod listeners;
mod report;
mod state;
mod tracker;

pub use config::TrackerConfig;
pub use report::{BudgetReport, BudgetStatus};
pub use tracker::ErrorBudgetTracker;
