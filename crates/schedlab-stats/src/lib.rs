//! Pure statistics for schedlab (no I/O): everything the compare, stat and
//! history commands compute from measured values.
//!
//! The unit of evidence is the run: iterations of one run share its
//! conditions (boot, placement, frequency), so comparisons reduce every run
//! to one number and test those, with a variance from the runs themselves,
//! a calibration, or both.
//!
//! - [`summary`]: mean/median/std/CoV rows, harmonic and geometric means,
//!   benchstat's order-statistic confidence interval of the median and a
//!   t-scaled MAD.
//! - [`variance`]: within-group pooling and the nested run/boot variance
//!   components of repeated runs.
//! - [`ttest`]: the t test of an estimate with a given standard error and
//!   df, and the one-sample t test, with exact t quantiles.
//! - [`equivalence`]: TOST on the log ratio ("no change beyond ±δ").
//! - [`power`]: minimum detectable effect and the runs a design needs.
//! - [`multiplicity`]: Benjamini–Hochberg, Benjamini–Yekutieli and Holm.
//! - [`sequential`]: alpha spending for plans that stop once decided.
//! - [`ministat`]: FreeBSD ministat's table-based pooled t comparison,
//!   reproduced digit for digit, and C `%g` formatting.
//! - [`rank`]: the Mann–Whitney U test benchstat reports.
//! - [`edivisive`]: E-divisive means change points with a seeded permutation
//!   test (Matteson and James 2014, as MongoDB's and Hunter's CI use it).
//! - [`dist`]: normal, t and F quantiles.
//!
//! Conventions: comparisons estimate candidate relative to baseline
//! (`candidate - baseline`, or `candidate / baseline` on the log scale).
//! Confidence levels and alphas are fractions (0.95, not 95). Invalid input
//! (empty or too short samples, NaN or infinite values, non-positive values
//! where logs or ratios are taken, out-of-range parameters) returns
//! [`StatsError`]; nothing panics on user data. Results derive
//! `serde::Serialize` for the JSON reports.
//!
//! ```
//! use schedlab_stats::multiplicity::{adjust_p_values, Adjustment};
//! use schedlab_stats::{equivalence, power, summary, ttest, variance};
//!
//! // Iterations (ns per operation) of four runs on each side. Each run
//! // becomes one number, the mean log of its iterations.
//! let base: [&[f64]; 4] = [
//!     &[2011.0, 2003.0, 2019.0],
//!     &[1987.0, 1995.0, 1990.0],
//!     &[2034.0, 2027.0, 2041.0],
//!     &[2002.0, 1999.0, 2008.0],
//! ];
//! let candidate: [&[f64]; 4] = [
//!     &[2052.0, 2047.0, 2060.0],
//!     &[2049.0, 2040.0, 2055.0],
//!     &[2071.0, 2066.0, 2080.0],
//!     &[2040.0, 2046.0, 2038.0],
//! ];
//! let mean_log = |run: &[f64]| summary::mean(&run.iter().map(|x| x.ln()).collect::<Vec<_>>());
//! let base_runs = base.iter().map(|r| mean_log(r)).collect::<Result<Vec<_>, _>>()?;
//! let candidate_runs = candidate.iter().map(|r| mean_log(r)).collect::<Result<Vec<_>, _>>()?;
//!
//! // Student's t on the run summaries: the difference of their means, with
//! // the run-to-run variance pooled over both sides.
//! let effect = summary::mean(&candidate_runs)? - summary::mean(&base_runs)?;
//! let pooled = variance::pooled_within_groups(&[&base_runs, &candidate_runs])?;
//! let std_err = (pooled.variance * (1.0 / 4.0 + 1.0 / 4.0)).sqrt();
//! let test = ttest::t_test_from_estimate(effect, std_err, pooled.df, 0.95)?;
//! assert!(test.ci.low > 0.0); // the candidate is slower
//!
//! // Across the whole matrix of cases: Benjamini–Hochberg q-values.
//! let q = adjust_p_values(&[test.p_value, 0.4, 0.03], Adjustment::BenjaminiHochberg)?;
//! assert!(q[0] <= 0.05);
//!
//! // "No change beyond ±5 %" is a claim of its own (TOST), and an
//! // inconclusive row prints the smallest change the design could detect.
//! let tost = equivalence::tost_from_estimate(effect, std_err, pooled.df, 0.05, 0.05)?;
//! assert!(tost.equivalent);
//! let mde = power::mde_t(std_err, pooled.df, 0.05, 0.8)?;
//! assert!(mde.pct_increase > 0.0);
//! # Ok::<(), schedlab_stats::StatsError>(())
//! ```
#![forbid(unsafe_code)]
// println! and eprintln! panic when the reader has gone (`| head`, a dropped ssh session's
// terminal); output goes through writers whose errors are handled.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

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
