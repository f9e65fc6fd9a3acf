//! Seeded bootstrap confidence intervals (percentile and BCa) of the ratio
//! of medians `median(candidate) / median(baseline)`.
//!
//! Resampling draws from a ChaCha8 stream seeded by a `u64`, so the same
//! inputs and seed give bit-identical intervals on every platform. The BCa
//! interval itself is a pure function of (observed statistic, replicates,
//! jackknife values, confidence) — [`bca_interval`] — so it can be checked
//! against scipy on scipy's own replicates even though the random streams
//! differ.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::dist::{normal_cdf, normal_quantile, quantile_sorted};
use crate::error::{
    require_finite_result, require_open_unit, require_positive, require_sample, Result, StatsError,
};
use crate::summary::{mean_unchecked, median_of_sorted, midpoint, sorted_copy};
use crate::ConfidenceInterval;

/// How many resamples to draw, the interval level, and the seed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BootstrapSettings {
    /// Number of bootstrap resamples (each sample resampled independently).
    pub resamples: usize,
    /// Confidence level in (0, 1).
    pub confidence: f64,
    /// Seed of the ChaCha8 stream.
    pub seed: u64,
}

impl Default for BootstrapSettings {
    fn default() -> Self {
        BootstrapSettings {
            resamples: 2000,
            confidence: 0.95,
            seed: 0,
        }
    }
}

/// Bootstrap intervals of `median(candidate) / median(baseline)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RatioOfMediansBootstrap {
    /// The observed ratio of medians.
    pub ratio: f64,
    /// Percentile interval: type-7 quantiles of the replicates at
    /// `(1 - confidence) / 2` and its complement.
    pub percentile: ConfidenceInterval,
    /// Bias-corrected and accelerated interval; `None` when it is undefined
    /// (every replicate on one side of the observed ratio).
    pub bca: Option<BcaInterval>,
    /// Resamples drawn.
    pub resamples: usize,
    /// Seed used.
    pub seed: u64,
}

/// A BCa interval with the two constants that shaped it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BcaInterval {
    /// The interval.
    pub ci: ConfidenceInterval,
    /// Bias correction z0: the normal quantile of the share of replicates
    /// below the observed statistic (ties count one half).
    pub bias_correction: f64,
    /// Acceleration â from the jackknife.
    pub acceleration: f64,
}

/// Resamples `baseline` and `candidate` independently `settings.resamples`
/// times and returns the percentile and BCa intervals of the ratio of
/// medians. Each sample needs at least two values, all > 0.
///
/// Cost is O(resamples × (n_baseline + n_candidate)) with no allocation per
/// resample: medians of a resample are read off the sorted sample from
/// per-index draw counts instead of sorting.
pub fn bootstrap_ratio_of_medians(
    baseline: &[f64],
    candidate: &[f64],
    settings: BootstrapSettings,
) -> Result<RatioOfMediansBootstrap> {
    require_open_unit(settings.confidence, "confidence")?;
    let mut replicates =
        ratio_of_medians_replicates(baseline, candidate, settings.resamples, settings.seed)?;
    replicates.sort_unstable_by(f64::total_cmp);
    let ratio = require_finite_result(ratio_of_medians(baseline, candidate))?;
    // Sorted, so the extremes show whether any replicate overflowed.
    require_finite_result(replicates[0])?;
    require_finite_result(replicates[replicates.len() - 1])?;
    let jackknife = jackknife_ratio_of_medians(baseline, candidate)?;
    let bca = bca_from_sorted(
        ratio,
        &replicates,
        &[&jackknife[0], &jackknife[1]],
        settings.confidence,
    )
    .ok();
    Ok(RatioOfMediansBootstrap {
        ratio,
        percentile: percentile_from_sorted(&replicates, settings.confidence),
        bca,
        resamples: settings.resamples,
        seed: settings.seed,
    })
}

fn ratio_of_medians(baseline: &[f64], candidate: &[f64]) -> f64 {
    median_of_sorted(&sorted_copy(candidate)) / median_of_sorted(&sorted_copy(baseline))
}

/// The bootstrap distribution itself, in draw order: for each resample,
/// `n_baseline` indices into baseline then `n_candidate` into candidate are
/// drawn uniformly from one ChaCha8 stream seeded with `seed`.
pub fn ratio_of_medians_replicates(
    baseline: &[f64],
    candidate: &[f64],
    resamples: usize,
    seed: u64,
) -> Result<Vec<f64>> {
    validate_ratio_samples(baseline, candidate)?;
    if resamples == 0 {
        return Err(StatsError::InvalidParameter {
            name: "resamples",
            value: 0.0,
            expected: "at least 1",
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut baseline_resampler = MedianResampler::new(baseline);
    let mut candidate_resampler = MedianResampler::new(candidate);
    let mut replicates = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let baseline_median = baseline_resampler.resampled_median(&mut rng);
        let candidate_median = candidate_resampler.resampled_median(&mut rng);
        replicates.push(candidate_median / baseline_median);
    }
    Ok(replicates)
}

fn validate_ratio_samples(baseline: &[f64], candidate: &[f64]) -> Result<()> {
    require_sample(baseline, 2, "baseline")?;
    require_sample(candidate, 2, "candidate")?;
    // Indices are drawn as u32 (see `MedianResampler`).
    let longest = baseline.len().max(candidate.len());
    if u32::try_from(longest).is_err() {
        return Err(StatsError::InvalidParameter {
            name: "sample length",
            value: longest as f64,
            expected: "at most 2^32 - 1 values",
        });
    }
    require_positive(baseline, "baseline")?;
    require_positive(candidate, "candidate")
}

/// Draws resamples of one sample and returns their medians.
struct MedianResampler {
    sorted: Vec<f64>,
    draws_per_index: Vec<u32>,
}

impl MedianResampler {
    fn new(xs: &[f64]) -> Self {
        MedianResampler {
            sorted: sorted_copy(xs),
            draws_per_index: vec![0; xs.len()],
        }
    }

    fn resampled_median(&mut self, rng: &mut ChaCha8Rng) -> f64 {
        let n = self.sorted.len();
        self.draws_per_index.fill(0);
        // Drawing u32 keeps the stream identical on 32- and 64-bit targets.
        for _ in 0..n {
            let index = rng.random_range(0..n as u32) as usize;
            self.draws_per_index[index] += 1;
        }
        // Indices into `sorted` are already in value order, so walking the
        // counts visits the resample in sorted order.
        let (lower_middle, upper_middle) = ((n - 1) / 2, n / 2);
        let mut seen = 0usize;
        let mut lower_value = None;
        for (index, &draws) in self.draws_per_index.iter().enumerate() {
            seen += draws as usize;
            if lower_value.is_none() && seen > lower_middle {
                lower_value = Some(self.sorted[index]);
            }
            if seen > upper_middle {
                let upper_value = self.sorted[index];
                return match lower_value {
                    Some(lower) if n.is_multiple_of(2) => midpoint(lower, upper_value),
                    _ => upper_value,
                };
            }
        }
        // Not reached: the draw counts sum to n, so the walk passes the middle.
        self.sorted[n - 1]
    }
}

/// Leave-one-out values of the ratio of medians: first leaving out each
/// baseline value (in ascending order of the value left out), then each
/// candidate value. Each sample needs at least two values, all > 0.
pub fn jackknife_ratio_of_medians(baseline: &[f64], candidate: &[f64]) -> Result<[Vec<f64>; 2]> {
    validate_ratio_samples(baseline, candidate)?;
    let (sorted_a, sorted_b) = (sorted_copy(baseline), sorted_copy(candidate));
    let (median_a, median_b) = (median_of_sorted(&sorted_a), median_of_sorted(&sorted_b));
    let without_baseline = (0..sorted_a.len())
        .map(|i| median_b / median_leaving_out(&sorted_a, i))
        .collect();
    let without_candidate = (0..sorted_b.len())
        .map(|i| median_leaving_out(&sorted_b, i) / median_a)
        .collect();
    Ok([without_baseline, without_candidate])
}

/// Median of `sorted` with element `left_out` removed (len >= 2).
fn median_leaving_out(sorted: &[f64], left_out: usize) -> f64 {
    let remaining = sorted.len() - 1;
    let at = |position: usize| {
        if position < left_out {
            sorted[position]
        } else {
            sorted[position + 1]
        }
    };
    if remaining % 2 == 1 {
        at(remaining / 2)
    } else {
        midpoint(at(remaining / 2 - 1), at(remaining / 2))
    }
}

/// Percentile interval of arbitrary replicates (type-7 quantiles, as
/// `scipy.stats.bootstrap(method="percentile")`).
pub fn percentile_interval(replicates: &[f64], confidence: f64) -> Result<ConfidenceInterval> {
    require_sample(replicates, 1, "replicates")?;
    require_open_unit(confidence, "confidence")?;
    Ok(percentile_from_sorted(&sorted_copy(replicates), confidence))
}

fn percentile_from_sorted(sorted: &[f64], confidence: f64) -> ConfidenceInterval {
    let tail = (1.0 - confidence) / 2.0;
    ConfidenceInterval {
        low: quantile_sorted(sorted, tail),
        high: quantile_sorted(sorted, 1.0 - tail),
        level: confidence,
    }
}

/// BCa interval (Efron & Tibshirani 1993, §14.3 and eq. 15.36) from its
/// ingredients, following `scipy.stats.bootstrap(method="BCa")`:
///
/// - z0 = Φ⁻¹(share of `replicates` below `observed`, ties counting ½);
/// - for each sample j with jackknife values θ₍ᵢ₎ (n_j of them),
///   U = (n_j − 1)(mean θ₍.₎ − θ₍ᵢ₎), and
///   â = Σ_j (ΣU³ / n_j³) / (6 (Σ_j ΣU² / n_j²)^{3/2});
/// - the bounds are the replicate quantiles (type 7) at
///   Φ(z0 + (z0 ± z)/(1 − â(z0 ± z))), z = Φ⁻¹((1 − confidence)/2).
///
/// When the jackknife values do not vary, â is taken as 0 (scipy divides
/// 0 by 0 and returns NaN). Fails with [`StatsError::Degenerate`] when every
/// replicate lies on one side of `observed`.
pub fn bca_interval(
    observed: f64,
    replicates: &[f64],
    jackknife: &[&[f64]],
    confidence: f64,
) -> Result<BcaInterval> {
    require_sample(replicates, 1, "replicates")?;
    require_sample(&[observed], 1, "observed")?;
    require_open_unit(confidence, "confidence")?;
    if jackknife.is_empty() {
        return Err(StatsError::TooFewSamples {
            what: "jackknife",
            needed: 1,
            got: 0,
        });
    }
    for values in jackknife {
        require_sample(values, 1, "jackknife")?;
    }
    bca_from_sorted(observed, &sorted_copy(replicates), jackknife, confidence)
}

fn bca_from_sorted(
    observed: f64,
    sorted: &[f64],
    jackknife: &[&[f64]],
    confidence: f64,
) -> Result<BcaInterval> {
    let below = sorted.partition_point(|&x| x < observed);
    let at_or_below = sorted.partition_point(|&x| x <= observed);
    let share_below = (below + at_or_below) as f64 / (2 * sorted.len()) as f64;
    if share_below <= 0.0 || share_below >= 1.0 {
        return Err(StatsError::Degenerate(
            "every bootstrap replicate lies on one side of the observed statistic",
        ));
    }
    let bias_correction = normal_quantile(share_below);
    let acceleration = jackknife_acceleration(jackknife);
    let z = normal_quantile((1.0 - confidence) / 2.0);
    let adjusted = |z_level: f64| {
        let shifted = bias_correction + z_level;
        normal_cdf(bias_correction + shifted / (1.0 - acceleration * shifted))
    };
    let (low_prob, high_prob) = (adjusted(z), adjusted(-z));
    if !(low_prob.is_finite() && high_prob.is_finite()) {
        return Err(StatsError::Degenerate("BCa adjusted levels are not finite"));
    }
    Ok(BcaInterval {
        ci: ConfidenceInterval {
            low: quantile_sorted(sorted, low_prob),
            high: quantile_sorted(sorted, high_prob),
            level: confidence,
        },
        bias_correction,
        acceleration,
    })
}

fn jackknife_acceleration(jackknife: &[&[f64]]) -> f64 {
    let mut skew_sum = 0.0;
    let mut spread_sum = 0.0;
    for values in jackknife {
        let n = values.len() as f64;
        let mean = mean_unchecked(values);
        let (mut cubes, mut squares) = (0.0, 0.0);
        for &value in values.iter() {
            let u = (n - 1.0) * (mean - value);
            squares += u * u;
            cubes += u * u * u;
        }
        skew_sum += cubes / (n * n * n);
        spread_sum += squares / (n * n);
    }
    if spread_sum == 0.0 {
        return 0.0;
    }
    skew_sum / (6.0 * spread_sum.powf(1.5))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leave_one_out_median() {
        let sorted = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(median_leaving_out(&sorted, 0), 3.0);
        assert_eq!(median_leaving_out(&sorted, 3), 2.0);
        let sorted = [1.0, 2.0, 3.0];
        assert_eq!(median_leaving_out(&sorted, 1), 2.0);
        assert_eq!(median_leaving_out(&sorted, 2), 1.5);
    }

    #[test]
    fn constant_samples_give_point_intervals() {
        let result =
            bootstrap_ratio_of_medians(&[2.0; 5], &[3.0; 4], BootstrapSettings::default()).unwrap();
        assert_eq!(result.ratio, 1.5);
        assert_eq!((result.percentile.low, result.percentile.high), (1.5, 1.5));
        let bca = result.bca.unwrap();
        assert_eq!((bca.ci.low, bca.ci.high, bca.acceleration), (1.5, 1.5, 0.0));
    }

    #[test]
    fn rejects_bad_input() {
        let settings = BootstrapSettings::default();
        assert!(bootstrap_ratio_of_medians(&[1.0], &[1.0, 2.0], settings).is_err());
        assert!(bootstrap_ratio_of_medians(&[1.0, -1.0], &[1.0, 2.0], settings).is_err());
        assert!(ratio_of_medians_replicates(&[1.0, 2.0], &[1.0, 2.0], 0, 1).is_err());
        assert!(bca_interval(1.0, &[2.0, 3.0], &[&[1.0, 2.0]], 0.95).is_err());
    }
}
