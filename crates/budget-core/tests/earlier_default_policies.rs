//! Snapshots saved under each earlier default alert policy still restore.
//!
//! Each fixture in `tests/fixtures/` was written by the commit it names (its
//! tree checked out apart and run): a day's window at 96 % in 2 s buckets, the
//! default policy, 30 successes and 1 failure recorded at 60 000. A default
//! policy carries its gates (`minFailures`, `resolveBurnRate`), which no custom
//! policy has, so a gated snapshot of any earlier default is the default policy
//! and runs today's. 0.1.0 wrote its default (the workbook's pairs) without
//! gates, as it wrote a custom policy: such a snapshot keeps the pairs it ran.

use budget_core::{alerts, Config, Counts, Snapshot, Tracker};

const SAVED_AT: i64 = 60_000;

fn fixture(name: &str) -> String {
  let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
  std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The config every fixture was saved with, its policy left to the default.
fn day_at_96() -> Config {
  Config { window_ms: 86_400_000, resolution_ms: 2_000, target_rate: 0.96, ..Config::default() }
}

fn restored(name: &str) -> (Snapshot, Tracker) {
  let snapshot = Snapshot::parse(&fixture(name)).unwrap_or_else(|e| panic!("{name}: {}", e.message));
  let tracker = Tracker::from_snapshot(&snapshot, SAVED_AT).unwrap_or_else(|e| panic!("{name}: {}", e.message));
  (snapshot, tracker)
}

/// Pairs as (name, long window, short window, threshold, solves needed).
fn pairs_of(tracker: &Tracker) -> Vec<(String, i64, i64, f64, u64)> {
  tracker
    .alert_rules()
    .map(|r| (r.name.clone(), r.long_window_ms, r.short_window_ms, r.burn_rate, r.min_events))
    .collect()
}

#[test]
fn each_earlier_gated_default_restores_as_the_default_policy_and_runs_todays() {
  let fixtures = [
    "snapshot-default-policy-c0fcbf2-three-pairs.json",
    "snapshot-default-policy-b38514f-fast-burn-p288.json",
    "snapshot-default-policy-bc73dab-budget-spend-5-failures.json",
    "snapshot-default-policy-e34049a-budget-spend-4-failures-10-solves.json",
  ];
  // Today's default for a day at 96 %: P/720, P/72, P/12 and P/4, short
  // windows a twelfth of those, in 2 s buckets (P/8640 = 10 s).
  let today = vec![
    ("fast-burn".to_string(), 120_000, 10_000, 14.4, 10),
    ("budget-spend".to_string(), 1_200_000, 100_000, 2.0, 4),
    ("slow-burn".to_string(), 7_200_000, 600_000, 3.0, 10),
    ("budget-leak".to_string(), 21_600_000, 1_800_000, 1.5, 10),
  ];
  for name in fixtures {
    let (snapshot, tracker) = restored(name);
    assert_eq!(snapshot.config.alerts, None, "{name}: taken as the default policy");
    assert_eq!(pairs_of(&tracker), today, "{name}");
    assert_eq!(
      (tracker.counts(), tracker.recorded()),
      (Counts { successes: 30, failures: 1 }, Counts { successes: 30, failures: 1 }),
      "{name}"
    );
    // Saved again, it is today's default policy, gates and all.
    let fresh = Tracker::new(day_at_96(), SAVED_AT).unwrap();
    assert_eq!(Snapshot::parse(&tracker.snapshot_json()).unwrap().config.alerts, None, "{name}");
    assert_eq!(pairs_of(&tracker), pairs_of(&fresh), "{name}");
  }
}

#[test]
fn a_0_1_0_snapshot_keeps_the_workbook_pairs_it_ran() {
  let (snapshot, tracker) = restored("snapshot-0.1.0-workbook-policy.json");
  // P/720, P/120 and P/10 at 14.4, 6 and 1, short windows a twelfth of those.
  let workbook = vec![
    ("fast-burn".to_string(), 120_000, 10_000, 14.4, 10),
    ("slow-burn".to_string(), 720_000, 60_000, 6.0, 10),
    ("budget-leak".to_string(), 8_640_000, 720_000, 1.0, 10),
  ];
  assert_eq!(pairs_of(&tracker), workbook);
  assert_eq!(snapshot.config.alerts.as_deref(), Some(&alerts::workbook_policy(&day_at_96())[..]));
  assert_eq!(tracker.counts(), Counts { successes: 30, failures: 1 });
}
