//! Variance components of repeated benchmark runs (Kalibera and Jones, "Rigorous benchmarking
//! in reasonable time", 2013): iterations within a run, runs within a boot, boots. Iterations
//! of one run share its conditions, so a comparison's unit of replication is the run (or the
//! boot); these estimates say how much one run's mean varies, which the run count of a
//! comparison, a calibration and a minimum detectable effect all need.
//!
//! Model, for iteration j of run r of boot b: `y = μ + β_b + ρ_br + ε_brj` with variances ω²
//! (boots), τ² (runs) and σ² (iterations). A run mean of n iterations varies by `τ² + σ²/n`
//! within a boot, and by `ω² + τ² + σ²/n` across boots. The estimates are the classical
//! method-of-moments ones of the unbalanced nested ANOVA, truncated at zero.

use crate::error::{require_finite, Result, StatsError};

/// A variance pooled over groups and its degrees of freedom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PooledVariance {
    pub variance: f64,
    pub df: f64,
}

/// The within-group variance pooled over `groups`: the sum of squared deviations from each
/// group's mean over `Σ(nᵢ − 1)`. A group of one value adds nothing. An error when no group has
/// two values or a value is not finite.
pub fn pooled_within_groups(groups: &[&[f64]]) -> Result<PooledVariance> {
    let mut sum_squares = 0.0;
    let mut df = 0.0;
    for group in groups {
        require_finite(group, "group")?;
        if group.len() < 2 {
            continue;
        }
        let mean = group.iter().sum::<f64>() / group.len() as f64;
        sum_squares += group.iter().map(|x| (x - mean).powi(2)).sum::<f64>();
        df += (group.len() - 1) as f64;
    }
    if df == 0.0 {
        return Err(StatsError::TooFewSamples {
            what: "groups",
            needed: 2,
            got: groups.iter().map(|g| g.len()).max().unwrap_or(0),
        });
    }
    Ok(PooledVariance {
        variance: sum_squares / df,
        df,
    })
}

/// One run as the model sees it: the mean of its iterations' (log) values, their sample
/// variance (`None` with one iteration) and how many there were.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunStat {
    pub mean: f64,
    pub variance: Option<f64>,
    pub n: usize,
}

/// The estimated components and the mean squares behind them.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedComponents {
    pub boots: usize,
    pub runs: usize,
    /// σ², pooled within-run variance of iterations (0 when no run had two iterations).
    pub sigma2: f64,
    pub sigma2_df: f64,
    /// Harmonic mean of the iterations per run: σ²/n uses it.
    pub n_harmonic: f64,
    /// Mean square of run means around their boot's mean: estimates `τ² + σ²/n`.
    pub ms_run: Option<f64>,
    /// `Σ(runs in boot − 1)`.
    pub run_df: f64,
    /// τ², between runs. With one run per boot it cannot be told from ω², and holds both.
    pub tau2: f64,
    /// Mean square of boot means (each weighted by its runs) around the grand mean: estimates
    /// `τ² + σ²/n + n₀ω²`.
    pub ms_boot: Option<f64>,
    /// boots − 1.
    pub boot_df: f64,
    /// The effective runs per boot of the unbalanced design, `(R − Σrᵢ²/R)/(B − 1)`; 1 with one
    /// boot.
    pub n0: f64,
    /// ω², between boots; `None` unless the runs span several boots and some boot ran twice.
    pub omega2: Option<f64>,
    pub boot_means: Vec<f64>,
    /// Mean of every run's mean.
    pub grand_mean: f64,
}

impl NestedComponents {
    /// The variance of one run's mean within a boot, `τ² + σ²/n`.
    pub fn run_var(&self) -> f64 {
        self.tau2 + self.sigma2 / self.n_harmonic
    }
}

/// Estimates the components from runs grouped by boot (each inner list one boot's runs). Needs
/// at least two runs in all; every mean finite and every run at least one iteration.
pub fn nested_components(boots: &[Vec<RunStat>]) -> Result<NestedComponents> {
    let runs: Vec<&RunStat> = boots.iter().flatten().collect();
    if runs.len() < 2 {
        return Err(StatsError::TooFewSamples {
            what: "runs",
            needed: 2,
            got: runs.len(),
        });
    }
    if let Some(index) = runs
        .iter()
        .position(|r| r.n == 0 || !r.mean.is_finite() || r.variance.is_some_and(|v| !v.is_finite()))
    {
        return Err(StatsError::NonFinite {
            what: "runs",
            index,
            value: runs[index].mean,
        });
    }
    let boots: Vec<&Vec<RunStat>> = boots.iter().filter(|b| !b.is_empty()).collect();

    let (mut within_ss, mut sigma2_df) = (0.0, 0.0);
    for r in &runs {
        if let Some(v) = r.variance.filter(|_| r.n >= 2) {
            within_ss += v * (r.n - 1) as f64;
            sigma2_df += (r.n - 1) as f64;
        }
    }
    let sigma2 = if sigma2_df > 0.0 {
        within_ss / sigma2_df
    } else {
        0.0
    };
    let n_harmonic = runs.len() as f64 / runs.iter().map(|r| 1.0 / r.n as f64).sum::<f64>();

    let boot_means: Vec<f64> = boots
        .iter()
        .map(|b| b.iter().map(|r| r.mean).sum::<f64>() / b.len() as f64)
        .collect();
    let total_runs = runs.len() as f64;
    let grand_mean = runs.iter().map(|r| r.mean).sum::<f64>() / total_runs;

    let run_ss: f64 = boots
        .iter()
        .zip(&boot_means)
        .map(|(b, m)| b.iter().map(|r| (r.mean - m).powi(2)).sum::<f64>())
        .sum();
    let run_df = (runs.len() - boots.len()) as f64;
    let ms_run = (run_df > 0.0).then(|| run_ss / run_df);

    let boot_df = (boots.len() - 1) as f64;
    let ms_boot = (boot_df > 0.0).then(|| {
        boots
            .iter()
            .zip(&boot_means)
            .map(|(b, m)| b.len() as f64 * (m - grand_mean).powi(2))
            .sum::<f64>()
            / boot_df
    });
    let n0 = if boot_df > 0.0 {
        let squares: f64 = boots.iter().map(|b| (b.len() as f64).powi(2)).sum();
        (total_runs - squares / total_runs) / boot_df
    } else {
        1.0
    };

    let within = sigma2 / n_harmonic;
    // With one run per boot the boot mean square is the only one, and it holds τ² and ω².
    let tau2 = ms_run.or(ms_boot).map_or(0.0, |ms| (ms - within).max(0.0));
    let omega2 = match (ms_boot, ms_run) {
        (Some(b), Some(r)) => Some(((b - r) / n0).max(0.0)),
        _ => None,
    };
    Ok(NestedComponents {
        boots: boots.len(),
        runs: runs.len(),
        sigma2,
        sigma2_df,
        n_harmonic,
        ms_run,
        run_df,
        tau2,
        ms_boot,
        boot_df,
        n0,
        omega2,
        boot_means,
        grand_mean,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(mean: f64, variance: f64, n: usize) -> RunStat {
        RunStat {
            mean,
            variance: Some(variance),
            n,
        }
    }

    #[test]
    fn pooled_within_groups_matches_the_hand_sum() {
        let p = pooled_within_groups(&[&[1.0, 3.0], &[2.0, 4.0, 6.0], &[9.0]]).unwrap();
        assert_eq!(p.df, 3.0);
        assert!((p.variance - (2.0 + 8.0) / 3.0).abs() < 1e-15);
        assert!(pooled_within_groups(&[&[1.0], &[2.0]]).is_err());
    }

    #[test]
    fn one_boot_separates_runs_from_iterations() {
        // Run means 1, 2, 3 → MS_run = 1; σ² = 0.5 over 5 iterations → τ² = 1 − 0.1.
        let c = nested_components(&[vec![run(1.0, 0.5, 5), run(2.0, 0.5, 5), run(3.0, 0.5, 5)]])
            .unwrap();
        assert_eq!((c.boots, c.runs, c.run_df, c.boot_df), (1, 3, 2.0, 0.0));
        assert!((c.sigma2 - 0.5).abs() < 1e-15 && c.sigma2_df == 12.0);
        assert!((c.ms_run.unwrap() - 1.0).abs() < 1e-15);
        assert!((c.tau2 - 0.9).abs() < 1e-12);
        assert!((c.run_var() - 1.0).abs() < 1e-12);
        assert_eq!((c.ms_boot, c.omega2), (None, None));
    }

    #[test]
    fn balanced_boots_match_the_textbook_anova() {
        // Two boots of two runs: boot means 1 and 3 (grand 2), MS_boot = 2·(1 + 1)/1 = 4,
        // MS_run = ((0.5² · 2) · 2)/2 = 0.5, n₀ = 2 → ω² = (4 − 0.5)/2.
        let c = nested_components(&[
            vec![run(0.5, 0.0, 4), run(1.5, 0.0, 4)],
            vec![run(2.5, 0.0, 4), run(3.5, 0.0, 4)],
        ])
        .unwrap();
        assert!((c.ms_boot.unwrap() - 4.0).abs() < 1e-12);
        assert!((c.ms_run.unwrap() - 0.5).abs() < 1e-12);
        assert!((c.n0 - 2.0).abs() < 1e-12);
        assert!((c.omega2.unwrap() - 1.75).abs() < 1e-12);
        // One run's mean on a boot of its own varies by ω² + τ² + σ²/n.
        assert!((c.omega2.unwrap() + c.run_var() - 2.25).abs() < 1e-12);
    }

    #[test]
    fn components_never_go_negative() {
        let c = nested_components(&[vec![run(1.0, 10.0, 2), run(1.0, 10.0, 2)]]).unwrap();
        assert_eq!(c.tau2, 0.0);
        assert!(nested_components(&[vec![run(1.0, 0.1, 3)]]).is_err());
        assert!(nested_components(&[vec![run(f64::NAN, 0.1, 3), run(1.0, 0.1, 3)]]).is_err());
    }
}
