//! Pure statistics for schedlab (no I/O): everything the compare and report
//! commands compute from measured samples.
//!
//! - [`summary`]: mean/median/std/CoV rows, harmonic and geometric means,
//!   benchstat's order-statistic confidence interval of the median.
//! - [`ministat`]: FreeBSD ministat's table-based pooled t comparison,
//!   reproduced digit for digit, and C `%g` formatting.
//! - [`ttest`]: pooled and Welch two-sample t tests, the one-sample test and
//!   the paired test on log ratios, with exact t quantiles.
//! - [`rank`]: the Mann–Whitney U test (benchstat's comparison of medians).
//! - [`multiplicity`]: Benjamini–Hochberg, Benjamini–Yekutieli and Holm.
//! - [`equivalence`]: TOST on the log ratio ("no change beyond ±δ").
//! - [`power`]: minimum detectable effect and sample-size planning.
//! - [`edivisive`]: E-divisive means change points with a seeded permutation
//!   test (Matteson and James 2014, as MongoDB's and Hunter's CI use it).
//!
//! Conventions: two-sample functions take `(baseline, candidate)` and
//! estimate candidate relative to baseline (`candidate - baseline` or
//! `candidate / baseline`). Confidence levels and alphas are fractions
//! (0.95, not 95). Invalid input (empty or too short samples, NaN or
//! infinite values, non-positive values where logs or ratios are taken,
//! out-of-range parameters) returns [`StatsError`]; nothing panics on user
//! data. Results derive `serde::Serialize` for the JSON reports.
//!
//! ```
//! use schedlab_stats::{equivalence, multiplicity, power, ttest};
//!
//! // Per-boot medians of one case, A and B boots paired by position.
//! let a = [2.011, 1.987, 2.034, 2.002, 1.995, 2.021];
//! let b = [2.052, 2.049, 2.071, 2.040, 2.047, 2.066];
//! let paired = ttest::paired_log_ratio_t_test(&a, &b, 0.95)?;
//! assert!(paired.ratio_ci.low > 1.0); // B is slower
//!
//! // Across the whole matrix: BH q-values, then a practical-effect floor.
//! let q = multiplicity::benjamini_hochberg(&[paired.p_value, 0.4, 0.03])?;
//! let marked = q[0] <= 0.05 && (paired.ratio - 1.0).abs() >= 0.01;
//! assert!(marked);
//!
//! // Inconclusive rows print the smallest change the t test could detect instead.
//! let std_err = paired.std_log_ratio / (paired.n as f64).sqrt();
//! let mde = power::mde_t(std_err, paired.df, 0.05, 0.8)?;
//! assert!(mde.pct_increase > 0.0);
//! let log_ratios: Vec<f64> = a.iter().zip(&b).map(|(x, y)| (y / x).ln()).collect();
//! let tost = equivalence::tost_log_ratio_paired(&log_ratios, 0.05, 0.05)?;
//! assert!(tost.equivalent); // within ±5 %
//! # Ok::<(), schedlab_stats::StatsError>(())
//! ```
#![forbid(unsafe_code)]

pub mod dist;
pub mod edivisive;
pub mod equivalence;
mod error;
pub mod ministat;
pub mod multiplicity;
pub mod power;
pub mod rank;
pub mod sequential;
pub mod summary;
pub mod ttest;
pub mod variance;

use serde::Serialize;

pub use error::{Result, StatsError};

/// A two-sided confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ConfidenceInterval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
    /// Nominal confidence level (a fraction, e.g. 0.95). Methods built on
    /// discrete distributions report their achieved coverage separately.
    pub level: f64,
}

impl ConfidenceInterval {
    /// Whether `value` lies in `[low, high]`.
    pub fn contains(&self, value: f64) -> bool {
        self.low <= value && value <= self.high
    }
}
