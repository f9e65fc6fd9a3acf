//! Rank-based methods: the Mann–Whitney U test, the Wilcoxon signed-rank
//! test, and Hodges–Lehmann estimates with confidence intervals obtained by
//! inverting those tests.
//!
//! p-values follow `scipy.stats.mannwhitneyu` and `scipy.stats.wilcoxon`
//! with their default arguments, including when each switches between its
//! exact null distribution and the normal approximation.

mod hodges_lehmann;
mod mann_whitney;
mod null_distribution;
mod ranking;
mod wilcoxon;

use serde::Serialize;

pub use hodges_lehmann::{
    hodges_lehmann_paired, hodges_lehmann_ratio, hodges_lehmann_shift, HodgesLehmann,
    HodgesLehmannRatio,
};
pub use mann_whitney::{mann_whitney_u, MannWhitney};
pub use wilcoxon::{wilcoxon_signed_rank, wilcoxon_signed_rank_paired, WilcoxonSignedRank};

/// How a p-value or interval was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RankMethod {
    /// The exact null distribution of the statistic for untied data.
    Exact,
    /// The exact distribution conditional on the observed ties and zeros,
    /// i.e. a complete enumeration of all sign flips (scipy's permutation
    /// test for small tied samples).
    ExactConditional,
    /// Normal approximation (with tie correction where the test has one).
    NormalApproximation,
}
