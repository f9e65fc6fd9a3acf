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
use crate::notes::GuardMethod;
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
        return measured_guard(1.0, GuardMethod::Unused, 0, None);
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
        return measured_guard(
            factor,
            GuardMethod::VarianceRatio,
            ratios.len(),
            Some(factor),
        );
    }
    let usable: Vec<&GuardInput> = inputs
        .iter()
        .filter(|g| g.calibrated.variance > 0.0 && g.calibrated.df > 0.0)
        .collect();
    if usable.len() < GUARD_MIN_ROWS {
        return measured_guard(1.0, GuardMethod::TooFewRows, usable.len(), None);
    }
    let z: Vec<f64> = usable
        .iter()
        .map(|g| g.effect / (g.calibrated.variance * g.se_factor).sqrt())
        .collect();
    let mut dfs: Vec<f64> = usable.iter().map(|g| g.calibrated.df).collect();
    dfs.sort_by(f64::total_cmp);
    let scale = t_scaled_mad(&z, median_sorted(&dfs)).unwrap_or(1.0);
    let factor = scale * scale;
    measured_guard(factor, GuardMethod::ZScale, usable.len(), None)
}

/// The guard of a measured `factor`: at least 1, and 1 where it could not be measured.
fn measured_guard(
    factor: f64,
    method: GuardMethod,
    rows: usize,
    today_over_calibrated: Option<f64>,
) -> Guard {
    let measured = if factor.is_finite() { factor } else { 1.0 };
    Guard {
        factor: measured.max(1.0),
        measured,
        method,
        rows,
        today_over_calibrated,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The median of F(2, 4), by hand: its CDF is 1 − (1 + 2x/4)^−2, which is ½ at
    /// x = 2(√2 − 1).
    const F_MEDIAN_2_4: f64 = 0.828_427_124_746_190_1;

    /// t's 0.75 quantile at 2 df, by hand: (2p − 1)/√(2p(1 − p)) = 0.5/√0.375.
    const T75_DF2: f64 = 0.816_496_580_927_726;

    const CAL: VarianceEstimate = VarianceEstimate {
        variance: 0.01,
        df: 4.0,
    };

    /// A row with two runs a side (2 df today) whose variance is `ratio` × the calibrated one.
    fn row_with_today(ratio: f64) -> GuardInput {
        GuardInput {
            today: Some(VarianceEstimate {
                variance: ratio * CAL.variance,
                df: 2.0,
            }),
            calibrated: CAL,
            effect: 0.0,
            se_factor: 1.0,
        }
    }

    /// A row with one run a side and a 3-run calibration (2 df) whose z-score is `z`.
    fn row_with_z(z: f64) -> GuardInput {
        let calibrated = VarianceEstimate {
            variance: 0.01,
            df: 2.0,
        };
        GuardInput {
            today: None,
            calibrated,
            effect: z * (calibrated.variance * 2.0).sqrt(),
            se_factor: 2.0,
        }
    }

    fn close(got: f64, want: f64) {
        assert!((got - want).abs() < 1e-9, "{got} vs {want}");
    }

    #[test]
    fn the_f_median_is_the_hand_computed_one() {
        close(f_quantile(0.5, 2.0, 4.0), F_MEDIAN_2_4);
    }

    #[test]
    fn no_calibrated_rows_leave_the_guard_unused() {
        let g = guard(&[]);
        assert_eq!((g.factor, g.method, g.rows), (1.0, GuardMethod::Unused, 0));
    }

    #[test]
    fn today_as_spread_as_the_calibration_gives_one() {
        // A variance ratio that sits at the median of its F distribution is what an unchanged
        // machine gives half the time; the raw ratio 0.83 is not "quieter than calibrated".
        let rows: Vec<GuardInput> = [0.5, 0.8, 1.0, 1.25, 2.0]
            .iter()
            .map(|s| row_with_today(s * F_MEDIAN_2_4))
            .collect();
        let g = guard(&rows);
        assert_eq!(g.method, GuardMethod::VarianceRatio);
        assert_eq!(g.rows, 5);
        close(g.factor, 1.0);
    }

    #[test]
    fn today_r_times_as_spread_gives_r() {
        // The median over rows, each normalised by F's median: 3, not the raw 3 × 0.83.
        let rows: Vec<GuardInput> = [0.5, 0.8, 1.0, 1.25, 2.0, 1.1, 0.9]
            .iter()
            .map(|s| row_with_today(3.0 * s * F_MEDIAN_2_4))
            .collect();
        close(guard(&rows).factor, 3.0);
        // A minority of rows with real changes (huge variance ratios) does not move it.
        let mut rows: Vec<GuardInput> =
            (0..5).map(|_| row_with_today(2.5 * F_MEDIAN_2_4)).collect();
        rows.extend((0..4).map(|_| row_with_today(100.0)));
        close(guard(&rows).factor, 2.5);
    }

    #[test]
    fn the_factor_never_narrows_a_calibration() {
        let rows: Vec<GuardInput> = (0..9).map(|_| row_with_today(0.2)).collect();
        let g = guard(&rows);
        assert_eq!(g.method, GuardMethod::VarianceRatio);
        assert_eq!(g.factor, 1.0);
        let quiet: Vec<GuardInput> = (0..9)
            .map(|i| row_with_z(0.01 * (i as f64 - 4.0)))
            .collect();
        let g = guard(&quiet);
        assert_eq!(g.method, GuardMethod::ZScale);
        assert_eq!(g.factor, 1.0);
    }

    /// Eight z-scores s·(−2, −1, −1, 0, 0, 1, 1, 2): median 0 and median absolute deviation s.
    fn spread_z(s: f64) -> Vec<GuardInput> {
        [-2.0, -1.0, -1.0, 0.0, 0.0, 1.0, 1.0, 2.0]
            .iter()
            .map(|k| row_with_z(k * s))
            .collect()
    }

    #[test]
    fn one_unit_per_side_uses_the_robust_scale_of_the_z_scores() {
        // MAD 2 × t's own (at the calibration's 2 df): today is twice as spread, variance 4×.
        let g = guard(&spread_z(2.0 * T75_DF2));
        assert_eq!((g.method, g.rows), (GuardMethod::ZScale, 8));
        close(g.factor, 4.0);
        close(guard(&spread_z(T75_DF2)).factor, 1.0);
    }

    #[test]
    fn the_z_scale_needs_enough_rows() {
        assert_eq!(GUARD_MIN_ROWS, 8);
        let mut rows = spread_z(3.0 * T75_DF2);
        rows.pop();
        let g = guard(&rows);
        assert_eq!(
            (g.factor, g.method, g.rows),
            (1.0, GuardMethod::TooFewRows, 7)
        );
        // A row whose calibration has no variance cannot be scaled and does not count.
        let mut rows = spread_z(3.0 * T75_DF2);
        rows[0].calibrated.variance = 0.0;
        let g = guard(&rows);
        assert_eq!(
            (g.factor, g.method, g.rows),
            (1.0, GuardMethod::TooFewRows, 7)
        );
    }

    #[test]
    fn rows_with_todays_variance_take_precedence_over_z_scores() {
        let mut rows = spread_z(3.0 * T75_DF2);
        rows.push(row_with_today(2.0 * F_MEDIAN_2_4));
        let g = guard(&rows);
        assert_eq!((g.method, g.rows), (GuardMethod::VarianceRatio, 1));
        close(g.factor, 2.0);
    }
}
