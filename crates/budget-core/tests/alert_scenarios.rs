//! Hand-worked multiwindow, multi-burn-rate alert scenarios (SRE Workbook ch. 5)
//! for the plain workbook policy (`alerts::workbook_policy`, given as a custom
//! policy: no evidence gate, no hysteresis) on a manual clock, asserting the exact list of status changes and alert
//! firings/resolutions with their instants, and some burn rates.
//!
//! Conventions used throughout (the spec):
//! * bucket k = floor(t / resolution) holds [k·res, (k+1)·res);
//! * a span of S ms at `now` counts bucket k iff k·res > now − S, so with
//!   1-minute buckets and `now` at the start of minute m, a span of L minutes
//!   holds the buckets m−L+1 ..= m;
//! * burn(span) = failures / (total × (1 − target)), 0 with no events;
//! * a pair fires while burn(long) > threshold AND burn(short) > threshold
//!   (strictly), the long window holds ≥ rule.min_events events and the whole
//!   window ≥ config.min_events.
//!
//! Every scenario records at bucket starts, `record(now = at = m·MIN)`. So each
//! minute m is looked at twice, at the same instant m·MIN:
//! * the "advance" state: `record` first advances time to m·MIN, which stops
//!   there because buckets leave the spans at minute boundaries; bucket m is
//!   still empty, so a span of L minutes holds the L−1 full buckets m−L+1 ..= m−1;
//! * the "record" state: after bucket m is filled, the L buckets m−L+1 ..= m.
//!
//! A firing caused in the advance state comes out before the record's own
//! events, at the same `at_ms`.
//!
//! With targetRate 0.95 the allowed failure share is 1 − 0.95 =
//! 0.050000000000000044 in doubles: burns are a hair below the exact ratio
//! (20 comes out as 19.99999999999998), so unrounded burns are compared with a
//! tolerance, and the places where the exact ratio equals a threshold are
//! pointed out (exactly the threshold does not fire: strict comparison; the
//! doubles agree, being a hair below).

use budget_core::alerts::workbook_policy;
use budget_core::{AlertRule, Config, Event, Severity, Status, Tracker};

const MIN: i64 = 60_000;
const HOUR: i64 = 60 * MIN;
const DAY: i64 = 24 * HOUR;
/// 30 days: the default resolution is 30 d / 43 200 = 60 000 ms = 1 minute.
const WINDOW_30D: i64 = 30 * DAY;

fn config_30d() -> Config {
  let config = Config {
    target_rate: 0.95,
    window_ms: WINDOW_30D,
    resolution_ms: MIN,
    warning_threshold: 0.5,
    critical_threshold: 0.1,
    min_events: 0,
    alerts: None,
    ..Config::default()
  };
  Config { alerts: Some(workbook_policy(&config)), ..config }
}

fn tracker(config: Config) -> Tracker {
  Tracker::new(config, 0).expect("valid config")
}

/// Records `ok` successes and `bad` failures stamped at the start of minute `m`, at that instant.
fn minute(t: &mut Tracker, m: i64, ok: u64, bad: u64, events: &mut Vec<Event>) {
  t.record(m * MIN, m * MIN, ok, bad, events);
}

/// One line per event: "status healthy->warning", "fired fast-burn", "resolved slow-burn", with its at_ms.
fn log(events: &[Event]) -> Vec<(String, i64)> {
  events
    .iter()
    .map(|e| match e {
      Event::Status(t, _) => (format!("status {}->{}", t.from.as_str(), t.to.as_str()), t.report.at_ms),
      Event::Alert { fired, alert, report, .. } => {
        (format!("{} {}", if *fired { "fired" } else { "resolved" }, alert.name), report.at_ms)
      }
    })
    .collect()
}

fn line(kind: &str, at_ms: i64) -> (String, i64) {
  (kind.to_string(), at_ms)
}

/// The `i`-th alert event (0-based, status events skipped).
fn alert_event(events: &[Event], i: usize) -> &Event {
  events.iter().filter(|e| matches!(e, Event::Alert { .. })).nth(i).expect("alert event")
}

fn firing_names(e: &Event) -> Vec<String> {
  let snapshot = match e {
    Event::Status(_, s) => s,
    Event::Alert { alerts, .. } => alerts,
  };
  snapshot.firing.iter().map(|a| a.name.clone()).collect()
}

fn assert_close(actual: f64, expected: f64, what: &str) {
  assert!((actual - expected).abs() < 1e-9, "{what}: got {actual}, expected {expected}");
}

/// Checks an alert event's fields: (fired, name, severity, rounded long burn, rounded short burn, threshold, at).
fn assert_alert(e: &Event, expect: (bool, &str, Severity, f64, f64, f64, i64)) {
  let Event::Alert { fired, alert, report, .. } = e else { panic!("not an alert event: {e:?}") };
  assert_eq!(
    (
      *fired,
      alert.name.as_str(),
      alert.severity,
      alert.burn_rate_long,
      alert.burn_rate_short,
      alert.threshold,
      report.at_ms
    ),
    expect
  );
}

#[test]
fn the_workbook_policy_for_30_days_is_the_workbook_table() {
  // P = 30 d: long windows P/720 = 1 h, P/120 = 6 h, P/10 = 3 d; short = long/12.
  let t = tracker(config_30d());
  let rules: Vec<(&str, Severity, i64, i64, f64, u64)> = t
    .alert_rules()
    .map(|r| (r.name.as_str(), r.severity, r.long_window_ms, r.short_window_ms, r.burn_rate, r.min_events))
    .collect();
  assert_eq!(
    rules,
    vec![
      ("fast-burn", Severity::Page, HOUR, 5 * MIN, 14.4, 10),
      ("slow-burn", Severity::Page, 6 * HOUR, 30 * MIN, 6.0, 10),
      ("budget-leak", Severity::Ticket, 3 * DAY, 6 * HOUR, 1.0, 10),
    ]
  );
}

// ---------------------------------------------------------------------------
// 1. Total outage
// ---------------------------------------------------------------------------

/// Minutes 0 ..= 4319 (3 days, so the longest alert window, 3 d = 4320 buckets,
/// is full): 10 successes a minute. Minutes 4320 ..= 4439 (a 2-hour outage):
/// 10 failures a minute, no success. Then no event at all.
///
/// Write H = 4320 and, at minute m = H + j, j = failing minutes before m.
///
/// fast-burn (1 h = 60 buckets, 5 min, > 14.4):
///   advance state: 59 full buckets, j failing: burn = 10j / (590 × 0.05) = j / 2.95;
///     > 14.4 ⟺ j > 42.48 ⟺ j ≥ 43;
///   record state: 60 buckets, j+1 failing: burn = (j+1) / 3; > 14.4 ⟺ j+1 ≥ 44 ⟺ j ≥ 43
///     (at j = 42: 43/3 = 14.33, no).
///   Short window at j = 43: 4 full buckets, all failing: burn 20 > 14.4.
///   So it fires in the advance state of minute H + 43 = 4363: at 4363 × 60 000 = 261 780 000,
///   burn long 430/29.5 = 14.576… → 14.58, short 40/2 = 20.
/// slow-burn (6 h = 360 buckets, 30 min, > 6):
///   advance state: 10j / (3590 × 0.05) = j / 17.95 > 6 ⟺ j > 107.7 ⟺ j ≥ 108;
///   record state: (j+1)/18 > 6 ⟺ j+1 > 108; at j = 107 it is 108/18 = 6 exactly: not above.
///   Short at j = 108: 29 full buckets all failing: 20.
///   Fires in the advance state of minute H + 108 = 4428: 265 680 000,
///   long 1080/179.5 = 6.0167… → 6.02, short 20.
/// budget-leak (3 d = 4320 buckets, > 1): advance j / 215.95, record (j+1)/216:
///   needs j ≥ 216, more than the 120 failing minutes: never during the outage.
/// Status (30-day window; nothing leaves it in 3 days): after the record of
///   minute H + j, n = j+1 failing minutes, total 10(H+n), failures 10n,
///   budget 0.05 × 10(H+n). f < 0.5 ⟺ 10n > 0.25(H+n) ⟺ 0.975n > 108 ⟺ n > 110.77:
///   n = 111, minute H + 110 = 4430, 265 800 000: healthy → warning.
///   (Critical needs 0.955n > 194.4, n ≥ 204: not reached.)
///
/// After the outage (last failing bucket 4439, only advance()):
/// * fast-burn's short window (5 min) holds only failures until bucket 4439 leaves
///   it at (4439 + 5) min = 4444 min = 266 640 000: burn 20 → 0: resolved, although
///   the long window still burns at 20 (60 failing buckets 4384..4443 → 55 full, all failing).
/// * slow-burn's short window (30 min) empties at (4439 + 30) min = 4469 min =
///   268 140 000: resolved. Its long window then holds buckets 4110 ..= 4468:
///   210 healthy (2100 ok) + 120 failing (1200): 1200 / (3300 × 0.05) = 7.2727… → 7.27.
/// * budget-leak stays off: at minute m ≥ 4440 its long window (3 d) holds the
///   1200 failures and only the healthy buckets m−4319 ..= 4319, at least
///   4139 of them up to 4500 min (41 390 ok): 1200 / (42 590 × 0.05) ≤ 0.57 < 1.
/// * Status: the 30-day window loses nothing: stays warning.
#[test]
fn total_outage_pages_fast_then_slow_and_resolves_when_the_short_window_cools() {
  let mut t = tracker(config_30d());
  let mut ev = Vec::new();
  const H: i64 = 4320;
  for m in 0..H {
    minute(&mut t, m, 10, 0, &mut ev);
  }
  assert!(ev.is_empty(), "{:?}", log(&ev));
  let s = t.alert_snapshot();
  assert!(!s.insufficient_data && s.firing.is_empty());
  assert_eq!(s.exhausts_in_ms, None, "nothing burning");
  for span in [5 * MIN, HOUR, 30 * MIN, 6 * HOUR, 6 * HOUR, 3 * DAY, WINDOW_30D] {
    assert_eq!(t.burn_rate_over(span), 0.0);
  }

  for m in H..H + 120 {
    minute(&mut t, m, 0, 10, &mut ev);
  }
  assert_eq!(
    log(&ev),
    vec![
      line("fired fast-burn", 261_780_000),
      line("fired slow-burn", 265_680_000),
      line("status healthy->warning", 265_800_000),
    ]
  );

  // fast-burn fired in the advance state of minute 4363.
  let fast = alert_event(&ev, 0);
  assert_alert(fast, (true, "fast-burn", Severity::Page, 14.58, 20.0, 14.4, 261_780_000));
  assert_eq!(firing_names(fast), ["fast-burn"]);
  let Event::Alert { report, alerts, .. } = fast else { unreachable!() };
  // Whole window (advance state, 4363 full buckets): 43 630 events, 430 failures,
  // budget 2181.5, remaining 1751.5, fraction 3503/4363. exhausts_in_ms at the
  // firing pair's short burn (20): 3503/4363 × 2 592 000 000 / 20 =
  // 453 988 800 000 / 4363 = 104 054 274.58… → 104 054 275.
  assert_eq!((report.successes, report.failures), (43_200, 430));
  assert_eq!(alerts.exhausts_in_ms, Some(104_054_275.0));
  assert!(!alerts.insufficient_data);

  let slow = alert_event(&ev, 1);
  assert_alert(slow, (true, "slow-burn", Severity::Page, 6.02, 20.0, 6.0, 265_680_000));
  assert_eq!(firing_names(slow), ["fast-burn", "slow-burn"]);
  // Whole window at 4428 (advance state): 44 280 events, 1080 failures,
  // budget 2214, remaining 1134, fraction 1134/2214 = 21/41; both shorts burn 20:
  // 21/41 × 129 600 000 = 2 721 600 000 / 41 = 66 380 487.8 → 66 380 488.
  let Event::Alert { alerts, .. } = slow else { unreachable!() };
  assert_eq!(alerts.exhausts_in_ms, Some(66_380_488.0));

  // The status change, after the record of minute 4430: 4320 × 10 ok, 111 × 10 failing.
  let Event::Status(tr, _) = &ev[2] else { panic!("status event expected") };
  let r = &tr.report;
  // rate 43 200 / 44 310 = 0.974949… → 0.9749; budget 44 310 × 0.05 = 2215.5;
  // remaining 2215.5 − 1110 = 1105.5; pct 1105.5 / 2215.5 = 49.898… % → 49.9;
  // burn 1110 / 2215.5 = 0.501… → 0.5.
  assert_eq!(
    (
      r.status,
      r.successes,
      r.failures,
      r.current_rate,
      r.budget_total,
      r.budget_remaining,
      r.budget_remaining_pct,
      r.burn_rate
    ),
    (Status::Warning, 43_200, 1110, 0.9749, 2215.5, 1105.5, 49.9, 0.5)
  );

  // At the end of the outage (now = 4439 min, record state):
  // fast long: buckets 4380..=4439 all failing → 20; budget-leak long: buckets
  // 120..=4439: 4200 healthy (42 000 ok) + 1200 failures → 1200 / 2160 = 0.5555…;
  // slow-burn long: buckets 4080..=4439: 240 healthy + 120 failing → 1200 / 180 = 6.666….
  assert_close(t.burn_rate_over(HOUR), 20.0, "1 h");
  assert_close(t.burn_rate_over(5 * MIN), 20.0, "5 min");
  assert_close(t.burn_rate_over(6 * HOUR), 1200.0 / 180.0, "6 h");
  assert_close(t.burn_rate_over(3 * DAY), 1200.0 / 2160.0, "3 d");
  // The next instant anything may change on its own: the oldest non-empty bucket of
  // the 5-minute span (4435) leaves it at 4440 min.
  assert_eq!(t.next_change_ms(), Some(4440 * MIN));

  // No new event: only time passes.
  ev.clear();
  t.advance(4500 * MIN, &mut ev);
  assert_eq!(log(&ev), vec![line("resolved fast-burn", 266_640_000), line("resolved slow-burn", 268_140_000)]);
  let fast = alert_event(&ev, 0);
  assert_alert(fast, (false, "fast-burn", Severity::Page, 20.0, 0.0, 14.4, 266_640_000));
  assert_eq!(firing_names(fast), ["slow-burn"]);
  // Whole window: 44 400 events, 1200 failures, budget 2220, fraction 1020/2220 = 17/37;
  // slow-burn's short still burns 20: 17/37 × 129 600 000 = 59 545 945.9 → 59 545 946.
  let Event::Alert { alerts, report, .. } = fast else { unreachable!() };
  assert_eq!(alerts.exhausts_in_ms, Some(59_545_946.0));
  assert_eq!((report.status, report.failures), (Status::Warning, 1200));
  assert_alert(alert_event(&ev, 1), (false, "slow-burn", Severity::Page, 7.27, 0.0, 6.0, 268_140_000));
  assert!(firing_names(alert_event(&ev, 1)).is_empty());

  // Nothing firing: exhausts_in_ms at the window's burn 1200/2220:
  // (1020/2220) / (1200/2220) = 0.85 of the 30 days = 2 203 200 000 ms.
  let s = t.alert_snapshot();
  assert!(s.firing.is_empty());
  assert_eq!(s.exhausts_in_ms, Some(2_203_200_000.0));
  // budget-leak at 4500 min: buckets 181..=4439: 4139 × 10 ok + 1200 failures.
  assert_close(t.burn_rate_over(3 * DAY), 1200.0 / (42_590.0 * 0.05), "3 d after");
  assert_eq!(t.burn_rate_over(5 * MIN), 0.0);
  assert_eq!(t.last_status(), Status::Warning);
}

// ---------------------------------------------------------------------------
// 2. Slow leak at 1.5× burn
// ---------------------------------------------------------------------------

/// Minutes 0 ..= 4319: 40 successes a minute (the 3-day window full). From minute
/// 4320 on: 37 successes and 3 failures a minute, 7.5 % failing: burn
/// 3 / (40 × 0.05) = 1.5 over any span made only of leaking minutes.
///
/// With H = 4320 and j = leaking minutes before minute m = H + j:
/// budget-leak (3 d = 4320 buckets, 6 h, > 1):
///   advance state: 4319 full buckets, 3j failures of 172 760 events:
///     3j / 8638 > 1 ⟺ j > 2879.33 ⟺ j ≥ 2880;
///   record state: 3(j+1) / 8640 > 1 ⟺ j+1 > 2880 (j+1 = 2880 is exactly 1: not above);
///   short (6 h) is all leak by then: 1.5.
///   Fires in the advance state of minute H + 2880 = 7200: 432 000 000,
///   long 8640/8638 = 1.00023… → 1.0, short 1.5.
/// fast-burn and slow-burn: no span ever burns above 1.5 (< 14.4, < 6): never.
/// Status (30-day window, nothing leaves it): after the record of minute H + j,
///   n = j+1: total 40(H+n), failures 3n, budget 2(H+n).
///   f < 0.5 ⟺ 3n > (H+n) ⟺ n > 2160 (n = 2160 is f = 0.5 exactly: still healthy):
///   n = 2161, minute H + 2160 = 6480, 388 800 000: healthy → warning.
///   Critical needs 3n > 1.8(H+n), n > 6480: not reached.
#[test]
fn a_slow_leak_only_opens_a_ticket() {
  let mut t = tracker(config_30d());
  let mut ev = Vec::new();
  const H: i64 = 4320;
  for m in 0..H {
    minute(&mut t, m, 40, 0, &mut ev);
  }
  for m in H..=7210 {
    minute(&mut t, m, 37, 3, &mut ev);
  }
  assert_eq!(log(&ev), vec![line("status healthy->warning", 388_800_000), line("fired budget-leak", 432_000_000)]);
  let leak = alert_event(&ev, 0);
  assert_alert(leak, (true, "budget-leak", Severity::Ticket, 1.0, 1.5, 1.0, 432_000_000));
  let Event::Alert { report, alerts, .. } = leak else { unreachable!() };
  // Whole window at minute 7200, advance state: 7200 full buckets = 288 000 events,
  // 2880 × 3 = 8640 failures; budget 14 400, remaining 5760 → 40 %, burn 0.6.
  assert_eq!(
    (report.status, report.total, report.failures, report.budget_remaining_pct, report.burn_rate),
    (Status::Warning, 288_000, 8640, 40.0, 0.6)
  );
  // exhausts at the ticket's short burn 1.5: 0.4 × 2 592 000 000 / 1.5 = 691 200 000.
  assert_eq!(alerts.exhausts_in_ms, Some(691_200_000.0));
  assert_eq!(firing_names(leak), ["budget-leak"]);

  // At minute 7210: 1 h and 6 h are all leak → 1.5; 3 d: 2891 leaking minutes
  // (4320..=7210) of 4320 → 8673 / 8640 = 1.0038….
  assert_close(t.burn_rate_over(HOUR), 1.5, "1 h");
  assert_close(t.burn_rate_over(6 * HOUR), 1.5, "6 h");
  assert_close(t.burn_rate_over(3 * DAY), 8673.0 / 8640.0, "3 d");
  assert_eq!(firing_names(&ev[1]), ["budget-leak"]);
  assert_eq!(t.alert_snapshot().firing.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["budget-leak"]);
}

// ---------------------------------------------------------------------------
// 3. A 10-minute 100 % spike every hour
// ---------------------------------------------------------------------------

/// With the SAME traffic in and out of the spikes (10 solves a minute, minutes
/// 50 ..= 59 of each hour all failing, the others all succeeding), no page can
/// fire: a 1-hour window never holds more than 10 failing minutes of 60, burn
/// at most 20 × 10/60 = 3.33 < 14.4, and the 6-hour one the same share (< 6).
/// That is the workbook's trade-off, not a bug: only the ticket (> 1) fires.
///
/// Minutes 0 ..= 239 (4 spikes), all windows start empty at 0 so every window
/// up to 6 h holds everything so far:
/// * record of minute 50 + s (s+1 failing minutes, 51+s in all):
///   burn = 20(s+1)/(51+s): s=0 → 0.39, s=1 → 0.77, s=2 → 60/53 = 1.13;
///   advance state of 50+s: 20s/(50+s): s=2 → 0.77, s=3 → 1.13.
///   budget-leak fires at the record of minute 52: 3 120 000 (long = short = 1.13).
///   It stays on: the lowest share afterwards is at minute 109/110, 10/110 → 1.82 > 1.
/// * Status: record of 50+s, budget 0.05 × 10(51+s), failures 10(s+1):
///   s=0: f = (25.5 − 10)/25.5 = 0.61 healthy; s=1: (26 − 20)/26 = 0.23 → warning
///   (3 060 000); s=2: 26.5 < 30 → exhausted (3 120 000). Then the failing share never
///   drops below 10/110 > 0.05: exhausted for good.
#[test]
fn an_hourly_spike_with_even_traffic_only_opens_a_ticket() {
  let mut t = tracker(config_30d());
  let mut ev = Vec::new();
  for m in 0..240 {
    if m % 60 >= 50 {
      minute(&mut t, m, 0, 10, &mut ev);
    } else {
      minute(&mut t, m, 10, 0, &mut ev);
    }
  }
  assert_eq!(
    log(&ev),
    vec![
      line("status healthy->warning", 3_060_000),
      line("status warning->exhausted", 3_120_000),
      line("fired budget-leak", 3_120_000),
    ]
  );
  assert_alert(alert_event(&ev, 0), (true, "budget-leak", Severity::Ticket, 1.13, 1.13, 1.0, 3_120_000));
  // At minute 239: the last hour holds buckets 180..=239, 10 failing of 60:
  // 100 / 30 = 3.33; the last 6 h (all 240 minutes): 400 / 120 = 3.33.
  assert_close(t.burn_rate_over(HOUR), 100.0 / 30.0, "1 h");
  assert_close(t.burn_rate_over(6 * HOUR), 400.0 / 120.0, "6 h");
}

/// A bot wave: 10 good solves a minute, but during minutes 50 ..= 59 of each
/// hour 200 failing solves a minute (and no good one). Failures are then 2000
/// of the 2500 events of an hour: the pages do catch every spike.
///
/// fast-burn (60 buckets / 5, > 14.4, i.e. failing share > 0.72):
/// * First spike (nothing before minute 0): record of minute 50 + s holds
///   50 healthy minutes (500 ok) and s+1 spike minutes, above 0.72 iff
///   200(s+1) / (200(s+1) + 500) > 0.72 ⟺ 56(s+1) > 360 ⟺ s+1 ≥ 7; advance state of 50 + s: 200s/(200s+500): s ≥ 7.
///   So it fires at the record of minute 56: 3 360 000, long 1400/1900 × 20 = 14.74,
///   short (52..=56, all spike) 20.
/// * Later spikes (minute 60h + 50 + s, h ≥ 1): a 60-bucket window slid over a
///   60-minute pattern always holds 10 spike minutes in the record state
///   (2000 / 2500 → 16), 9 + 50 healthy in the advance state of a spike minute
///   (1800 / 2300 → 15.65) and 10 + 49 healthy in that of a healthy minute
///   (2000 / 2490 → 16.06): the long window is always above 14.4, the short one decides.
///   Advance state of minute 60h+50: buckets 60h+46..=60h+49, healthy → 0.
///   Record state of 60h+50: 4 healthy + 1 spike: 200/240 → 16.67 > 14.4: fires
///   at the record of 60h+50 (long 16.0, short 16.67).
/// * Resolving (every spike): at minute 60h+60+q the advance state's short window
///   holds buckets 60h+56+q ..= 60h+59+q: 4−q spike minutes and q healthy ones:
///   q=0 → 20, q=1 → 600/610, q=2 → 400/420, q=3 → 200/230 (17.39), all > 14.4;
///   the record states in between (one more healthy minute) are 19.75, 19.35, 18.6,
///   16.67 (q=3: 200/240). q=4: no spike minute left → 0: resolved at the advance
///   state of minute 60h+64. (When no event comes after the spike, the short window
///   holds only failures until then: the same instant.)
///
/// slow-burn (360 buckets / 30, > 6, i.e. share > 0.3):
/// * First spike: long = everything: record of 50: 200/700 = 0.286 (5.71) no;
///   advance of 51: same; record of 51: 400/900 (8.89) and short (buckets 22..=51:
///   28 healthy + 2 spike) 400/680 (11.76): fires at 3 060 000.
/// * Later spikes: the long window always holds ≥ one earlier spike (share ≥ 0.6);
///   short at the advance state of 60h+50 is all healthy (0), at its record
///   29 healthy + 1 spike = 200/490 (8.16): fires at the record of 60h+50, after
///   fast-burn (policy order). Long then: 2000 × (h+1) + 200 failures… for h = 1,
///   buckets 0..=110: 2200 failures, 1000 ok → 2200 / 160 = 13.75.
/// * Resolving: at the advance state of minute 60h+60+q the short window holds
///   buckets 60h+31+q ..= 60h+59+q: min(10, 29−q) spike minutes and the rest healthy;
///   the lowest share while non-zero is q=28: 200/480 (8.33), its record 200/490
///   (8.16); q=29: no spike left → resolved at the advance state of 60h+89.
///
/// budget-leak (3 d / 6 h, > 1): record of minute 50: 200/700 → 5.71 for both
///   windows (everything so far): fires at 3 000 000, and never resolves (every later
///   instant holds ≥ 2000 failures of ≤ 3300 events within 6 h).
/// Status: record of minute 50: 700 events, budget 35, 200 failures → exhausted at
///   3 000 000, and it stays so. Status first, then the alert of the same instant.
///
/// Minutes 0 ..= 239 are recorded (4 spikes), then time alone runs to 300 min.
/// Instants (minute × 60 000):
///   50 status, budget-leak; 51 slow; 56 fast; 64 fast off; 89 slow off;
///   110 fast, slow; 124 fast off; 149 slow off; 170 fast, slow; 184 fast off;
///   209 slow off; 230 fast, slow; 244 fast off; 269 slow off.
#[test]
fn an_hourly_bot_wave_pages_during_every_spike() {
  let mut t = tracker(config_30d());
  let mut ev = Vec::new();
  for m in 0..240 {
    if m % 60 >= 50 {
      minute(&mut t, m, 0, 200, &mut ev);
    } else {
      minute(&mut t, m, 10, 0, &mut ev);
    }
  }
  t.advance(300 * MIN, &mut ev);
  assert_eq!(
    log(&ev),
    vec![
      line("status healthy->exhausted", 3_000_000),
      line("fired budget-leak", 3_000_000),
      line("fired slow-burn", 3_060_000),
      line("fired fast-burn", 3_360_000),
      line("resolved fast-burn", 3_840_000),
      line("resolved slow-burn", 5_340_000),
      line("fired fast-burn", 6_600_000),
      line("fired slow-burn", 6_600_000),
      line("resolved fast-burn", 7_440_000),
      line("resolved slow-burn", 8_940_000),
      line("fired fast-burn", 10_200_000),
      line("fired slow-burn", 10_200_000),
      line("resolved fast-burn", 11_040_000),
      line("resolved slow-burn", 12_540_000),
      line("fired fast-burn", 13_800_000),
      line("fired slow-burn", 13_800_000),
      line("resolved fast-burn", 14_640_000),
      line("resolved slow-burn", 16_140_000),
    ]
  );
  // budget-leak at minute 50: 200 / (700 × 0.05) = 5.714… → 5.71 for both windows.
  assert_alert(alert_event(&ev, 0), (true, "budget-leak", Severity::Ticket, 5.71, 5.71, 1.0, 3_000_000));
  // slow-burn at minute 51: long 400/45 = 8.888… → 8.89; short 400/34 = 11.76.
  assert_alert(alert_event(&ev, 1), (true, "slow-burn", Severity::Page, 8.89, 11.76, 6.0, 3_060_000));
  // fast-burn at minute 56: long 1400/95 = 14.736… → 14.74; short 20.
  assert_alert(alert_event(&ev, 2), (true, "fast-burn", Severity::Page, 14.74, 20.0, 14.4, 3_360_000));
  assert_eq!(firing_names(alert_event(&ev, 2)), ["fast-burn", "slow-burn", "budget-leak"]);
  // Second spike, minute 110: fast long 2000/125 = 16, short 200/12 = 16.666… → 16.67;
  // slow long 2200/160 = 13.75, short 200/24.5 = 8.163… → 8.16.
  assert_alert(alert_event(&ev, 5), (true, "fast-burn", Severity::Page, 16.0, 16.67, 14.4, 6_600_000));
  assert_alert(alert_event(&ev, 6), (true, "slow-burn", Severity::Page, 13.75, 8.16, 6.0, 6_600_000));
  // fast-burn resolving at minute 124 (advance state): long buckets 65..=123:
  // 49 healthy (490) + 10 spike (2000): 2000/124.5 = 16.06; short 0.
  assert_alert(alert_event(&ev, 7), (false, "fast-burn", Severity::Page, 16.06, 0.0, 14.4, 7_440_000));
  assert_eq!(firing_names(alert_event(&ev, 7)), ["slow-burn", "budget-leak"]);
  assert_eq!(t.last_status(), Status::Exhausted);
  assert_eq!(t.alert_snapshot().firing.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["budget-leak"]);
}

// ---------------------------------------------------------------------------
// 4. Low volume
// ---------------------------------------------------------------------------

/// 1 success at 0, 1 failure at 1 min, 1 success at 2 min, default 30-day policy
/// (each pair needs 10 events in its long window), config.min_events 0.
/// * Status: after the failure, 2 events, budget 0.1, 1 failure → remaining 0:
///   exhausted at 60 000 (config.min_events 0 judges the status on 2 events).
/// * No alert: no long window holds 10 events → insufficient_data, nothing fires,
///   although every window burns 1 / (3 × 0.05) = 6.67 (and the 1 h one is below 14.4
///   anyway; the 6 h one, 6.67 > 6, would fire on burn alone).
/// * burn_rate_over at now = 2 min: a 1-minute span holds bucket 2 (1 ok) → 0;
///   2 minutes: buckets 1, 2 → 1 / (2 × 0.05) = 10; 5 min / 1 h / 30 d: all 3 → 6.67.
/// * exhausts_in_ms: nothing firing, window burn 6.67 > 0, remaining fraction 0 → 0.
#[test]
fn low_volume_fires_nothing_and_says_so() {
  let mut t = tracker(config_30d());
  let mut ev = Vec::new();
  minute(&mut t, 0, 1, 0, &mut ev);
  minute(&mut t, 1, 0, 1, &mut ev);
  minute(&mut t, 2, 1, 0, &mut ev);
  assert_eq!(log(&ev), vec![line("status healthy->exhausted", 60_000)]);
  let s = t.alert_snapshot();
  assert!(s.firing.is_empty());
  assert!(s.insufficient_data);
  assert_eq!(s.exhausts_in_ms, Some(0.0));
  let third = 1.0 / (3.0 * 0.05);
  assert_eq!(t.burn_rate_over(MIN), 0.0);
  assert_close(t.burn_rate_over(2 * MIN), 10.0, "2 min");
  for span in [5 * MIN, 30 * MIN, HOUR, 6 * HOUR, 3 * DAY, WINDOW_30D, 2 * WINDOW_30D] {
    assert_close(t.burn_rate_over(span), third, "all three events");
  }

  // 7 more successes at 3 min: the 1-hour window holds 10 events: judged now;
  // 1 failure of 10 burns 2: below every threshold except budget-leak's 1, whose long
  // (3 d) and short (6 h) windows hold all 10 events: 2 > 1 → budget-leak fires at 180 000.
  // Still exhausted (budget 0.5 < 1 failure).
  minute(&mut t, 3, 7, 0, &mut ev);
  assert_eq!(log(&ev), vec![line("status healthy->exhausted", 60_000), line("fired budget-leak", 180_000)]);
  let s = t.alert_snapshot();
  assert!(!s.insufficient_data);
  assert_eq!(
    s.firing.iter().map(|a| (a.name.as_str(), a.burn_rate_long, a.burn_rate_short)).collect::<Vec<_>>(),
    [("budget-leak", 2.0, 2.0)]
  );

  // The same 3 events with config.min_events 5: below it the status stays healthy,
  // the report's burn is 0, the snapshot is insufficient and has no estimate, but
  // burn_rate_over still measures the spans.
  let mut t = tracker(Config { min_events: 5, ..config_30d() });
  let mut ev = Vec::new();
  minute(&mut t, 0, 1, 0, &mut ev);
  minute(&mut t, 1, 0, 1, &mut ev);
  minute(&mut t, 2, 1, 0, &mut ev);
  assert!(ev.is_empty(), "{:?}", log(&ev));
  let s = t.alert_snapshot();
  assert!(s.firing.is_empty() && s.insufficient_data);
  assert_eq!(s.exhausts_in_ms, None);
  assert_eq!((t.report().status, t.report().burn_rate), (Status::Healthy, 0.0));
  assert_close(t.burn_rate_over(HOUR), third, "1 h below minEvents");

  // config.min_events 20 gates the pairs too, even when a long window holds the
  // pair's own 10: minute 0, 5 successes + 5 failures: every window burns
  // 5 / (10 × 0.05) = 10 (slow-burn > 6 and budget-leak > 1 on burn and on their
  // own minimum) but the window holds 10 < 20: nothing, insufficient, healthy.
  // Minute 1, 10 successes: 20 events, 5 failures, burn 5 / 1 = 5 everywhere:
  // slow-burn 5 < 6 no; budget-leak 5 > 1 → fires at 60 000, after the status
  // (budget 1 < 5 failures: exhausted at 60 000).
  let mut t = tracker(Config { min_events: 20, ..config_30d() });
  let mut ev = Vec::new();
  minute(&mut t, 0, 5, 5, &mut ev);
  assert!(ev.is_empty(), "{:?}", log(&ev));
  let s = t.alert_snapshot();
  assert!(s.firing.is_empty() && s.insufficient_data && s.exhausts_in_ms.is_none());
  assert_close(t.burn_rate_over(6 * HOUR), 10.0, "6 h below minEvents");
  minute(&mut t, 1, 10, 0, &mut ev);
  assert_eq!(log(&ev), vec![line("status healthy->exhausted", 60_000), line("fired budget-leak", 60_000)]);
  assert_alert(alert_event(&ev, 0), (true, "budget-leak", Severity::Ticket, 5.0, 5.0, 1.0, 60_000));
  assert!(!t.alert_snapshot().insufficient_data);
}

// ---------------------------------------------------------------------------
// 5. exhausts_in_ms
// ---------------------------------------------------------------------------

#[test]
fn exhausts_in_ms_from_the_window_burn_and_none_when_not_burning() {
  // 99 successes and 1 failure at 0: budget 5, remaining 4 → fraction 0.8; burn
  // 1/5 = 0.2; no pair fires (0.2 < 1). 0.8 × 2 592 000 000 / 0.2 = 10 368 000 000.
  let mut t = tracker(config_30d());
  let mut ev = Vec::new();
  minute(&mut t, 0, 99, 1, &mut ev);
  assert!(ev.is_empty(), "{:?}", log(&ev));
  let s = t.alert_snapshot();
  assert!(s.firing.is_empty() && !s.insufficient_data);
  assert_eq!(s.exhausts_in_ms, Some(10_368_000_000.0));

  // Only successes: burn 0 → None.
  let mut t = tracker(config_30d());
  minute(&mut t, 0, 100, 0, &mut ev);
  assert_eq!(t.alert_snapshot().exhausts_in_ms, None);
  // Empty tracker: None.
  assert_eq!(tracker(config_30d()).alert_snapshot().exhausts_in_ms, None);
}

/// A custom policy on a 1-day window of 1-minute buckets:
///   "page-10m": long 10 min, short 2 min, > 2, min 1 event;
///   "ticket-20m": long 20 min, short 1 min, > 0.1, min 1 event.
/// t = 0: 1000 successes; 10 min: 30 successes; 11 min: 10 failures.
/// At 11 min (record): page-10m long = buckets 2..=11 (30 ok + 10 bad):
///   10 / (40 × 0.05) = 5 > 2, short = buckets 10, 11: the same 5 > 2 → fires;
///   ticket-20m long = buckets 0..=11: 10 / (1040 × 0.05) = 0.192 > 0.1,
///   short = bucket 11: 10 failures alone → 20 > 0.1 → fires. Both at 660 000,
///   policy order. Nothing before (no failure).
/// Whole window: 1040 events, budget 52, remaining 42 → fraction 21/26 = 0.8077
///   (healthy, no status change). exhausts_in_ms at the LARGEST firing short burn, 20:
///   21/26 × 86 400 000 / 20 = 90 720 000 / 26 = 3 489 230.77 → 3 489 231
///   (not at page-10m's 5, nor at the window's 10/52).
/// At 12 min (advance alone, one stop at 720 000): bucket 11 leaves ticket-20m's
///   1-minute short window → 0: resolved at 720 000. Bucket 10 leaves page-10m's
///   2-minute short window at the same instant: it holds bucket 11 alone (10
///   failures) → 20; long buckets 3..=12 still 5: page-10m keeps firing, and its
///   short burn is now 20: exhausts_in_ms is again 3 489 231.
/// At 13 min: bucket 11 leaves the 2-minute window → 0: page-10m resolved at 780 000.
///   Nothing firing: the window's burn 10/52, 21/26 ÷ 10/52 = 4.2 windows =
///   362 880 000 ms.
#[test]
fn exhausts_in_ms_uses_the_fastest_firing_short_window() {
  let rule = |name: &str, severity, long, short, burn| AlertRule {
    name: name.to_string(),
    severity,
    long_window_ms: long,
    short_window_ms: short,
    burn_rate: burn,
    min_events: 1,
  };
  let config = Config {
    window_ms: DAY,
    resolution_ms: MIN,
    alerts: Some(vec![
      rule("page-10m", Severity::Page, 10 * MIN, 2 * MIN, 2.0),
      rule("ticket-20m", Severity::Ticket, 20 * MIN, MIN, 0.1),
    ]),
    ..config_30d()
  };
  let mut t = tracker(config);
  let mut ev = Vec::new();
  minute(&mut t, 0, 1000, 0, &mut ev);
  minute(&mut t, 10, 30, 0, &mut ev);
  minute(&mut t, 11, 0, 10, &mut ev);
  assert_eq!(log(&ev), vec![line("fired page-10m", 660_000), line("fired ticket-20m", 660_000)]);
  assert_alert(alert_event(&ev, 0), (true, "page-10m", Severity::Page, 5.0, 5.0, 2.0, 660_000));
  assert_alert(alert_event(&ev, 1), (true, "ticket-20m", Severity::Ticket, 0.19, 20.0, 0.1, 660_000));
  assert_eq!(t.alert_snapshot().exhausts_in_ms, Some(3_489_231.0));
  assert_eq!(t.report().status, Status::Healthy);

  t.advance(12 * MIN, &mut ev);
  assert_eq!(log(&ev)[2..], [line("resolved ticket-20m", 720_000)]);
  assert_alert(alert_event(&ev, 2), (false, "ticket-20m", Severity::Ticket, 0.19, 0.0, 0.1, 720_000));
  let s = t.alert_snapshot();
  assert_eq!(
    s.firing.iter().map(|a| (a.name.as_str(), a.burn_rate_long, a.burn_rate_short)).collect::<Vec<_>>(),
    [("page-10m", 5.0, 20.0)]
  );
  assert_eq!(s.exhausts_in_ms, Some(3_489_231.0));

  t.advance(13 * MIN, &mut ev);
  assert_eq!(log(&ev)[3..], [line("resolved page-10m", 780_000)]);
  let s = t.alert_snapshot();
  assert!(s.firing.is_empty());
  assert_eq!(s.exhausts_in_ms, Some(362_880_000.0));
}

// ---------------------------------------------------------------------------
// Strictness, with a target whose budget share is exact in doubles
// ---------------------------------------------------------------------------

/// targetRate 0.75: 1 − 0.75 = 0.25 exactly, so burns are exact ratios.
/// One rule "p": long 10 min, short 5 min, > 2, min 1 event; 1-hour window.
/// * 0: 1 success + 1 failure: both windows 1 / (2 × 0.25) = 2.0, exactly the
///   threshold: not above → no alert (the status: budget 0.5 < 1 failure → exhausted).
/// * 1 min, advance state: the same two events → 2.0 still; record state: one more
///   failure, 2 / (3 × 0.25) = 2.67 > 2 in both windows → fires at 60 000.
/// * Time alone: the failure at 1 min leaves the 5-min window at 6 min; the
///   bucket-0 events leave it at 5 min: at 5 min the short window holds bucket 1
///   (1 failure) → 4 > 2, long still 2.67: firing; at 6 min: empty → 0: resolved
///   at 360 000.
#[test]
fn a_burn_exactly_at_the_threshold_does_not_fire() {
  let config = Config {
    target_rate: 0.75,
    window_ms: HOUR,
    resolution_ms: MIN,
    alerts: Some(vec![AlertRule {
      name: "p".into(),
      severity: Severity::Page,
      long_window_ms: 10 * MIN,
      short_window_ms: 5 * MIN,
      burn_rate: 2.0,
      min_events: 1,
    }]),
    ..config_30d()
  };
  let mut t = tracker(config);
  let mut ev = Vec::new();
  minute(&mut t, 0, 1, 1, &mut ev);
  assert_eq!(log(&ev), vec![line("status healthy->exhausted", 0)]);
  assert_eq!((t.burn_rate_over(10 * MIN), t.burn_rate_over(5 * MIN)), (2.0, 2.0));
  assert!(t.alert_snapshot().firing.is_empty());
  minute(&mut t, 1, 0, 1, &mut ev);
  t.advance(10 * MIN, &mut ev);
  assert_eq!(
    log(&ev),
    vec![line("status healthy->exhausted", 0), line("fired p", 60_000), line("resolved p", 360_000)]
  );
  assert_alert(alert_event(&ev, 0), (true, "p", Severity::Page, 2.67, 2.67, 2.0, 60_000));
  assert_alert(alert_event(&ev, 1), (false, "p", Severity::Page, 2.67, 0.0, 2.0, 360_000));
}

/// The report filler's path computes the budget once: the same report and alert
/// side as `report()` and `alert_snapshot()`, before, during and after an outage.
#[test]
fn report_and_alerts_is_report_and_alert_snapshot() {
  let mut t = tracker(config_30d());
  let mut ev = Vec::new();
  let mut fired = false;
  for m in 0..600 {
    let outage = (300..360).contains(&m);
    minute(&mut t, m, if outage { 0 } else { 10 }, if outage { 10 } else { 0 }, &mut ev);
    let (report, alerts) = t.report_and_alerts();
    assert_eq!(report, t.report(), "report at minute {m}");
    assert_eq!(alerts, t.alert_snapshot(), "alerts at minute {m}");
    fired |= !alerts.firing.is_empty();
  }
  assert!(fired, "the outage fired a pair, so the firing case was compared");
}
