//! Multiplicity control across a report's many comparisons: Benjamini–
//! Hochberg and Benjamini–Yekutieli q-values (false discovery rate) and Holm
//! adjusted p-values (family-wise error rate).
//!
//! Every function returns adjusted values in the input order; they are
//! monotone in the raw p-values, never below them, and clipped to 1.

use serde::Serialize;

use crate::error::{Result, StatsError};

/// Which adjustment [`adjust_p_values`] applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Adjustment {
    /// Benjamini–Hochberg (1995): FDR under independence or positive
    /// dependence.
    BenjaminiHochberg,
    /// Benjamini–Yekutieli (2001): FDR under arbitrary dependence.
    BenjaminiYekutieli,
    /// Holm (1979) step-down: family-wise error rate, for strict gates.
    Holm,
}

/// Applies `method` to `p_values`.
pub fn adjust_p_values(p_values: &[f64], method: Adjustment) -> Result<Vec<f64>> {
    match method {
        Adjustment::BenjaminiHochberg => benjamini_hochberg(p_values),
        Adjustment::BenjaminiYekutieli => benjamini_yekutieli(p_values),
        Adjustment::Holm => holm(p_values),
    }
}

/// Benjamini–Hochberg q-values, as
/// `scipy.stats.false_discovery_control(p, method="bh")`: the i-th smallest
/// p times m / i, made monotone from the largest down, clipped to 1.
pub fn benjamini_hochberg(p_values: &[f64]) -> Result<Vec<f64>> {
    step_up(p_values, 1.0)
}

/// Benjamini–Yekutieli q-values, as
/// `scipy.stats.false_discovery_control(p, method="by")`: BH times the
/// harmonic number `sum_{i=1..m} 1/i`.
pub fn benjamini_yekutieli(p_values: &[f64]) -> Result<Vec<f64>> {
    let harmonic: f64 = (1..=p_values.len()).map(|i| 1.0 / i as f64).sum();
    step_up(p_values, harmonic)
}

/// Holm step-down adjusted p-values (statsmodels `multipletests(method=
/// "holm")`): the i-th smallest p times (m - i + 1), made monotone from the
/// smallest up, clipped to 1.
pub fn holm(p_values: &[f64]) -> Result<Vec<f64>> {
    let order = ascending_order(p_values)?;
    let m = p_values.len();
    let mut adjusted = vec![0.0; m];
    let mut running_max: f64 = 0.0;
    for (rank, &index) in order.iter().enumerate() {
        running_max = running_max.max(p_values[index] * (m - rank) as f64);
        adjusted[index] = running_max.min(1.0);
    }
    Ok(adjusted)
}

fn step_up(p_values: &[f64], dependence_factor: f64) -> Result<Vec<f64>> {
    let order = ascending_order(p_values)?;
    let m = p_values.len();
    let mut adjusted = vec![0.0; m];
    let mut running_min = f64::INFINITY;
    for (rank, &index) in order.iter().enumerate().rev() {
        let scaled = p_values[index] * (m as f64 / (rank + 1) as f64) * dependence_factor;
        running_min = running_min.min(scaled);
        adjusted[index] = running_min.min(1.0);
    }
    Ok(adjusted)
}

fn ascending_order(p_values: &[f64]) -> Result<Vec<usize>> {
    if let Some(index) = p_values.iter().position(|p| !(0.0..=1.0).contains(p)) {
        return Err(StatsError::InvalidPValue {
            index,
            value: p_values[index],
        });
    }
    let mut order: Vec<usize> = (0..p_values.len()).collect();
    order.sort_by(|&i, &j| p_values[i].total_cmp(&p_values[j]));
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_is_fine() {
        assert!(benjamini_hochberg(&[]).unwrap().is_empty());
        assert!(holm(&[]).unwrap().is_empty());
    }

    #[test]
    fn rejects_invalid_p() {
        assert!(benjamini_hochberg(&[0.1, f64::NAN]).is_err());
        assert!(holm(&[1.5]).is_err());
        assert!(benjamini_yekutieli(&[-0.1]).is_err());
    }

    #[test]
    fn hand_checked_bh() {
        let q = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.5]).unwrap();
        let expected = [0.04, 0.04 * 4.0 / 3.0, 0.04 * 4.0 / 3.0, 0.5];
        for (a, b) in q.iter().zip(expected) {
            assert!((a - b).abs() < 1e-15);
        }
    }
}
