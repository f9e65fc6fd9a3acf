//! Hodges–Lehmann location estimates with distribution-free confidence
//! intervals obtained by inverting the rank tests (Lehmann 1963, Bauer 1972):
//! two-sample shift (and its log-scale ratio form) and the paired / one-sample
//! pseudo-median.

use serde::Serialize;

use super::null_distribution::{MannWhitneyNull, SignedRankNull};
use super::RankMethod;
use crate::dist::{normal_cdf, normal_quantile};
use crate::error::{require_open_unit, require_positive, require_sample, Result, StatsError};
use crate::summary::median_of_sorted;
use crate::ConfidenceInterval;

/// A Hodges–Lehmann estimate with its rank-inversion interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HodgesLehmann {
    /// Median of the pairwise differences (two-sample) or of the Walsh
    /// averages (paired).
    pub estimate: f64,
    /// Interval between two order statistics of those differences/averages;
    /// `None` when the samples are too small for any interval to reach the
    /// requested confidence.
    pub ci: Option<ConfidenceInterval>,
    /// Coverage of `ci` under the null distribution for untied data (≥ the
    /// requested level for exact intervals).
    pub achieved_confidence: Option<f64>,
    /// Exact null distribution or its normal approximation.
    pub method: RankMethod,
}

/// [`HodgesLehmann`] on the log scale, reported as a ratio.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct HodgesLehmannRatio {
    /// `exp` of the shift estimate of `ln(candidate)` against `ln(baseline)`:
    /// the median of all pairwise ratios candidate_j / baseline_i.
    pub ratio: f64,
    /// Interval of the ratio.
    pub ci: Option<ConfidenceInterval>,
    /// See [`HodgesLehmann::achieved_confidence`].
    pub achieved_confidence: Option<f64>,
    /// See [`HodgesLehmann::method`].
    pub method: RankMethod,
}

/// Shift of `candidate` relative to `baseline`: the median of all
/// `candidate_j - baseline_i`, with the interval
/// `[D(k), D(mn + 1 - k)]` over the sorted differences, where `k` is the
/// largest rank with `P(U <= k - 1) <= (1 - confidence) / 2` under the exact
/// Mann–Whitney null distribution (normal approximation with continuity
/// correction when the exact counts overflow, beyond ~64 values per side).
///
/// Uses O(mn) memory and refuses more than 2^28 pairs (e.g. 16384 values
/// per side). With ties the interval's coverage is approximate, as
/// for every rank-inversion interval.
pub fn hodges_lehmann_shift(
    baseline: &[f64],
    candidate: &[f64],
    confidence: f64,
) -> Result<HodgesLehmann> {
    require_sample(baseline, 1, "baseline")?;
    require_sample(candidate, 1, "candidate")?;
    require_open_unit(confidence, "confidence")?;
    let mut differences: Vec<f64> =
        Vec::with_capacity(checked_pair_count(baseline.len(), candidate.len())?);
    for b in candidate {
        differences.extend(baseline.iter().map(|a| b - a));
    }
    differences.sort_unstable_by(f64::total_cmp);
    require_all_finite_sorted(&differences)?;
    let (m, n) = (baseline.len(), candidate.len());
    let tail = (1.0 - confidence) / 2.0;
    let half = m * n / 2;
    let (critical, method) = match MannWhitneyNull::new(m, n, half) {
        Some(null) => (null.critical_rank(tail), RankMethod::Exact),
        None => {
            let (m, n) = (m as f64, n as f64);
            let sd = (m * n * (m + n + 1.0) / 12.0).sqrt();
            (
                approximate_critical_rank(m * n / 2.0, sd, tail),
                RankMethod::NormalApproximation,
            )
        }
    };
    Ok(interval_from_order_statistics(
        &differences,
        critical,
        confidence,
        method,
    ))
}

/// [`hodges_lehmann_shift`] on `ln` of both samples, exponentiated: the
/// median pairwise ratio candidate/baseline and its interval. All values
/// must be > 0.
pub fn hodges_lehmann_ratio(
    baseline: &[f64],
    candidate: &[f64],
    confidence: f64,
) -> Result<HodgesLehmannRatio> {
    require_positive(baseline, "baseline")?;
    require_positive(candidate, "candidate")?;
    let log_a: Vec<f64> = baseline.iter().map(|x| x.ln()).collect();
    let log_b: Vec<f64> = candidate.iter().map(|x| x.ln()).collect();
    let shift = hodges_lehmann_shift(&log_a, &log_b, confidence)?;
    Ok(HodgesLehmannRatio {
        ratio: shift.estimate.exp(),
        ci: shift.ci.map(|ci| ConfidenceInterval {
            low: ci.low.exp(),
            high: ci.high.exp(),
            level: ci.level,
        }),
        achieved_confidence: shift.achieved_confidence,
        method: shift.method,
    })
}

/// One-sample (paired) Hodges–Lehmann estimate of the centre of
/// `differences`: the median of the Walsh averages `(d_i + d_j) / 2`,
/// `i <= j`, with the interval from the exact signed-rank distribution
/// (normal approximation above 126 values). Zeros are kept, as the
/// estimator's definition requires. At most 2^28 Walsh averages (23170
/// differences).
pub fn hodges_lehmann_paired(differences: &[f64], confidence: f64) -> Result<HodgesLehmann> {
    require_sample(differences, 1, "differences")?;
    require_open_unit(confidence, "confidence")?;
    let n = differences.len();
    let mut walsh = Vec::with_capacity(checked_pair_count(n, n + 1)? / 2);
    for (i, &di) in differences.iter().enumerate() {
        walsh.extend(differences[i..].iter().map(|&dj| (di + dj) / 2.0));
    }
    walsh.sort_unstable_by(f64::total_cmp);
    require_all_finite_sorted(&walsh)?;
    let tail = (1.0 - confidence) / 2.0;
    let (critical, method) = match SignedRankNull::untied(n) {
        Some(null) => (null.critical_rank(tail), RankMethod::Exact),
        None => {
            let n = n as f64;
            let sd = (n * (n + 1.0) * (2.0 * n + 1.0) / 24.0).sqrt();
            (
                approximate_critical_rank(n * (n + 1.0) / 4.0, sd, tail),
                RankMethod::NormalApproximation,
            )
        }
    };
    Ok(interval_from_order_statistics(
        &walsh, critical, confidence, method,
    ))
}

/// Both estimators materialise all pairs; past this they would need
/// gigabytes.
const MAX_PAIRS: usize = 1 << 28;

fn checked_pair_count(m: usize, n: usize) -> Result<usize> {
    match m.checked_mul(n) {
        Some(pairs) if pairs <= MAX_PAIRS => Ok(pairs),
        _ => Err(StatsError::InvalidParameter {
            name: "pair count",
            value: m as f64 * n as f64,
            expected: "at most 2^28 pairwise differences",
        }),
    }
}

/// Differences or averages of values near `f64::MAX` overflow; the sorted
/// extremes tell whether any did.
fn require_all_finite_sorted(sorted: &[f64]) -> Result<()> {
    match (sorted.first(), sorted.last()) {
        (Some(first), Some(last)) if first.is_finite() && last.is_finite() => Ok(()),
        _ => Err(StatsError::Overflow),
    }
}

/// Largest k with Φ((k - 1 + 0.5 - mean) / sd) <= tail, i.e. the continuity
/// corrected P(statistic <= k - 1) <= tail.
fn approximate_critical_rank(mean: f64, sd: f64, tail: f64) -> Option<(usize, f64)> {
    let k = (mean + 0.5 + normal_quantile(tail) * sd).floor();
    if k < 1.0 {
        return None;
    }
    Some((k as usize, normal_cdf((k - 0.5 - mean) / sd)))
}

fn interval_from_order_statistics(
    sorted: &[f64],
    critical: Option<(usize, f64)>,
    confidence: f64,
    method: RankMethod,
) -> HodgesLehmann {
    let estimate = median_of_sorted(sorted);
    let Some((k, lower_tail)) = critical.filter(|&(k, _)| k >= 1 && 2 * k <= sorted.len() + 1)
    else {
        return HodgesLehmann {
            estimate,
            ci: None,
            achieved_confidence: None,
            method,
        };
    };
    HodgesLehmann {
        estimate,
        ci: Some(ConfidenceInterval {
            low: sorted[k - 1],
            high: sorted[sorted.len() - k],
            level: confidence,
        }),
        achieved_confidence: Some(1.0 - 2.0 * lower_tail),
        method,
    }
}
