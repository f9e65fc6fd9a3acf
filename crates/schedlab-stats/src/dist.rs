//! Normal and Student-t tail probabilities and quantiles at the accuracy the
//! scipy fixtures demand, plus the type-7 sample quantile.
//!
//! statrs is used where it is accurate (t tails, normal quantile); the normal
//! tails come from libm's `erfc` and the t quantile is polished by Newton
//! steps because statrs' own loses digits for large degrees of freedom.

use statrs::distribution::{Continuous, ContinuousCDF, FisherSnedecor, Normal, StudentsT};

/// Beyond this many degrees of freedom the t and normal distributions agree
/// to double precision, and statrs' incomplete beta gets slow and inexact.
const NORMAL_LIMIT_DF: f64 = 1e12;

pub(crate) fn normal_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z * std::f64::consts::FRAC_1_SQRT_2)
}

pub(crate) fn normal_sf(z: f64) -> f64 {
    0.5 * libm::erfc(z * std::f64::consts::FRAC_1_SQRT_2)
}

/// Inverse of [`normal_cdf`]; `p` outside (0, 1) maps to ∓∞ / NaN rather than
/// panicking as statrs would.
pub(crate) fn normal_quantile(p: f64) -> f64 {
    if p.is_nan() {
        f64::NAN
    } else if p <= 0.0 {
        f64::NEG_INFINITY
    } else if p >= 1.0 {
        f64::INFINITY
    } else {
        Normal::standard().inverse_cdf(p)
    }
}

fn students_t(df: f64) -> Option<StudentsT> {
    StudentsT::new(0.0, 1.0, df).ok()
}

// statrs panics inside its incomplete beta on NaN, so NaN never reaches it.
pub(crate) fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() {
        return f64::NAN;
    }
    if df > NORMAL_LIMIT_DF {
        return normal_cdf(t);
    }
    students_t(df).map_or(f64::NAN, |d| d.cdf(t))
}

/// P(T > t), by symmetry: the lower tail at −t is computed directly, never as 1 − cdf.
pub(crate) fn t_sf(t: f64, df: f64) -> f64 {
    t_cdf(-t, df)
}

/// Two-sided p-value of a t statistic, `2 P(T > |t|)`.
pub(crate) fn t_two_sided_p(t: f64, df: f64) -> f64 {
    (2.0 * t_sf(t.abs(), df)).min(1.0)
}

/// Quantile of Student's t for `p` in (0, 1).
pub(crate) fn t_quantile(p: f64, df: f64) -> f64 {
    if p.is_nan() || df.is_nan() {
        return f64::NAN;
    }
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    if p > 0.5 {
        // 1 - p is exact for p in [0.5, 1] (Sterbenz), so symmetry costs nothing
        // and the Newton residual below is always taken in the small tail.
        return -t_quantile(1.0 - p, df);
    }
    if p == 0.5 {
        return 0.0;
    }
    if df > NORMAL_LIMIT_DF {
        return normal_quantile(p);
    }
    let Some(dist) = students_t(df) else {
        return f64::NAN;
    };
    let mut t = dist.inverse_cdf(p);
    if !t.is_finite() {
        t = normal_quantile(p);
    }
    for _ in 0..8 {
        let density = dist.pdf(t);
        if density <= 0.0 || !density.is_finite() {
            break;
        }
        let step = (dist.cdf(t) - p) / density;
        if !step.is_finite() {
            break;
        }
        t -= step;
        if step.abs() <= 1e-15 * t.abs().max(1e-300) {
            break;
        }
    }
    t
}

/// Quantile of the F distribution with `d1` and `d2` degrees of freedom (fractional allowed);
/// NaN where it is undefined. The stale-calibration guard divides by its median, the value a
/// variance ratio takes half the time when nothing changed.
pub fn f_quantile(p: f64, d1: f64, d2: f64) -> f64 {
    let usable = p > 0.0 && p < 1.0 && d1 > 0.0 && d2 > 0.0;
    if !usable || d1.is_infinite() || d2.is_infinite() {
        return f64::NAN;
    }
    FisherSnedecor::new(d1, d2).map_or(f64::NAN, |f| f.inverse_cdf(p))
}

/// Sample quantile with linear interpolation between order statistics
/// (Hyndman & Fan type 7, numpy's and scipy's default). `sorted` must be
/// ascending and non-empty; `prob` is clamped to [0, 1].
pub(crate) fn quantile_sorted(sorted: &[f64], prob: f64) -> f64 {
    let last = sorted.len() - 1;
    let position = prob.clamp(0.0, 1.0) * last as f64;
    let below = position.floor();
    let index = below as usize;
    if index >= last {
        return sorted[last];
    }
    let fraction = position - below;
    let (lo, hi) = (sorted[index], sorted[index + 1]);
    // numpy's lerp form: exact at both ends and monotone in `fraction`.
    if fraction >= 0.5 {
        hi - (hi - lo) * (1.0 - fraction)
    } else {
        lo + (hi - lo) * fraction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantile_inverts_cdf_for_large_df() {
        for &df in &[1.0, 3.0, 30.0, 1e4, 1e6] {
            for &p in &[0.001, 0.025, 0.3, 0.975] {
                let t = t_quantile(p, df);
                assert!((t_cdf(t, df) - p).abs() < 1e-9 * p.min(1.0 - p));
            }
        }
    }

    #[test]
    fn quantile_interpolates() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&xs, 0.0), 1.0);
        assert_eq!(quantile_sorted(&xs, 1.0), 4.0);
        assert!((quantile_sorted(&xs, 0.3) - 1.9).abs() < 1e-15);
        assert_eq!(quantile_sorted(&[7.0], 0.4), 7.0);
    }
}
