//! The generated matrices the drift tests judge: cases with a centre and noise at each level a
//! real machine has — per boot (ω), per run (τ), per iteration (σ) — drawn from fixed seeds, so
//! every test's data are the same on every machine.
// Each test binary uses its own subset of these helpers.
#![allow(dead_code)]

use schedlab_analysis::series::{CaseLabel, Origin, RunMeta, Series};
use schedlab_analysis::Side;
use schedlab_core::metric::{Better, MetricShape};
use schedlab_core::record::Arm;
use schedlab_core::rng::SplitMix64;

/// One case of a matrix: its centre and its noise on the log scale.
#[derive(Clone, Copy)]
pub struct Case {
    pub centre: f64,
    /// Per boot; 0 in a matrix whose runs sit on one boot.
    pub omega: f64,
    pub tau: f64,
    pub sigma: f64,
}

/// The ranges a matrix draws each case's noise from. A matrix of one boot draws no ω, so its
/// stream of draws is that of the runs alone.
pub struct Noise {
    pub omega: Option<(f64, f64)>,
    pub tau: (f64, f64),
    pub sigma: (f64, f64),
}

/// `cases` cases centred at ln(`first` + i), their noise drawn in the order ω, τ, σ.
pub fn matrix(g: &mut SplitMix64, cases: usize, first: f64, noise: &Noise) -> Vec<Case> {
    (0..cases)
        .map(|i| Case {
            centre: (first + i as f64).ln(),
            omega: noise.omega.map_or(0.0, |(lo, hi)| g.between(lo, hi)),
            tau: g.between(noise.tau.0, noise.tau.1),
            sigma: g.between(noise.sigma.0, noise.sigma.1),
        })
        .collect()
}

pub fn case_name(i: usize) -> String {
    format!("case-{i:02}")
}

/// One arm of an `ab` experiment on one boot, tagged as `ab` tags its runs (experiment 1, the
/// arm, a round per run): per case, per round, the iterations of `usec_per_op`.
pub fn ab_arm(name: &str, arm: Arm, cases: Vec<(String, Vec<Vec<f64>>)>) -> Side {
    let index = usize::from(arm == Arm::B);
    let rounds = cases.first().map_or(0, |(_, per_round)| per_round.len());
    let runs = (0..rounds)
        .map(|r| RunMeta {
            id: Some(r as i64 * 2 + 1 + index as i64),
            boot_id: "boot".into(),
            experiment_id: Some(1),
            arm: Some(arm),
            round: Some(r as u32),
            machine: Some(Box::default()),
            ..RunMeta::default()
        })
        .collect();
    let series = cases
        .into_iter()
        .map(|(name, per_round)| Series {
            case: CaseLabel {
                name: name.clone(),
                short: name,
                load: "-".into(),
            },
            metric: "usec_per_op".into(),
            unit: "usec".into(),
            better: Better::Lower,
            shape: MetricShape::Scalar,
            distribution: None,
            restates: None,
            runs: per_round.into_iter().enumerate().collect(),
        })
        .collect();
    Side {
        name: name.into(),
        origin: Origin::Runs,
        runs,
        excluded: Vec::new(),
        disturbed_dropped: false,
        cases: Vec::new(),
        series,
    }
}
