//! Equivalence testing (TOST, Schuirmann 1987) on the log ratio: "the
//! change is within ±δ" becomes a positive claim with its own error rate,
//! which is what lets a report print "≈" instead of an unhelpful "~".

use serde::Serialize;

use crate::dist::{t_cdf, t_quantile, t_sf};
use crate::error::{require_finite_result, require_positive, require_sample, Result, StatsError};
use crate::summary::{mean_unchecked, variance_unchecked};
use crate::ttest::WelchParts;
use crate::ConfidenceInterval;

/// Outcome of a two one-sided tests procedure on `ln(candidate/baseline)`
/// with margin `±ln(1 + delta)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Equivalence {
    /// Estimated log ratio (difference of mean logs, or mean paired log ratio).
    pub log_ratio: f64,
    /// `exp(log_ratio)`.
    pub ratio: f64,
    /// The margin `ln(1 + delta)`.
    pub margin_log: f64,
    /// p-value of H0 "log ratio <= -margin".
    pub p_lower: f64,
    /// p-value of H0 "log ratio >= +margin".
    pub p_upper: f64,
    /// `max(p_lower, p_upper)`, the TOST p-value.
    pub p_value: f64,
    /// `p_value < alpha`: the ratio is shown to lie within
    /// `[1/(1+delta), 1+delta]`.
    pub equivalent: bool,
    /// The matching `1 - 2 alpha` interval of the ratio; `equivalent` holds
    /// exactly when it lies strictly inside the margin.
    pub ratio_ci: ConfidenceInterval,
    /// Degrees of freedom of the t distribution used.
    pub df: f64,
}

/// TOST with Welch's t on the logs of two independent samples (each at
/// least two values, all > 0), as two one-sided
/// `scipy.stats.ttest_ind(..., equal_var=False)` tests against the shifted
/// margins. `delta` is the relative margin (0.01 = 1 %), `alpha` in (0, 0.5).
pub fn tost_log_ratio_two_sample(
    baseline: &[f64],
    candidate: &[f64],
    delta: f64,
    alpha: f64,
) -> Result<Equivalence> {
    require_sample(baseline, 2, "baseline")?;
    require_sample(candidate, 2, "candidate")?;
    require_positive(baseline, "baseline")?;
    require_positive(candidate, "candidate")?;
    let log_a: Vec<f64> = baseline.iter().map(|x| x.ln()).collect();
    let log_b: Vec<f64> = candidate.iter().map(|x| x.ln()).collect();
    let parts = WelchParts::new(&log_a, &log_b);
    tost_from_estimate(parts.diff, parts.std_err, parts.df, delta, alpha)
}

/// TOST with the one-sample t test on paired log ratios
/// `ln(candidate_i) - ln(baseline_i)` (at least two).
pub fn tost_log_ratio_paired(log_ratios: &[f64], delta: f64, alpha: f64) -> Result<Equivalence> {
    require_sample(log_ratios, 2, "log_ratios")?;
    let n = log_ratios.len() as f64;
    let mean = mean_unchecked(log_ratios);
    let std_err = (variance_unchecked(log_ratios, mean) / n).sqrt();
    tost_from_estimate(mean, std_err, n - 1.0, delta, alpha)
}

/// TOST of a log-ratio `estimate` whose standard error and degrees of
/// freedom come from elsewhere (runs, a calibration, or both); the two
/// forms above reduce their samples to these three numbers.
pub fn tost_from_estimate(
    estimate: f64,
    std_err: f64,
    df: f64,
    delta: f64,
    alpha: f64,
) -> Result<Equivalence> {
    require_finite_result(estimate)?;
    require_finite_result(std_err)?;
    if std_err < 0.0 || df.is_nan() || df <= 0.0 {
        return Err(StatsError::InvalidParameter {
            name: "df",
            value: df,
            expected: "> 0 with a standard error >= 0",
        });
    }
    if !(delta.is_finite() && delta > 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "delta",
            value: delta,
            expected: "finite and > 0",
        });
    }
    if !(alpha.is_finite() && alpha > 0.0 && alpha < 0.5) {
        return Err(StatsError::InvalidParameter {
            name: "alpha",
            value: alpha,
            expected: "strictly between 0 and 0.5",
        });
    }
    let margin = delta.ln_1p();
    // With no spread the data either sit inside the margin or they do not.
    let (p_lower, p_upper, half_width) = if std_err == 0.0 {
        (
            if estimate > -margin { 0.0 } else { 1.0 },
            if estimate < margin { 0.0 } else { 1.0 },
            0.0,
        )
    } else {
        (
            t_sf((estimate + margin) / std_err, df),
            t_cdf((estimate - margin) / std_err, df),
            t_quantile(1.0 - alpha, df) * std_err,
        )
    };
    let p_value = p_lower.max(p_upper);
    Ok(Equivalence {
        log_ratio: estimate,
        ratio: estimate.exp(),
        margin_log: margin,
        p_lower,
        p_upper,
        p_value,
        equivalent: p_value < alpha,
        ratio_ci: ConfidenceInterval {
            low: (estimate - half_width).exp(),
            high: (estimate + half_width).exp(),
            level: 1.0 - 2.0 * alpha,
        },
        df,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tight_identical_samples_are_equivalent() {
        let a = [100.0, 100.1, 99.9, 100.05, 99.95];
        let e = tost_log_ratio_two_sample(&a, &a, 0.01, 0.05).unwrap();
        assert!(e.equivalent);
        assert!(e.ratio_ci.low > 1.0 / 1.01 && e.ratio_ci.high < 1.01);
    }

    #[test]
    fn constant_log_ratios() {
        let inside = tost_log_ratio_paired(&[0.001; 4], 0.01, 0.05).unwrap();
        assert!(inside.equivalent);
        let outside = tost_log_ratio_paired(&[0.5; 4], 0.01, 0.05).unwrap();
        assert!(!outside.equivalent);
    }

    #[test]
    fn from_estimate_agrees_with_the_paired_test() {
        let d = [0.01, -0.004, 0.007, 0.002, -0.001];
        let paired = tost_log_ratio_paired(&d, 0.02, 0.05).unwrap();
        let n = d.len() as f64;
        let mean = d.iter().sum::<f64>() / n;
        let var = d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        let direct = tost_from_estimate(mean, (var / n).sqrt(), n - 1.0, 0.02, 0.05).unwrap();
        assert!((paired.p_value - direct.p_value).abs() < 1e-15);
        assert!(tost_from_estimate(0.0, 0.01, 0.0, 0.02, 0.05).is_err());
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(tost_log_ratio_paired(&[0.1, 0.2], 0.0, 0.05).is_err());
        assert!(tost_log_ratio_paired(&[0.1, 0.2], 0.01, 0.5).is_err());
        assert!(tost_log_ratio_two_sample(&[1.0, 2.0], &[0.0, 1.0], 0.01, 0.05).is_err());
    }
}
