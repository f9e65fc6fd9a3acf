//! Student's t tests with exact t quantiles: pooled and Welch two-sample
//! tests, the one-sample test, and the paired test on log ratios that
//! schedlab's interleaved-boot design relies on.
//!
//! Every two-sample function takes `(baseline, candidate)` and estimates
//! `candidate - baseline`, matching `scipy.stats.ttest_ind(candidate,
//! baseline)`. For ministat's table-based variant see [`crate::ministat`].

use serde::Serialize;

use crate::dist::{t_quantile, t_two_sided_p};
use crate::error::{
    require_finite_result, require_open_unit, require_positive, require_same_len, require_sample,
    Result, StatsError,
};
use crate::summary::{mean_unchecked, variance_unchecked};
use crate::ConfidenceInterval;

/// Outcome of a t test of a mean or a difference of means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TTest {
    /// The estimated mean (one sample) or `mean(candidate) - mean(baseline)`.
    pub estimate: f64,
    /// Standard error of `estimate`.
    pub std_err: f64,
    /// `estimate / std_err`.
    pub t: f64,
    /// Degrees of freedom (fractional for Welch).
    pub df: f64,
    /// Two-sided p-value against a true value of zero.
    pub p_value: f64,
    /// Confidence interval of `estimate`.
    pub ci: ConfidenceInterval,
}

/// Builds the result once the estimate, its standard error and df are known.
///
/// A zero standard error (constant samples) has no t distribution; we take
/// the limits instead of returning NaN as scipy does: an estimate of exactly
/// zero gives `t = 0, p = 1`, anything else `t = ±∞, p = 0`, and the interval
/// collapses onto the estimate. Overflowed inputs are an error.
pub(crate) fn t_test_from_parts(
    estimate: f64,
    std_err: f64,
    df: f64,
    confidence: f64,
) -> Result<TTest> {
    require_finite_result(estimate)?;
    require_finite_result(std_err)?;
    if df.is_nan() || df <= 0.0 {
        return Err(StatsError::Overflow);
    }
    if std_err == 0.0 {
        let (t, p_value) = if estimate == 0.0 {
            (0.0, 1.0)
        } else {
            (f64::INFINITY.copysign(estimate), 0.0)
        };
        return Ok(TTest {
            estimate,
            std_err,
            t,
            df,
            p_value,
            ci: ConfidenceInterval {
                low: estimate,
                high: estimate,
                level: confidence,
            },
        });
    }
    let t = estimate / std_err;
    let half_width = t_quantile(0.5 + confidence / 2.0, df) * std_err;
    Ok(TTest {
        estimate,
        std_err,
        t,
        df,
        p_value: t_two_sided_p(t, df),
        ci: ConfidenceInterval {
            low: estimate - half_width,
            high: estimate + half_width,
            level: confidence,
        },
    })
}

/// The t test of an estimate whose standard error and degrees of freedom
/// come from elsewhere: a variance pooled over runs, a calibration, or both.
/// `df` may be fractional (Satterthwaite).
pub fn t_test_from_estimate(
    estimate: f64,
    std_err: f64,
    df: f64,
    confidence: f64,
) -> Result<TTest> {
    require_open_unit(confidence, "confidence")?;
    if std_err.is_nan() || std_err < 0.0 {
        return Err(StatsError::InvalidParameter {
            name: "std_err",
            value: std_err,
            expected: ">= 0",
        });
    }
    t_test_from_parts(estimate, std_err, df, confidence)
}

/// Two-sample Student's t test with pooled variance (equal variances
/// assumed), as `scipy.stats.ttest_ind(candidate, baseline)`. Each sample
/// needs at least two values.
pub fn student_t_test(baseline: &[f64], candidate: &[f64], confidence: f64) -> Result<TTest> {
    require_sample(baseline, 2, "baseline")?;
    require_sample(candidate, 2, "candidate")?;
    require_open_unit(confidence, "confidence")?;
    let (n_a, n_b) = (baseline.len() as f64, candidate.len() as f64);
    let (mean_a, mean_b) = (mean_unchecked(baseline), mean_unchecked(candidate));
    let df = n_a + n_b - 2.0;
    let pooled_var = ((n_a - 1.0) * variance_unchecked(baseline, mean_a)
        + (n_b - 1.0) * variance_unchecked(candidate, mean_b))
        / df;
    let std_err = (pooled_var * (1.0 / n_a + 1.0 / n_b)).sqrt();
    t_test_from_parts(mean_b - mean_a, std_err, df, confidence)
}

/// Welch's unequal-variance t test with Welch–Satterthwaite degrees of
/// freedom, as `scipy.stats.ttest_ind(candidate, baseline, equal_var=False)`.
/// Each sample needs at least two values; if both are constant the df is
/// reported as `n_a + n_b - 2`.
pub fn welch_t_test(baseline: &[f64], candidate: &[f64], confidence: f64) -> Result<TTest> {
    require_sample(baseline, 2, "baseline")?;
    require_sample(candidate, 2, "candidate")?;
    require_open_unit(confidence, "confidence")?;
    let parts = WelchParts::new(baseline, candidate);
    t_test_from_parts(parts.diff, parts.std_err, parts.df, confidence)
}

/// Difference of means, its Welch standard error and Welch–Satterthwaite df;
/// shared with the equivalence test. Inputs must already be validated.
pub(crate) struct WelchParts {
    pub diff: f64,
    pub std_err: f64,
    pub df: f64,
}

impl WelchParts {
    pub(crate) fn new(baseline: &[f64], candidate: &[f64]) -> Self {
        let (n_a, n_b) = (baseline.len() as f64, candidate.len() as f64);
        let (mean_a, mean_b) = (mean_unchecked(baseline), mean_unchecked(candidate));
        let share_a = variance_unchecked(baseline, mean_a) / n_a;
        let share_b = variance_unchecked(candidate, mean_b) / n_b;
        let total = share_a + share_b;
        let df = if total == 0.0 {
            n_a + n_b - 2.0
        } else {
            // Written with the shares' fractions of the total so that
            // squaring cannot overflow for huge variances.
            let (fraction_a, fraction_b) = (share_a / total, share_b / total);
            1.0 / (fraction_a * fraction_a / (n_a - 1.0) + fraction_b * fraction_b / (n_b - 1.0))
        };
        WelchParts {
            diff: mean_b - mean_a,
            std_err: total.sqrt(),
            df,
        }
    }
}

/// One-sample t test of `mean(xs) = 0`, as `scipy.stats.ttest_1samp(xs, 0)`;
/// needs at least two values.
pub fn one_sample_t_test(xs: &[f64], confidence: f64) -> Result<TTest> {
    require_sample(xs, 2, "sample")?;
    require_open_unit(confidence, "confidence")?;
    let n = xs.len() as f64;
    let mean = mean_unchecked(xs);
    let std_err = (variance_unchecked(xs, mean) / n).sqrt();
    t_test_from_parts(mean, std_err, n - 1.0, confidence)
}

/// Paired comparison on the log scale: the mean log ratio, the ratio it
/// implies and its confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PairedLogRatio {
    /// Number of pairs.
    pub n: usize,
    /// Mean of `ln(candidate_i) - ln(baseline_i)`.
    pub mean_log_ratio: f64,
    /// Sample standard deviation of the log ratios.
    pub std_log_ratio: f64,
    /// `exp(mean_log_ratio)`: the geometric-mean ratio candidate/baseline.
    pub ratio: f64,
    /// Confidence interval of `ratio` (the exponentiated t interval).
    pub ratio_ci: ConfidenceInterval,
    /// t statistic of the mean log ratio.
    pub t: f64,
    /// Degrees of freedom `n - 1`.
    pub df: f64,
    /// Two-sided p-value of "ratio = 1".
    pub p_value: f64,
}

/// Paired t test on `ln(candidate_i) - ln(baseline_i)`, the per-boot-pair
/// comparison. Pairs are matched by position; all values must be > 0 and
/// there must be at least two pairs.
pub fn paired_log_ratio_t_test(
    baseline: &[f64],
    candidate: &[f64],
    confidence: f64,
) -> Result<PairedLogRatio> {
    require_same_len(baseline, candidate)?;
    require_sample(baseline, 2, "baseline")?;
    require_sample(candidate, 2, "candidate")?;
    require_positive(baseline, "baseline")?;
    require_positive(candidate, "candidate")?;
    let log_ratios: Vec<f64> = baseline
        .iter()
        .zip(candidate)
        .map(|(a, b)| b.ln() - a.ln())
        .collect();
    log_ratio_t_test(&log_ratios, confidence)
}

/// The same as [`paired_log_ratio_t_test`] for callers that already hold the
/// log ratios (e.g. differences of per-boot log medians).
pub fn log_ratio_t_test(log_ratios: &[f64], confidence: f64) -> Result<PairedLogRatio> {
    let test = one_sample_t_test(log_ratios, confidence)?;
    let mean = test.estimate;
    Ok(PairedLogRatio {
        n: log_ratios.len(),
        mean_log_ratio: mean,
        std_log_ratio: variance_unchecked(log_ratios, mean).sqrt(),
        ratio: mean.exp(),
        ratio_ci: ConfidenceInterval {
            low: test.ci.low.exp(),
            high: test.ci.high.exp(),
            level: confidence,
        },
        t: test.t,
        df: test.df,
        p_value: test.p_value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_samples_take_limits() {
        let same = welch_t_test(&[2.0, 2.0], &[2.0, 2.0, 2.0], 0.95).unwrap();
        assert_eq!((same.t, same.p_value), (0.0, 1.0));
        let shifted = student_t_test(&[2.0, 2.0], &[3.0, 3.0], 0.95).unwrap();
        assert_eq!((shifted.t, shifted.p_value), (f64::INFINITY, 0.0));
    }

    #[test]
    fn rejects_bad_input() {
        assert!(student_t_test(&[1.0], &[1.0, 2.0], 0.95).is_err());
        assert!(welch_t_test(&[1.0, 2.0], &[1.0, f64::INFINITY], 0.95).is_err());
        assert!(paired_log_ratio_t_test(&[1.0, 2.0], &[1.0], 0.95).is_err());
        assert!(paired_log_ratio_t_test(&[1.0, 0.0], &[1.0, 2.0], 0.95).is_err());
        assert!(one_sample_t_test(&[1.0, 2.0], 0.0).is_err());
    }
}
