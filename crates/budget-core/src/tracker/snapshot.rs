//! Snapshots: a tracker's whole state as versioned JSON, and back. A child
//! module of `tracker` so that restoring can set the counters no public
//! method should.

use serde::{Deserialize, Serialize};

use super::{Tracker, Transition};
use crate::alerts::{AlertGate, AlertRule, Severity};
use crate::budget::{add_count, Counts, Status, MAX_COUNT};
use crate::config::{Config, DEFAULT_VERDICT_WINDOW_MS, MAX_SAFE_INTEGER};
use crate::error::{BudgetError, Result};

/// The `format` every snapshot carries.
pub const FORMAT: &str = "captcha-error-budget.snapshot";
/// The snapshot version this build writes and reads.
pub const VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SnapshotJson {
  format: String,
  version: u32,
  saved_at: i64,
  config: ConfigJson,
  last_status: String,
  dropped: u64,
  recorded: CountsJson,
  totals: CountsJson,
  buckets: Vec<BucketJson>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ConfigJson {
  target_rate: f64,
  window_ms: i64,
  warning_threshold: f64,
  critical_threshold: f64,
  min_events: u64,
  resolution_ms: i64,
  alerts: Vec<AlertJson>,
  /// Absent at its default (snapshots of earlier releases have none).
  #[serde(default = "default_verdict_window_ms", skip_serializing_if = "is_default_verdict_window")]
  verdict_window_ms: i64,
}

fn default_verdict_window_ms() -> i64 {
  DEFAULT_VERDICT_WINDOW_MS
}

fn is_default_verdict_window(ms: &i64) -> bool {
  *ms == DEFAULT_VERDICT_WINDOW_MS
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AlertJson {
  name: String,
  severity: String,
  long_window_ms: i64,
  short_window_ms: i64,
  burn_rate: f64,
  min_events: u64,
  /// The default policy's gate (absent for a custom pair, which has none): the
  /// pair restores as the default policy only when every gate matches it.
  #[serde(default, skip_serializing_if = "Option::is_none")]
  min_failures: Option<u64>,
  #[serde(default, skip_serializing_if = "Option::is_none")]
  resolve_burn_rate: Option<f64>,
}

#[derive(Serialize, Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
struct CountsJson {
  successes: u64,
  failures: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BucketJson {
  start_ms: i64,
  successes: u64,
  failures: u64,
}

impl From<Counts> for CountsJson {
  fn from(c: Counts) -> Self {
    CountsJson { successes: c.successes, failures: c.failures }
  }
}

impl From<CountsJson> for Counts {
  fn from(c: CountsJson) -> Self {
    Counts { successes: c.successes, failures: c.failures }
  }
}

/// A snapshot read and checked, ready to become a tracker.
#[derive(Debug, Clone)]
pub struct Snapshot {
  /// The tracker's time when it was taken, epoch ms.
  pub saved_at_ms: i64,
  /// The configuration, with the alert policy spelled out.
  pub config: Config,
  last_status: Status,
  dropped: u64,
  recorded: Counts,
  buckets: Vec<(i64, u64, u64)>,
}

fn invalid(message: impl Into<String>) -> BudgetError {
  BudgetError::snapshot(message)
}

impl Tracker {
  /// The tracker's config as a snapshot's `config` object (JSON): what a fleet
  /// stores in Redis beside its counts, without a whole snapshot.
  pub fn config_json(&self) -> String {
    serde_json::to_string(&self.config_as_json()).expect("a config always serialises")
  }

  fn config_as_json(&self) -> ConfigJson {
    let c = &self.config;
    ConfigJson {
      target_rate: c.target_rate,
      window_ms: c.window_ms,
      warning_threshold: c.warning_threshold,
      critical_threshold: c.critical_threshold,
      min_events: c.min_events,
      resolution_ms: c.resolution_ms,
      verdict_window_ms: c.verdict_window_ms,
      alerts: self
        .alert_rules()
        .zip(self.alert_gates())
        .map(|(r, g)| AlertJson {
          min_failures: (*g != AlertGate::plain(r)).then_some(g.min_failures),
          resolve_burn_rate: (*g != AlertGate::plain(r)).then_some(g.resolve_burn_rate),
          name: r.name.clone(),
          severity: r.severity.as_str().into(),
          long_window_ms: r.long_window_ms,
          short_window_ms: r.short_window_ms,
          burn_rate: r.burn_rate,
          min_events: r.min_events,
        })
        .collect(),
    }
  }

  /// The tracker's state as snapshot JSON (schema version 1).
  pub fn snapshot_json(&self) -> String {
    let json = SnapshotJson {
      format: FORMAT.into(),
      version: VERSION,
      saved_at: self.now_ms(),
      config: self.config_as_json(),
      // The window's own status: hysteresis is not part of the snapshot, and the
      // restore checks the status against the buckets.
      last_status: self.budget().status.as_str().into(),
      dropped: self.dropped,
      recorded: self.recorded.into(),
      totals: self.counts().into(),
      buckets: self
        .window
        .buckets()
        .map(|(start_ms, successes, failures)| BucketJson { start_ms, successes, failures })
        .collect(),
    };
    serde_json::to_string(&json).expect("a snapshot always serialises")
  }

  /// A tracker rebuilt from `snapshot`, then aged to `now_ms` (the buckets that
  /// left the window meanwhile are gone; no events are reported for that).
  pub fn from_snapshot(snapshot: &Snapshot, now_ms: i64) -> Result<Tracker> {
    let mut tracker = Tracker::new(snapshot.config.clone(), snapshot.saved_at_ms)?;
    let mut ignored: Vec<Transition> = Vec::new();
    for &(start, successes, failures) in &snapshot.buckets {
      tracker.record(snapshot.saved_at_ms, start, successes, failures, &mut ignored);
    }
    tracker.dropped = snapshot.dropped;
    tracker.recorded = snapshot.recorded;
    if tracker.last_status != snapshot.last_status {
      return Err(invalid(format!(
        "lastStatus '{}' does not match the buckets, which give '{}'",
        snapshot.last_status.as_str(),
        tracker.last_status.as_str()
      )));
    }
    tracker.advance(now_ms, &mut ignored);
    Ok(tracker)
  }
}

impl Snapshot {
  /// The snapshot JSON of an empty tracker whose config is `config_json` (a
  /// snapshot's `config` object, as the fleet stores it in Redis), saved at
  /// `saved_at_ms`: what `gate --redis` restores before adding the fleet's
  /// buckets, so that no other code spells out the schema.
  pub fn empty_json(config_json: &str, saved_at_ms: i64) -> Result<String> {
    let json: ConfigJson =
      serde_json::from_str(config_json).map_err(|e| invalid(format!("config does not match the schema ({e})")))?;
    Ok(Tracker::new(config_from(json)?, saved_at_ms)?.snapshot_json())
  }

  /// Parses and checks snapshot JSON: well-formed, this version, a valid
  /// config, and counters that add up inside the window.
  pub fn parse(text: &str) -> Result<Snapshot> {
    // A leading UTF-8 byte-order mark (an editor's) is not part of the JSON:
    // ignored here as `restore()`, `gate` and `replay` ignore it.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let json: SnapshotJson = serde_json::from_str(text).map_err(|e| match e.classify() {
      serde_json::error::Category::Eof => invalid(format!("snapshot is truncated ({e})")),
      serde_json::error::Category::Syntax => invalid(format!("snapshot is not valid JSON ({e})")),
      _ => invalid(format!("snapshot does not match the schema ({e})")),
    })?;
    if json.format != FORMAT {
      return Err(invalid(format!("not a snapshot: format is '{}', expected '{FORMAT}'", json.format)));
    }
    if json.version != VERSION {
      return Err(invalid(format!(
        "unsupported snapshot version {} (this build reads version {VERSION})",
        json.version
      )));
    }
    check_counts(&json)?;
    let config = config_from(json.config)?;
    if !(0..=MAX_SAFE_INTEGER).contains(&json.saved_at) {
      return Err(invalid(format!("savedAt must be an epoch-ms time, got {}", json.saved_at)));
    }
    let last_status =
      Status::parse(&json.last_status).ok_or_else(|| invalid(format!("unknown lastStatus '{}'", json.last_status)))?;
    let buckets = check_buckets(&json.buckets, &config, json.saved_at)?;
    let sum = buckets.iter().try_fold(Counts::default(), |c, &(_, s, f)| {
      Some(Counts { successes: add_count(c.successes, s)?, failures: add_count(c.failures, f)? })
    });
    let Some(sum) = sum else {
      return Err(invalid(format!("the buckets add up to more than 2^53 − 1 ({MAX_COUNT}) events of one outcome")));
    };
    if sum != Counts::from(json.totals) {
      return Err(invalid(format!(
        "totals ({}) do not match the buckets ({})",
        Counts::from(json.totals).in_words(),
        sum.in_words()
      )));
    }
    let recorded = Counts::from(json.recorded);
    // `reject()` turns a recorded success into a failure in its bucket and leaves
    // `recorded` alone (it counts what was recorded), so the window may hold more
    // failures than were recorded, as many more as successes it holds fewer:
    // what it cannot hold is more successes, or more events, than were recorded.
    if recorded.successes < sum.successes || recorded.total() < sum.total() {
      return Err(invalid(format!(
        "recorded counts ({}) are smaller than the counts in the window ({}): a window holds at most the successes \
         and the events recorded (a rejected success is a failure there)",
        recorded.in_words(),
        sum.in_words()
      )));
    }
    Ok(Snapshot { saved_at_ms: json.saved_at, config, last_status, dropped: json.dropped, recorded, buckets })
  }
}

/// Every count at most `MAX_COUNT` (2^53 − 1): a larger one would be
/// inexact in JavaScript and could overflow the tracker's sums.
fn check_counts(json: &SnapshotJson) -> Result<()> {
  let check = |field: &dyn Fn() -> String, n: u64| {
    if n > MAX_COUNT {
      Err(invalid(format!("{} ({n}) is above 2^53 − 1 ({MAX_COUNT}), the largest count a snapshot may hold", field())))
    } else {
      Ok(())
    }
  };
  for (i, b) in json.buckets.iter().enumerate() {
    check(&|| format!("buckets[{i}].successes"), b.successes)?;
    check(&|| format!("buckets[{i}].failures"), b.failures)?;
  }
  check(&|| "totals.successes".into(), json.totals.successes)?;
  check(&|| "totals.failures".into(), json.totals.failures)?;
  check(&|| "recorded.successes".into(), json.recorded.successes)?;
  check(&|| "recorded.failures".into(), json.recorded.failures)?;
  check(&|| "dropped".into(), json.dropped)?;
  check(&|| "config.minEvents".into(), json.config.min_events)?;
  for (i, a) in json.config.alerts.iter().enumerate() {
    check(&|| format!("config.alerts[{i}].minEvents"), a.min_events)?;
  }
  Ok(())
}

impl Snapshot {
  /// This snapshot as if taken no later than `now_ms`. One saved "in the
  /// future" (on a host whose clock was ahead, then corrected) would give a
  /// tracker that stands still, dropping every new event as older than its
  /// window, until the clock catches up. Such a snapshot is taken as saved
  /// now: `savedAt` and every bucket move back by the same whole number of
  /// buckets, so the events keep their ages relative to `savedAt` (at most
  /// one bucket older) and nothing is lost. Earlier snapshots are unchanged.
  pub fn saved_no_later_than(mut self, now_ms: i64) -> Snapshot {
    let ahead = self.saved_at_ms - now_ms;
    if ahead <= 0 {
      return self;
    }
    let r = self.config.resolution_ms;
    let shift = (ahead + r - 1) / r * r;
    self.saved_at_ms -= shift;
    for bucket in &mut self.buckets {
      bucket.0 -= shift;
    }
    self
  }
}

#[cfg(test)]
mod future_tests {
  use super::*;
  use crate::tracker::Tracker;

  #[test]
  fn a_snapshot_from_the_future_is_taken_as_saved_now_and_keeps_its_events() {
    // 1 s window of 100 ms buckets; 3 failures at 10 000 ms, saved at 10 050.
    let config = Config { window_ms: 1000, resolution_ms: 100, alerts: Some(Vec::new()), ..Config::default() };
    let mut tracker = Tracker::new(config, 10_000).unwrap();
    let mut events: Vec<crate::Event> = Vec::new();
    tracker.record(10_050, 10_000, 0, 3, &mut events);
    tracker.advance(10_050, &mut events);
    let snapshot = Snapshot::parse(&tracker.snapshot_json()).unwrap();
    // Now is 2 s before savedAt: moved back by 2 000 ms (20 whole buckets).
    let moved = snapshot.clone().saved_no_later_than(8_050);
    assert_eq!(moved.saved_at_ms, 8_050);
    assert_eq!(moved.buckets, vec![(8_000, 0, 3)]);
    // 2 001 ms ahead: 21 buckets back, savedAt 49 ms before now.
    assert_eq!(snapshot.clone().saved_no_later_than(8_049).saved_at_ms, 7_950);
    let mut restored = Tracker::from_snapshot(&moved, 8_050).unwrap();
    assert_eq!(restored.counts().failures, 3);
    // New events count at now, and the old ones leave a window after their bucket.
    restored.record(8_100, 8_100, 1, 0, &mut events);
    assert_eq!((restored.counts().successes, restored.counts().failures), (1, 3));
    restored.advance(9_000, &mut events);
    assert_eq!(restored.counts().failures, 0);
    // Not ahead: unchanged.
    assert_eq!(snapshot.clone().saved_no_later_than(10_050).saved_at_ms, 10_050);
    assert_eq!(snapshot.saved_no_later_than(20_000).buckets, vec![(10_000, 0, 3)]);
  }
}

fn config_from(c: ConfigJson) -> Result<Config> {
  let gated = c.alerts.iter().any(|a| a.min_failures.is_some() || a.resolve_burn_rate.is_some());
  let gates: Vec<(Option<u64>, Option<f64>)> = c.alerts.iter().map(|a| (a.min_failures, a.resolve_burn_rate)).collect();
  let alerts = c
    .alerts
    .into_iter()
    .map(|a| {
      let severity = Severity::parse(&a.severity)
        .ok_or_else(|| invalid(format!("alert '{}' has unknown severity '{}'", a.name, a.severity)))?;
      Ok(AlertRule {
        name: a.name,
        severity,
        long_window_ms: a.long_window_ms,
        short_window_ms: a.short_window_ms,
        burn_rate: a.burn_rate,
        min_events: a.min_events,
      })
    })
    .collect::<Result<Vec<_>>>()?;
  let mut config = Config {
    target_rate: c.target_rate,
    window_ms: c.window_ms,
    warning_threshold: c.warning_threshold,
    critical_threshold: c.critical_threshold,
    min_events: c.min_events,
    resolution_ms: c.resolution_ms,
    alerts: Some(alerts),
    verdict_window_ms: c.verdict_window_ms,
  };
  if gated {
    config.validate().map_err(|e| invalid(format!("snapshot config is invalid: {}", e.render("config"))))?;
    // Only the default policy has gates: it must be that policy, gates and all
    // (or, from a snapshot saved under an earlier default, that one).
    let default = crate::alerts::default_policy(&config);
    let mut defaults = crate::alerts::earlier_default_policies(&config);
    defaults.push((default.clone(), crate::alerts::default_gates(&default, config.window_ms)));
    let is_default = defaults.iter().any(|(policy, policy_gates)| {
      let expected: Vec<(Option<u64>, Option<f64>)> =
        policy_gates.iter().map(|g| (Some(g.min_failures), Some(g.resolve_burn_rate))).collect();
      config.alerts.as_deref() == Some(&policy[..]) && gates == expected
    });
    if !is_default {
      return Err(invalid("snapshot config is invalid: alerts with minFailures / resolveBurnRate must be the default policy for this config"));
    }
    config.alerts = None;
  }
  let checked = crate::checked::CheckedConfig::new(config.clone()).map(|_| ());
  checked.map_err(|e| invalid(format!("snapshot config is invalid: {}", e.render("config"))))?;
  Ok(config)
}

/// Buckets must start on bucket boundaries inside the window at `saved_at`, in
/// increasing order.
fn check_buckets(buckets: &[BucketJson], config: &Config, saved_at: i64) -> Result<Vec<(i64, u64, u64)>> {
  let oldest = saved_at - config.window_ms;
  let mut previous: Option<i64> = None;
  buckets
    .iter()
    .map(|b| {
      if b.start_ms.rem_euclid(config.resolution_ms) != 0 {
        return Err(invalid(format!(
          "bucket startMs {} is not a multiple of resolutionMs ({})",
          b.start_ms, config.resolution_ms
        )));
      }
      if b.start_ms <= oldest || b.start_ms > saved_at {
        return Err(invalid(format!(
          "bucket startMs {} is outside the window ({oldest}, {saved_at}] at savedAt",
          b.start_ms
        )));
      }
      if previous.is_some_and(|p| b.start_ms <= p) {
        return Err(invalid(format!("buckets are not in increasing order at startMs {}", b.start_ms)));
      }
      previous = Some(b.start_ms);
      Ok((b.start_ms, b.successes, b.failures))
    })
    .collect()
}

#[cfg(test)]
mod tests {
  use super::*;
  use crate::window::Placement;

  fn sample() -> Tracker {
    let config = Config { window_ms: 1000, resolution_ms: 100, ..Config::default() };
    let mut t = Tracker::new(config, 0).unwrap();
    let mut out: Vec<Transition> = Vec::new();
    t.record(200, 200, 30, 1, &mut out);
    t.record(700, 700, 10, 2, &mut out);
    t.record(900, 50_000, 0, 0, &mut out); // clamped to now
    t.record(900, -5000, 1, 0, &mut out); // dropped
    t
  }

  #[test]
  fn an_empty_snapshot_of_a_stored_config_restores_that_config_with_nothing_in_it() {
    let full: serde_json::Value = serde_json::from_str(&sample().snapshot_json()).unwrap();
    let config = full["config"].to_string();
    let empty = Snapshot::parse(&Snapshot::empty_json(&config, 5000).unwrap()).unwrap();
    assert_eq!(empty.saved_at_ms, 5000);
    assert_eq!((empty.config.window_ms, empty.config.resolution_ms), (1000, 100));
    let tracker = Tracker::from_snapshot(&empty, 5000).unwrap();
    assert_eq!((tracker.counts(), tracker.recorded(), tracker.dropped), (Counts::default(), Counts::default(), 0));
    // The stored config is checked as a snapshot's is.
    let bad = config.replace("\"windowMs\":1000", "\"windowMs\":-1");
    assert!(Snapshot::empty_json(&bad, 0).is_err());
    assert!(Snapshot::empty_json("{\"targetRate\":0.9}", 0).unwrap_err().message.contains("does not match the schema"));
  }

  #[test]
  fn config_json_is_the_snapshots_config_object_and_an_empty_snapshot_takes_it() {
    let t = sample();
    let alone: serde_json::Value = serde_json::from_str(&t.config_json()).unwrap();
    let full: serde_json::Value = serde_json::from_str(&t.snapshot_json()).unwrap();
    assert_eq!(alone, full["config"]);
    // The sample's own figures: window 1000 ms in buckets of 100 ms, the default target 0.95.
    assert_eq!((alone["windowMs"].as_i64(), alone["resolutionMs"].as_i64()), (Some(1000), Some(100)));
    assert_eq!(alone["targetRate"].as_f64(), Some(0.95));
    assert!(Snapshot::empty_json(&t.config_json(), 0).is_ok());
  }

  #[test]
  fn round_trip_keeps_every_figure() {
    let t = sample();
    let json = t.snapshot_json();
    let restored = Tracker::from_snapshot(&Snapshot::parse(&json).unwrap(), t.now_ms()).unwrap();
    assert_eq!(restored.report(), t.report());
    assert_eq!(restored.alert_snapshot(), t.alert_snapshot());
    assert_eq!((restored.recorded(), restored.dropped()), (t.recorded(), t.dropped()));
    assert_eq!(restored.snapshot_json(), json);
    // The default policy (here its ticket alone) restores as the default, gates and all.
    assert!(json.contains(r#""name":"budget-leak","severity":"ticket","longWindowMs":300,"shortWindowMs":100,"burnRate":1.5,"minEvents":10,"minFailures":5,"resolveBurnRate":0.75"#), "{json}");
    assert_eq!(Snapshot::parse(&json).unwrap().config.alerts, None);
  }

  #[test]
  fn a_snapshot_from_before_budget_spends_4_failures_restores_as_the_default_policy() {
    // A day's window: the default policy has budget-spend, saved now with 4
    // solves and 4 failures; a snapshot saved before has 10 and 5, as the others.
    let config = Config { window_ms: 86_400_000, resolution_ms: 2_000, target_rate: 0.96, ..Config::default() };
    let mut t = Tracker::new(config, 0).unwrap();
    t.record(1000, 1000, 30, 1, &mut Vec::<Transition>::new());
    let json = t.snapshot_json();
    assert!(json.contains(r#""name":"budget-spend","severity":"page","longWindowMs":1200000,"shortWindowMs":100000,"burnRate":2.0,"minEvents":4,"minFailures":4,"resolveBurnRate":1.0"#), "{json}");
    let old = json.replace(r#""minEvents":4,"minFailures":4,"#, r#""minEvents":10,"minFailures":5,"#);
    let restored = Tracker::from_snapshot(&Snapshot::parse(&old).unwrap(), 1000).unwrap();
    assert_eq!(Snapshot::parse(&old).unwrap().config.alerts, None);
    // It runs the current policy.
    assert_eq!(restored.snapshot_json(), json);
    // Half of each is neither policy.
    let mixed = json.replace(r#""minEvents":4,"minFailures":4,"#, r#""minEvents":4,"minFailures":5,"#);
    let refused = Snapshot::parse(&mixed).and_then(|s| Tracker::from_snapshot(&s, 1000)).unwrap_err();
    assert!(refused.message.contains("must be the default policy for this config"), "{}", refused.message);
  }

  #[test]
  fn a_snapshot_after_a_rejection_round_trips_and_what_no_rejection_explains_is_refused() {
    // The sample (40 successes and 3 failures in the window, 41 and 3 recorded)
    // after one rejection at 700: 39 successes and 4 failures in the window,
    // bucket 700 holding 9 and 3; recorded stays 41 and 3 (issue 44).
    let mut t = sample();
    assert!(t.reject(900, 700, &mut Vec::<Transition>::new()));
    let json = t.snapshot_json();
    assert!(
      json.contains(r#""recorded":{"successes":41,"failures":3},"totals":{"successes":39,"failures":4}"#),
      "{json}"
    );
    assert!(json.contains(r#"{"startMs":700,"successes":9,"failures":3}"#), "{json}");
    let restored = Tracker::from_snapshot(&Snapshot::parse(&json).unwrap(), t.now_ms()).unwrap();
    assert_eq!(restored.report(), t.report());
    assert_eq!(restored.recorded(), Counts { successes: 41, failures: 3 });
    assert_eq!(restored.snapshot_json(), json);
    // 39 successes and 4 failures: recorded may not hold fewer successes (38) or
    // fewer events (41 and 1: 42 < 43); 40 and 3 (one more rejection) is consistent.
    let edit = |successes: u64, failures: u64| {
      let mut v: serde_json::Value = serde_json::from_str(&json).unwrap();
      v["recorded"] = serde_json::json!({ "successes": successes, "failures": failures });
      Snapshot::parse(&v.to_string()).map(|_| ()).map_err(|e| e.message)
    };
    assert_eq!(
      edit(38, 5).unwrap_err(),
      "recorded counts (38 successes, 5 failures) are smaller than the counts in the window (39 successes, 4 \
       failures): a window holds at most the successes and the events recorded (a rejected success is a failure \
       there)"
    );
    assert!(edit(41, 1).unwrap_err().starts_with("recorded counts (41 successes, 1 failure) are smaller"));
    assert_eq!(edit(40, 3), Ok(()));
    assert_eq!(edit(39, 4), Ok(()));
  }

  #[test]
  fn a_long_window_rounded_to_the_window_round_trips() {
    // 1000 ms of 400 ms buckets: a long window "of the whole window" keeps 800 ms.
    let rule = AlertRule {
      name: "whole".into(),
      severity: Severity::Ticket,
      long_window_ms: 1000,
      short_window_ms: 400,
      burn_rate: 2.0,
      min_events: 0,
    };
    let config = Config { window_ms: 1000, resolution_ms: 400, alerts: Some(vec![rule]), ..Config::default() };
    let mut t = Tracker::new(config, 0).unwrap();
    let mut out: Vec<Transition> = Vec::new();
    t.record(0, 0, 0, 1, &mut out);
    t.record(500, 500, 3, 0, &mut out);
    // At 1300 the failure's bucket (0) has left the window and the 800 ms span:
    // only the 3 successes count, burn 0.
    t.advance(1300, &mut out);
    assert_eq!(t.burn_rate_over(800), 0.0);
    let restored = Tracker::from_snapshot(&Snapshot::parse(&t.snapshot_json()).unwrap(), 1300).unwrap();
    assert_eq!(restored.report(), t.report());
  }

  #[test]
  fn restoring_later_ages_the_window() {
    let t = sample();
    let snap = Snapshot::parse(&t.snapshot_json()).unwrap();
    // Bucket 2 (start 200) leaves at 1200, bucket 7 at 1700.
    assert_eq!(Tracker::from_snapshot(&snap, 1199).unwrap().counts().total(), 43);
    assert_eq!(Tracker::from_snapshot(&snap, 1200).unwrap().counts(), Counts { successes: 10, failures: 2 });
    assert_eq!(Tracker::from_snapshot(&snap, 1700).unwrap().counts().total(), 0);
  }

  fn rejected(edit: impl FnOnce(&mut serde_json::Value)) -> String {
    let mut v: serde_json::Value = serde_json::from_str(&sample().snapshot_json()).unwrap();
    edit(&mut v);
    let text = v.to_string();
    match Snapshot::parse(&text).and_then(|s| Tracker::from_snapshot(&s, 900)) {
      Ok(_) => panic!("accepted {text}"),
      Err(e) => {
        assert_eq!(e.code, "ERR_SNAPSHOT_INVALID");
        e.message
      }
    }
  }

  /// A snapshot of one bucket holding `successes` and `failures` at 500
  /// (window 1000 ms, buckets of 100), totals and recorded to match.
  fn one_bucket(successes: u64, failures: u64) -> String {
    let mut v: serde_json::Value = serde_json::from_str(&sample().snapshot_json()).unwrap();
    v["buckets"] = serde_json::json!([{ "startMs": 500, "successes": successes, "failures": failures }]);
    v["totals"] = serde_json::json!({ "successes": successes, "failures": failures });
    v["recorded"] = serde_json::json!({ "successes": successes, "failures": failures });
    v["dropped"] = 0.into();
    v["lastStatus"] = "healthy".into();
    v.to_string()
  }

  #[test]
  fn counts_above_2_pow_53_minus_1_are_refused_wherever_they_are() {
    // The issue's case: a bucket at 2^64 − 1 with totals to match was accepted,
    // and the next record wrapped the totals (or aborted a debug build).
    let err = Snapshot::parse(&one_bucket(u64::MAX, 0)).unwrap_err();
    assert_eq!(err.code, "ERR_SNAPSHOT_INVALID");
    assert_eq!(
      err.message,
      "buckets[0].successes (18446744073709551615) is above 2^53 − 1 (9007199254740991), the largest count a \
       snapshot may hold"
    );
    let above = MAX_COUNT + 1;
    assert!(Snapshot::parse(&one_bucket(0, above))
      .unwrap_err()
      .message
      .starts_with("buckets[0].failures (9007199254740992)"));
    assert!(rejected(|v| v["dropped"] = above.into()).starts_with("dropped (9007199254740992) is above"));
    assert!(rejected(|v| v["recorded"]["successes"] = above.into()).starts_with("recorded.successes "));
    assert!(rejected(|v| v["recorded"]["failures"] = u64::MAX.into()).starts_with("recorded.failures "));
    assert!(rejected(|v| v["totals"]["successes"] = above.into()).starts_with("totals.successes "));
    assert!(rejected(|v| v["config"]["minEvents"] = above.into()).starts_with("config.minEvents "));
    assert!(rejected(|v| v["config"]["alerts"] = serde_json::json!([{ "name": "a", "severity": "page", "longWindowMs": 1000, "shortWindowMs": 100, "burnRate": 2.0, "minEvents": above }])).starts_with("config.alerts[0].minEvents "));
    // Two buckets each within the limit whose sum is not: refused, not saturated.
    let mut v: serde_json::Value = serde_json::from_str(&one_bucket(MAX_COUNT, 0)).unwrap();
    v["buckets"] = serde_json::json!([
      { "startMs": 400, "successes": MAX_COUNT, "failures": 0 },
      { "startMs": 500, "successes": 1, "failures": 0 },
    ]);
    let err = Snapshot::parse(&v.to_string()).unwrap_err();
    assert_eq!(err.message, "the buckets add up to more than 2^53 − 1 (9007199254740991) events of one outcome");
  }

  #[test]
  fn a_tracker_at_the_limit_refuses_what_would_pass_it_and_changes_nothing() {
    let snap = Snapshot::parse(&one_bucket(MAX_COUNT, 0)).unwrap();
    let mut t = Tracker::from_snapshot(&snap, 900).unwrap();
    let before = (t.report(), t.recorded(), t.dropped());
    let mut out: Vec<Transition> = Vec::new();
    assert_eq!(t.record(900, 900, 1, 0, &mut out), Placement::Refused);
    assert_eq!(t.record(900, 900, u64::MAX, u64::MAX, &mut out), Placement::Refused);
    assert_eq!((t.report(), t.recorded(), t.dropped()), before);
    let err = t.refusal(900, 1, 0).unwrap();
    assert_eq!((err.code, err.kind), ("ERR_OUT_OF_RANGE", crate::error::ErrorKind::Range));
    assert_eq!(
      err.message,
      "the tracker has recorded 9007199254740991 successes: 1 more would pass 2^53 − 1 (9007199254740991), the \
       most a count may reach; nothing was recorded"
    );
    // Failures still fit: 2^53 − 1 successes and 1 failure, exact.
    assert_eq!(t.refusal(900, 0, 1), None);
    assert_eq!(t.record(900, 900, 0, 1, &mut out), Placement::Counted);
    assert_eq!(t.counts(), Counts { successes: MAX_COUNT, failures: 1 });
    assert_eq!(t.counts().total(), MAX_COUNT + 1);
    // Dropped events are counted too: up to the limit, then refused.
    let mut t = Tracker::from_snapshot(&Snapshot::parse(&one_bucket(0, 0)).unwrap(), 900).unwrap();
    assert_eq!(t.record(900, -1000, MAX_COUNT - 1, 0, &mut out), Placement::TooOld);
    assert_eq!(t.dropped(), MAX_COUNT - 1);
    assert_eq!(t.record(900, -1000, 0, 2, &mut out), Placement::Refused);
    assert!(t.refusal(-1000, 0, 2).unwrap().message.contains("events older than the window (dropped)"));
    assert_eq!(t.record(900, -1000, 0, 1, &mut out), Placement::TooOld);
    assert_eq!((t.dropped(), t.recorded().failures), (MAX_COUNT, 1));
    // In the window, the same failure is still welcome.
    assert_eq!(t.record(900, 900, 0, 1, &mut out), Placement::Counted);
  }

  #[test]
  fn a_leading_byte_order_mark_is_ignored() {
    let json = sample().snapshot_json();
    let with_bom = format!("\u{feff}{json}");
    assert_eq!(format!("{:?}", Snapshot::parse(&with_bom).unwrap()), format!("{:?}", Snapshot::parse(&json).unwrap()));
    // Only at the start: one inside the text is still invalid JSON.
    assert!(Snapshot::parse(&format!(" \u{feff}{json}")).is_err());
  }

  #[test]
  fn rejects_each_kind_of_damage_with_a_clear_message() {
    let full = sample().snapshot_json();
    assert!(Snapshot::parse(&full[..full.len() / 2]).unwrap_err().message.starts_with("snapshot is truncated"));
    assert!(Snapshot::parse("{]").unwrap_err().message.starts_with("snapshot is not valid JSON"));
    assert!(rejected(|v| v["version"] = 2.into()).contains("unsupported snapshot version 2"));
    assert!(rejected(|v| v["format"] = "x".into()).contains("not a snapshot"));
    assert!(rejected(|v| v["dropped"] = (-1).into()).contains("does not match the schema"));
    assert!(rejected(|v| v["extra"] = 1.into()).contains("unknown field `extra`"));
    assert!(rejected(|v| v["totals"]["failures"] = 4.into()).contains("do not match the buckets"));
    assert!(rejected(|v| v["buckets"][0]["startMs"] = (-100).into()).contains("outside the window"));
    assert!(rejected(|v| v["buckets"][0]["startMs"] = 250.into()).contains("not a multiple of resolutionMs"));
    assert!(rejected(|v| v["buckets"][1]["startMs"] = 200.into()).contains("not in increasing order"));
    assert!(rejected(|v| v["config"]["targetRate"] = 1.5.into()).contains("targetRate must be in (0, 1]"));
    assert!(rejected(|v| v["lastStatus"] = "healthy".into()).contains("does not match the buckets"));
    assert!(rejected(|v| v["recorded"]["failures"] = 0.into())
      .starts_with("recorded counts (41 successes, 0 failures) are smaller than the counts in the window"));
    // Gates are the default policy's alone: edited ones are refused.
    let gate = |v: &mut serde_json::Value| v["config"]["alerts"][0]["minFailures"] = 4.into();
    assert!(rejected(gate).contains("must be the default policy for this config"));
  }
}
