//! Snapshot parsing never panics: arbitrary text, and valid snapshots damaged
//! at random (truncated, bytes replaced, numbers changed), either parse into a
//! tracker or give ERR_SNAPSHOT_INVALID. Valid random trackers (rejections
//! too) round-trip.

use budget_core::{Config, Snapshot, Tracker, Transition};
use proptest::prelude::*;

/// Each op: time moves on by `step` ms, then a success, a failure or (a third
/// of the time) a late verdict on a success is recorded `back` × 50 ms ago.
fn tracker_from(ops: &[(u16, u8, u8)]) -> Tracker {
  let config = Config { window_ms: 2000, resolution_ms: 100, ..Config::default() };
  let mut t = Tracker::new(config, 0).unwrap();
  let mut out: Vec<Transition> = Vec::new();
  let mut now = 0;
  for &(step, kind, back) in ops {
    now += step as i64;
    let at = now - back as i64 * 50;
    if kind == 2 {
      t.reject(now, at, &mut out);
    } else {
      t.record(now, at, u64::from(kind == 1), u64::from(kind == 0), &mut out);
    }
  }
  t
}

fn restore(text: &str, now: i64) -> Result<Tracker, budget_core::BudgetError> {
  Snapshot::parse(text).and_then(|s| Tracker::from_snapshot(&s, now))
}

fn ops() -> impl Strategy<Value = Vec<(u16, u8, u8)>> {
  prop::collection::vec((0u16..100, 0u8..3, 0u8..60), 0..60)
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
    prop_assert_eq!(restored.recorded(), t.recorded());
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

// Counts near the limits (issue 12, item 4): snapshots whose counts sit just
// below, at and above 2^53 − 1, near 2^32 and near 2^64 either restore with
// every count exact or are refused; records that would take a counter past
// 2^53 − 1 are refused and change nothing. Expected values come from a u128 model.

use budget_core::budget::{Budget, Counts, MAX_COUNT};
use budget_core::Placement;

/// Counts where arithmetic goes wrong: small, around 2^32, 2^53 − 1 and 2^64 − 1, anywhere.
fn near_limits() -> impl Strategy<Value = u64> {
  prop_oneof![
    0u64..4,
    (1u64 << 32) - 2..=(1u64 << 32) + 2,
    MAX_COUNT - 3..=MAX_COUNT + 3,
    u64::MAX - 3..=u64::MAX,
    any::<u64>(),
  ]
}

const SAVED_AT: u128 = 10_000;
const LIMIT: u128 = MAX_COUNT as u128;

/// Snapshot text with one bucket at `SAVED_AT` (window 2000 ms, buckets of
/// 100, no alerts), counts written as given (u128: may exceed what u64 holds).
fn snapshot_text(s: u128, f: u128, recorded: (u128, u128), dropped: u128) -> String {
  let config = Config { window_ms: 2000, resolution_ms: 100, alerts: Some(vec![]), ..Config::default() };
  let status = if s <= LIMIT && f <= LIMIT {
    Budget::of(Counts { successes: s as u64, failures: f as u64 }, &config).status.as_str()
  } else {
    "healthy"
  };
  format!(
    r#"{{"format":"captcha-error-budget.snapshot","version":1,"savedAt":{SAVED_AT},"config":{{"targetRate":0.95,"windowMs":2000,"warningThreshold":0.5,"criticalThreshold":0.1,"minEvents":0,"resolutionMs":100,"alerts":[]}},"lastStatus":"{status}","dropped":{dropped},"recorded":{{"successes":{},"failures":{}}},"totals":{{"successes":{s},"failures":{f}}},"buckets":[{{"startMs":{SAVED_AT},"successes":{s},"failures":{f}}}]}}"#,
    recorded.0, recorded.1
  )
}

proptest! {
  #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

  #[test]
  fn counts_near_the_limits_restore_exactly_or_are_refused(
    s in near_limits(), f in near_limits(), extra in (near_limits(), near_limits()), dropped in near_limits(),
    adds in prop::collection::vec((near_limits(), near_limits(), any::<bool>()), 0..8),
  ) {
    let (s, f, dropped) = (s as u128, f as u128, dropped as u128);
    let recorded = (s + extra.0 as u128, f + extra.1 as u128);
    let text = snapshot_text(s, f, recorded, dropped);
    let fits = [s, f, recorded.0, recorded.1, dropped].iter().all(|&n| n <= LIMIT);
    let mut t = match restore(&text, SAVED_AT as i64) {
      Err(e) => {
        prop_assert!(!fits, "refused a snapshot within the limits: {}", e.message);
        prop_assert_eq!(e.code, "ERR_SNAPSHOT_INVALID");
        let why = e.message.contains("is above 2^53 − 1") || e.message.contains("does not match the schema");
        prop_assert!(why, "{}", e.message);
        return Ok(());
      }
      Ok(t) => t,
    };
    prop_assert!(fits, "accepted {}", text);
    // The model: every count in u128, checked against 2^53 − 1.
    let (mut window, mut rec, mut drop) = ((s, f), recorded, dropped);
    prop_assert_eq!((t.counts().successes as u128, t.counts().failures as u128), window);
    let mut out: Vec<Transition> = Vec::new();
    let now = SAVED_AT as i64;
    for (a, b, old) in adds {
      let at = if old { now - 5000 } else { now };
      let (a128, b128) = (a as u128, b as u128);
      let refused = rec.0 + a128 > LIMIT || rec.1 + b128 > LIMIT || (old && drop + a128 + b128 > LIMIT);
      let before = (t.report(), t.recorded(), t.dropped());
      let placement = t.record(now, at, a, b, &mut out);
      if refused {
        prop_assert_eq!(placement, Placement::Refused);
        prop_assert!(t.refusal(at, a, b).is_some());
        prop_assert_eq!((t.report(), t.recorded(), t.dropped()), before);
        continue;
      }
      prop_assert_eq!(placement, if old { Placement::TooOld } else { Placement::Counted });
      rec = (rec.0 + a128, rec.1 + b128);
      if old { drop += a128 + b128 } else { window = (window.0 + a128, window.1 + b128) }
      prop_assert_eq!((t.recorded().successes as u128, t.recorded().failures as u128), rec);
      prop_assert_eq!(t.dropped() as u128, drop);
      prop_assert_eq!((t.counts().successes as u128, t.counts().failures as u128), window);
      prop_assert_eq!(t.report().total as u128, window.0 + window.1);
    }
  }
}
