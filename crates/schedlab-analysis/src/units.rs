//! The unit of replication of a row, and the units themselves.
//!
//! A run's iterations share that run's conditions, so they are not independent evidence about a
//! kernel: each run becomes one summary — the mean of y = ln(metric) over its measured iterations,
//! with their variance — and a side's samples are its runs. Runs on one boot are never pooled
//! into more iterations. Which unit a row uses follows from where its runs ran:
//!
//! - both sides' runs on one boot: the unit is the run (the boot's own offset cancels);
//! - the runs span several boots: the unit is the boot (the mean of its runs' summaries), on
//!   both sides, so a row never sets boots against runs;
//! - the runs come from one interleaved experiment (`ab`, `campaign`): the unit is the A/B pair
//!   of a round, d = ȳ_B − ȳ_A;
//! - plain numbers (`stat`): every value is a unit, as given.
use serde::Serialize;

use crate::series::{Origin, RunMeta, Series, Side};

/// The scale the test works on: logs whenever every value of the row is positive (changes are
/// ratios), the raw values otherwise (a count that can be zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    Log,
    Raw,
}

impl Scale {
    pub fn of(values: impl IntoIterator<Item = f64>) -> Scale {
        let mut any = false;
        for v in values {
            any = true;
            if v <= 0.0 || !v.is_finite() {
                return Scale::Raw;
            }
        }
        if any {
            Scale::Log
        } else {
            Scale::Raw
        }
    }

    pub fn forward(self, x: f64) -> f64 {
        match self {
            Scale::Log => x.ln(),
            Scale::Raw => x,
        }
    }

    pub fn back(self, y: f64) -> f64 {
        match self {
            Scale::Log => y.exp(),
            Scale::Raw => y,
        }
    }
}

/// What one sample of a row stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Design {
    /// One run per unit; every run of the row ran on one boot.
    Runs,
    /// One boot per unit (the mean of that boot's run summaries).
    Boots,
    /// One A/B pair of an interleaved experiment's round per unit.
    Pairs,
    /// Plain numbers, each its own unit.
    Values,
}

impl Design {
    /// The plural noun of the unit, for notes and footers.
    pub fn noun(self) -> &'static str {
        match self {
            Design::Runs => "runs",
            Design::Boots => "boots",
            Design::Pairs => "pairs",
            Design::Values => "values",
        }
    }
}

/// One run's summary of one case × metric on the analysis scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunSummary {
    /// Index into the side's runs.
    pub run: usize,
    pub mean: f64,
    /// Sample variance of the run's transformed values; `None` with fewer than two.
    pub variance: Option<f64>,
    pub n: usize,
}

fn summarise_run(run: usize, values: &[f64], scale: Scale) -> RunSummary {
    let ys: Vec<f64> = values.iter().map(|v| scale.forward(*v)).collect();
    let n = ys.len();
    let mean = ys.iter().sum::<f64>() / n as f64;
    let variance =
        (n >= 2).then(|| ys.iter().map(|y| (y - mean).powi(2)).sum::<f64>() / (n - 1) as f64);
    RunSummary {
        run,
        mean,
        variance,
        n,
    }
}

/// One unit of a side: its value on the analysis scale, and what it was made of.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub value: f64,
    /// The runs behind it (indices into the side's runs).
    pub runs: Vec<usize>,
    /// The experiment round, for pairs.
    pub round: Option<u32>,
}

/// A row's units: the design, the scale, each side's units (for pairs: each arm's per-round run
/// summaries, in round order) and the run summaries they came from.
#[derive(Debug, Clone)]
pub struct RowUnits {
    pub design: Design,
    pub scale: Scale,
    pub base: Vec<Unit>,
    pub candidate: Vec<Unit>,
    /// For pairs: d = candidate − base per round, in round order.
    pub differences: Vec<f64>,
    /// Every run summary of each side that went into a unit.
    pub base_runs: Vec<RunSummary>,
    pub candidate_runs: Vec<RunSummary>,
    /// For pairs: A and B of every round ran on the same boot (`ab`), or on boots of their own
    /// (`campaign`).
    pub pairs_share_boots: bool,
    /// Runs per boot behind a boot unit, averaged over the row's boots (1 for other designs).
    pub runs_per_unit: f64,
}

impl RowUnits {
    /// Measured iterations per run, when every run of the row has the same count.
    pub fn common_iterations(&self) -> Option<usize> {
        let mut counts = self
            .base_runs
            .iter()
            .chain(&self.candidate_runs)
            .map(|r| r.n);
        let first = counts.next()?;
        counts.all(|n| n == first).then_some(first)
    }
}

/// Chooses the row's design and builds its units.
pub fn row_units(base: &Side, b: &Series, candidate: &Side, c: &Series) -> RowUnits {
    let scale = Scale::of(
        b.runs
            .iter()
            .chain(&c.runs)
            .flat_map(|(_, v)| v.iter().copied()),
    );
    let summaries = |s: &Series| -> Vec<RunSummary> {
        s.runs
            .iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(run, values)| summarise_run(*run, values, scale))
            .collect()
    };
    let (base_runs, candidate_runs) = (summaries(b), summaries(c));
    if let Some(paired) = pairs(base, &base_runs, candidate, &candidate_runs) {
        return RowUnits { scale, ..paired };
    }
    let origin_values = base.origin == Origin::Values || candidate.origin == Origin::Values;
    let boot_of = |side: &Side, r: &RunSummary| side.runs[r.run].boot_id.clone();
    let mut boots: Vec<String> = base_runs.iter().map(|r| boot_of(base, r)).collect();
    boots.extend(candidate_runs.iter().map(|r| boot_of(candidate, r)));
    boots.sort();
    boots.dedup();
    let one_unit_per_run = |runs: &[RunSummary]| -> Vec<Unit> {
        runs.iter()
            .map(|r| Unit {
                value: r.mean,
                runs: vec![r.run],
                round: None,
            })
            .collect()
    };
    if origin_values || boots.len() <= 1 {
        return RowUnits {
            design: if origin_values {
                Design::Values
            } else {
                Design::Runs
            },
            scale,
            base: one_unit_per_run(&base_runs),
            candidate: one_unit_per_run(&candidate_runs),
            differences: Vec::new(),
            base_runs,
            candidate_runs,
            pairs_share_boots: false,
            runs_per_unit: 1.0,
        };
    }
    let by_boot = |side: &Side, runs: &[RunSummary]| -> Vec<Unit> {
        let mut units: Vec<(String, Vec<&RunSummary>)> = Vec::new();
        for r in runs {
            let boot = boot_of(side, r);
            match units.iter_mut().find(|(b, _)| *b == boot) {
                Some((_, members)) => members.push(r),
                None => units.push((boot, vec![r])),
            }
        }
        units
            .into_iter()
            .map(|(_, members)| Unit {
                value: members.iter().map(|r| r.mean).sum::<f64>() / members.len() as f64,
                runs: members.iter().map(|r| r.run).collect(),
                round: None,
            })
            .collect()
    };
    let base_units = by_boot(base, &base_runs);
    let candidate_units = by_boot(candidate, &candidate_runs);
    let unit_count = (base_units.len() + candidate_units.len()).max(1);
    let runs_per_unit = (base_runs.len() + candidate_runs.len()) as f64 / unit_count as f64;
    RowUnits {
        design: Design::Boots,
        scale,
        base: base_units,
        candidate: candidate_units,
        differences: Vec::new(),
        base_runs,
        candidate_runs,
        pairs_share_boots: false,
        runs_per_unit,
    }
}

/// The A/B pairs of one interleaved experiment: both sides' runs carry tags of the same
/// experiment, one arm per side. A round retried after a failure (a campaign slot run again on
/// the next boot) contributes one run per arm — the complete one, else the newest — so no round
/// is counted twice. `None` when the runs are not such an experiment or share no round.
fn pairs(
    base: &Side,
    base_runs: &[RunSummary],
    candidate: &Side,
    candidate_runs: &[RunSummary],
) -> Option<RowUnits> {
    let meta = |side: &Side, r: &RunSummary| side.runs[r.run].clone();
    let experiment_and_arm = |side: &Side, runs: &[RunSummary]| {
        let first = meta(side, runs.first()?);
        let key = (first.experiment_id?, first.arm?);
        runs.iter()
            .all(|r| {
                let m = meta(side, r);
                m.experiment_id == Some(key.0) && m.arm == Some(key.1) && m.round.is_some()
            })
            .then_some(key)
    };
    let (base_key, cand_key) = (
        experiment_and_arm(base, base_runs)?,
        experiment_and_arm(candidate, candidate_runs)?,
    );
    if base_key.0 != cand_key.0 || base_key.1 == cand_key.1 {
        return None;
    }
    let per_round = |side: &Side, runs: &[RunSummary]| -> Vec<(u32, RunSummary)> {
        let mut chosen: Vec<(u32, RunSummary)> = Vec::new();
        for r in runs {
            let m = meta(side, r);
            let round = m.round.expect("checked above");
            match chosen.iter_mut().find(|(k, _)| *k == round) {
                Some((_, kept)) => {
                    if prefer(&m, &side.runs[kept.run]) {
                        *kept = *r;
                    }
                }
                None => chosen.push((round, *r)),
            }
        }
        chosen.sort_by_key(|(round, _)| *round);
        chosen
    };
    let (a, b) = (
        per_round(base, base_runs),
        per_round(candidate, candidate_runs),
    );
    let mut base_units = Vec::new();
    let mut cand_units = Vec::new();
    let mut differences = Vec::new();
    let mut share_boots = true;
    let (mut kept_a, mut kept_b) = (Vec::new(), Vec::new());
    for (round, ra) in &a {
        let Some((_, rb)) = b.iter().find(|(k, _)| k == round) else {
            continue;
        };
        share_boots &= base.runs[ra.run].boot_id == candidate.runs[rb.run].boot_id;
        base_units.push(Unit {
            value: ra.mean,
            runs: vec![ra.run],
            round: Some(*round),
        });
        cand_units.push(Unit {
            value: rb.mean,
            runs: vec![rb.run],
            round: Some(*round),
        });
        differences.push(rb.mean - ra.mean);
        kept_a.push(*ra);
        kept_b.push(*rb);
    }
    if differences.is_empty() {
        return None;
    }
    Some(RowUnits {
        design: Design::Pairs,
        scale: Scale::Log,
        base: base_units,
        candidate: cand_units,
        differences,
        base_runs: kept_a,
        candidate_runs: kept_b,
        pairs_share_boots: share_boots,
        runs_per_unit: 1.0,
    })
}

/// Whether run `new` should replace `kept` as its round's run: a complete run beats an
/// incomplete one, then the newer (higher id) wins.
fn prefer(new: &RunMeta, kept: &RunMeta) -> bool {
    use schedlab_core::record::RunStatus::Complete;
    match (new.status == Complete, kept.status == Complete) {
        (true, false) => true,
        (false, true) => false,
        _ => new.id > kept.id,
    }
}
