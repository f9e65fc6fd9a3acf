//! Alpha spending (Lan and DeMets 1983) for experiments that look at their data after every
//! round and stop once decided: the error rate a fixed design would have is spread over the
//! looks, so stopping early does not inflate it the way repeated p-value peeking does.
//!
//! A spending function α(t) gives the error allowed to be spent by information fraction t ∈
//! [0, 1] (rounds seen ÷ the most rounds the plan allows); the level at a look is the
//! increment α(t_k) − α(t_{k−1}). Testing each look at its increment is the conservative
//! Bonferroni form of the plan: by the union bound the total stays ≤ α whatever the
//! correlation between looks.

use serde::{Deserialize, Serialize};

use crate::dist::{normal_quantile, normal_sf};
use crate::error::{require_open_unit, Result, StatsError};

/// Which spending function a plan uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Spending {
    /// `α(t) = 2 − 2Φ(z(1 − α/2) / √t)`: almost nothing early, most of α at the last look;
    /// early stops need overwhelming evidence.
    #[serde(rename = "obrien-fleming")]
    OBrienFleming,
    /// `α(t) = α ln(1 + (e − 1) t)`: spends evenly, so early stops come easier and the last
    /// look is stricter.
    Pocock,
}

/// The error `spending` allows by information fraction `fraction` for a plan of total level
/// `alpha`: 0 at 0, `alpha` at 1, increasing in between.
pub fn spent_alpha(spending: Spending, fraction: f64, alpha: f64) -> Result<f64> {
    require_open_unit(alpha, "alpha")?;
    if fraction.is_nan() || !(0.0..=1.0).contains(&fraction) {
        return Err(StatsError::InvalidParameter {
            name: "fraction",
            value: fraction,
            expected: "in [0, 1]",
        });
    }
    if fraction == 0.0 {
        return Ok(0.0);
    }
    let spent = match spending {
        Spending::OBrienFleming => {
            2.0 * normal_sf(normal_quantile(1.0 - alpha / 2.0) / fraction.sqrt())
        }
        Spending::Pocock => alpha * (1.0 + (std::f64::consts::E - 1.0) * fraction).ln(),
    };
    Ok(spent.min(alpha))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The level of each of `looks` equally spaced looks: the increments of the spending
    /// function.
    fn look_levels(spending: Spending, looks: u32, alpha: f64) -> Result<Vec<f64>> {
        let mut spent = 0.0;
        (1..=looks)
            .map(|k| {
                let total = spent_alpha(spending, f64::from(k) / f64::from(looks), alpha)?;
                let level = total - spent;
                spent = total;
                Ok(level)
            })
            .collect()
    }

    #[test]
    fn both_spend_all_of_alpha_at_the_end_and_nothing_at_the_start() {
        for spending in [Spending::OBrienFleming, Spending::Pocock] {
            assert_eq!(spent_alpha(spending, 0.0, 0.05).unwrap(), 0.0);
            assert!((spent_alpha(spending, 1.0, 0.05).unwrap() - 0.05).abs() < 1e-12);
            let levels = look_levels(spending, 7, 0.05).unwrap();
            assert!((levels.iter().sum::<f64>() - 0.05).abs() < 1e-12);
            assert!(levels.iter().all(|l| *l > 0.0));
        }
    }

    #[test]
    fn obrien_fleming_saves_alpha_for_the_end() {
        // Published values (Lan and DeMets): at t = 0.5, α = 0.05 → 0.00557.
        let half = spent_alpha(Spending::OBrienFleming, 0.5, 0.05).unwrap();
        assert!((half - 0.005_574).abs() < 1e-5, "{half}");
        let pocock = spent_alpha(Spending::Pocock, 0.5, 0.05).unwrap();
        assert!((pocock - 0.05 * (1.0 + (std::f64::consts::E - 1.0) * 0.5).ln()).abs() < 1e-15);
        assert!(pocock > half);
    }

    #[test]
    fn names_round_trip() {
        let json = serde_json::to_string(&Spending::OBrienFleming).unwrap();
        assert_eq!(json, "\"obrien-fleming\"");
        let back: Spending = serde_json::from_str("\"pocock\"").unwrap();
        assert_eq!(back, Spending::Pocock);
        assert!(spent_alpha(Spending::Pocock, 1.5, 0.05).is_err());
    }
}
