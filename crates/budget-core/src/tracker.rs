//! The core tracker: a window, its budget, its alerts and the changes they go
//! through. It owns no clock and no callbacks: callers pass `now` and collect
//! the events each call produced.

use crate::alerts::{self, AlertGate, AlertRule, Severity};
use crate::budget::{add_count, counted, round_js, Budget, Counts, Status, MAX_COUNT};
use crate::checked::CheckedConfig;
use crate::config::Config;
use crate::error::{BudgetError, Result};
use crate::window::{Placement, Window};

mod fleet;
mod memory;
mod quiet;
mod snapshot;
pub use fleet::{FleetBucket, FleetDelta, FleetLedger};
use quiet::Quiet;
pub use quiet::QuietLease;
pub use snapshot::Snapshot;

/// The report of a tracker at one moment, rounded as the reference rounds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
  /// The status at the moment of the report.
  pub status: Status,
  /// successes / total to 4 decimals.
  pub current_rate: f64,
  /// Events in the window.
  pub total: u64,
  /// Successes in the window.
  pub successes: u64,
  /// Failures in the window.
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
  /// The status before.
  pub from: Status,
  /// The status after.
  pub to: Status,
  /// The report at the moment of the change.
  pub report: Report,
}

/// The counts behind an alert decision, for a person to check: burn rate =
/// failures ÷ (total × (1 − targetRate)) over each window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Evidence {
  /// The long window, ms.
  pub long_window_ms: i64,
  /// Successes and failures in the long window.
  pub long: Counts,
  /// The short window, ms.
  pub short_window_ms: i64,
  /// Successes and failures in the short window.
  pub short: Counts,
  /// The pair's gate: failures needed to fire, burn rate it resolves at.
  pub gate: AlertGate,
  /// The recovery span a held pair's resolution is judged on: of the spans of
  /// `alerts::RECOVERY_SPANS_MS` holding `alerts::RecoveryTest::min_solves`, the
  /// shortest that passes the test, else the shortest, ms (0: none holds enough,
  /// or the pair is not held).
  pub recovery_window_ms: i64,
  /// Successes and failures in the recovery span.
  pub recovery: Counts,
  /// The burn rate over the recovery span, unrounded (0 without one).
  pub recovery_burn_rate: f64,
  /// Whether the recovery span says the pair has recovered (`alerts::RecoveryTest::recovered`).
  pub recovery_recovered: bool,
  /// Solves a recovery span (or the long window) must hold to end a held pair
  /// (`alerts::RecoveryTest::min_solves`; 0: the pair is not held).
  pub recovery_min_solves: u64,
}

/// A firing alert pair and its burn rates (to 2 decimals) at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct FiringAlert {
  /// The pair's name.
  pub name: String,
  /// Who the alert is for.
  pub severity: Severity,
  /// Burn rate over the long window, to 2 decimals.
  pub burn_rate_long: f64,
  /// Burn rate over the short window, to 2 decimals.
  pub burn_rate_short: f64,
  /// The pair's threshold.
  pub threshold: f64,
  /// The counts the burn rates come from.
  pub evidence: Evidence,
}

impl FiringAlert {
  /// Why the pair fired (`fired`) or resolved, in numbers a person can check.
  pub fn reason(&self, fired: bool) -> String {
    let e = &self.evidence;
    let span = |failures: u64, total: u64, ms: i64, burn: f64| {
      format!(
        "{} in {} over the last {} burn {burn}×",
        counted(failures, "failure", "failures"),
        counted(total, "solve", "solves"),
        duration(ms)
      )
    };
    let long = span(e.long.failures, e.long.total(), e.long_window_ms, self.burn_rate_long);
    let held = e.gate.resolve_burn_rate < self.threshold;
    let recovered = e.recovery_window_ms > 0 && e.recovery_recovered;
    if fired {
      let short = span(e.short.failures, e.short.total(), e.short_window_ms, self.burn_rate_short);
      let gate = if e.gate.min_failures > 0 {
        format!(", with at least {} failures", e.gate.min_failures)
      } else {
        String::new()
      };
      format!("{}: {long} and {short}: both above {}×{gate}", self.name, self.threshold)
    } else if held && recovered {
      let recovery =
        span(e.recovery.failures, e.recovery.total(), e.recovery_window_ms, round_js(e.recovery_burn_rate, 2));
      format!(
        "{} resolved: {recovery}: at or below {}×, and too few failures for a rate still at {}× (it fired above it)",
        self.name, e.gate.resolve_burn_rate, self.threshold
      )
    } else if held {
      format!(
        "{} resolved: {long}: at or below {}× with too few failures for a rate still at {}×, or fewer than {} failures \
         (it fired above it)",
        self.name, e.gate.resolve_burn_rate, self.threshold, e.gate.min_failures
      )
    } else {
      let short = span(e.short.failures, e.short.total(), e.short_window_ms, self.burn_rate_short);
      format!("{} resolved: {long} and {short}: not both above {}×", self.name, self.threshold)
    }
  }
}

/// `ms` for people: whole hours, minutes or seconds when exact, else one decimal.
fn duration(ms: i64) -> String {
  let (unit, size) = if ms >= 3_600_000 {
    ("h", 3_600_000.0)
  } else if ms >= 60_000 {
    ("min", 60_000.0)
  } else if ms >= 1000 {
    ("s", 1000.0)
  } else {
    ("ms", 1.0)
  };
  let x = ms as f64 / size;
  if x.fract() == 0.0 {
    format!("{x} {unit}")
  } else {
    format!("{x:.1} {unit}")
  }
}

/// The alert side of a report at one moment.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AlertSnapshot {
  /// The pairs firing, in policy order.
  pub firing: Vec<FiringAlert>,
  /// Too few events to judge: below `minEvents` in the window, or below every
  /// pair's minimum in its long window.
  pub insufficient_data: bool,
  /// At the short-window burn rate of the fastest firing pair (else the
  /// window's), ms until the remaining budget is spent; `None` when not burning.
  pub exhausts_in_ms: Option<f64>,
}

/// Something that changed, with the report and alerts at that moment.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
  /// The status changed.
  Status(Transition, AlertSnapshot),
  /// A pair started (`fired`) or stopped firing.
  Alert { fired: bool, alert: FiringAlert, report: Report, alerts: AlertSnapshot },
}

/// Where the events of a call go.
pub trait EventSink {
  fn push_event(&mut self, event: Event);
}

impl EventSink for Vec<Event> {
  fn push_event(&mut self, event: Event) {
    self.push(event);
  }
}

/// Status transitions only: alert events are dropped.
impl EventSink for Vec<Transition> {
  fn push_event(&mut self, event: Event) {
    if let Event::Status(t, _) = event {
      self.push(t);
    }
  }
}

/// An alert rule with the window spans that hold its sums.
#[derive(Debug, Clone)]
struct ArmedRule {
  rule: AlertRule,
  gate: AlertGate,
  long_span: usize,
  short_span: usize,
  firing: bool,
  /// A held pair that resolved may fire again only from here on (its resolve
  /// time plus its short window): on evidence gathered after the resolve, not
  /// on the incident's failures still in its windows.
  rearm_ms: i64,
  /// Until here (its resolve time plus its long window, which still holds the
  /// incident) a resolved pair fires again only on an incident of its own
  /// short window: at least twice `min_failures` failures in it (the tail of
  /// the same incident is not a new one).
  fresh_until_ms: i64,
  /// When the pair last started firing: a recovery span is evidence only once
  /// it holds nothing from before (the healthy solves the incident broke).
  fired_at_ms: i64,
  /// `alerts::recovery_test` for this pair, worked out when it first fires
  /// (`None` until then: some 40 ms at 99.9999 %, and only a firing held pair reads it).
  recovery: Option<Box<alerts::RecoveryTest>>,
}

/// Window + budget + status + alerts of one SLO.
#[derive(Debug, Clone)]
pub struct Tracker {
  config: Config,
  window: Window,
  last_status: Status,
  dropped: u64,
  /// Every event ever recorded, counted or dropped: never reset by the window
  /// (Prometheus counters are built on these).
  recorded: Counts,
  /// Successes ever turned into failures by `reject()`: never reset, never
  /// down (the Prometheus rejections counter).
  rejected: u64,
  rules: Vec<ArmedRule>,
  /// The recovery spans (`alerts::recovery_spans`) as (ms, window span),
  /// shortest first; empty when no pair is held (a custom policy).
  recovery: Vec<(i64, usize)>,
  /// The earliest stamp of a counted event: where the tracker's age starts.
  first_event_ms: Option<i64>,
  /// Opt-in status hysteresis (0: none, the reference's exact semantics).
  status_hysteresis: f64,
  /// The next end of a pair's warm-up (`next_warm_up_end`): time alone changes
  /// a decision there, so the quiet region is dropped when time reaches it.
  warm_up_end_ms: i64,
  /// Events that can be recorded at now without a status or alert change:
  /// `record()` skips the re-evaluation inside it (see `quiet.rs`).
  quiet: Quiet,
}

impl Tracker {
  /// A tracker with a validated `config` and its alert policy (the default one
  /// when `config.alerts` is `None`), starting `healthy` at `now_ms`.
  pub fn new(config: Config, now_ms: i64) -> Result<Self> {
    Ok(Self::checked(CheckedConfig::new(config)?, now_ms))
  }

  /// A tracker with `config` and its alert policy, starting `healthy` at `now_ms`.
  pub fn checked(config: CheckedConfig, now_ms: i64) -> Self {
    let gates = config.gates();
    let (config, policy) = config.into_parts();
    let mut spans: Vec<i64> = Vec::new();
    let mut span_of = |ms: i64| match spans.iter().position(|&s| s == ms) {
      Some(i) => i,
      None => {
        spans.push(ms);
        spans.len() - 1
      }
    };
    let rules: Vec<ArmedRule> = policy
      .into_iter()
      .zip(gates)
      .map(|(rule, gate)| ArmedRule {
        gate,
        long_span: span_of(rule.long_window_ms),
        short_span: span_of(rule.short_window_ms),
        rule,
        firing: false,
        rearm_ms: i64::MIN,
        fresh_until_ms: i64::MIN,
        fired_at_ms: i64::MIN,
        recovery: None,
      })
      .collect();
    let recovery: Vec<(i64, usize)> = if rules.iter().any(|r| r.gate.holds(&r.rule)) {
      alerts::recovery_spans(&config).into_iter().map(|ms| (ms, span_of(ms))).collect()
    } else {
      Vec::new()
    };
    let window = Window::new(config.window_ms, config.resolution_ms, now_ms, &spans);
    Tracker {
      config,
      window,
      last_status: Status::Healthy,
      dropped: 0,
      recorded: Counts::default(),
      rejected: 0,
      first_event_ms: None,
      warm_up_end_ms: i64::MAX,
      status_hysteresis: 0.0,
      rules,
      recovery,
      quiet: Quiet::default(),
    }
  }

  /// Sets the status hysteresis: a status gets worse as soon as the remaining
  /// fraction crosses its threshold, but better only once the fraction is
  /// `margin` past it (past `warningThreshold + margin` back to healthy,
  /// `criticalThreshold + margin` to warning, `margin` out of exhausted). 0 (the
  /// default) keeps the reference's exact semantics. `margin` must be in [0, 1).
  pub fn set_status_hysteresis(&mut self, margin: f64) {
    debug_assert!((0.0..1.0).contains(&margin));
    self.status_hysteresis = margin;
    self.quiet = Quiet::default();
  }

  /// The status hysteresis in force (0: none).
  pub fn status_hysteresis(&self) -> f64 {
    self.status_hysteresis
  }

  /// The status now: the window's, held back by the hysteresis on the way up.
  fn status_now(&self, b: &Budget) -> Status {
    let margin = self.status_hysteresis;
    if margin <= 0.0 || b.counts.total() < self.config.min_events {
      return b.status;
    }
    let mut status = b.status;
    while status.index() < self.last_status.index() {
      // The edge `status` starts at, from below: the fraction must clear it by `margin`.
      let edge = match status {
        Status::Healthy => self.config.warning_threshold,
        Status::Warning => self.config.critical_threshold,
        _ => 0.0,
      };
      if b.remaining_fraction >= edge + margin {
        break;
      }
      status = Status::ALL[status.index() + 1];
    }
    status
  }

  /// The alert policy in force, windows rounded to whole buckets.
  pub fn alert_rules(&self) -> impl Iterator<Item = &AlertRule> {
    self.rules.iter().map(|r| &r.rule)
  }

  /// The gates of the alert policy in force, in policy order.
  pub fn alert_gates(&self) -> impl Iterator<Item = &AlertGate> {
    self.rules.iter().map(|r| &r.gate)
  }

  /// The burn rate over the last `span_ms` (unrounded): O(1) for a window of the
  /// alert policy, O(buckets) otherwise.
  pub fn burn_rate_over(&self, span_ms: i64) -> f64 {
    let counts = self
      .rules
      .iter()
      .find_map(|r| {
        if r.rule.long_window_ms == span_ms {
          Some(self.window.span_counts(r.long_span))
        } else if r.rule.short_window_ms == span_ms {
          Some(self.window.span_counts(r.short_span))
        } else {
          None
        }
      })
      .unwrap_or_else(
        || if span_ms >= self.config.window_ms { self.counts() } else { self.window.counts_over(span_ms) },
      );
    alerts::burn_rate(counts, self.config.target_rate)
  }

  /// The configuration.
  pub fn config(&self) -> &Config {
    &self.config
  }

  /// The config with the alert policy in force, to compare with another.
  pub fn checked_config(&self) -> CheckedConfig {
    CheckedConfig::from_parts(self.config.clone(), self.alert_rules().cloned().collect())
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

  /// Every event ever recorded (in the window, aged out or dropped).
  pub fn recorded(&self) -> Counts {
    self.recorded
  }

  /// Moves time to `now_ms`, stopping at every instant a non-empty bucket
  /// expires so that each time-driven transition carries its exact moment.
  #[inline]
  pub fn advance(&mut self, now_ms: i64, events: &mut impl EventSink) {
    // Nothing expires without time moving: every expiry up to the window's
    // now was handled when it got there, and buckets still inside the window
    // expire later.
    if now_ms > self.window.now_ms() {
      self.advance_to(now_ms, events);
    }
  }

  fn advance_to(&mut self, now_ms: i64, events: &mut impl EventSink) {
    while let Some(t) = self.window.next_expiry_ms() {
      if t > now_ms {
        break;
      }
      self.window.advance(t);
      self.note_changes(events);
    }
    if self.window.advance(now_ms) {
      // Only expiries change counts, and they were all handled above; this
      // keeps the quiet region honest should that ever not hold.
      self.quiet = Quiet::default();
    }
    if now_ms >= self.warm_up_end_ms {
      // A warm-up ended: the next record decides again.
      self.quiet = Quiet::default();
      self.warm_up_end_ms = self.next_warm_up_end();
    }
  }

  /// Records `successes` and `failures` stamped `at_ms`, after moving time to `now_ms`.
  /// Events older than the window are counted in `dropped`; later than now, at now.
  /// When a counter would pass `MAX_COUNT`, records nothing and returns
  /// `Placement::Refused` (`refusal` says which counter).
  #[inline]
  pub fn record(
    &mut self,
    now_ms: i64,
    at_ms: i64,
    successes: u64,
    failures: u64,
    events: &mut impl EventSink,
  ) -> Placement {
    self.advance(now_ms, events);
    // Every other counter is at most `recorded` (window, buckets, spans) or
    // checked here (dropped): none can pass MAX_COUNT, so no sum overflows.
    let (Some(recorded_successes), Some(recorded_failures)) =
      (add_count(self.recorded.successes, successes), add_count(self.recorded.failures, failures))
    else {
      return Placement::Refused;
    };
    let dropped = if self.window.accepts(at_ms) {
      None
    } else {
      match add_count(successes, failures).and_then(|n| add_count(self.dropped, n)) {
        Some(dropped) => Some(dropped),
        None => return Placement::Refused,
      }
    };
    self.recorded = Counts { successes: recorded_successes, failures: recorded_failures };
    if let Some(dropped) = dropped {
      self.dropped = dropped;
      return Placement::TooOld;
    }
    let placement = self.window.add(at_ms, successes, failures);
    let at = at_ms.min(now_ms.max(self.now_ms()));
    if placement == Placement::Counted && successes + failures > 0 && self.first_event_ms.is_none_or(|t| at < t) {
      // An older first event ages the tracker: the warm-up gates must be re-decided.
      self.first_event_ms = Some(at);
      self.quiet = Quiet::default();
      self.warm_up_end_ms = self.next_warm_up_end();
    }
    if !self.quiet.take(successes, failures) {
      self.note_changes(events);
    }
    placement
  }

  /// A late verdict: after moving time to `now_ms`, turns one success stamped
  /// `at_ms` (at now when later, as `record` stamps it) into a failure in the
  /// bucket where it was counted, so that status, alerts and their events are
  /// as if the failure had been recorded then. `false`, nothing changed, when
  /// `at_ms` is more than `verdictWindowMs` before now, its bucket has left
  /// the window, or that bucket holds no success.
  pub fn reject(&mut self, now_ms: i64, at_ms: i64, events: &mut impl EventSink) -> bool {
    self.advance(now_ms, events);
    if self.now_ms().saturating_sub(at_ms) > self.config.verdict_window_ms || !self.window.reject(at_ms) {
      return false;
    }
    // At most the successes ever recorded: below MAX_COUNT.
    self.rejected += 1;
    // Not a record the quiet region was worked out for: decide again.
    self.quiet = Quiet::default();
    self.note_changes(events);
    true
  }

  /// Successes ever turned into failures by [`Tracker::reject`].
  pub fn rejected(&self) -> u64 {
    self.rejected
  }

  /// Why recording `successes` and `failures` at `at_ms` is refused (a
  /// counter would pass `MAX_COUNT`), naming the counter; `None` if it is not.
  pub fn refusal(&self, at_ms: i64, successes: u64, failures: u64) -> Option<BudgetError> {
    let full = |what: &str, has: u64, adding: u64| {
      BudgetError::out_of_range(format!(
        "the tracker has recorded {has} {what}: {adding} more would pass 2^53 − 1 ({MAX_COUNT}), the most a count \
         may reach; nothing was recorded"
      ))
    };
    if add_count(self.recorded.successes, successes).is_none() {
      return Some(full("successes", self.recorded.successes, successes));
    }
    if add_count(self.recorded.failures, failures).is_none() {
      return Some(full("failures", self.recorded.failures, failures));
    }
    let events = successes.saturating_add(failures);
    (!self.window.accepts(at_ms) && add_count(self.dropped, events).is_none())
      .then(|| full("events older than the window (dropped)", self.dropped, events))
  }

  /// The next moment the status or an alert could change with no new event
  /// (the next expiry of a non-empty bucket from the window or an alert window).
  pub fn next_change_ms(&mut self) -> Option<i64> {
    self.window.next_expiry_ms()
  }

  /// The instant from which the window holds no events if none is recorded
  /// (when its newest event leaves it); `None` when it holds none now.
  pub fn empty_from_ms(&self) -> Option<i64> {
    self.window.empty_from_ms()
  }

  /// The instant the window counts next change with no new event (its oldest
  /// non-empty bucket leaves it); `None` when it holds none.
  pub fn window_expiry_ms(&mut self) -> Option<i64> {
    self.window.oldest_expiry_ms()
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
    self.report_of(&self.budget())
  }

  /// The report and its alert side now, from one computation of the budget
  /// (the report filler's path: `report()` and `alert_snapshot()` each compute it).
  pub fn report_and_alerts(&self) -> (Report, AlertSnapshot) {
    let budget = self.budget();
    (self.report_of(&budget), self.alert_snapshot_of(&budget))
  }

  fn report_of(&self, b: &Budget) -> Report {
    Report {
      // With hysteresis the status is the one the last change set.
      status: if self.status_hysteresis > 0.0 { self.last_status } else { b.status },
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

  /// The alert side of the report now.
  pub fn alert_snapshot(&self) -> AlertSnapshot {
    self.alert_snapshot_of(&self.budget())
  }

  fn alert_snapshot_of(&self, budget: &Budget) -> AlertSnapshot {
    let firing: Vec<FiringAlert> = self.rules.iter().filter(|r| r.firing).map(|r| self.firing_alert(r)).collect();
    let low_volume = budget.counts.total() < self.config.min_events;
    let judged = self.rules.iter().any(|r| self.has_data(r));
    let burn = firing
      .iter()
      .map(|a| self.unrounded_short_burn(&a.name))
      .fold(None, |m: Option<f64>, b| Some(m.map_or(b, |m| m.max(b))));
    let burn = burn.unwrap_or(budget.burn_rate);
    let exhausts_in_ms =
      (burn > 0.0 && !low_volume).then(|| (budget.remaining_fraction * self.config.window_ms as f64 / burn).round());
    AlertSnapshot { firing, insufficient_data: low_volume || (!self.rules.is_empty() && !judged), exhausts_in_ms }
  }

  fn unrounded_short_burn(&self, name: &str) -> f64 {
    let r = self.rules.iter().find(|r| r.rule.name == name).expect("a firing rule");
    alerts::burn_rate(self.window.span_counts(r.short_span), self.config.target_rate)
  }

  fn has_data(&self, r: &ArmedRule) -> bool {
    self.counts().total() >= self.config.min_events && self.window.span_counts(r.long_span).total() >= r.rule.min_events
  }

  fn burn_rates(&self, r: &ArmedRule) -> (f64, f64) {
    let target = self.config.target_rate;
    (
      alerts::burn_rate(self.window.span_counts(r.long_span), target),
      alerts::burn_rate(self.window.span_counts(r.short_span), target),
    )
  }

  fn firing_alert(&self, r: &ArmedRule) -> FiringAlert {
    let (long, short) = self.burn_rates(r);
    let recovery = if r.gate.holds(&r.rule) { self.recovery_evidence(r) } else { None };
    FiringAlert {
      name: r.rule.name.clone(),
      severity: r.rule.severity,
      burn_rate_long: round_js(long, 2),
      burn_rate_short: round_js(short, 2),
      threshold: r.rule.burn_rate,
      evidence: Evidence {
        long_window_ms: r.rule.long_window_ms,
        long: self.window.span_counts(r.long_span),
        short_window_ms: r.rule.short_window_ms,
        short: self.window.span_counts(r.short_span),
        gate: r.gate,
        recovery_window_ms: recovery.map_or(0, |(ms, _)| ms),
        recovery: recovery.map_or(Counts::default(), |(_, c)| c),
        recovery_burn_rate: recovery.map_or(0.0, |(_, c)| alerts::burn_rate(c, self.config.target_rate)),
        recovery_recovered: recovery.is_some_and(|(_, c)| self.recovered(r, c)),
        recovery_min_solves: Self::recovery_test(r).map_or(0, |t| t.min_solves),
      },
    }
  }

  /// The recovery span a held pair's resolution is judged on now, among those
  /// no longer than the time since the pair fired (so that they hold only what
  /// came after) and holding `alerts::RecoveryTest::min_solves`: the shortest
  /// that passes the pair's recovery test, else the shortest of them, as (ms,
  /// counts); `None` if none holds enough solves. Every such span is asked: the
  /// shortest may hold too few solves for the one healthy failure in it.
  fn recovery_evidence(&self, r: &ArmedRule) -> Option<(i64, Counts)> {
    let min_solves = Self::recovery_test(r)?.min_solves;
    let since = self.now_ms().saturating_sub(r.fired_at_ms);
    let mut judged = self
      .recovery
      .iter()
      .filter(|&&(ms, _)| ms <= since)
      .map(|&(ms, span)| (ms, self.window.span_counts(span)))
      .filter(|(_, c)| c.total() >= min_solves)
      .peekable();
    let shortest = *judged.peek()?;
    Some(judged.find(|&(_, c)| self.recovered(r, c)).unwrap_or(shortest))
  }

  /// The recovery test of held pair `r`, kept from its first fire; `None` for
  /// a pair without hysteresis (which no span ends) or one that never fired.
  fn recovery_test(r: &ArmedRule) -> Option<&alerts::RecoveryTest> {
    r.recovery.as_deref().filter(|_| r.gate.holds(&r.rule))
  }

  /// Whether `counts` say held pair `r` has recovered (`alerts::RecoveryTest`).
  fn recovered(&self, r: &ArmedRule, counts: Counts) -> bool {
    Self::recovery_test(r).is_some_and(|t| t.recovered(counts, self.config.target_rate))
  }

  /// Whether pair `r` fires at the current counts, given whether it fires now.
  /// Not firing (or without hysteresis): enough events and failures, and both
  /// burn rates above the threshold. Firing with hysteresis: until a span
  /// holding `alerts::RecoveryTest::min_solves` — any recovery span since it
  /// fired, or the long window — passes the pair's recovery test, or the
  /// long window holds fewer than `min_failures` failures (the incident's have
  /// aged out) while the short window holds solves and no failure.
  fn fires(&self, r: &ArmedRule) -> bool {
    let (long, short) = self.burn_rates(r);
    let long_failures = self.window.span_counts(r.long_span).failures;
    if r.firing && r.gate.holds(&r.rule) {
      let s = self.window.span_counts(r.short_span);
      // Over once a span of enough solves tells that the failure rate is no
      // longer at the threshold (`alerts::RecoveryTest`: its burn down to the
      // resolve rate, and too few failures for a rate still at the threshold),
      // or once the incident's failures have left the long window and solves
      // succeed again; a lull with no solves at all is not a recovery.
      let recovered = self.recovery_evidence(r).is_some_and(|(_, c)| self.recovered(r, c));
      let over = self.recovered(r, self.window.span_counts(r.long_span))
        || (long_failures < r.gate.min_failures && s.failures == 0 && s.successes > 0)
        || recovered;
      return self.counts().total() >= self.config.min_events && !over;
    }
    self.has_data(r)
      && long_failures >= r.gate.min_failures
      && self.age_ms() >= r.gate.warm_up_ms
      && self.now_ms() >= r.rearm_ms
      && (self.now_ms() >= r.fresh_until_ms
        || self.window.span_counts(r.short_span).failures >= 2 * r.gate.min_failures)
      && long_failures as f64 >= r.gate.min_budget_share * self.budget_total()
      && long > r.rule.burn_rate
      && short > r.rule.burn_rate
  }

  /// The window's allowed failures, as `Budget::of` computes them.
  fn budget_total(&self) -> f64 {
    self.counts().total() as f64 * (1.0 - self.config.target_rate)
  }

  /// The first instant after `now` at which a pair's warm-up ends (none: `i64::MAX`).
  fn next_warm_up_end(&self) -> i64 {
    let Some(first) = self.first_event_ms else { return i64::MAX };
    self
      .rules
      .iter()
      .map(|r| first.saturating_add(r.gate.warm_up_ms))
      .chain(self.rules.iter().flat_map(|r| [r.rearm_ms, r.fresh_until_ms]))
      .filter(|&t| t > self.now_ms())
      .min()
      .unwrap_or(i64::MAX)
  }

  /// How long the tracker has seen solves: from its oldest counted event to now
  /// (0 before the first).
  fn age_ms(&self) -> i64 {
    self.first_event_ms.map_or(0, |t| self.now_ms() - t)
  }

  /// Re-evaluates status and alerts; emits the status change first, then the
  /// alerts that started or stopped firing, in policy order, all with the
  /// report of this moment. Then works out the new quiet region.
  fn note_changes(&mut self, events: &mut impl EventSink) {
    self.emit_changes(events);
    self.quiet = self.quiet_region();
  }

  fn emit_changes(&mut self, events: &mut impl EventSink) {
    let status = self.status_now(&self.budget());
    let mut changed: Vec<usize> = Vec::new();
    for i in 0..self.rules.len() {
      let fire = self.fires(&self.rules[i]);
      if fire != self.rules[i].firing {
        self.rules[i].firing = fire;
        changed.push(i);
        let now = self.window.now_ms();
        let r = &mut self.rules[i];
        if fire {
          r.fired_at_ms = now;
          if r.recovery.is_none() && r.gate.holds(&r.rule) {
            r.recovery = Some(Box::new(alerts::recovery_test(self.config.target_rate, r.gate)));
          }
        } else if r.gate.holds(&r.rule) {
          r.rearm_ms = now.saturating_add(r.rule.short_window_ms);
          r.fresh_until_ms = now.saturating_add(r.rule.long_window_ms);
          self.warm_up_end_ms = self.warm_up_end_ms.min(r.rearm_ms);
        }
      }
    }
    if status == self.last_status && changed.is_empty() {
      return;
    }
    let report = self.report();
    let snapshot = self.alert_snapshot();
    if status != self.last_status {
      let from = std::mem::replace(&mut self.last_status, status);
      events.push_event(Event::Status(Transition { from, to: status, report: report.clone() }, snapshot.clone()));
    }
    for i in changed {
      let r = &self.rules[i];
      events.push_event(Event::Alert {
        fired: r.firing,
        alert: self.firing_alert(r),
        report: report.clone(),
        alerts: snapshot.clone(),
      });
    }
  }
}
