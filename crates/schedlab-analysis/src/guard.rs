//! The stale-calibration guard. A calibration describes the machine as it was when it was made;
//! if the machine has since become noisier, calibrated variances understate today's and marks
//! would follow. The guard compares the two and widens the calibrated variances (never narrows
//! them) by the factor it finds:
//!
//! - rows with two or more units per side: the median over rows of today's variance ÷ the
//!   calibrated one, each ratio divided by the median of its F(ν_today, ν_cal) distribution so a
//!   calibration that still holds gives a factor near 1;
//! - one unit per side: today's spread is invisible within a row, but across rows the z-scores
//!   effect ÷ calibrated standard error are t-distributed when the calibration holds; a robust
//!   scale of them (their MAD over the MAD t itself has) measures how much wider today is, and a
//!   minority of rows with real changes cannot move a median. It needs enough rows.
use schedlab_stats::dist::f_quantile;
use schedlab_stats::summary::t_scaled_mad;

use crate::calibration::VarianceEstimate;
use crate::model::Guard;
use crate::settings::GUARD_MIN_ROWS;

/// A row that uses a calibration, as the guard sees it.
#[derive(Debug, Clone, Copy)]
pub struct GuardInput {
    pub today: Option<VarianceEstimate>,
    pub calibrated: VarianceEstimate,
    /// The row's effect on the analysis scale.
    pub effect: f64,
    /// Var(effect) = unit variance × this.
    pub se_factor: f64,
}

pub fn guard(inputs: &[GuardInput]) -> Guard {
    if inputs.is_empty() {
        return Guard {
            factor: 1.0,
            method: "unused",
            rows: 0,
        };
    }
    let mut ratios: Vec<f64> = inputs
        .iter()
        .filter_map(|g| {
            let today = g.today.filter(|t| t.df > 0.0)?;
            let cal = g.calibrated;
            if !(cal.variance > 0.0 && cal.df > 0.0) {
                return None;
            }
            let expected = f_quantile(0.5, today.df, cal.df);
            (expected.is_finite() && expected > 0.0)
                .then(|| today.variance / cal.variance / expected)
        })
        .collect();
    if !ratios.is_empty() {
        ratios.sort_by(f64::total_cmp);
        let factor = median_sorted(&ratios);
        return Guard {
            factor: if factor.is_finite() {
                factor.max(1.0)
            } else {
                1.0
            },
            method: "variance-ratio",
            rows: ratios.len(),
        };
    }
    let usable: Vec<&GuardInput> = inputs
        .iter()
        .filter(|g| g.calibrated.variance > 0.0 && g.calibrated.df > 0.0)
        .collect();
    if usable.len() < GUARD_MIN_ROWS {
        return Guard {
            factor: 1.0,
            method: "too-few-rows",
            rows: usable.len(),
        };
    }
    let z: Vec<f64> = usable
        .iter()
        .map(|g| g.effect / (g.calibrated.variance * g.se_factor).sqrt())
        .collect();
    let mut dfs: Vec<f64> = usable.iter().map(|g| g.calibrated.df).collect();
    dfs.sort_by(f64::total_cmp);
    let scale = t_scaled_mad(&z, median_sorted(&dfs)).unwrap_or(1.0);
    let factor = scale * scale;
    Guard {
        factor: if factor.is_finite() {
            factor.max(1.0)
        } else {
            1.0
        },
        method: "z-scale",
        rows: usable.len(),
    }
}

fn median_sorted(sorted: &[f64]) -> f64 {
    let mid = sorted.len() / 2;
    if sorted.len().is_multiple_of(2) {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    } else {
        sorted[mid]
    }
}
