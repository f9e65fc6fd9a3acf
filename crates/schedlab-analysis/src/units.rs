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
//! - both sides are one set of runs seen by the value of a parameter (`compare --across`): the
//!   unit is the run that holds both cases, d = its candidate case's summary − its base case's,
//!   so the run's own conditions cancel as a round's do;
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
    /// Index into the side's runs; for a plain value, the value's position.
    pub run: usize,
    pub mean: f64,
    /// Sample variance of the run's transformed values; `None` with fewer than two.
    pub variance: Option<f64>,
    pub n: usize,
    /// The plain mean and sample variance of the run's values in the metric's unit, whatever
    /// the scale: the std% tables print is sd ÷ mean, as `show` and schedtests compute it, which
    /// on a skewed metric (a tail latency) is far from e^sd(ln x) − 1.
    pub raw_mean: f64,
    pub raw_variance: Option<f64>,
}

/// One run's values summarised on `scale`: what a comparison's units and a history's points
/// are made of.
pub fn summarise_run(run: usize, values: &[f64], scale: Scale) -> RunSummary {
    let mean_and_variance = schedlab_stats::summary::run_moments;
    let ys: Vec<f64> = values.iter().map(|v| scale.forward(*v)).collect();
    let (mean, variance) = mean_and_variance(&ys);
    let (raw_mean, raw_variance) = match scale {
        Scale::Log => mean_and_variance(values),
        Scale::Raw => (mean, variance),
    };
    RunSummary {
        run,
        mean,
        variance,
        n: ys.len(),
        raw_mean,
        raw_variance,
    }
}

/// One unit of a side: its value on the analysis scale, and what it was made of.
#[derive(Debug, Clone, PartialEq)]
pub struct Unit {
    pub value: f64,
    /// The runs behind it (indices into the side's runs); none for a plain value.
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
    /// For pairs: each pair is two cases of one run (`compare --across`), not a round's two runs.
    pub within_runs: bool,
    /// Within-run pairs from runs on several boots, averaged per boot: a unit is a boot's mean
    /// of its runs' pairs, as unpaired runs become boots (a boot may move one case and not the
    /// other, so the pairs of one boot are not independent).
    pub pairs_by_boot: bool,
}

impl RowUnits {
    /// What a side would need more of: within-run pairs are runs, or boots where they are
    /// averaged per boot.
    pub fn counted(&self) -> Design {
        if self.pairs_by_boot {
            Design::Boots
        } else if self.within_runs {
            Design::Runs
        } else {
            self.design
        }
    }

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
    row_units_of(base, b, candidate, c, false)
}

/// As [`row_units`], for two projections of one set of runs (`compare --across`): a run that
/// holds both cases is a pair; when none does, the sides' runs are independent and the row's
/// design is chosen as for any two sides.
pub fn row_units_across(base: &Side, b: &Series, candidate: &Side, c: &Series) -> RowUnits {
    row_units_of(base, b, candidate, c, true)
}

/// Each run's summary of a series' runs that measured something.
fn summaries(s: &Series, scale: Scale) -> Vec<RunSummary> {
    s.runs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(run, values)| summarise_run(*run, values, scale))
        .collect()
}

fn one_unit_per_run(runs: &[RunSummary]) -> Vec<Unit> {
    runs.iter()
        .map(|r| Unit {
            value: r.mean,
            runs: vec![r.run],
            round: None,
        })
        .collect()
}

/// A side's run summaries and units. A values side's series is one list of values, each a unit
/// of its own (from no run, so with no run index); each is also summarised alone, as one
/// iteration.
fn summaries_and_units(side: &Side, s: &Series, scale: Scale) -> (Vec<RunSummary>, Vec<Unit>) {
    if side.origin == Origin::Values {
        let count = s.runs.iter().map(|(_, v)| v.len()).sum();
        let (mut runs, mut units) = (Vec::with_capacity(count), Vec::with_capacity(count));
        for (i, v) in s.runs.iter().flat_map(|(_, v)| v).enumerate() {
            let y = scale.forward(*v);
            runs.push(RunSummary {
                run: i,
                mean: y,
                variance: None,
                n: 1,
                raw_mean: *v,
                raw_variance: None,
            });
            units.push(Unit {
                value: y,
                runs: Vec::new(),
                round: None,
            });
        }
        return (runs, units);
    }
    let runs = summaries(s, scale);
    let units = one_unit_per_run(&runs);
    (runs, units)
}

fn boot_of(side: &Side, r: &RunSummary) -> String {
    side.runs[r.run].boot_id.clone()
}

/// A unit per boot: the mean of its runs' summaries.
fn units_by_boot(side: &Side, runs: &[RunSummary]) -> Vec<Unit> {
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
}

fn row_units_of(
    base: &Side,
    b: &Series,
    candidate: &Side,
    c: &Series,
    projections_of_one_run_set: bool,
) -> RowUnits {
    let scale = Scale::of(
        b.runs
            .iter()
            .chain(&c.runs)
            .flat_map(|(_, v)| v.iter().copied()),
    );
    if base.origin == Origin::Values || candidate.origin == Origin::Values {
        let (base_runs, base_units) = summaries_and_units(base, b, scale);
        let (candidate_runs, candidate_units) = summaries_and_units(candidate, c, scale);
        return unpaired(
            Design::Values,
            scale,
            (base_runs, base_units),
            (candidate_runs, candidate_units),
        );
    }
    let (base_runs, candidate_runs) = (summaries(b, scale), summaries(c, scale));
    if projections_of_one_run_set {
        if let Some(paired) = within_run_pairs(base, &base_runs, &candidate_runs) {
            return RowUnits { scale, ..paired };
        }
    }
    if let Some(paired) = pairs(base, &base_runs, candidate, &candidate_runs) {
        return RowUnits { scale, ..paired };
    }
    let mut boots: Vec<String> = base_runs.iter().map(|r| boot_of(base, r)).collect();
    boots.extend(candidate_runs.iter().map(|r| boot_of(candidate, r)));
    boots.sort();
    boots.dedup();
    if boots.len() <= 1 {
        let (base_units, candidate_units) = (
            one_unit_per_run(&base_runs),
            one_unit_per_run(&candidate_runs),
        );
        return unpaired(
            Design::Runs,
            scale,
            (base_runs, base_units),
            (candidate_runs, candidate_units),
        );
    }
    let base_units = units_by_boot(base, &base_runs);
    let candidate_units = units_by_boot(candidate, &candidate_runs);
    unpaired(
        Design::Boots,
        scale,
        (base_runs, base_units),
        (candidate_runs, candidate_units),
    )
}

/// A row of two independent sides (not pairs): each side's run summaries and its units, with the
/// runs behind a unit averaged over the row (1 unless units are boots).
fn unpaired(
    design: Design,
    scale: Scale,
    (base_runs, base): (Vec<RunSummary>, Vec<Unit>),
    (candidate_runs, candidate): (Vec<RunSummary>, Vec<Unit>),
) -> RowUnits {
    let runs_per_unit = if design == Design::Boots {
        let unit_count = (base.len() + candidate.len()).max(1);
        (base_runs.len() + candidate_runs.len()) as f64 / unit_count as f64
    } else {
        1.0
    };
    RowUnits {
        design,
        scale,
        base,
        candidate,
        differences: Vec::new(),
        base_runs,
        candidate_runs,
        pairs_share_boots: false,
        runs_per_unit,
        within_runs: false,
        pairs_by_boot: false,
    }
}

/// The pairs of two projections of one set of runs (`compare --across`): every run that measured
/// both the base case and the candidate case is one pair, d = candidate summary − base summary,
/// on the same boot by construction. Runs that hold one of the two cases only are left out, as an
/// `ab` round without its partner is. `None` when no run holds both: the sides' runs are then
/// independent and the unpaired designs apply. Pairs from runs on several boots are averaged per
/// boot, one unit a boot: a boot may move one case and not the other, so the pairs of one boot
/// share that and are not independent evidence.
fn within_run_pairs(
    runs_of: &Side,
    base_runs: &[RunSummary],
    candidate_runs: &[RunSummary],
) -> Option<RowUnits> {
    // The projections share one run list, so a run's index is the same on both sides.
    let kept: Vec<(RunSummary, RunSummary)> = base_runs
        .iter()
        .filter_map(|a| {
            let b = candidate_runs.iter().find(|b| b.run == a.run)?;
            Some((*a, *b))
        })
        .collect();
    if kept.is_empty() {
        return None;
    }
    let boot_of = |r: &RunSummary| runs_of.runs[r.run].boot_id.as_str();
    let mut boots: Vec<(&str, Vec<&(RunSummary, RunSummary)>)> = Vec::new();
    for pair in &kept {
        match boots.iter_mut().find(|(b, _)| *b == boot_of(&pair.0)) {
            Some((_, members)) => members.push(pair),
            None => boots.push((boot_of(&pair.0), vec![pair])),
        }
    }
    let by_boot = boots.len() > 1;
    let groups: Vec<Vec<&(RunSummary, RunSummary)>> = if by_boot {
        boots.into_iter().map(|(_, members)| members).collect()
    } else {
        kept.iter().map(|pair| vec![pair]).collect()
    };
    let unit = |members: &[&(RunSummary, RunSummary)],
                pick: fn(&(RunSummary, RunSummary)) -> RunSummary| Unit {
        value: members.iter().map(|p| pick(p).mean).sum::<f64>() / members.len() as f64,
        runs: members.iter().map(|p| pick(p).run).collect(),
        round: None,
    };
    let base: Vec<Unit> = groups.iter().map(|g| unit(g, |p| p.0)).collect();
    let candidate: Vec<Unit> = groups.iter().map(|g| unit(g, |p| p.1)).collect();
    let differences = base
        .iter()
        .zip(&candidate)
        .map(|(a, b)| b.value - a.value)
        .collect();
    Some(RowUnits {
        design: Design::Pairs,
        scale: Scale::Log,
        base,
        candidate,
        differences,
        base_runs: kept.iter().map(|p| p.0).collect(),
        candidate_runs: kept.iter().map(|p| p.1).collect(),
        pairs_share_boots: !by_boot,
        runs_per_unit: kept.len() as f64 / groups.len() as f64,
        within_runs: true,
        pairs_by_boot: by_boot,
    })
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
            let Some(round) = m.round else {
                continue;
            };
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
        within_runs: false,
        pairs_by_boot: false,
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use schedlab_core::metric::Better;
    use schedlab_core::record::Arm;
    use schedlab_core::record::RunStatus::{self, Complete, Failed, Interrupted};

    use super::*;
    use crate::testutil::{meta, side};

    /// Values whose logs are the given numbers, so run summaries are exact small numbers.
    fn exps(logs: &[f64]) -> Vec<f64> {
        logs.iter().map(|y| y.exp()).collect()
    }

    fn units_of(base: &Side, candidate: &Side) -> RowUnits {
        row_units(base, &base.series[0], candidate, &candidate.series[0])
    }

    fn values(units: &[Unit]) -> Vec<f64> {
        units.iter().map(|u| u.value).collect()
    }

    fn assert_close(got: &[f64], want: &[f64]) {
        assert_eq!(got.len(), want.len(), "{got:?} vs {want:?}");
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{got:?} vs {want:?}");
        }
    }

    fn complete(id: i64, boot: &str) -> RunMeta {
        meta(id, boot, Complete, None)
    }

    /// A side of one experiment's `arm`: each run with its id, boot, status, round and values.
    fn arm(name: &str, arm: Arm, runs: Vec<(i64, &str, RunStatus, u32, Vec<f64>)>) -> Side {
        let (metas, values) = runs
            .into_iter()
            .map(|(id, boot, status, round, values)| {
                (meta(id, boot, status, Some((7, arm, round))), values)
            })
            .unzip();
        side(name, metas, values)
    }

    /// The ids of the runs behind each unit, in unit order.
    fn unit_run_ids(side: &Side, units: &[Unit]) -> Vec<Vec<i64>> {
        units
            .iter()
            .map(|u| u.runs.iter().map(|r| side.runs[*r].id.unwrap()).collect())
            .collect()
    }

    #[test]
    fn one_boot_gives_one_run_unit_per_run() {
        let base = side(
            "base",
            vec![complete(1, "b"), complete(2, "b"), complete(3, "b")],
            vec![exps(&[0.0, 2.0]), exps(&[1.0, 1.0]), exps(&[3.0])],
        );
        let candidate = side(
            "cand",
            vec![complete(4, "b"), complete(5, "b")],
            vec![exps(&[2.0, 2.0]), exps(&[4.0, 0.0])],
        );
        let u = units_of(&base, &candidate);
        assert_eq!(u.design, Design::Runs);
        assert_eq!(u.scale, Scale::Log);
        // Each unit is its run's mean of ln x, never the iterations themselves.
        assert_close(&values(&u.base), &[1.0, 1.0, 3.0]);
        assert_close(&values(&u.candidate), &[2.0, 2.0]);
        assert_eq!(
            unit_run_ids(&base, &u.base),
            vec![vec![1], vec![2], vec![3]]
        );
        assert!(u.base.iter().all(|x| x.round.is_none()));
        assert_eq!(u.runs_per_unit, 1.0);
        // The run summaries keep the within-run variance of the logs (0 and 2: variance 2).
        assert!((u.base_runs[0].variance.unwrap() - 2.0).abs() < 1e-12);
        assert_eq!(u.base_runs[0].n, 2);
        assert_eq!(u.base_runs[2].variance, None);
        assert!(u.differences.is_empty());
    }

    /// Two cases of the same runs: a pair per run, sharing boots only when every run is on one.
    #[test]
    fn pairs_within_runs_share_boots_only_on_one_boot() {
        for (boots, share) in [(["b", "b"], true), (["b1", "b2"], false)] {
            let runs = vec![complete(1, boots[0]), complete(2, boots[1])];
            let base = side("x=1", runs.clone(), vec![exps(&[1.0]), exps(&[2.0])]);
            let candidate = side("x=2", runs, vec![exps(&[1.5]), exps(&[2.5])]);
            let u = row_units_across(&base, &base.series[0], &candidate, &candidate.series[0]);
            assert_eq!(u.design, Design::Pairs);
            assert!(u.within_runs);
            assert_close(&u.differences, &[0.5, 0.5]);
            assert_eq!(u.pairs_share_boots, share, "{boots:?}");
            assert_eq!(u.pairs_by_boot, !share, "{boots:?}");
        }
    }

    /// Runs holding both cases on several boots: one pair per boot, the mean of its runs' pairs,
    /// with every run kept behind it; a run holding one case only is left out.
    #[test]
    fn pairs_within_runs_on_several_boots_are_one_unit_per_boot() {
        let runs = vec![
            complete(1, "b1"),
            complete(2, "b1"),
            complete(3, "b2"),
            complete(4, "b2"),
        ];
        let base = side(
            "x=1",
            runs.clone(),
            vec![exps(&[1.0]), exps(&[3.0]), exps(&[5.0]), exps(&[7.0])],
        );
        // Run 4 holds the base case only.
        let mut candidate = side(
            "x=2",
            runs,
            vec![exps(&[2.0]), exps(&[3.0]), exps(&[5.5]), exps(&[0.0])],
        );
        candidate.series[0].runs.pop();
        let u = row_units_across(&base, &base.series[0], &candidate, &candidate.series[0]);
        assert_eq!(u.design, Design::Pairs);
        assert!(u.pairs_by_boot && !u.pairs_share_boots);
        assert_close(&values(&u.base), &[2.0, 5.0]);
        assert_close(&values(&u.candidate), &[2.5, 5.5]);
        assert_close(&u.differences, &[0.5, 0.5]);
        assert_eq!(unit_run_ids(&base, &u.base), vec![vec![1, 2], vec![3]]);
        assert_eq!(u.base_runs.len(), 3);
        assert!((u.runs_per_unit - 1.5).abs() < 1e-12);
    }

    #[test]
    fn runs_on_several_boots_become_one_unit_per_boot() {
        // Boot b1's runs have 1 and 3 iterations: its unit is the mean of the two run
        // summaries (1 + 3) / 2 = 2, not the mean of its four iterations (1 + 9) / 4 = 2.5.
        let base = side(
            "base",
            vec![complete(1, "b1"), complete(2, "b1"), complete(3, "b2")],
            vec![exps(&[1.0]), exps(&[3.0, 3.0, 3.0]), exps(&[5.0])],
        );
        let candidate = side(
            "cand",
            vec![complete(4, "b3"), complete(5, "b3"), complete(6, "b3")],
            vec![exps(&[0.0]), exps(&[1.0]), exps(&[2.0])],
        );
        let u = units_of(&base, &candidate);
        assert_eq!(u.design, Design::Boots);
        assert_close(&values(&u.base), &[2.0, 5.0]);
        assert_close(&values(&u.candidate), &[1.0]);
        assert_eq!(unit_run_ids(&base, &u.base), vec![vec![1, 2], vec![3]]);
        assert_eq!(unit_run_ids(&candidate, &u.candidate), vec![vec![4, 5, 6]]);
        // Six runs behind three boot units.
        assert!((u.runs_per_unit - 2.0).abs() < 1e-12);
        assert_eq!(u.base_runs.len() + u.candidate_runs.len(), 6);
    }

    #[test]
    fn a_side_on_one_boot_is_one_unit_when_the_other_side_ran_on_another() {
        // Three runs against three runs, but each side on a boot of its own: the boot offsets do
        // not cancel, so each side is one boot and the row may not count its runs as units.
        let base = side(
            "base",
            vec![complete(1, "b1"), complete(2, "b1"), complete(3, "b1")],
            vec![exps(&[1.0]), exps(&[2.0]), exps(&[3.0])],
        );
        let candidate = side(
            "cand",
            vec![complete(4, "b2"), complete(5, "b2"), complete(6, "b2")],
            vec![exps(&[1.5]), exps(&[2.5]), exps(&[3.5])],
        );
        let u = units_of(&base, &candidate);
        assert_eq!(u.design, Design::Boots);
        assert_close(&values(&u.base), &[2.0]);
        assert_close(&values(&u.candidate), &[2.5]);
    }

    #[test]
    fn runs_without_values_for_the_row_are_not_units() {
        let base = side(
            "base",
            vec![complete(1, "b"), complete(2, "b")],
            vec![exps(&[1.0]), Vec::new()],
        );
        let candidate = side("cand", vec![complete(3, "b")], vec![exps(&[2.0])]);
        let u = units_of(&base, &candidate);
        assert_eq!(u.base.len(), 1);
        assert_eq!(u.base_runs.len(), 1);
    }

    #[test]
    fn pairs_are_formed_by_round_from_experiment_tags() {
        // Listed out of round order; B's round 3 has no A partner and is left out.
        let base = arm(
            "a",
            Arm::A,
            vec![
                (1, "b", Complete, 2, exps(&[1.0])),
                (2, "b", Complete, 0, exps(&[2.0])),
                (3, "b", Complete, 1, exps(&[3.0])),
            ],
        );
        let candidate = arm(
            "b",
            Arm::B,
            vec![
                (4, "b", Complete, 0, exps(&[2.5])),
                (5, "b", Complete, 1, exps(&[3.0])),
                (6, "b", Complete, 2, exps(&[1.5])),
                (7, "b", Complete, 3, exps(&[9.0])),
            ],
        );
        let u = units_of(&base, &candidate);
        assert_eq!(u.design, Design::Pairs);
        let rounds = |units: &[Unit]| units.iter().map(|x| x.round).collect::<Vec<_>>();
        assert_eq!(rounds(&u.base), vec![Some(0), Some(1), Some(2)]);
        assert_eq!(rounds(&u.candidate), rounds(&u.base));
        assert_close(&values(&u.base), &[2.0, 3.0, 1.0]);
        assert_close(&u.differences, &[0.5, 0.0, 0.5]);
        assert_eq!(u.candidate_runs.len(), 3);
        assert!(u.pairs_share_boots);

        // A campaign: each slot on a boot of its own. Still pairs (not boots), not sharing.
        let base = arm(
            "a",
            Arm::A,
            vec![
                (1, "a0", Complete, 0, exps(&[1.0])),
                (2, "a1", Complete, 1, exps(&[2.0])),
            ],
        );
        let candidate = arm(
            "b",
            Arm::B,
            vec![
                (3, "b0", Complete, 0, exps(&[1.5])),
                (4, "b1", Complete, 1, exps(&[2.5])),
            ],
        );
        let u = units_of(&base, &candidate);
        assert_eq!(u.design, Design::Pairs);
        assert!(!u.pairs_share_boots);
    }

    #[test]
    fn runs_of_other_experiments_or_of_one_arm_are_not_pairs() {
        let a = |exp: i64, arm: Arm| {
            side(
                "x",
                vec![meta(1, "b", Complete, Some((exp, arm, 0)))],
                vec![exps(&[1.0])],
            )
        };
        assert_eq!(units_of(&a(7, Arm::A), &a(8, Arm::B)).design, Design::Runs);
        assert_eq!(units_of(&a(7, Arm::A), &a(7, Arm::A)).design, Design::Runs);
        // One untagged run on a side: not an experiment's arm.
        let mixed = side(
            "x",
            vec![
                meta(1, "b", Complete, Some((7, Arm::A, 0))),
                complete(2, "b"),
            ],
            vec![exps(&[1.0]), exps(&[1.0])],
        );
        assert_eq!(units_of(&mixed, &a(7, Arm::B)).design, Design::Runs);
    }

    #[test]
    fn a_retried_round_counts_once_with_its_complete_run_else_its_newest() {
        let base = arm(
            "a",
            Arm::A,
            vec![
                (1, "b", Complete, 0, exps(&[1.0])),
                // Round 1: interrupted, then retried to completion.
                (2, "b", Interrupted, 1, exps(&[10.0])),
                (3, "b", Complete, 1, exps(&[2.0])),
                // Round 2: complete, then a newer retry that failed: the complete one stays.
                (6, "b", Complete, 2, exps(&[4.0])),
                (7, "b", Failed, 2, exps(&[20.0])),
                // Round 3: two complete runs, listed newest first: the newest (id 9) wins.
                (9, "b", Complete, 3, exps(&[6.0])),
                (8, "b", Complete, 3, exps(&[5.0])),
                // Round 4: nothing complete: the newest.
                (10, "b", Interrupted, 4, exps(&[7.0])),
                (11, "b", Failed, 4, exps(&[8.0])),
            ],
        );
        let candidate = arm(
            "b",
            Arm::B,
            vec![
                (21, "b", Complete, 0, exps(&[1.5])),
                (22, "b", Complete, 1, exps(&[2.5])),
                // The retry is on the candidate's side too: two complete runs of round 2.
                (23, "b", Complete, 2, exps(&[30.0])),
                (24, "b", Complete, 2, exps(&[4.5])),
                (25, "b", Complete, 3, exps(&[6.5])),
                (26, "b", Complete, 4, exps(&[8.5])),
            ],
        );
        let u = units_of(&base, &candidate);
        assert_eq!(u.design, Design::Pairs);
        assert_eq!(
            unit_run_ids(&base, &u.base),
            vec![vec![1], vec![3], vec![6], vec![9], vec![11]]
        );
        assert_eq!(
            unit_run_ids(&candidate, &u.candidate),
            vec![vec![21], vec![22], vec![24], vec![25], vec![26]]
        );
        // No round counts twice: five rounds, five pairs, five run summaries a side.
        assert_close(&u.differences, &[0.5; 5]);
        assert_eq!(u.base_runs.len(), 5);
        assert_eq!(u.candidate_runs.len(), 5);
    }

    #[test]
    fn a_value_that_is_not_positive_puts_the_whole_row_on_the_raw_scale() {
        // Only the candidate has a zero; both sides are then raw means.
        let base = side(
            "base",
            vec![complete(1, "b"), complete(2, "b")],
            vec![vec![1.0, 3.0], vec![2.0, 2.0]],
        );
        let candidate = side(
            "cand",
            vec![complete(3, "b"), complete(4, "b")],
            vec![vec![0.0, 6.0], vec![3.0, 3.0]],
        );
        let u = units_of(&base, &candidate);
        assert_eq!(u.scale, Scale::Raw);
        assert_close(&values(&u.base), &[2.0, 2.0]);
        assert_close(&values(&u.candidate), &[3.0, 3.0]);

        let negative = side("cand", vec![complete(3, "b")], vec![vec![-1.0, 5.0]]);
        assert_eq!(units_of(&base, &negative).scale, Scale::Raw);
        let positive = side("cand", vec![complete(3, "b")], vec![vec![1.0, 5.0]]);
        assert_eq!(units_of(&base, &positive).scale, Scale::Log);

        // Pairs too: the differences are raw differences.
        let a = arm(
            "a",
            Arm::A,
            vec![
                (1, "b", Complete, 0, vec![0.0, 2.0]),
                (2, "b", Complete, 1, vec![3.0]),
            ],
        );
        let b = arm(
            "b",
            Arm::B,
            vec![
                (3, "b", Complete, 0, vec![2.0]),
                (4, "b", Complete, 1, vec![5.0]),
            ],
        );
        let u = units_of(&a, &b);
        assert_eq!((u.design, u.scale), (Design::Pairs, Scale::Raw));
        assert_close(&u.differences, &[1.0, 2.0]);
    }

    #[test]
    fn plain_values_are_each_a_unit() {
        let base = Side::from_values(
            "base",
            vec![("c".into(), "m".into(), Better::Lower, vec![1.0, 2.0, 4.0])],
        );
        let candidate = Side::from_values(
            "cand",
            vec![("c".into(), "m".into(), Better::Lower, vec![2.0, 4.0])],
        );
        let u = units_of(&base, &candidate);
        assert_eq!(u.design, Design::Values);
        assert_close(&values(&u.base), &[0.0, std::f64::consts::LN_2, 4f64.ln()]);
        assert_eq!(u.candidate.len(), 2);
        // Each value summarised alone, as one iteration of no run: a million values make no
        // million run records or lists (`schedlab stat` on large files).
        assert_eq!((base.runs.len(), base.series[0].runs.len()), (1, 1));
        assert!(u.base.iter().all(|unit| unit.runs.is_empty()));
        let summaries: Vec<(usize, usize, Option<f64>)> = u
            .base_runs
            .iter()
            .map(|r| (r.run, r.n, r.variance))
            .collect();
        assert_eq!(summaries, [(0, 1, None), (1, 1, None), (2, 1, None)]);
        assert_eq!(u.common_iterations(), Some(1));
        let empty = Side::from_values(
            "none",
            vec![("c".into(), "m".into(), Better::Lower, vec![])],
        );
        assert!(empty.runs.is_empty());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Whatever the layout of runs over boots, a row's units are all of one kind: every unit
        /// one run when everything ran on one boot, else every unit exactly the runs of one boot.
        #[test]
        fn a_row_never_mixes_kinds_of_units(
            base_boots in prop::collection::vec(0u8..3, 1..6),
            candidate_boots in prop::collection::vec(0u8..3, 1..6),
        ) {
            let make = |name: &str, boots: &[u8], first_id: i64| {
                let runs = boots
                    .iter()
                    .enumerate()
                    .map(|(i, b)| complete(first_id + i as i64, &format!("boot{b}")))
                    .collect();
                let values = (0..boots.len()).map(|i| exps(&[i as f64])).collect();
                side(name, runs, values)
            };
            let base = make("base", &base_boots, 1);
            let candidate = make("cand", &candidate_boots, 100);
            let u = units_of(&base, &candidate);
            let mut all: Vec<u8> = base_boots.iter().chain(&candidate_boots).copied().collect();
            all.sort_unstable();
            all.dedup();
            if all.len() == 1 {
                prop_assert_eq!(u.design, Design::Runs);
                prop_assert_eq!(u.base.len(), base_boots.len());
                prop_assert_eq!(u.candidate.len(), candidate_boots.len());
            } else {
                prop_assert_eq!(u.design, Design::Boots);
                for (s, units, boots) in [
                    (&base, &u.base, &base_boots),
                    (&candidate, &u.candidate, &candidate_boots),
                ] {
                    let mut distinct = boots.clone();
                    distinct.sort_unstable();
                    distinct.dedup();
                    prop_assert_eq!(units.len(), distinct.len());
                    for unit in units.iter() {
                        let boot = &s.runs[unit.runs[0]].boot_id;
                        let of_boot: Vec<usize> = (0..s.runs.len())
                            .filter(|r| &s.runs[*r].boot_id == boot)
                            .collect();
                        prop_assert_eq!(&unit.runs, &of_boot);
                    }
                }
            }
        }
    }
}
