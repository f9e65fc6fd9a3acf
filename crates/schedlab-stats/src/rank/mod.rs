//! The rank test benchstat reports: the Mann–Whitney U test, with p-values
//! as `scipy.stats.mannwhitneyu` gives them with its default arguments,
//! including when it switches between the exact null distribution and the
//! normal approximation.

mod mann_whitney;
mod null_distribution;
mod ranking;

use serde::Serialize;

pub use mann_whitney::{mann_whitney_u, MannWhitney};

/// How a p-value was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RankMethod {
    /// The exact null distribution of the statistic for untied data.
    Exact,
    /// Normal approximation with tie correction.
    NormalApproximation,
}
