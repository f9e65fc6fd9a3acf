//! Two-sided Mann–Whitney U test with scipy's `method="auto"` behaviour.

use serde::Serialize;

use super::null_distribution::MannWhitneyNull;
use super::ranking::Ranking;
use super::RankMethod;
use crate::dist::normal_sf;
use crate::error::{require_sample, Result};

/// Outcome of [`mann_whitney_u`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MannWhitney {
    /// U statistic of `baseline`: the number of (baseline, candidate) pairs
    /// with the baseline value larger, ties counting one half. This is
    /// `scipy.stats.mannwhitneyu(baseline, candidate).statistic`.
    pub u_baseline: f64,
    /// `n_baseline * n_candidate - u_baseline`.
    pub u_candidate: f64,
    /// `u_candidate / (n_baseline * n_candidate)`: the probability that a
    /// random candidate value exceeds a random baseline value (ties count
    /// one half). 0.5 means no shift.
    pub prob_candidate_greater: f64,
    /// Two-sided p-value.
    pub p_value: f64,
    /// Exact distribution or normal approximation.
    pub method: RankMethod,
    /// Size of the baseline sample.
    pub n_baseline: usize,
    /// Size of the candidate sample.
    pub n_candidate: usize,
    /// Whether any values (within or across samples) tie.
    pub has_ties: bool,
}

/// scipy uses the exact distribution only while one sample has at most
/// this many values.
const EXACT_MAX_SMALLER_SAMPLE: usize = 8;

/// Two-sided Mann–Whitney U test, matching `scipy.stats.mannwhitneyu`
/// defaults (`use_continuity=True, method="auto"`).
///
/// The exact null distribution is used when there are no ties and at least
/// one sample has 8 or fewer values; otherwise the normal approximation with
/// tie-corrected variance and continuity correction. (If the exact counts
/// would overflow 128 bits, which needs the other sample to exceed ~10^5
/// values, the normal approximation is used where scipy would still be
/// exact.) When every value is equal the p-value is 1.
pub fn mann_whitney_u(baseline: &[f64], candidate: &[f64]) -> Result<MannWhitney> {
    require_sample(baseline, 1, "baseline")?;
    require_sample(candidate, 1, "candidate")?;
    let (n_a, n_b) = (baseline.len(), candidate.len());
    let combined: Vec<f64> = baseline.iter().chain(candidate).copied().collect();
    let ranking = Ranking::new(&combined);
    let rank_sum_a: f64 = ranking.ranks[..n_a].iter().sum();
    let u_baseline = rank_sum_a - (n_a * (n_a + 1)) as f64 / 2.0;
    let pairs = (n_a * n_b) as f64;
    let u_candidate = pairs - u_baseline;
    let u_larger = u_baseline.max(u_candidate);
    let has_ties = ranking.has_ties();

    let small_enough = n_a <= EXACT_MAX_SMALLER_SAMPLE || n_b <= EXACT_MAX_SMALLER_SAMPLE;
    let exact = if small_enough && !has_ties {
        // Without ties U is an integer; the p-value is twice the lower tail
        // at the mirrored statistic.
        let mirrored = (pairs - u_larger) as usize;
        MannWhitneyNull::new(n_a, n_b, mirrored).map(|null| null.cdf(mirrored))
    } else {
        None
    };
    let (p_value, method) = match exact {
        Some(lower_tail) => ((2.0 * lower_tail).min(1.0), RankMethod::Exact),
        None => (
            asymptotic_p(u_larger, n_a, n_b, ranking.tie_term()),
            RankMethod::NormalApproximation,
        ),
    };
    Ok(MannWhitney {
        u_baseline,
        u_candidate,
        prob_candidate_greater: u_candidate / pairs,
        p_value,
        method,
        n_baseline: n_a,
        n_candidate: n_b,
        has_ties,
    })
}

fn asymptotic_p(u_larger: f64, n_a: usize, n_b: usize, tie_term: f64) -> f64 {
    let (n_a, n_b) = (n_a as f64, n_b as f64);
    let n = n_a + n_b;
    let variance = n_a * n_b / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if variance.is_nan() || variance <= 0.0 {
        // All values tie (or n = 2 with a tie): no evidence either way.
        return 1.0;
    }
    let z = (u_larger - n_a * n_b / 2.0 - 0.5) / variance.sqrt();
    (2.0 * normal_sf(z)).min(1.0)
}
