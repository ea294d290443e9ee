//! Snapshot parsing never panics: arbitrary text, and valid snapshots damaged
//! at random (truncated, bytes replaced, numbers changed), either parse into a
//! tracker or give ERR_SNAPSHOT_INVALID. Valid random trackers round-trip.

use budget_core::{Config, Snapshot, Tracker, Transition};
use proptest::prelude::*;

fn tracker_from(ops: &[(u16, bool, u8)]) -> Tracker {
  let config = Config { window_ms: 2000, resolution_ms: 100, ..Config::default() };
  let mut t = Tracker::new(config, 0).unwrap();
  let mut out: Vec<Transition> = Vec::new();
  let mut now = 0;
  for &(step, ok, back) in ops {
    now += step as i64;
    let at = now - back as i64 * 50;
    t.record(now, at, ok as u64, !ok as u64, &mut out);
  }
  t
}

fn restore(text: &str, now: i64) -> Result<Tracker, budget_core::BudgetError> {
  Snapshot::parse(text).and_then(|s| Tracker::from_snapshot(&s, now))
}

fn ops() -> impl Strategy<Value = Vec<(u16, bool, u8)>> {
  prop::collection::vec((0u16..400, any::<bool>(), 0u8..60), 0..60)
}

proptest! {
  #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

  #[test]
  fn arbitrary_text_never_panics(text in ".{0,400}") {
    if let Err(e) = restore(&text, 0) {
      prop_assert_eq!(e.code, "ERR_SNAPSHOT_INVALID");
    }
  }

  #[test]
  fn valid_trackers_round_trip(ops in ops()) {
    let t = tracker_from(&ops);
    let restored = restore(&t.snapshot_json(), t.now_ms()).unwrap();
    prop_assert_eq!(restored.report(), t.report());
    prop_assert_eq!(restored.snapshot_json(), t.snapshot_json());
  }

  #[test]
  fn damaged_snapshots_never_panic(ops in ops(), cut in any::<prop::sample::Index>(), at in any::<prop::sample::Index>(),
                                   byte in any::<u8>(), digit in 0u8..10) {
    let json = tracker_from(&ops).snapshot_json();
    let bytes = json.as_bytes();
    let truncated = String::from_utf8_lossy(&bytes[..cut.index(bytes.len())]).into_owned();
    let mut replaced = bytes.to_vec();
    replaced[at.index(bytes.len())] = byte;
    let replaced = String::from_utf8_lossy(&replaced).into_owned();
    // Change one digit: counts stop adding up, times leave bucket boundaries.
    let mut digits = bytes.to_vec();
    if let Some(i) = (0..digits.len()).map(|i| (at.index(digits.len()) + i) % digits.len()).find(|&i| digits[i].is_ascii_digit()) {
      digits[i] = b'0' + digit;
    }
    let digits = String::from_utf8_lossy(&digits).into_owned();
    for text in [truncated, replaced, digits] {
      match restore(&text, 10_000) {
        Ok(t) => prop_assert!(t.counts().total() <= t.recorded().successes + t.recorded().failures),
        Err(e) => prop_assert_eq!(e.code, "ERR_SNAPSHOT_INVALID"),
      }
    }
  }
}
