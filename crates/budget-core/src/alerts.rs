//! Multiwindow, multi-burn-rate alerts (Google SRE Workbook, "Alerting on
//! SLOs"): a pair fires while the burn rate over its long window AND over its
//! short window are both above its threshold.

use crate::budget::Counts;
use crate::config::Config;
use crate::error::{BudgetError, Result};
pub use crate::rule::{AlertRule, Severity};

/// Events a pair's long window must hold before it may fire, unless configured.
pub const DEFAULT_ALERT_MIN_EVENTS: u64 = 10;

/// The workbook's proportions for an SLO period `P` (the tracker's window):
/// budget share spent, long window as a fraction of P, severity.
const WORKBOOK_PAIRS: [(&str, Severity, f64, i64); 3] = [
  ("fast-burn", Severity::Page, 0.02, 720),
  ("slow-burn", Severity::Page, 0.05, 120),
  ("budget-leak", Severity::Ticket, 0.10, 10),
];

/// The plain workbook policy for `config` (the default before 0.2): long
/// windows of P/720, P/120 and P/10, short windows of a twelfth of those,
/// thresholds budget% × P ÷ long window (14.4, 6 and 1), each rounded to whole
/// buckets, no evidence gate, no hysteresis. Pairs the SLO cannot reach (a
/// threshold at or above 1 / (1 − targetRate)) are left out. Kept for
/// comparison (`npm run bench:alerts`) and for users who want it back as
/// `alerts: [...]`.
pub fn workbook_policy(config: &Config) -> Vec<AlertRule> {
  pairs(
    config,
    WORKBOOK_PAIRS.iter().map(|&(name, severity, share, divisor)| {
      (name, severity, share * divisor as f64, divisor, DEFAULT_ALERT_MIN_EVENTS)
    }),
  )
}

/// One pair of the default policy (`P` is the tracker's window).
struct DefaultPair {
  name: &'static str,
  severity: Severity,
  /// Burn-rate threshold both windows must exceed to fire.
  burn_rate: f64,
  /// The long window is P divided by this (its short window a twelfth of it).
  long_window_divisor: i64,
  /// Share of the whole window's budget the long window must have spent to fire (0: no such gate).
  min_budget_share: f64,
  /// The warm-up is P divided by this; 0: the warm-up is the long window.
  warm_up_divisor: i64,
  /// Failures the long window must hold to fire.
  min_failures: u64,
  /// Solves the long window must hold to fire.
  min_events: u64,
}

/// The default policy. `fast-burn` is the workbook's fast pair (P/720 at
/// 14.4×, 2 % of the budget), so that a total outage pages no later than the
/// workbook would at any period; at low volume its window holds too few solves
/// for the evidence gates and the longer pairs page. `slow-burn` and
/// `budget-leak` spend 25 % and 37.5 % of the budget at their threshold before
/// they can fire, over windows longer than the workbook's so that they hold
/// evidence at low volume;
/// `budget-spend` pages on a burst of volume that spends a fifth of the budget
/// within P/72 at only twice the sustainable rate — a flash sale, which a burn
/// rate alone sees too late (see docs/alert-policy.md).
const DEFAULT_PAIRS: [DefaultPair; 4] = [
  DefaultPair {
    name: "fast-burn",
    severity: Severity::Page,
    burn_rate: 14.4,
    long_window_divisor: 720,
    min_budget_share: 0.0,
    warm_up_divisor: 0,
    min_failures: DEFAULT_MIN_FAILURES,
    min_events: DEFAULT_ALERT_MIN_EVENTS,
  },
  DefaultPair {
    name: "budget-spend",
    severity: Severity::Page,
    burn_rate: 2.0,
    long_window_divisor: 72,
    min_budget_share: 0.2,
    warm_up_divisor: 4,
    min_failures: BUDGET_SPEND_MIN_FAILURES,
    min_events: BUDGET_SPEND_MIN_FAILURES,
  },
  DefaultPair {
    name: "slow-burn",
    severity: Severity::Page,
    burn_rate: 3.0,
    long_window_divisor: 12,
    min_budget_share: 0.0,
    warm_up_divisor: 0,
    min_failures: DEFAULT_MIN_FAILURES,
    min_events: DEFAULT_ALERT_MIN_EVENTS,
  },
  DefaultPair {
    name: "budget-leak",
    severity: Severity::Ticket,
    burn_rate: 1.5,
    long_window_divisor: 4,
    min_budget_share: 0.0,
    warm_up_divisor: 0,
    min_failures: DEFAULT_MIN_FAILURES,
    min_events: DEFAULT_ALERT_MIN_EVENTS,
  },
];

/// Failures a default pair's long window must hold before it may fire: fewer
/// cannot tell an incident from a burst of noise.
pub const DEFAULT_MIN_FAILURES: u64 = 5;

/// Failures, and solves, `budget-spend`'s long window must hold: one failure
/// fewer than the other pairs, and no more solves than that, since its evidence
/// is the spend itself — a fifth of the whole window's budget within P/72 — so
/// this binds only where the whole window allows 20 failures or fewer. There
/// (0.3 solves a minute on 24 h at 96 %: P/72 holds 6 solves, the window's
/// budget is some 17 failures) the baseline's chance failures can leave 6 of
/// them when an outage starts, and the fifth failure is more than three
/// quarters of that (issue 31). 4 failures that are a fifth of the budget
/// within P/72 are no burst of noise: a burst of 3 alone cannot fire it.
pub const BUDGET_SPEND_MIN_FAILURES: u64 = 4;

/// The default policy for `config`: long windows of P/720, P/72, P/12 and
/// P/4, short windows of a twelfth of those, thresholds 14.4, 2, 3 and 1.5,
/// rounded to whole buckets; unreachable pairs left out. Its gates
/// ([`default_gates`]) add a minimum of failures, a warm-up, hysteresis and,
/// for `budget-spend`, a share of the budget.
pub fn default_policy(config: &Config) -> Vec<AlertRule> {
  pairs(config, DEFAULT_PAIRS.iter().map(|p| (p.name, p.severity, p.burn_rate, p.long_window_divisor, p.min_events)))
}

/// The pairs of `table` (name, severity, threshold, P's divisor for the long
/// window, solves the long window must hold) for `config`.
fn pairs<'a>(config: &Config, table: impl Iterator<Item = (&'a str, Severity, f64, i64, u64)>) -> Vec<AlertRule> {
  if config.target_rate >= 1.0 {
    return Vec::new(); // no budget, no burn rate: nothing can fire
  }
  table
    .map(|(name, severity, burn_rate, divisor, min_events)| AlertRule {
      name: name.to_string(),
      severity,
      long_window_ms: round_to_buckets(config.window_ms as f64 / divisor as f64, config),
      short_window_ms: round_to_buckets(config.window_ms as f64 / (divisor * 12) as f64, config),
      burn_rate,
      min_events,
    })
    .filter(|rule| rule.burn_rate < max_burn_rate(config.target_rate) && rule.short_window_ms < rule.long_window_ms)
    .collect()
}

/// What a pair needs beyond its two burn rates: a minimum of failures in its
/// long window to fire, and the long-window burn rate at or below which a
/// firing pair resolves.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AlertGate {
  /// Fewer failures than this in the long window never fire.
  pub min_failures: u64,
  /// A firing pair resolves once its long-window burn rate is at or below this
  /// (or its long window holds fewer than `min_failures` failures).
  /// Equal to the threshold: no hysteresis, the pair stops firing as soon as
  /// its firing condition stops holding (custom policies).
  pub resolve_burn_rate: f64,
  /// The pair cannot fire before the tracker has seen solves for this long
  /// (from its oldest event): a fresh tracker's first few solves are all its
  /// windows hold, and would judge a 2-hour window on a minute.
  pub warm_up_ms: i64,
  /// The long window's failures must be at least this share of the budget of
  /// the whole window (its allowed failures, `budgetTotal`) to fire; 0: no such gate.
  pub min_budget_share: f64,
}

impl AlertGate {
  /// No gate: a custom pair behaves exactly as the workbook's.
  pub fn plain(rule: &AlertRule) -> Self {
    AlertGate { min_failures: 0, resolve_burn_rate: rule.burn_rate, warm_up_ms: 0, min_budget_share: 0.0 }
  }

  /// Whether a firing pair stays on until the long-window burn rate falls to
  /// `resolve_burn_rate` (rather than stopping with its firing condition).
  pub fn holds(&self, rule: &AlertRule) -> bool {
    self.resolve_burn_rate < rule.burn_rate
  }
}

/// The recent spans a firing default pair's recovery is judged on, shortest
/// first: 10, 20, 30 and 45 min, 1, 1.5, 2, 3, 4, 6 and 8 h. Recovery is a
/// question about the present — are solves succeeding again at the SLO's
/// rate? — so it is asked of each of these that holds the pair's
/// [`RecoveryTest::min_solves`] and nothing from before the pair fired, not
/// only of the pair's long window (14 h for a 7-day SLO's slow pair): at high
/// volume ten minutes tell; at lower volumes the span grows with the time it
/// takes to collect that many solves, in steps of at most 1.5×
/// (docs/alert-policy.md, "Reset time").
pub const RECOVERY_SPANS_MS: [i64; 11] = [
  600_000, 1_200_000, 1_800_000, 2_700_000, 3_600_000, 5_400_000, 7_200_000, 10_800_000, 14_400_000, 21_600_000,
  28_800_000,
];

/// The fewest solves a recovery span must hold, whatever the pair: fewer
/// cannot tell a recovery from a lull between failures.
pub const RECOVERY_MIN_SOLVES: u64 = 10;

/// The share of its threshold a default pair resolves at (hysteresis): half.
pub const RESOLVE_SHARE: f64 = 0.5;

/// The most a recovery test ([`RecoveryTest`]) may wrongly end a page with on
/// one span: were the failure rate still at the pair's threshold, the chance
/// that a span passes. 0.01 %: a span is judged at every solve, every span at
/// once, for as long as a page fires, so over two days of a steady burn just
/// above a threshold (20 % failing against `slow-burn`'s 15 %, 10 % against
/// `budget-leak`'s 7.5 %) a test at 0.1 % ended pages in 13 of 840 seeded
/// runs, at 0.01 % in 1 (`crates/budget-core/tests/steady_failure_rate.rs`).
pub const RECOVERY_ALPHA: f64 = 0.000_1;

/// How a held pair's recovery is judged on a span of solves, worked out once
/// per pair ([`recovery_test`]): a span of n solves holding f failures says
/// the pair has recovered when n ≥ `min_solves`, its burn rate is at or below
/// the resolve rate, and an exact one-sided binomial test rejects "still
/// failing at the threshold": P(Binomial(n, p) ≤ f) ≤ [`RECOVERY_ALPHA`], p the
/// threshold's failure rate (a span of 93 solves on a 96 % SLO's `slow-burn`
/// may hold 1 failure, not the 5 its burn would allow). From `burn_alone_from`
/// solves on, the burn rate at or below the resolve rate implies the test
/// ([`recovery_min_solves`]): both are worked out up to there only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecoveryTest {
  /// The burn rate a span must be at or below (the gate's resolve rate).
  pub resolve_burn_rate: f64,
  /// Solves a span must hold to be judged: the fewest with which the test can
  /// pass at all (no failure), at least [`RECOVERY_MIN_SOLVES`].
  pub min_solves: u64,
  /// The test as a step function of n: below `burn_alone_from` solves, a span
  /// of n may hold as many failures as there are entries ≤ n here (none with
  /// fewer solves than the first), ascending.
  pub failure_steps: Vec<u64>,
  /// From this many solves on, the burn rate alone decides ([`recovery_min_solves`]).
  pub burn_alone_from: u64,
}

impl RecoveryTest {
  /// Whether a span's `counts` say the pair has recovered, on an SLO of `target_rate`.
  pub fn recovered(&self, counts: Counts, target_rate: f64) -> bool {
    let n = counts.total();
    n >= self.min_solves
      && burn_rate(counts, target_rate) <= self.resolve_burn_rate
      && (n >= self.burn_alone_from || counts.failures <= self.allowed_failures(n))
  }

  /// The most failures the test lets a span of `n` solves hold (below `burn_alone_from`).
  pub fn allowed_failures(&self, n: u64) -> u64 {
    self.failure_steps.iter().take_while(|&&step| step <= n).count() as u64
  }
}

/// The recovery test of a held pair under `gate` for an SLO of `target_rate`
/// ([`RecoveryTest`]). For a 95 % SLO it judges spans of 10 (`fast-burn`), 88
/// (`budget-spend`), 57 (`slow-burn`) and 119 (`budget-leak`) solves or more. A
/// gate whose threshold is out of the SLO's reach (p ≥ 1) is judged on its burn
/// rate over [`RECOVERY_MIN_SOLVES`] solves.
pub fn recovery_test(target_rate: f64, gate: AlertGate) -> RecoveryTest {
  let burn_alone_from = recovery_min_solves(target_rate, gate);
  let p = threshold_failure_rate(target_rate, gate);
  let mut test = RecoveryTest {
    resolve_burn_rate: gate.resolve_burn_rate,
    min_solves: burn_alone_from,
    failure_steps: Vec::new(),
    burn_alone_from,
  };
  if !(p > 0.0 && p < 1.0) {
    return test;
  }
  test.min_solves = fewest_solves_passing(p, 0, burn_alone_from).max(RECOVERY_MIN_SOLVES).min(burn_alone_from);
  for failures in 1.. {
    let n = fewest_solves_passing(p, failures, burn_alone_from);
    if n >= burn_alone_from {
      break;
    }
    test.failure_steps.push(n);
  }
  test
}

/// The failure rate at a held gate's threshold: twice its resolve rate, in
/// failures per solve.
fn threshold_failure_rate(target_rate: f64, gate: AlertGate) -> f64 {
  gate.resolve_burn_rate / RESOLVE_SHARE * (1.0 - target_rate)
}

/// The fewest n (at most `limit`) with P(Binomial(n, p) ≤ failures) ≤
/// [`RECOVERY_ALPHA`]: that chance falls as n grows, so a binary search.
fn fewest_solves_passing(p: f64, failures: u64, limit: u64) -> u64 {
  let (mut lo, mut hi) = (failures + 1, limit.max(failures + 1));
  if binomial_cdf(hi, p, failures) > RECOVERY_ALPHA {
    return hi;
  }
  while lo < hi {
    let mid = lo + (hi - lo) / 2;
    if binomial_cdf(mid, p, failures) <= RECOVERY_ALPHA {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  lo
}

/// P(Binomial(n, p) ≤ k), summed term by term from P(X = 0) = (1 − p)^n.
fn binomial_cdf(n: u64, p: f64, k: u64) -> f64 {
  let q = 1.0 - p;
  let mut pmf = (n as f64 * q.ln()).exp();
  let mut cdf = pmf;
  for i in 0..k.min(n) {
    pmf *= (n - i) as f64 / (i + 1) as f64 * p / q;
    cdf += pmf;
  }
  cdf
}

/// From how many solves on a span whose burn is at or below `gate`'s resolve
/// rate also passes the binomial test of [`RecoveryTest`] (at least
/// [`RECOVERY_MIN_SOLVES`]): the fewest N from which on, were the failure rate
/// still at the pair's threshold p = resolve rate ÷ [`RESOLVE_SHARE`] × (1 −
/// target), P(Binomial(n, p) ≤ k(n)) ≤ [`RECOVERY_ALPHA`] for every n ≥ N, k(n)
/// the most failures that burn allows in n solves. For a 95 % SLO: 26
/// (`fast-burn`), 441 (`budget-spend`), 281 (`slow-burn`) and 592
/// (`budget-leak`). A gate whose p is 1 or more (a threshold out of the SLO's
/// reach) gets the floor.
pub fn recovery_min_solves(target_rate: f64, gate: AlertGate) -> u64 {
  let p = threshold_failure_rate(target_rate, gate);
  if !(p > 0.0 && p < 1.0) {
    return RECOVERY_MIN_SOLVES;
  }
  let q = 1.0 - p;
  let accepts =
    |n: u64, f: u64| burn_rate(Counts { successes: n - f, failures: f }, target_rate) <= gate.resolve_burn_rate;
  // n = 0: P(X ≤ 0) = P(X = 0) = 1, k = 0. Each step adds one solve:
  // P(X_n ≤ k) = P(X_{n−1} ≤ k) − p·P(X_{n−1} = k) and
  // P(X_n = k) = P(X_{n−1} = k)·q·n / (n − k); then k grows to k(n) (it never
  // shrinks: more solves allow more failures), each step adding P(X_n = k + 1)
  // = P(X_n = k)·(n − k) / (k + 1)·p / q.
  let (mut cdf, mut pmf, mut k) = (1.0_f64, 1.0_f64, 0_u64);
  let (mut last_above, mut first_below) = (0_u64, None::<u64>);
  let mut n = 0_u64;
  // The chance falls with n in a sawtooth (up at each n where k(n) grows):
  // scanned to three times the first n at or below α, past every later tooth above it.
  while n < RECOVERY_SCAN_LIMIT && first_below.is_none_or(|f| n <= 3 * f + 10) {
    n += 1;
    cdf -= p * pmf;
    pmf *= q * n as f64 / (n - k) as f64;
    while k + 1 < n && accepts(n, k + 1) {
      pmf *= (n - k) as f64 / (k + 1) as f64 * p / q;
      k += 1;
      cdf += pmf;
    }
    if cdf > RECOVERY_ALPHA {
      last_above = n;
    } else if first_below.is_none() {
      first_below = Some(n);
    }
  }
  (last_above + 1).max(RECOVERY_MIN_SOLVES)
}

/// Where [`recovery_min_solves`] stops looking, about 4 million solves (some
/// 40 ms of work, once, when a pair first fires): an SLO so close to 100 % (a
/// threshold failure rate under about 1 in 100 000) that no span could hold
/// that many solves anyway; its pages end on the long window's lull.
const RECOVERY_SCAN_LIMIT: u64 = 1 << 22;

/// [`RECOVERY_SPANS_MS`] for `config`: rounded to whole buckets, at most the
/// window, without repeats (a 1-hour window judges on 10, 20, 30, 45 min and 1 h).
pub fn recovery_spans(config: &Config) -> Vec<i64> {
  let mut spans: Vec<i64> = Vec::new();
  for ms in RECOVERY_SPANS_MS {
    let span = round_to_buckets(ms as f64, config);
    if !spans.contains(&span) {
      spans.push(span);
    }
  }
  spans
}

/// The default policy's gates: [`DEFAULT_MIN_FAILURES`] failures
/// ([`BUDGET_SPEND_MIN_FAILURES`] for `budget-spend`), resolution
/// at half the threshold (so a burn hovering at the threshold cannot fire,
/// resolve and fire again), a warm-up of its long window (P/4 for
/// `budget-spend`, whose share of the budget means little while the window
/// fills), and `budget-spend`'s share of the budget. `window_ms` is P.
pub fn default_gates(policy: &[AlertRule], window_ms: i64) -> Vec<AlertGate> {
  gates_from(&DEFAULT_PAIRS, policy, window_ms)
}

/// The gates of `policy` (built from `table`) as [`default_gates`] sets them.
fn gates_from(table: &[DefaultPair], policy: &[AlertRule], window_ms: i64) -> Vec<AlertGate> {
  policy
    .iter()
    .map(|r| {
      let pair = table.iter().find(|p| p.name == r.name);
      AlertGate {
        min_failures: pair.map_or(DEFAULT_MIN_FAILURES, |p| p.min_failures),
        resolve_burn_rate: r.burn_rate * RESOLVE_SHARE,
        warm_up_ms: match pair {
          Some(p) if p.warm_up_divisor > 0 => window_ms / p.warm_up_divisor,
          _ => r.long_window_ms,
        },
        min_budget_share: pair.map_or(0.0, |p| p.min_budget_share),
      }
    })
    .collect()
}

/// Every earlier default policy (with gates, from 0.2 on) for `config`, with
/// its gates: a snapshot saved under one still restores as the default policy,
/// and then runs the current one. Only a default policy has gates, so a gated
/// snapshot that matches one of these can be nothing else. A change of
/// [`DEFAULT_PAIRS`] or [`default_gates`] adds the table it replaces here (and
/// a fixture to `tests/earlier_default_policies.rs`).
pub(crate) fn earlier_default_policies(config: &Config) -> Vec<(Vec<AlertRule>, Vec<AlertGate>)> {
  EARLIER_DEFAULT_PAIRS
    .iter()
    .map(|table| {
      let policy =
        pairs(config, table.iter().map(|p| (p.name, p.severity, p.burn_rate, p.long_window_divisor, p.min_events)));
      let gates = gates_from(table, &policy, config.window_ms);
      (policy, gates)
    })
    .collect()
}

/// An earlier default pair whose gates were the other pairs' (5 failures, 10
/// solves, a warm-up of its long window, no share of the budget).
const fn earlier_pair(name: &'static str, severity: Severity, burn_rate: f64, long_window_divisor: i64) -> DefaultPair {
  DefaultPair {
    name,
    severity,
    burn_rate,
    long_window_divisor,
    min_budget_share: 0.0,
    warm_up_divisor: 0,
    min_failures: DEFAULT_MIN_FAILURES,
    min_events: DEFAULT_ALERT_MIN_EVENTS,
  }
}

/// `budget-spend` before it fired on 4 failures: its share and warm-up never changed.
const EARLIER_BUDGET_SPEND: DefaultPair =
  DefaultPair { min_budget_share: 0.2, warm_up_divisor: 4, ..earlier_pair("budget-spend", Severity::Page, 2.0, 72) };

/// The earlier default policies, oldest first (the commit that introduced each).
const EARLIER_DEFAULT_PAIRS: [&[DefaultPair]; 4] = [
  // c0fcbf2: three gated pairs, fast-burn at P/288.
  &[
    earlier_pair("fast-burn", Severity::Page, 14.4, 288),
    earlier_pair("slow-burn", Severity::Page, 3.0, 12),
    earlier_pair("budget-leak", Severity::Ticket, 1.5, 4),
  ],
  // b38514f: budget-spend added.
  &[
    earlier_pair("fast-burn", Severity::Page, 14.4, 288),
    EARLIER_BUDGET_SPEND,
    earlier_pair("slow-burn", Severity::Page, 3.0, 12),
    earlier_pair("budget-leak", Severity::Ticket, 1.5, 4),
  ],
  // bc73dab: fast-burn is the workbook's P/720 pair.
  &[
    earlier_pair("fast-burn", Severity::Page, 14.4, 720),
    EARLIER_BUDGET_SPEND,
    earlier_pair("slow-burn", Severity::Page, 3.0, 12),
    earlier_pair("budget-leak", Severity::Ticket, 1.5, 4),
  ],
  // e34049a: budget-spend fires on 4 failures, still needing 10 solves.
  &[
    earlier_pair("fast-burn", Severity::Page, 14.4, 720),
    DefaultPair { min_failures: BUDGET_SPEND_MIN_FAILURES, ..EARLIER_BUDGET_SPEND },
    earlier_pair("slow-burn", Severity::Page, 3.0, 12),
    earlier_pair("budget-leak", Severity::Ticket, 1.5, 4),
  ],
];

/// The gates of `policy` (from `policy_for`) under `config`: the default
/// ones for the default policy, plain ones for a custom policy.
pub fn gates_for(config: &Config, policy: &[AlertRule]) -> Vec<AlertGate> {
  match config.alerts {
    None => default_gates(policy, config.window_ms),
    Some(_) => policy.iter().map(AlertGate::plain).collect(),
  }
}

/// The policy in force for `config`: its own alerts, checked and rounded to
/// whole buckets, or the default one when it has none.
pub(crate) fn policy_for(config: &Config) -> Result<Vec<AlertRule>> {
  match &config.alerts {
    None => Ok(default_policy(config)),
    Some(rules) => validate_policy(rules.clone(), config),
  }
}

/// The largest burn rate the SLO allows: every event failing, 1 / (1 − target).
pub fn max_burn_rate(target_rate: f64) -> f64 {
  1.0 / (1.0 - target_rate)
}

/// `ms` rounded to the nearest whole number of buckets, at least one and at
/// most as many as fit in the window (a span longer than the window could not
/// be kept: the window forgets its buckets first).
pub fn round_to_buckets(ms: f64, config: &Config) -> i64 {
  let r = config.resolution_ms;
  let most = (config.window_ms / r).max(1);
  ((ms / r as f64).round() as i64).clamp(1, most) * r
}

/// Checks a custom policy against `config` and rounds its windows to whole
/// buckets; the message names the alert and the field.
pub fn validate_policy(rules: Vec<AlertRule>, config: &Config) -> Result<Vec<AlertRule>> {
  if config.target_rate >= 1.0 && !rules.is_empty() {
    return Err(
      BudgetError::out_of_range("need targetRate < 1: with targetRate 1 there is no budget to burn").at("alerts"),
    );
  }
  let max = max_burn_rate(config.target_rate);
  let max_shown = (max * 1e6).round() / 1e6;
  let mut seen: Vec<&str> = Vec::new();
  for (i, rule) in rules.iter().enumerate() {
    let at = |field: &str| format!("alerts[{i}].{field}");
    if rule.name.is_empty() {
      return Err(BudgetError::invalid_value("must be a non-empty string").at(&at("name")));
    }
    if seen.contains(&rule.name.as_str()) {
      return Err(BudgetError::invalid_value(format!("must be unique: '{}' appears twice", rule.name)).at(&at("name")));
    }
    seen.push(&rule.name);
    for (field, ms) in [("longWindowMs", rule.long_window_ms), ("shortWindowMs", rule.short_window_ms)] {
      if ms < config.resolution_ms || ms > config.window_ms {
        return Err(
          BudgetError::out_of_range(format!(
            "must be between one bucket ({} ms, resolutionMs) and the window ({} ms, windowMs), got {ms}",
            config.resolution_ms, config.window_ms
          ))
          .at(&at(field)),
        );
      }
    }
    if rule.short_window_ms >= rule.long_window_ms {
      return Err(
        BudgetError::out_of_range(format!(
          "({}) must be shorter than longWindowMs ({})",
          rule.short_window_ms, rule.long_window_ms
        ))
        .at(&at("shortWindowMs")),
      );
    }
    if !(rule.burn_rate > 0.0 && rule.burn_rate < max) {
      return Err(
        BudgetError::out_of_range(format!(
          "must be in (0, {max_shown}): a {}% SLO burns at most {max_shown}× (every event failing), got {}",
          config.target_rate * 100.0,
          rule.burn_rate
        ))
        .at(&at("burnRate")),
      );
    }
  }
  let rules: Vec<AlertRule> = rules
    .into_iter()
    .map(|r| AlertRule {
      long_window_ms: round_to_buckets(r.long_window_ms as f64, config),
      short_window_ms: round_to_buckets(r.short_window_ms as f64, config),
      ..r
    })
    .collect();
  if let Some(i) = rules.iter().position(|r| r.short_window_ms >= r.long_window_ms) {
    return Err(
      BudgetError::out_of_range(format!(
        "rounds to as many {} ms buckets as longWindowMs: the two windows must differ by at least one bucket",
        config.resolution_ms
      ))
      .at(&format!("alerts[{i}].shortWindowMs")),
    );
  }
  Ok(rules)
}

/// The fewest scrape intervals an alert window of the Prometheus rules spans:
/// a shorter `rate()` range holds too few samples to ever fire.
pub const MIN_SCRAPES_PER_WINDOW: i64 = 4;

/// One pair of the policy the Prometheus rules implement: the tracker's pair
/// (windows lengthened to [`MIN_SCRAPES_PER_WINDOW`] scrapes where shorter),
/// its gate, and what its recovery is judged on.
#[derive(Debug, Clone, PartialEq)]
pub struct ScrapePair {
  /// The pair as the tracker has it, windows made scrape-able.
  pub rule: AlertRule,
  /// Its gate, as the tracker's ([`gates_for`]).
  pub gate: AlertGate,
  /// How a span (or the long window) ends the pair ([`recovery_test`]); the
  /// default (0 solves) for a pair that is not held (a custom policy).
  pub recovery: RecoveryTest,
}

/// The policy the Prometheus rules implement: the tracker's, pair for pair.
#[derive(Debug, Clone, PartialEq)]
pub struct ScrapePolicy {
  /// The pairs in policy order.
  pub pairs: Vec<ScrapePair>,
  /// The recovery spans ([`RECOVERY_SPANS_MS`], at most the window) shortest
  /// first, lengthened to [`MIN_SCRAPES_PER_WINDOW`] scrapes where shorter (no
  /// repeats); empty when no pair is held. Unlike the tracker's
  /// ([`recovery_spans`]) they are not rounded to whole buckets: they differ
  /// from those by less than half a bucket (7 s for a 7-day SLO).
  pub recovery_spans_ms: Vec<i64>,
}

/// The policy the Prometheus rules implement for `config` (already checked)
/// and its policy in force `policy`, scraped every `scrape_interval_ms`: the
/// tracker's own pairs and gates, so that the rules and an in-process tracker
/// of the same SLO fire and resolve together. A custom policy
/// (`config.alerts`) is refused if a window is shorter than
/// [`MIN_SCRAPES_PER_WINDOW`] scrapes; in the default one such a window is
/// lengthened to four scrapes (a short window first, then the long one to at
/// least the short), as are the recovery spans.
pub fn scrape_policy(config: &Config, policy: &[AlertRule], scrape_interval_ms: i64) -> Result<ScrapePolicy> {
  let min_window = MIN_SCRAPES_PER_WINDOW * scrape_interval_ms;
  if config.window_ms < min_window {
    return Err(
      BudgetError::out_of_range(format!(
        "({}) must be at least {MIN_SCRAPES_PER_WINDOW} scrape intervals ({})",
        prom_duration(config.window_ms),
        prom_duration(min_window)
      ))
      .at("windowMs"),
    );
  }
  if config.alerts.is_some() {
    if let Some(i) = policy.iter().position(|r| r.short_window_ms < min_window) {
      return Err(
        BudgetError::out_of_range(format!(
          "({}) must be at least {MIN_SCRAPES_PER_WINDOW} scrape intervals ({}): a shorter rate() range holds too \
           few samples to ever fire",
          prom_duration(policy[i].short_window_ms),
          prom_duration(min_window)
        ))
        .at(&format!("alerts[{i}].shortWindowMs")),
      );
    }
  }
  let gates = gates_for(config, policy);
  let held = policy.iter().zip(&gates).any(|(r, g)| g.holds(r));
  let pairs = policy
    .iter()
    .zip(gates)
    .map(|(r, gate)| {
      let short = r.short_window_ms.max(min_window);
      let holds = gate.holds(r);
      ScrapePair {
        rule: AlertRule { short_window_ms: short, long_window_ms: r.long_window_ms.max(short), ..r.clone() },
        gate,
        recovery: if holds { recovery_test(config.target_rate, gate) } else { RecoveryTest::default() },
      }
    })
    .collect();
  let mut recovery_spans_ms: Vec<i64> = Vec::new();
  if held {
    // The spans as named, not rounded to the tracker's buckets (602 s for 10 min
    // in a 7-day SLO's 14 s buckets): Prometheus has no buckets, and whole
    // minutes are summed from the rules' one-minute pieces instead of read with
    // increase() from the counters.
    for span in RECOVERY_SPANS_MS {
      let span = span.min(config.window_ms).max(min_window);
      if !recovery_spans_ms.contains(&span) {
        recovery_spans_ms.push(span);
      }
    }
  }
  Ok(ScrapePolicy { pairs, recovery_spans_ms })
}

/// A duration as Prometheus writes it: the largest unit that divides it
/// (`30d`, `144m`, `1w`, `4980ms`), as `promDuration` in lib/util/duration.js.
pub fn prom_duration(ms: i64) -> String {
  const UNITS: [(&str, i64); 5] = [("w", 604_800_000), ("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)];
  UNITS
    .iter()
    .find(|(_, size)| ms % size == 0)
    .map_or_else(|| format!("{ms}ms"), |(unit, size)| format!("{}{unit}", ms / size))
}

/// The burn rate of `counts` under `target_rate`, unrounded: failures / (total × (1 − target)).
pub fn burn_rate(counts: Counts, target_rate: f64) -> f64 {
  let budget = counts.total() as f64 * (1.0 - target_rate);
  if counts.total() == 0 || budget <= 0.0 {
    0.0
  } else {
    counts.failures as f64 / budget
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  fn config(window_ms: i64) -> Config {
    Config { window_ms, resolution_ms: crate::config::default_resolution_ms(window_ms), ..Config::default() }
  }

  fn summary(rules: &[AlertRule]) -> Vec<(&str, &str, i64, i64, f64)> {
    rules
      .iter()
      .map(|r| (r.name.as_str(), r.severity.as_str(), r.long_window_ms, r.short_window_ms, r.burn_rate))
      .collect()
  }

  #[test]
  fn workbook_policy_for_a_30_day_period_is_the_workbook_table() {
    // 30 d / 43200 = 60 s buckets: 1 h & 5 min @ 14.4, 6 h & 30 min @ 6, 3 d & 6 h @ 1.
    let rules = workbook_policy(&config(30 * 86_400_000));
    assert_eq!(
      summary(&rules),
      vec![
        ("fast-burn", "page", 3_600_000, 300_000, 14.4),
        ("slow-burn", "page", 21_600_000, 1_800_000, 6.0),
        ("budget-leak", "ticket", 259_200_000, 21_600_000, 1.0),
      ]
    );
  }

  #[test]
  fn workbook_policy_for_one_hour_and_one_day() {
    // 1 h: 83 ms buckets. 5 s → 60 buckets = 4980 ms; 416.7 ms → 5 = 415 ms;
    // 30 s → 361 = 29963 ms; 2.5 s → 30 = 2490 ms; 6 min → 4337 = 359971 ms; 30 s → 29963 ms.
    assert_eq!(
      summary(&workbook_policy(&config(3_600_000))),
      vec![
        ("fast-burn", "page", 4_980, 415, 14.4),
        ("slow-burn", "page", 29_963, 2_490, 6.0),
        ("budget-leak", "ticket", 359_971, 29_963, 1.0),
      ]
    );
    // 24 h: 2 s buckets, all exact: 2 min & 10 s, 12 min & 1 min, 2.4 h & 12 min.
    assert_eq!(
      summary(&workbook_policy(&config(86_400_000))),
      vec![
        ("fast-burn", "page", 120_000, 10_000, 14.4),
        ("slow-burn", "page", 720_000, 60_000, 6.0),
        ("budget-leak", "ticket", 8_640_000, 720_000, 1.0),
      ]
    );
  }

  #[test]
  fn default_policy_for_one_day_and_seven_days() {
    // 24 h: 2 s buckets. P/720 = 2 min (60 buckets), its twelfth 10 s (5
    // buckets); P/72 = 20 min & 100 s; P/12 = 2 h & 10 min; P/4 = 6 h & 30 min.
    let day = config(86_400_000);
    assert_eq!(
      summary(&default_policy(&day)),
      vec![
        ("fast-burn", "page", 120_000, 10_000, 14.4),
        ("budget-spend", "page", 1_200_000, 100_000, 2.0),
        ("slow-burn", "page", 7_200_000, 600_000, 3.0),
        ("budget-leak", "ticket", 21_600_000, 1_800_000, 1.5),
      ]
    );
    // 7 d: 14 s buckets. P/720 = 840 s = 60 buckets; 70 s = 5 buckets;
    // P/72 = 140 min & 700 s; P/12 = 14 h & 70 min; P/4 = 42 h & 3.5 h.
    assert_eq!(
      summary(&default_policy(&config(7 * 86_400_000))),
      vec![
        ("fast-burn", "page", 840_000, 70_000, 14.4),
        ("budget-spend", "page", 8_400_000, 700_000, 2.0),
        ("slow-burn", "page", 50_400_000, 4_200_000, 3.0),
        ("budget-leak", "ticket", 151_200_000, 12_600_000, 1.5),
      ]
    );
    let gates = gates_for(&day, &default_policy(&day));
    assert_eq!(
      gates.iter().map(|g| (g.min_failures, g.resolve_burn_rate, g.warm_up_ms, g.min_budget_share)).collect::<Vec<_>>(),
      // Warm-ups: each long window, but P/4 = 6 h for budget-spend; budget-spend needs 4 failures, the others 5.
      [(5, 7.2, 120_000, 0.0), (4, 1.0, 21_600_000, 0.2), (5, 1.5, 7_200_000, 0.0), (5, 0.75, 21_600_000, 0.0)]
    );
    // A custom policy, even one equal to the default pairs, has plain gates.
    let custom = Config { alerts: Some(default_policy(&day)), ..day.clone() };
    let plain = gates_for(&custom, &default_policy(&day));
    assert_eq!(
      plain.iter().map(|g| (g.min_failures, g.resolve_burn_rate)).collect::<Vec<_>>(),
      [(0, 14.4), (0, 2.0), (0, 3.0), (0, 1.5)]
    );
    assert!(plain.iter().zip(default_policy(&day).iter()).all(|(g, r)| !g.holds(r)));
  }

  /// `f(target, gate)` for each gate of the default policy of a one-day window at `target`.
  fn per_default_gate<T>(target: f64, f: impl Fn(f64, AlertGate) -> T) -> Vec<T> {
    let c = Config { target_rate: target, ..config(86_400_000) };
    gates_for(&c, &default_policy(&c)).into_iter().map(|g| f(target, g)).collect()
  }

  #[test]
  fn recovery_min_solves_is_a_binomial_bound() {
    // Worked out apart (an exact binomial sum per n, in Python): the fewest N
    // from which on P(Binomial(n, p) ≤ ⌊R·(1 − t)·n⌋) ≤ 0.0001, p = 2R·(1 − t).
    // 95 %: fast-burn p = 0.72, budget-spend 0.1, slow-burn 0.15, budget-leak 0.075.
    let day = config(86_400_000);
    let n_of = |target: f64| per_default_gate(target, recovery_min_solves);
    assert_eq!(n_of(0.95), [26, 441, 281, 592]);
    assert_eq!(n_of(0.99), [293, 2319, 1542, 3096]);
    // budget-leak at 95 %: 592 solves allow ⌊0.0375 × 592⌋ = 22 failures; at
    // 591 the burn allows 22 too, but the test 21.
    let leak = gates_for(&day, &default_policy(&day))[3];
    let test = recovery_test(0.95, leak);
    assert!(test.recovered(Counts { successes: 570, failures: 22 }, 0.95));
    assert!(!test.recovered(Counts { successes: 569, failures: 22 }, 0.95));
    assert!(test.recovered(Counts { successes: 570, failures: 21 }, 0.95));
    // An SLO so close to 100 % that the scan stops at its limit: 99.9999 %,
    // budget-leak's p = 1.5e-6 would need more than its 4 million solves.
    let close = Config { target_rate: 0.999_999, ..day.clone() };
    let leak = gates_for(&close, &default_policy(&close))[3];
    assert_eq!(recovery_min_solves(0.999_999, leak), RECOVERY_SCAN_LIMIT + 1);
    // A threshold p the SLO cannot reach (here 2 × 14.4 × 0.05 = 1.44) gets the floor.
    assert_eq!(recovery_min_solves(0.95, AlertGate::plain(&default_policy(&day)[0])), 10);
  }

  #[test]
  fn the_recovery_test_is_an_exact_binomial_test_at_the_threshold() {
    // Worked out apart (math.comb in Python): the fewest n with
    // P(Binomial(n, p) ≤ f) ≤ 0.0001 for f = 0, 1, …, below the N above (the
    // first entry: with no failure).
    let day = config(86_400_000);
    let tests_of = |target: f64| per_default_gate(target, recovery_test);
    let shape = |t: &RecoveryTest| (t.min_solves, t.failure_steps.clone(), t.burn_alone_from);
    let at95: Vec<_> = tests_of(0.95).iter().map(shape).collect();
    assert_eq!(at95[0], (10, vec![10, 13, 15, 17, 19, 21, 23, 24], 26));
    assert_eq!(
      at95[2],
      (57, vec![73, 87, 100, 112, 123, 135, 145, 156, 166, 176, 186, 196, 206, 216, 225, 235, 244, 253, 263, 272], 281)
    );
    let at96: Vec<_> = tests_of(0.96).iter().map(shape).collect();
    assert_eq!(at96[0], (11, vec![15, 18, 21, 23, 26, 29, 31, 34, 36, 38, 41], 43));
    assert_eq!(at96.iter().map(|t| t.0).collect::<Vec<_>>(), [11, 111, 73, 149]);
    let at99: Vec<_> = tests_of(0.99).iter().map(shape).collect();
    assert_eq!(
      at99.iter().map(|t| (t.0, t.1.len(), t.2)).collect::<Vec<_>>(),
      [(60, 20, 293), (456, 22, 2319), (303, 22, 1542), (610, 22, 3096)]
    );
    assert_eq!(at99[1].1[..5], [583, 691, 790, 883, 972]);

    // slow-burn at 95 % (p = 0.15): 56 clean solves are not enough (0.85^56 =
    // 1.1e-4), 57 are (9.5e-5); 73 solves may hold one failure, 72 may not.
    let slow = &tests_of(0.95)[2];
    assert!(!slow.recovered(Counts { successes: 56, failures: 0 }, 0.95));
    assert!(slow.recovered(Counts { successes: 57, failures: 0 }, 0.95));
    assert!(!slow.recovered(Counts { successes: 71, failures: 1 }, 0.95));
    assert!(slow.recovered(Counts { successes: 72, failures: 1 }, 0.95));
    // Below N the stricter bar decides: at 112 solves the burn allows
    // ⌊1.5 × 0.05 × 112⌋ = 8 failures, the test 4.
    assert!(slow.recovered(Counts { successes: 108, failures: 4 }, 0.95));
    assert!(!slow.recovered(Counts { successes: 107, failures: 5 }, 0.95));
    // From N = 281 on, the burn alone: 21 failures in 281 burn 1.49×.
    assert!(slow.recovered(Counts { successes: 260, failures: 21 }, 0.95));
    assert!(!slow.recovered(Counts { successes: 259, failures: 22 }, 0.95));
    // A threshold out of the SLO's reach: burn rate over 10 solves.
    let plain = recovery_test(0.95, AlertGate::plain(&default_policy(&day)[0]));
    assert_eq!(shape(&plain), (10, vec![], 10));
  }

  #[test]
  fn unreachable_default_pairs_are_left_out() {
    // 90 %: at most 10× burn, so the 14.4× page cannot fire and is dropped.
    let c = Config { target_rate: 0.9, ..config(86_400_000) };
    assert_eq!(
      default_policy(&c).iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
      ["budget-spend", "slow-burn", "budget-leak"]
    );
    let c = Config { target_rate: 1.0, ..config(86_400_000) };
    assert!(default_policy(&c).is_empty());
    // 86 %: at most 7.14×; the fast page (14.4) goes, the slow one (3) stays.
    let c = Config { target_rate: 0.86, ..config(86_400_000) };
    assert_eq!(
      default_policy(&c).iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
      ["budget-spend", "slow-burn", "budget-leak"]
    );
  }

  fn rule(long: i64, short: i64, burn: f64) -> AlertRule {
    AlertRule {
      name: "x".into(),
      severity: Severity::Page,
      long_window_ms: long,
      short_window_ms: short,
      burn_rate: burn,
      min_events: 0,
    }
  }

  #[test]
  fn custom_policies_are_checked() {
    let c = Config { window_ms: 3_600_000, resolution_ms: 1000, ..Config::default() };
    let err = |r: AlertRule| validate_policy(vec![r], &c).unwrap_err().render("config");
    assert!(err(rule(3_600_001, 300_000, 10.0)).contains("config.alerts[0].longWindowMs must be between one bucket"));
    assert!(
      err(rule(600_000, 500, 10.0)).contains("config.alerts[0].shortWindowMs must be between one bucket (1000 ms")
    );
    assert!(err(rule(600_000, 600_000, 10.0)).contains("shortWindowMs (600000) must be shorter than longWindowMs"));
    let unreachable = err(rule(600_000, 60_000, 20.0));
    assert_eq!(
      unreachable,
      "config.alerts[0].burnRate must be in (0, 20): a 95% SLO burns at most 20× (every event failing), got 20"
    );
    let c1 = Config { target_rate: 1.0, ..c.clone() };
    assert!(validate_policy(vec![rule(600_000, 60_000, 2.0)], &c1).unwrap_err().message.contains("targetRate < 1"));
    assert!(err(rule(600_000, 60_000, 0.0)).contains("burnRate must be in (0,"));
    assert!(err(rule(1400, 1000, 2.0))
      .contains("config.alerts[0].shortWindowMs rounds to as many 1000 ms buckets as longWindowMs"));
    let twice = validate_policy(vec![rule(600_000, 60_000, 2.0), rule(600_000, 60_000, 3.0)], &c).unwrap_err();
    assert_eq!(twice.render("config"), "config.alerts[1].name must be unique: 'x' appears twice");
    let ok = validate_policy(vec![rule(600_400, 60_600, 19.9)], &c).unwrap();
    assert_eq!((ok[0].long_window_ms, ok[0].short_window_ms), (600_000, 61_000));
    // A window the resolution does not divide: 1000 ms of 400 ms buckets keeps
    // 2 whole buckets (800 ms); a long window of the whole 1000 ms must not round
    // up to 1200 ms, past what the window keeps.
    let odd = Config { window_ms: 1000, resolution_ms: 400, ..Config::default() };
    let capped = validate_policy(vec![rule(1000, 400, 2.0)], &odd).unwrap();
    assert_eq!((capped[0].long_window_ms, capped[0].short_window_ms), (800, 400));
  }

  #[test]
  fn scrape_policy_is_the_trackers_policy() {
    let day = config(86_400_000);
    let of = |c: &Config, scrape| scrape_policy(c, &policy_for(c).unwrap(), scrape);
    let windows = |p: &ScrapePolicy| {
      p.pairs
        .iter()
        .map(|p| (p.rule.long_window_ms / 1000, p.rule.short_window_ms / 1000, p.rule.burn_rate))
        .collect::<Vec<_>>()
    };
    // 24 h at a 15 s scrape: the default pairs (2 min & 10 s, 20 min & 100 s, 2 h &
    // 10 min, 6 h & 30 min); only fast-burn's 10 s is under 4 scrapes: 1 min.
    let p = of(&day, 15_000).unwrap();
    assert_eq!(windows(&p), [(120, 60, 14.4), (1200, 100, 2.0), (7200, 600, 3.0), (21_600, 1800, 1.5)]);
    // The tracker's gates, unchanged (warm-ups of the tracker's own long windows).
    assert_eq!(p.pairs.iter().map(|p| p.gate).collect::<Vec<_>>(), gates_for(&day, &default_policy(&day)));
    // 10 solves in the long window, but budget-spend's 4 (its evidence is a fifth of the budget).
    assert_eq!(p.pairs.iter().map(|p| p.rule.min_events).collect::<Vec<_>>(), [10, 4, 10, 10]);
    // The tracker's recovery spans (another change's to tune), none under 4 scrapes.
    let spans = recovery_spans(&day);
    assert!(spans[0] >= 60_000);
    assert_eq!(p.recovery_spans_ms, spans);
    for pair in &p.pairs {
      assert_eq!(pair.recovery, recovery_test(0.95, pair.gate));
    }
    // A 1 min scrape: 4 min at least; fast-burn's long window (2 min) lengthened to its short one.
    let p = of(&day, 60_000).unwrap();
    assert_eq!(windows(&p), [(240, 240, 14.4), (1200, 240, 2.0), (7200, 600, 3.0), (21_600, 1800, 1.5)]);
    assert_eq!(p.recovery_spans_ms, spans);
    // A 5 min scrape: 20 min at least; a shorter recovery span becomes 20 min, once.
    let mut longer: Vec<i64> = Vec::new();
    for ms in spans.iter().map(|&ms| ms.max(1_200_000)) {
      if !longer.contains(&ms) {
        longer.push(ms);
      }
    }
    assert!(spans[0] >= 1_200_000 || longer != spans);
    assert_eq!(of(&day, 300_000).unwrap().recovery_spans_ms, longer);
    // 7 d (14 s buckets): the tracker judges on 602 s for 10 min (43 buckets), 1204 s for
    // 20 min; the rules on the spans as named, whole minutes.
    let week = Config { target_rate: 0.95, ..config(7 * 86_400_000) };
    assert_eq!(recovery_spans(&week)[..2], [602_000, 1_204_000]);
    assert_eq!(of(&week, 60_000).unwrap().recovery_spans_ms, RECOVERY_SPANS_MS);
    // 1 h: at most the window, once.
    let hour_slo = Config { target_rate: 0.95, ..config(3_600_000) };
    assert_eq!(of(&hour_slo, 15_000).unwrap().recovery_spans_ms, [600_000, 1_200_000, 1_800_000, 2_700_000, 3_600_000]);
    // 90 %: at most 10×: the 14.4× page is left out, as the tracker leaves it out.
    let ninety = Config { target_rate: 0.9, ..config(30 * 86_400_000) };
    let names = of(&ninety, 15_000).unwrap().pairs.into_iter().map(|p| p.rule.name).collect::<Vec<_>>();
    assert_eq!(names, ["budget-spend", "slow-burn", "budget-leak"]);
    // 30 d (60 s buckets): 1 h & 5 min, 10 h & 50 min, 60 h & 5 h, 180 h & 15 h.
    let month = Config { target_rate: 0.999, ..config(30 * 86_400_000) };
    assert_eq!(
      windows(&of(&month, 15_000).unwrap()),
      [(3600, 300, 14.4), (36_000, 3000, 2.0), (216_000, 18_000, 3.0), (648_000, 54_000, 1.5)]
    );
    let short = of(&config(30_000), 15_000).unwrap_err().render("slo");
    assert_eq!(short, "slo.windowMs (30s) must be at least 4 scrape intervals (1m)");
    let hour = Config {
      window_ms: 3_600_000,
      resolution_ms: 1000,
      alerts: Some(vec![rule(60_000, 5000, 10.0)]),
      ..Config::default()
    };
    assert_eq!(
      of(&hour, 15_000).unwrap_err().render("slo"),
      "slo.alerts[0].shortWindowMs (5s) must be at least 4 scrape intervals (1m): a shorter rate() range holds too \
       few samples to ever fire"
    );
    // A custom policy: as checked, plain gates, nothing held, no recovery spans.
    let p = of(&hour, 1000).unwrap();
    assert_eq!(windows(&p), [(60, 5, 10.0)]);
    assert_eq!((p.pairs[0].gate.min_failures, p.pairs[0].gate.resolve_burn_rate), (0, 10.0));
    assert_eq!(p.pairs[0].recovery, RecoveryTest::default());
    assert!(p.recovery_spans_ms.is_empty());
  }

  #[test]
  fn prom_durations() {
    assert_eq!(
      [2_592_000_000, 604_800_000, 4_320_000, 60_000, 30_000, 4980].map(prom_duration),
      ["30d", "1w", "72m", "1m", "30s", "4980ms"]
    );
  }

  #[test]
  fn burn_rate_of_counts() {
    assert_eq!(burn_rate(Counts { successes: 0, failures: 0 }, 0.95), 0.0);
    assert_eq!(burn_rate(Counts { successes: 3, failures: 1 }, 0.5), 0.5);
    assert_eq!(burn_rate(Counts { successes: 0, failures: 4 }, 0.75), 4.0);
    assert_eq!(burn_rate(Counts { successes: 0, failures: 4 }, 1.0), 0.0);
  }
}
