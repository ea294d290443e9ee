//! The core tracker: a window, its budget and the status transitions it goes
//! through. It owns no clock and no callbacks: callers pass `now` and collect
//! the transitions each call produced.

use crate::budget::{round_js, Budget, Counts, Status};
use crate::config::Config;
use crate::error::Result;
use crate::window::{Placement, Window};

/// The report of a tracker at one moment, rounded as the reference rounds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
  pub status: Status,
  /// successes / total to 4 decimals.
  pub current_rate: f64,
  pub total: u64,
  pub successes: u64,
  pub failures: u64,
  /// remainingFraction × 100 to 1 decimal.
  pub budget_remaining_pct: f64,
  /// Burn rate to 2 decimals.
  pub burn_rate: f64,
  /// The SLO target (targetRate).
  pub slo_target: f64,
  /// Allowed failures in the window, to 1 decimal.
  pub budget_total: f64,
  /// Failures still allowed, to 1 decimal.
  pub budget_remaining: f64,
  /// Events ever refused for being older than the window.
  pub dropped: u64,
  /// The moment of the report, epoch ms.
  pub at_ms: i64,
}

/// A status change and the report at the moment it happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Transition {
  pub from: Status,
  pub to: Status,
  pub report: Report,
}

/// Window + budget + status of one SLO.
#[derive(Debug, Clone)]
pub struct Tracker {
  config: Config,
  window: Window,
  last_status: Status,
  dropped: u64,
}

impl Tracker {
  /// A tracker with a validated `config`, starting `healthy` at `now_ms`.
  pub fn new(config: Config, now_ms: i64) -> Result<Self> {
    config.validate()?;
    let window = Window::new(config.window_ms, config.resolution_ms, now_ms);
    Ok(Tracker { config, window, last_status: Status::Healthy, dropped: 0 })
  }

  /// The configuration.
  pub fn config(&self) -> &Config {
    &self.config
  }

  /// The time the tracker was last moved to.
  pub fn now_ms(&self) -> i64 {
    self.window.now_ms()
  }

  /// The status after the latest change.
  pub fn last_status(&self) -> Status {
    self.last_status
  }

  /// Events refused for being older than the window.
  pub fn dropped(&self) -> u64 {
    self.dropped
  }

  /// Bytes of bucket storage.
  pub fn bucket_bytes(&self) -> usize {
    self.window.bucket_bytes()
  }

  /// Moves time to `now_ms`, stopping at every instant a non-empty bucket
  /// expires so that each time-driven transition carries its exact moment.
  pub fn advance(&mut self, now_ms: i64, transitions: &mut Vec<Transition>) {
    while let Some(t) = self.window.next_expiry_ms() {
      if t > now_ms {
        break;
      }
      self.window.advance(t);
      self.note_status(transitions);
    }
    self.window.advance(now_ms);
  }

  /// Records `successes` and `failures` stamped `at_ms`, after moving time to `now_ms`.
  /// Events older than the window are counted in `dropped`; later than now, at now.
  pub fn record(
    &mut self,
    now_ms: i64,
    at_ms: i64,
    successes: u64,
    failures: u64,
    transitions: &mut Vec<Transition>,
  ) -> Placement {
    self.advance(now_ms, transitions);
    let placement = self.window.add(at_ms, successes, failures);
    match placement {
      Placement::TooOld => self.dropped += successes + failures,
      Placement::Counted => self.note_status(transitions),
    }
    placement
  }

  /// The next moment the status could change with no new event (the next
  /// expiry of a non-empty bucket), if any.
  pub fn next_change_ms(&mut self) -> Option<i64> {
    self.window.next_expiry_ms()
  }

  /// Counts inside the window.
  pub fn counts(&self) -> Counts {
    self.window.counts()
  }

  /// The unrounded budget figures now.
  pub fn budget(&self) -> Budget {
    Budget::of(self.window.counts(), &self.config)
  }

  /// The report now.
  pub fn report(&self) -> Report {
    let b = self.budget();
    Report {
      status: b.status,
      current_rate: round_js(b.current_rate, 4),
      total: b.counts.total(),
      successes: b.counts.successes,
      failures: b.counts.failures,
      budget_remaining_pct: round_js(b.remaining_fraction * 100.0, 1),
      burn_rate: round_js(b.burn_rate, 2),
      slo_target: self.config.target_rate,
      budget_total: round_js(b.budget_total, 1),
      budget_remaining: round_js(b.budget_remaining, 1),
      dropped: self.dropped,
      at_ms: self.window.now_ms(),
    }
  }

  fn note_status(&mut self, transitions: &mut Vec<Transition>) {
    let status = self.budget().status;
    if status != self.last_status {
      let from = std::mem::replace(&mut self.last_status, status);
      transitions.push(Transition { from, to: status, report: self.report() });
    }
  }
}
