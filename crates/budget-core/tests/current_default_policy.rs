//! Today's default alert policy as a snapshot saves it, held in a fixture
//! (`tests/fixtures/snapshot-default-policy-current.json`, written by the
//! JavaScript tracker). A change of the default policy (`DEFAULT_PAIRS`,
//! `default_gates` in `src/alerts.rs`) fails here first: without this, snapshots
//! saved under the policy it replaces would silently stop restoring, since a
//! gated policy restores only when it is a default one (`earlier_default_policies`).
//! The steps are CONTRIBUTING.md's "Changing the default alert policy".

use budget_core::{Config, Placement, Snapshot, Tracker, Transition};

const CURRENT: &str = "snapshot-default-policy-current.json";
const SAVED_AT: i64 = 60_000;

const CHANGED: &str = "the default alert policy (or the snapshot format) changed. Snapshots saved under the one \
                       replaced must still restore (CONTRIBUTING.md, \"Changing the default alert policy\"): \
                       git mv tests/fixtures/snapshot-default-policy-current.json to \
                       snapshot-default-policy-<commit>-<what>.json and list it in \
                       tests/earlier_default_policies.rs, add the replaced table to EARLIER_DEFAULT_PAIRS \
                       (src/alerts.rs), then write the current fixture again";

#[test]
fn todays_default_policy_saves_as_the_current_fixture_and_restores_as_the_default() {
  let path = format!("{}/tests/fixtures/{CURRENT}", env!("CARGO_MANIFEST_DIR"));
  let saved = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
  // The fixture's tracker: a day's window at 96 % in 2 s buckets, the default
  // policy, 30 successes and 1 failure recorded at 60 000.
  let config = Config { window_ms: 86_400_000, resolution_ms: 2_000, target_rate: 0.96, ..Config::default() };
  let mut tracker = Tracker::new(config, 0).unwrap();
  let mut transitions: Vec<Transition> = Vec::new();
  assert_eq!(tracker.record(SAVED_AT, SAVED_AT, 30, 1, &mut transitions), Placement::Counted);
  assert_eq!(tracker.snapshot_json(), saved.trim_end(), "{CHANGED}");

  let snapshot = Snapshot::parse(&saved).unwrap();
  let restored = Tracker::from_snapshot(&snapshot, SAVED_AT).unwrap();
  assert_eq!(snapshot.config.alerts, None, "a gated default policy restores as the default policy");
  assert_eq!(restored.snapshot_json(), saved.trim_end());
}
