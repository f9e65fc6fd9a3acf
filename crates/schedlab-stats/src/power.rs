//! Minimum detectable effect and sample-size planning on the log scale,
//! using the normal approximation: `effect = (z(1 - α/2) + z(power)) · σ ·
//! sqrt(2/n)` for two independent arms of n, `σ / sqrt(n)` for n pairs.
//!
//! The approximation ignores the t distribution's heavier tails, so for
//! small n it understates the effect a t test can detect (at n = 5 pairs by
//! roughly a quarter); treat the numbers as planning figures.

use serde::Serialize;

use crate::dist::normal_quantile;
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
}
