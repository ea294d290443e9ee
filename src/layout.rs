//! The layouts the addon and `lib/` share, each one enum: Rust writes and reads
//! by its variants, and `seamContract()` exports it to JavaScript as
//! `{ name: index }`, which `lib/contract.js` checks at load against the names
//! the JavaScript reads (`b[R.total]`, `figure(F.now)`).

use std::collections::HashMap;

/// Defines a layout: a `#[repr(usize)]` enum whose variants are indexes from 0,
/// each with its JavaScript name.
macro_rules! layout {
  ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $js:literal,)* }) => {
    $(#[$doc])*
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[repr(usize)]
    pub enum $name {
      $($(#[$vdoc])* $variant,)*
    }

    // Each layout uses some of these (`COUNT` for the buffer's, `from_index` for the figures).
    #[allow(dead_code)]
    impl $name {
      /// Every variant, in index order.
      pub const ALL: &'static [$name] = &[$($name::$variant,)*];
      /// How many indexes the layout has.
      pub const COUNT: usize = Self::ALL.len();

      /// The name JavaScript reads it by.
      pub const fn js_name(self) -> &'static str {
        match self {
          $($name::$variant => $js,)*
        }
      }

      /// The variant at `index`, if there is one.
      pub fn from_index(index: i32) -> Option<Self> {
        Self::ALL.get(usize::try_from(index).ok()?).copied()
      }

      /// The layout for JavaScript: `{ name: index }`.
      pub fn to_js() -> HashMap<String, u32> {
        Self::ALL.iter().map(|v| (v.js_name().to_string(), *v as u32)).collect()
      }
    }
  };
}

layout! {
  /// The report buffer's head (`write_report`, `lib/fast-report.js`), before the firing pairs.
  ReportField {
    /// The status's index in `Status::ALL` (0 healthy … 3 exhausted).
    Status => "status",
    CurrentRate => "currentRate",
    Total => "total",
    Failures => "failures",
    BudgetRemainingPct => "budgetRemainingPct",
    BurnRate => "burnRate",
    SloTarget => "sloTarget",
    Successes => "successes",
    BudgetTotal => "budgetTotal",
    BudgetRemaining => "budgetRemaining",
    Dropped => "dropped",
    At => "at",
    /// 0 or 1.
    InsufficientData => "insufficientData",
    /// NaN for null.
    ExhaustsInMs => "exhaustsInMs",
    /// How many firing pairs follow the head.
    Firing => "firing",
  }
}

layout! {
  /// Each firing pair's values after the report buffer's head.
  PairField {
    /// The pair's index in `alertPolicy`.
    Index => "index",
    BurnRateLong => "burnRateLong",
    BurnRateShort => "burnRateShort",
  }
}

layout! {
  /// What each tracker's `figure(index)` reads (`lib/tracker.js`'s getters of the same names).
  Figure {
    Now => "now",
    Total => "total",
    Successes => "successes",
    Failures => "failures",
    CurrentRate => "currentRate",
    BudgetTotal => "budgetTotal",
    BudgetRemaining => "budgetRemaining",
    RemainingFraction => "remainingFraction",
    BurnRate => "burnRate",
    /// The status's index in `Status::ALL`.
    Status => "status",
    /// The last delivered status's index in `Status::ALL`.
    LastStatus => "lastStatus",
    /// 0 or 1.
    Closed => "closed",
  }
}
