//! Equivalence testing (TOST, Schuirmann 1987) on the log ratio: "the
//! change is within ±δ" becomes a positive claim with its own error rate,
//! which is what lets a report print "≈" instead of an unhelpful "~".

use serde::Serialize;

use crate::dist::{t_cdf, t_quantile, t_sf};
use crate::error::{require_finite_result, Result, StatsError};
use crate::ConfidenceInterval;

/// Outcome of a two one-sided tests procedure on `ln(candidate/baseline)`
/// with margin `±ln(1 + delta)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Equivalence {
    /// Estimated log ratio (e.g. a difference of mean log run summaries).
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

/// TOST of a log-ratio `estimate` whose standard error and degrees of
/// freedom come from elsewhere (runs, a calibration, or both). `delta` is
/// the relative margin (0.01 = 1 %), `alpha` in (0, 0.5).
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
    fn zero_standard_error_is_inside_or_outside_the_margin() {
        let inside = tost_from_estimate(0.001, 0.0, 3.0, 0.01, 0.05).unwrap();
        assert!(inside.equivalent);
        let outside = tost_from_estimate(0.5, 0.0, 3.0, 0.01, 0.05).unwrap();
        assert!(!outside.equivalent);
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(tost_from_estimate(0.0, 0.01, 0.0, 0.02, 0.05).is_err());
        assert!(tost_from_estimate(0.0, -0.01, 3.0, 0.02, 0.05).is_err());
        assert!(tost_from_estimate(0.0, 0.01, 3.0, 0.0, 0.05).is_err());
        assert!(tost_from_estimate(0.0, 0.01, 3.0, 0.01, 0.5).is_err());
    }
}
