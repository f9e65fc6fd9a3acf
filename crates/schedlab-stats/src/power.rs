//! Minimum detectable effect and sample-size planning on the log scale,
//! using the normal approximation: `effect = (z(1 - α/2) + z(power)) · σ ·
//! sqrt(2/n)` for two independent arms of n, `σ / sqrt(n)` for n pairs.
//!
//! The normal approximation ignores the t distribution's heavier tails, so
//! for small n it understates the effect a t test can detect (1.5–4× at a
//! few degrees of freedom). The `_t` functions replace both normal
//! quantiles by Student-t quantiles at the test's degrees of freedom,
//! `effect = (t(1 - α/2, ν) + t(power, ν)) · se`, which is what a verdict
//! that uses a t test can honestly promise.

use serde::Serialize;

use crate::dist::{normal_quantile, t_quantile};
use crate::error::{require_open_unit, Result, StatsError};

/// The smallest true change a design detects with the requested power.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MinimumDetectableEffect {
    /// Detectable shift of the mean log metric.
    pub log_effect: f64,
    /// The same as a percentage increase, `(exp(log_effect) - 1) * 100`:
    /// the "MDE x%" a report prints.
    pub pct_increase: f64,
    /// The same as a percentage decrease, `(1 - exp(-log_effect)) * 100`.
    pub pct_decrease: f64,
}

impl MinimumDetectableEffect {
    fn from_log(log_effect: f64) -> Self {
        MinimumDetectableEffect {
            log_effect,
            pct_increase: log_effect.exp_m1() * 100.0,
            pct_decrease: -(-log_effect).exp_m1() * 100.0,
        }
    }
}

/// MDE of a two-sided two-sample comparison with `n_per_arm` values per
/// arm whose logs have standard deviation `sd_log`.
pub fn mde_two_sample(
    n_per_arm: usize,
    sd_log: f64,
    alpha: f64,
    power: f64,
) -> Result<MinimumDetectableEffect> {
    let z_total = z_sum(sd_log, alpha, power)?;
    let n = require_count(n_per_arm, "n_per_arm")?;
    Ok(MinimumDetectableEffect::from_log(
        z_total * sd_log * (2.0 / n).sqrt(),
    ))
}

/// MDE of a two-sided paired comparison of `n_pairs` log ratios with
/// standard deviation `sd_log_ratio`.
pub fn mde_paired(
    n_pairs: usize,
    sd_log_ratio: f64,
    alpha: f64,
    power: f64,
) -> Result<MinimumDetectableEffect> {
    let z_total = z_sum(sd_log_ratio, alpha, power)?;
    let n = require_count(n_pairs, "n_pairs")?;
    Ok(MinimumDetectableEffect::from_log(
        z_total * sd_log_ratio / n.sqrt(),
    ))
}

/// Values per arm needed to detect a log-scale shift of `effect_log` with
/// a two-sample comparison: `ceil(2 ((z + z_power) σ / effect)²)`, at least 1.
pub fn required_n_two_sample(
    sd_log: f64,
    effect_log: f64,
    alpha: f64,
    power: f64,
) -> Result<usize> {
    let z_total = z_sum(sd_log, alpha, power)?;
    required(2.0, z_total, sd_log, effect_log)
}

/// Pairs needed to detect a mean log ratio of `effect_log`:
/// `ceil(((z + z_power) σ / effect)²)`, at least 1.
pub fn required_pairs(sd_log_ratio: f64, effect_log: f64, alpha: f64, power: f64) -> Result<usize> {
    let z_total = z_sum(sd_log_ratio, alpha, power)?;
    required(1.0, z_total, sd_log_ratio, effect_log)
}

/// MDE of a t test whose estimate has standard error `std_err` with `df`
/// degrees of freedom, two-sided at `alpha`, with probability `power`.
pub fn mde_t(std_err: f64, df: f64, alpha: f64, power: f64) -> Result<MinimumDetectableEffect> {
    let t_total = t_sum(df, alpha, power)?;
    if !(std_err.is_finite() && std_err >= 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "std_err",
            value: std_err,
            expected: "finite and >= 0",
        });
    }
    Ok(MinimumDetectableEffect::from_log(t_total * std_err))
}

/// Runs per side a two-sample t test needs to detect a log shift of
/// `effect_log` when one run varies by `variance`: the smallest k with
/// `mde_t(sqrt(2 variance / k), extra_df + 2k - 2) <= effect_log`, where
/// `extra_df` are degrees of freedom the variance already has from
/// elsewhere (a calibration). `None` when more than `max` would be needed.
pub fn required_runs_two_sample(
    variance: f64,
    extra_df: f64,
    effect_log: f64,
    alpha: f64,
    power: f64,
    max: usize,
) -> Result<Option<usize>> {
    smallest_count(variance, effect_log, max, |k| {
        let df = extra_df + 2.0 * k - 2.0;
        (df > 0.0).then(|| mde_t((2.0 * variance / k).sqrt(), df, alpha, power))
    })
}

/// Pairs a paired t test needs to detect a mean log ratio of `effect_log`
/// when one pair's log ratio varies by `variance`: the smallest k with
/// `mde_t(sqrt(variance / k), extra_df + k - 1) <= effect_log`.
pub fn required_pairs_t(
    variance: f64,
    extra_df: f64,
    effect_log: f64,
    alpha: f64,
    power: f64,
    max: usize,
) -> Result<Option<usize>> {
    smallest_count(variance, effect_log, max, |k| {
        let df = extra_df + k - 1.0;
        (df > 0.0).then(|| mde_t((variance / k).sqrt(), df, alpha, power))
    })
}

/// The smallest count in 1..=max whose MDE reaches `effect_log`. The MDE
/// falls as the count grows (smaller error, more df), so a binary search
/// over the counts with enough df finds it.
fn smallest_count(
    variance: f64,
    effect_log: f64,
    max: usize,
    mde_at: impl Fn(f64) -> Option<Result<MinimumDetectableEffect>>,
) -> Result<Option<usize>> {
    if !(variance.is_finite() && variance >= 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "variance",
            value: variance,
            expected: "finite and >= 0",
        });
    }
    if !(effect_log.is_finite() && effect_log > 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "effect_log",
            value: effect_log,
            expected: "finite and > 0",
        });
    }
    let reaches = |k: usize| -> Result<Option<bool>> {
        match mde_at(k as f64) {
            None => Ok(None),
            Some(mde) => Ok(Some(mde?.log_effect <= effect_log)),
        }
    };
    // Counts too small to have degrees of freedom cannot decide anything.
    let mut low = 1;
    while low <= max && reaches(low)?.is_none() {
        low += 1;
    }
    if low > max || reaches(max)? != Some(true) {
        return Ok(None);
    }
    let mut high = max;
    while low < high {
        let mid = low + (high - low) / 2;
        if reaches(mid)? == Some(true) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    Ok(Some(low))
}

fn t_sum(df: f64, alpha: f64, power: f64) -> Result<f64> {
    require_open_unit(alpha, "alpha")?;
    require_open_unit(power, "power")?;
    if df.is_nan() || df <= 0.0 {
        return Err(StatsError::InvalidParameter {
            name: "df",
            value: df,
            expected: "> 0",
        });
    }
    Ok(t_quantile(1.0 - alpha / 2.0, df) + t_quantile(power, df))
}

fn z_sum(sd: f64, alpha: f64, power: f64) -> Result<f64> {
    require_open_unit(alpha, "alpha")?;
    require_open_unit(power, "power")?;
    if !(sd.is_finite() && sd >= 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "sd",
            value: sd,
            expected: "finite and >= 0",
        });
    }
    Ok(normal_quantile(1.0 - alpha / 2.0) + normal_quantile(power))
}

fn require_count(n: usize, name: &'static str) -> Result<f64> {
    if n == 0 {
        return Err(StatsError::InvalidParameter {
            name,
            value: 0.0,
            expected: "at least 1",
        });
    }
    Ok(n as f64)
}

fn required(arms: f64, z_total: f64, sd: f64, effect: f64) -> Result<usize> {
    if !(effect.is_finite() && effect != 0.0) {
        return Err(StatsError::InvalidParameter {
            name: "effect_log",
            value: effect,
            expected: "finite and non-zero",
        });
    }
    let n = (arms * (z_total * sd / effect).powi(2)).ceil();
    if n > usize::MAX as f64 {
        return Err(StatsError::InvalidParameter {
            name: "effect_log",
            value: effect,
            expected: "large enough for a representable sample size",
        });
    }
    Ok((n as usize).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn research_planning_rule() {
        // "n ≈ 34·(CoV/δ)²" at α = 0.05/48, 80 % power, two arms.
        let n = required_n_two_sample(0.02, 0.03_f64.ln_1p(), 0.05 / 48.0, 0.8).unwrap();
        assert!((14..=16).contains(&n), "{n}");
    }

    #[test]
    fn mde_round_trip() {
        let mde = mde_paired(10, 0.02, 0.05, 0.8).unwrap();
        let n = required_pairs(0.02, mde.log_effect * (1.0 + 1e-9), 0.05, 0.8).unwrap();
        assert_eq!(n, 10);
        assert!(mde.pct_increase > mde.pct_decrease);
    }

    #[test]
    fn t_mde_is_wider_than_normal_at_few_df_and_meets_it_at_many() {
        let normal = mde_paired(3, 0.02, 0.05, 0.8).unwrap().log_effect;
        let t = mde_t(0.02 / 3f64.sqrt(), 2.0, 0.05, 0.8)
            .unwrap()
            .log_effect;
        assert!(t > 1.5 * normal, "{t} vs {normal}");
        let normal = mde_paired(100_000, 0.02, 0.05, 0.8).unwrap().log_effect;
        let t = mde_t(0.02 / 100_000f64.sqrt(), 99_999.0, 0.05, 0.8)
            .unwrap()
            .log_effect;
        assert!((t / normal - 1.0).abs() < 1e-3);
    }

    #[test]
    fn required_counts_are_the_smallest_that_reach_the_effect() {
        let (v, effect) = (0.03f64.powi(2), 0.05f64.ln_1p());
        let k = required_runs_two_sample(v, 0.0, effect, 0.05, 0.8, 1000)
            .unwrap()
            .unwrap();
        let mde = |k: usize| {
            mde_t((2.0 * v / k as f64).sqrt(), 2.0 * k as f64 - 2.0, 0.05, 0.8)
                .unwrap()
                .log_effect
        };
        assert!(mde(k) <= effect && mde(k - 1) > effect, "{k}");
        let pairs = required_pairs_t(v, 10.0, effect, 0.05, 0.8, 1000)
            .unwrap()
            .unwrap();
        let mde = |k: usize| {
            mde_t((v / k as f64).sqrt(), 10.0 + k as f64 - 1.0, 0.05, 0.8)
                .unwrap()
                .log_effect
        };
        assert!(mde(pairs) <= effect && (pairs == 1 || mde(pairs - 1) > effect));
        assert_eq!(
            required_runs_two_sample(v, 0.0, 1e-6, 0.05, 0.8, 50).unwrap(),
            None
        );
    }
}
