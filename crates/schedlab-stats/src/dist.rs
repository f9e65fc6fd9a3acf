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
pub fn normal_quantile(p: f64) -> f64 {
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
    // statrs' inverse hangs at large df (from about 3·10^7 at any p), far in the tail (from
    // 10^-100 at df 1000) and at random extreme arguments, and panics below p = 10^-163; its CDF
    // and density do neither, but lose digits at huge df, where the expansion is the answer.
    if df >= EXPANSION_DF {
        return hill_expansion(normal_quantile(p), df);
    }
    if df < MIN_DF {
        return f64::NAN;
    }
    let Some(dist) = students_t(df) else {
        return f64::NAN;
    };
    let mut t = bisect_tail(p, &dist);
    if t.is_infinite() {
        return t;
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

/// From this many degrees of freedom, [`t_quantile`] is the expansion of the t quantile around
/// the normal one.
const EXPANSION_DF: f64 = 1e6;
/// Fewer degrees of freedom than this have no quantile here (NaN): no run-based test has them,
/// and the CDF's incomplete beta is not to be trusted that close to 0.
const MIN_DF: f64 = 1e-3;

/// The t quantile from the normal quantile `z` by its expansion in 1/ν (Hill 1970, Cornish–Fisher
/// form); at ν ≥ 10^6 and |z| < 40 (p > 10^-340) the first omitted term is below 10^-15.
fn hill_expansion(z: f64, df: f64) -> f64 {
    let z2 = z * z;
    let g1 = (z2 + 1.0) * z / 4.0;
    let g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0;
    let g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0;
    let g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0;
    z + (g1 + (g2 + (g3 + g4 / df) / df) / df) / df
}

/// Past this, t² overflows inside the CDF, which then reads 0.
const TAIL_LIMIT: f64 = -1e150;

/// The lower-tail quantile (p < 0.5) by bisection on the CDF: the t quantile lies below the
/// normal one, and doubling from there finds a point below it; the bracket is then halved
/// geometrically to full precision. A quantile past [`TAIL_LIMIT`] (p = 10^-200 at ν = 0.3 is
/// near -10^666) reads -∞, the nearest double.
fn bisect_tail(p: f64, dist: &StudentsT) -> f64 {
    if dist.cdf(TAIL_LIMIT) > p {
        return f64::NEG_INFINITY;
    }
    let mut hi = normal_quantile(p).min(-f64::MIN_POSITIVE);
    let mut lo = 2.0 * hi;
    while dist.cdf(lo) > p {
        hi = lo;
        lo *= 2.0;
    }
    for _ in 0..200 {
        // The geometric mean, without overflowing far in the tail.
        let mid = -(lo.abs().sqrt() * hi.abs().sqrt());
        if !(mid < hi && mid > lo) {
            break;
        }
        if dist.cdf(mid) > p {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    hi
}

/// Quantile of the F distribution with `d1` and `d2` degrees of freedom (fractional allowed);
/// NaN where it is undefined. The stale-calibration guard divides by its median, the value a
/// variance ratio takes half the time when nothing changed.
pub fn f_quantile(p: f64, d1: f64, d2: f64) -> f64 {
    let usable = p > 0.0 && p < 1.0 && d1.min(d2) >= MIN_DF && d1.max(d2) <= NORMAL_LIMIT_DF;
    if !usable {
        return f64::NAN;
    }
    let Ok(f) = FisherSnedecor::new(d1, d2) else {
        return f64::NAN;
    };
    // statrs' inverse hangs when one df is large (from about 3·10^7) and the other small, and at
    // random extreme arguments, and panics far in the lower tail; its CDF does none of these (at
    // a large df it keeps about five digits). The quantile is bracketed by halving and doubling
    // from 1, then bisected geometrically.
    let (mut lo, mut hi) = (1.0, 1.0);
    while f.cdf(lo) > p && lo > f64::MIN_POSITIVE {
        hi = lo;
        lo /= 2.0;
    }
    while f.cdf(hi) < p && hi < f64::MAX / 2.0 {
        lo = hi;
        hi *= 2.0;
    }
    for _ in 0..200 {
        let mid = lo.sqrt() * hi.sqrt();
        if !(mid > lo && mid < hi) {
            break;
        }
        if f.cdf(mid) < p {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
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

    /// Where statrs' own inverse hangs (df from 3·10^7) or panics (p below 10^-163): the values
    /// are scipy 1.x's `t.ppf` where scipy is right, else the CDF must give p back.
    #[test]
    fn t_quantile_at_huge_df_and_far_in_the_tail() {
        for (p, df, scipy) in [
            (0.1, 1e9, -1.2815515663911852),
            (0.025, 3e7, -1.959964063615765),
            (0.025, 1e5, -1.95998770753461),
            (0.2, 5e4, -0.8416284224504178),
            (1e-120, 1000.0, -26.910190734056844),
            (1e-90, 2e4, -20.267870724050848),
            (1e-300, 1e5, -37.17467066546622),
        ] {
            let t = t_quantile(p, df);
            assert!(
                (t / scipy - 1.0).abs() < 1e-9,
                "p {p} df {df}: {t} vs {scipy}"
            );
            if p > 1e-16 {
                assert!((t_quantile(1.0 - p, df) + t).abs() <= 1e-9 * t.abs());
            }
        }
        for (p, df) in [
            (1e-300, 3.0),
            (1e-140, 1.0),
            (1e-250, 50.0),
            (1e-100, 1000.0),
        ] {
            let t = t_quantile(p, df);
            assert!(t.is_finite() && t < 0.0, "p {p} df {df}: {t}");
            assert!((t_cdf(t, df) / p - 1.0).abs() < 1e-9, "p {p} df {df}: {t}");
        }
        // Near -10^666: past every double.
        assert_eq!(t_quantile(1e-200, 0.3), f64::NEG_INFINITY);
    }

    #[test]
    fn f_quantile_where_statrs_inverse_hangs_or_panics() {
        // F(d1, ∞) is χ²(d1) / d1: the median of χ²(3) is 2.365974.
        let f = f_quantile(0.5, 3.0, 1e9);
        assert!((f - 2.365_973_884 / 3.0).abs() < 1e-4, "{f}");
        // The median of F(n, n) is 1.
        assert!((f_quantile(0.5, 1e7, 1e7) - 1.0).abs() < 1e-4);
        for (d1, d2) in [(0.5, 0.5), (3.0, 1e3), (1e3, 3.0)] {
            let f = f_quantile(1e-300, d1, d2);
            assert!((0.0..0.01).contains(&f), "{d1} {d2}: {f}");
        }
        assert!(f_quantile(0.5, 3.0, 1e300).is_nan());
        // Arguments at which statrs' inverse loops for ever.
        let f = f_quantile(1e-80, 1e3, 7.0);
        assert!(f > 0.0 && f < 1.0, "{f}");
        assert!(f_quantile(1e-20, 3.0, 1e-300).is_nan());
        assert!(f_quantile(1.0 - f64::EPSILON, 1e-300, 3.0).is_nan());
    }
}
