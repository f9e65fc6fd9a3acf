//! Two-sided Wilcoxon signed-rank test with scipy's defaults
//! (`zero_method="wilcox", correction=False, method="auto"`).

use serde::Serialize;

use super::null_distribution::SignedRankNull;
use super::ranking::Ranking;
use super::RankMethod;
use crate::dist::normal_sf;
use crate::error::{require_same_len, require_sample, Result};

/// Outcome of [`wilcoxon_signed_rank`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct WilcoxonSignedRank {
    /// `min(r_plus, r_minus)`, scipy's two-sided statistic.
    pub statistic: f64,
    /// Sum of the ranks of |d| over positive differences.
    pub r_plus: f64,
    /// Sum of the ranks of |d| over negative differences.
    pub r_minus: f64,
    /// Differences that were not zero (the ranked ones).
    pub n_nonzero: usize,
    /// Zero differences, dropped before ranking.
    pub n_zero: usize,
    /// Two-sided p-value.
    pub p_value: f64,
    /// Which null distribution gave the p-value.
    pub method: RankMethod,
}

/// scipy's `method="auto"` limits: exact up to 50 values without ties or
/// zeros; complete sign-flip enumeration up to 13 values otherwise.
const EXACT_MAX_N: usize = 50;
const ENUMERATION_MAX_N: usize = 13;

/// Two-sided Wilcoxon signed-rank test of "the differences are symmetric
/// about zero", matching `scipy.stats.wilcoxon(differences)`.
///
/// Zeros are dropped and the rest ranked by |d| with average ranks for ties.
/// The choice of null distribution follows scipy: n = all differences
/// including zeros; n > 50 → normal approximation (tie-corrected, no
/// continuity correction); otherwise exact if there are no ties and no
/// zeros; otherwise, for n <= 13, the exact distribution given the ties
/// (what scipy's permutation test enumerates); otherwise the normal
/// approximation. If every difference is zero the p-value is 1.
pub fn wilcoxon_signed_rank(differences: &[f64]) -> Result<WilcoxonSignedRank> {
    require_sample(differences, 1, "differences")?;
    let nonzero: Vec<f64> = differences.iter().copied().filter(|&d| d != 0.0).collect();
    let n_total = differences.len();
    let n_zero = n_total - nonzero.len();
    let magnitudes: Vec<f64> = nonzero.iter().map(|d| d.abs()).collect();
    let ranking = Ranking::new(&magnitudes);
    let r_plus: f64 = nonzero
        .iter()
        .zip(&ranking.ranks)
        .filter(|(d, _)| **d > 0.0)
        .map(|(_, r)| r)
        .sum();
    let count = nonzero.len() as f64;
    let r_minus = count * (count + 1.0) / 2.0 - r_plus;
    let has_ties = ranking.has_ties();

    let untied_exact = (n_total <= EXACT_MAX_N && !has_ties && n_zero == 0)
        .then(|| SignedRankNull::untied(nonzero.len()))
        .flatten();
    // Average ranks are multiples of 1/2, so doubling makes every possible
    // T+ an integer and the enumeration exact.
    let tied_exact = (untied_exact.is_none() && n_total <= ENUMERATION_MAX_N)
        .then(|| {
            let doubled: Vec<u64> = ranking.ranks.iter().map(|r| (2.0 * r) as u64).collect();
            SignedRankNull::new(&doubled)
        })
        .flatten();
    let (p_value, method) = if nonzero.is_empty() {
        (1.0, RankMethod::ExactConditional)
    } else if let Some(null) = untied_exact {
        (two_sided(&null, r_plus as usize), RankMethod::Exact)
    } else if let Some(null) = tied_exact {
        (
            two_sided(&null, (2.0 * r_plus) as usize),
            RankMethod::ExactConditional,
        )
    } else {
        (
            asymptotic_p(r_plus, count, ranking.tie_term()),
            RankMethod::NormalApproximation,
        )
    };
    Ok(WilcoxonSignedRank {
        statistic: r_plus.min(r_minus),
        r_plus,
        r_minus,
        n_nonzero: nonzero.len(),
        n_zero,
        p_value,
        method,
    })
}

/// [`wilcoxon_signed_rank`] of `candidate_i - baseline_i` for paired samples.
pub fn wilcoxon_signed_rank_paired(
    baseline: &[f64],
    candidate: &[f64],
) -> Result<WilcoxonSignedRank> {
    require_same_len(baseline, candidate)?;
    require_sample(baseline, 1, "baseline")?;
    require_sample(candidate, 1, "candidate")?;
    let differences: Vec<f64> = baseline.iter().zip(candidate).map(|(a, b)| b - a).collect();
    wilcoxon_signed_rank(&differences)
}

fn two_sided(null: &SignedRankNull, observed: usize) -> f64 {
    (2.0 * null.sf(observed).min(null.cdf(observed))).min(1.0)
}

fn asymptotic_p(r_plus: f64, count: f64, tie_term: f64) -> f64 {
    let mean = count * (count + 1.0) / 4.0;
    let variance = (count * (count + 1.0) * (2.0 * count + 1.0) - tie_term / 2.0) / 24.0;
    if variance <= 0.0 {
        return 1.0;
    }
    let z = (r_plus - mean) / variance.sqrt();
    (2.0 * normal_sf(z.abs())).min(1.0)
}
