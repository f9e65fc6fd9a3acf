//! Student's t test with exact t quantiles, of an estimate whose standard
//! error and degrees of freedom the caller derived from runs (and perhaps a
//! calibration), and the one-sample test of a mean. For ministat's
//! table-based variant see [`crate::ministat`].

use serde::Serialize;

use crate::dist::{t_quantile, t_two_sided_p};
use crate::error::{require_finite_result, require_open_unit, require_sample, Result, StatsError};
use crate::summary::{mean_unchecked, variance_unchecked};
use crate::ConfidenceInterval;

/// Outcome of a t test of a mean or a difference of means.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TTest {
    /// The estimated mean (one sample) or difference.
    pub estimate: f64,
    /// Standard error of `estimate`.
    pub std_err: f64,
    /// `estimate / std_err`.
    pub t: f64,
    /// Degrees of freedom (fractional for a Satterthwaite estimate).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_standard_error_takes_limits() {
        let same = t_test_from_estimate(0.0, 0.0, 3.0, 0.95).unwrap();
        assert_eq!((same.t, same.p_value), (0.0, 1.0));
        let shifted = one_sample_t_test(&[1.0, 1.0], 0.95).unwrap();
        assert_eq!((shifted.t, shifted.p_value), (f64::INFINITY, 0.0));
        assert_eq!((shifted.ci.low, shifted.ci.high), (1.0, 1.0));
    }

    #[test]
    fn rejects_bad_input() {
        assert!(one_sample_t_test(&[1.0], 0.95).is_err());
        assert!(one_sample_t_test(&[1.0, f64::INFINITY], 0.95).is_err());
        assert!(one_sample_t_test(&[1.0, 2.0], 0.0).is_err());
        assert!(t_test_from_estimate(0.1, -1.0, 3.0, 0.95).is_err());
        assert!(t_test_from_estimate(0.1, 0.01, 0.0, 0.95).is_err());
    }
}
