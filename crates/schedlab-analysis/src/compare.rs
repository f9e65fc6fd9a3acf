//! The decision procedure, per case × metric, on y = ln x (docs/statistics.md):
//!
//! 1. units per side (runs, boots or A/B pairs; see [`crate::units`]);
//! 2. the effect: the difference of the sides' mean units (for pairs, the mean difference);
//! 3. the variance of one unit: from today's units when a side has two or more (pooled between
//!    units within each side, ν = k_A + k_B − 2; for pairs, the variance of the differences,
//!    ν = K − 1), from a calibration of this machine when there is one (ν from its runs), and
//!    their df-weighted pool when both exist; a stale-calibration guard widens the calibrated
//!    variance when today's spread is larger;
//! 4. Student's t with ν df; Benjamini–Hochberg (or the chosen adjustment) over every judged row;
//! 5. verdicts: `**` when q ≤ fdr and |change| ≥ δ; `≈` by TOST at a fixed α = 0.05; `?` when
//!    no variance is usable (ν = 0, a refused calibration, or no spread at all: no p, out of
//!    the family); `??` when the units spread more than
//!    the noise cap; `~` otherwise, with an exact MDE and the units needed to see δ (per side,
//!    or pairs, each one unit of both sides).
//!
//! A sequential experiment (`schedlab ab --until-decided`) is decided look by look (one look per
//! round) at levels from an alpha-spending function, a row keeping the verdict of the first look
//! that decided it.
use schedlab_stats::equivalence::{tost_from_estimate, Equivalence};
use schedlab_stats::multiplicity::adjust_p_values;
use schedlab_stats::power::{mde_t, required_count, Counted};
use schedlab_stats::sequential::spent_alpha;
use schedlab_stats::ttest::{t_test_from_estimate, TTest};
use schedlab_stats::ConfidenceInterval;

use crate::across::Projection;
use crate::calibration::{CalibrationSet, MachineKey, UnitKind, VarianceEstimate};
use crate::figures::{geomeans, mark_mmtests_mean, side_figures, style_figures};
use crate::footer::{footer, CALIBRATION_REFUSED};
use crate::guard::{guard, GuardInput};
use crate::model::{
    change_pct_of, CalibrationSummary, CalibrationUse, Comparison, ExcludedRun, Guard,
    IntervalKind, Look, Row, RowVariance, RunIterations, Sequential, SideSummary, Test,
    UsedInterval, VarianceSource, Verdict, COMPARISON_SCHEMA_VERSION,
};
use crate::notes::{LoneUnit, RowNote, Unmatched, UnmatchedReason};
use crate::series::{CaseLabel, Exclusion, Side};
use crate::settings::{SequentialPlan, Settings, EQUIVALENCE_ALPHA, MAX_RUNS_NEEDED, MDE_POWER};
use crate::units::{row_units, row_units_across, Design, RowUnits, Scale};
use schedlab_core::metric::Restates;

/// A row before any look: what it compares and the calibration it may draw on.
#[derive(Debug, Clone)]
struct Prepared {
    label: CaseLabel,
    metric: String,
    unit: String,
    better: schedlab_core::metric::Better,
    candidate: String,
    units: RowUnits,
    calibration: Option<RowCalibration>,
    /// The row of the same case and candidate this one restates, where that row is compared:
    /// this one is then shown, not tested.
    restates: Option<Restates>,
}

/// What a calibration says about one row.
#[derive(Debug, Clone, Copy)]
struct RowCalibration {
    id: i64,
    /// The variance of one unit of the row's design.
    unit: VarianceEstimate,
    /// σ², the variance of iterations within a run, for the guard.
    within: Option<VarianceEstimate>,
}

/// A row's numbers at one look, before its verdict.
#[derive(Debug, Clone)]
struct Tested<'a> {
    /// Borrowed: a row of a million plain values is not copied to be tested.
    prepared: &'a Prepared,
    effect: f64,
    /// The base side's mean unit on the analysis scale (the raw-scale ratio divides by it).
    base_mean: f64,
    variance: RowVariance,
    test: Option<TTest>,
    tost: Option<Equivalence>,
}

/// Compares every candidate with the baseline.
pub fn compare(
    base: Side,
    candidates: Vec<Side>,
    calibrations: &CalibrationSet,
    settings: Settings,
    sequential: Option<SequentialPlan>,
) -> Comparison {
    compare_sides(base, candidates, None, calibrations, settings, sequential)
}

/// Compares the sides of a projection (`compare --across`): the first value's side is the
/// baseline, and a run that holds both cases of a row is a pair.
pub fn compare_across(
    projection: &Projection,
    calibrations: &CalibrationSet,
    settings: Settings,
) -> Comparison {
    let mut sides = projection.sides.clone();
    let candidates = sides.split_off(1);
    let base = sides.remove(0);
    compare_sides(
        base,
        candidates,
        Some(projection),
        calibrations,
        settings,
        None,
    )
}

fn compare_sides(
    base: Side,
    candidates: Vec<Side>,
    projection: Option<&Projection>,
    calibrations: &CalibrationSet,
    settings: Settings,
    sequential: Option<SequentialPlan>,
) -> Comparison {
    let (prepared, unmatched) = prepare(&base, &candidates, projection, calibrations);
    let sequential_plan = sequential.filter(|_| {
        !prepared.is_empty() && prepared.iter().all(|p| p.units.design == Design::Pairs)
    });
    let (rows, guard_used, looks) = match sequential_plan {
        Some(plan) => decide_sequential(&prepared, &settings, plan),
        None => {
            let (rows, guard_used) = decide_fixed(&prepared, &settings);
            (rows, guard_used, Vec::new())
        }
    };
    let mut rows = rows;
    adopt_restated_verdicts(&mut rows);
    let calibrations_used = calibration_summaries(calibrations, &rows);
    let sides: Vec<&Side> = std::iter::once(&base).chain(&candidates).collect();
    let footer = footer(
        &rows,
        &guard_used,
        &calibrations_used,
        sequential_plan,
        &sides,
    );
    let candidate_names: Vec<String> = candidates.iter().map(|c| c.name.clone()).collect();
    let scaling = crate::scaling::series(&base, &candidate_names, &rows, settings.confidence);
    let rounds = prepared
        .iter()
        .flat_map(|p| p.units.base.iter().filter_map(|u| u.round))
        .max()
        .map_or(0, |r| r + 1);
    Comparison {
        schema_version: COMPARISON_SCHEMA_VERSION,
        across: projection.map(|p| p.across.clone()),
        base: summary(&base),
        candidates: candidates.iter().map(summary).collect(),
        calibrations: calibrations_used,
        guard: guard_used,
        sequential: sequential_plan.map(|plan| Sequential {
            plan,
            rounds,
            looks,
        }),
        geomeans: geomeans(&rows),
        rows,
        unmatched,
        latency_curves: Vec::new(),
        scaling,
        footer,
        settings,
        explanation: None,
    }
}

/// Every row the sides have in common, with its units and the calibration it may draw on, and
/// the cases × metrics that make no row.
fn prepare(
    base: &Side,
    candidates: &[Side],
    projection: Option<&Projection>,
    calibrations: &CalibrationSet,
) -> (Vec<Prepared>, Vec<Unmatched>) {
    let machine = common_machine(std::iter::once(base).chain(candidates));
    let mut prepared = Vec::new();
    let mut unmatched = Vec::new();
    for (index, candidate) in candidates.iter().enumerate() {
        for b in &base.series {
            match candidate.get(&b.case.name, &b.metric) {
                Some(c) => {
                    let units = match projection {
                        Some(_) => row_units_across(base, b, candidate, c),
                        None => row_units(base, b, candidate, c),
                    };
                    if units.base.is_empty() || units.candidate.is_empty() {
                        unmatched.push(Unmatched {
                            case: b.case.name.clone(),
                            metric: b.metric.clone(),
                            reason: UnmatchedReason::NoCompleteUnit,
                        });
                        continue;
                    }
                    // Across a parameter, the candidate's case is not the base's: each brings
                    // its own calibration.
                    let candidate_case = projection.map_or(b.case.name.as_str(), |p| {
                        p.own_case(index + 1, &b.case.name)
                    });
                    let calibration = machine.as_ref().and_then(|m| {
                        calibrated_variance(
                            calibrations,
                            m,
                            (&b.case.name, candidate_case),
                            &b.metric,
                            &units,
                        )
                    });
                    prepared.push(Prepared {
                        label: b.case.clone(),
                        metric: b.metric.clone(),
                        unit: b.unit.clone(),
                        better: b.better,
                        candidate: candidate.name.clone(),
                        units,
                        calibration,
                        restates: b.restates,
                    });
                }
                None => unmatched.push(Unmatched {
                    case: b.case.name.clone(),
                    metric: b.metric.clone(),
                    reason: UnmatchedReason::NotIn {
                        side: candidate.name.clone(),
                    },
                }),
            }
        }
        for c in &candidate.series {
            if base.get(&c.case.name, &c.metric).is_none() {
                unmatched.push(Unmatched {
                    case: c.case.name.clone(),
                    metric: c.metric.clone(),
                    reason: UnmatchedReason::NotIn {
                        side: base.name.clone(),
                    },
                });
            }
        }
    }
    keep_restatements_of_compared_rows(&mut prepared);
    (prepared, unmatched)
}

/// A row restates another only where that one is compared too (same case and candidate) and is
/// an effect of its own; elsewhere (`--metric ops_per_sec` alone) it is tested as itself.
fn keep_restatements_of_compared_rows(prepared: &mut [Prepared]) {
    let restated: Vec<bool> = prepared
        .iter()
        .map(|p| {
            p.restates.is_some_and(|r| {
                prepared.iter().any(|q| {
                    q.restates.is_none()
                        && q.metric == r.metric
                        && q.label.name == p.label.name
                        && q.candidate == p.candidate
                })
            })
        })
        .collect();
    for (p, keep) in prepared.iter_mut().zip(restated) {
        if !keep {
            p.restates = None;
        }
    }
}

/// Gives each row that restates another that row's verdict, note and deciding round, and takes
/// it out of the tests: no p or q (it was never in the family), no test of its own.
fn adopt_restated_verdicts(rows: &mut [Row]) {
    for i in 0..rows.len() {
        let Some(r) = rows[i].restates else { continue };
        let Some(source) = rows.iter().position(|s| {
            s.restates.is_none()
                && s.metric == r.metric
                && s.case == rows[i].case
                && s.candidate == rows[i].candidate
        }) else {
            continue;
        };
        let (verdict, note, round) = (
            rows[source].verdict,
            rows[source].note.clone(),
            rows[source].decided_at_round,
        );
        let row = &mut rows[i];
        row.verdict = verdict;
        row.note = note;
        row.decided_at_round = round;
        row.test = Test::None;
        row.p_value = None;
        row.q_value = None;
        row.equivalence_p_value = None;
        row.interval_used = interval_used(verdict, row.ratio_ci, row.equivalence_ci);
        mark_mmtests_mean(&mut row.styles.mmtests, row.better, verdict);
    }
}

/// What the comparison keeps of a side: its runs, used and left out, boots and kernels.
fn summary(s: &Side) -> SideSummary {
    SideSummary {
        name: s.name.clone(),
        origin: s.origin,
        run_ids: s.runs.iter().filter_map(|r| r.id).collect(),
        excluded: s
            .excluded
            .iter()
            .map(|r| ExcludedRun {
                id: r.id,
                status: r.status,
                reason: r.left_out.unwrap_or(Exclusion::Incomplete),
            })
            .collect(),
        run_iterations: s
            .runs
            .iter()
            .chain(&s.excluded)
            .filter_map(|r| {
                Some(RunIterations {
                    id: r.id?,
                    measured_iterations: r.measured_iterations,
                    warmup_iterations: r.warmup_iterations,
                })
            })
            .collect(),
        boots: s.boots().len(),
        kernels: s.kernels().into_iter().map(String::from).collect(),
    }
}

/// The hardware-and-tuning key every run of the comparison shares, if they all share one.
fn common_machine<'a>(sides: impl Iterator<Item = &'a Side>) -> Option<MachineKey> {
    let mut key: Option<&MachineKey> = None;
    for side in sides {
        for run in &side.runs {
            let k = run.machine.as_ref()?;
            match key {
                None => key = Some(k),
                Some(existing) if !existing.matches(k) => return None,
                Some(_) => {}
            }
        }
    }
    key.cloned()
}

/// What a calibration says about a row. Across a parameter the two sides ran different cases:
/// both must be in one calibration, and the row's unit variance is the mean of the two cases'
/// (the pooled t assumes one variance for both sides; for pairs, twice it is V_A + V_B). For a
/// pair of cases within one run that is Var(d) when the run's conditions move the two cases
/// independently, and more than Var(d) when they move them alike, the very drift pairing
/// cancels: the calibration errs towards fewer marks, never more.
fn calibrated_variance(
    calibrations: &CalibrationSet,
    machine: &MachineKey,
    (base_case, candidate_case): (&str, &str),
    metric: &str,
    units: &RowUnits,
) -> Option<RowCalibration> {
    let iterations = units.common_iterations()?;
    let arm_of = |case: &str| {
        let (cal, m) = calibrations.find(machine, case, metric, units.scale, iterations)?;
        let arm = match units.design {
            Design::Runs => m.unit_variance(UnitKind::RunWithinBoot)?,
            Design::Boots => m.unit_variance(UnitKind::BootMean {
                runs: units.runs_per_unit,
            })?,
            Design::Pairs if units.pairs_share_boots => m.unit_variance(UnitKind::RunWithinBoot)?,
            Design::Pairs => m.unit_variance(UnitKind::BootMean {
                runs: units.runs_per_unit,
            })?,
            Design::Values => return None,
        };
        let within = (m.sigma2_df > 0.0).then_some(VarianceEstimate {
            variance: m.sigma2,
            df: m.sigma2_df,
        });
        Some((cal.id?, arm, within))
    };
    let (id, arm, within) = arm_of(base_case)?;
    let (arm, within) = if candidate_case == base_case {
        (arm, within)
    } else {
        let (other_id, other_arm, other_within) = arm_of(candidate_case)?;
        if other_id != id {
            return None;
        }
        let mean = |a: VarianceEstimate, b: VarianceEstimate| VarianceEstimate {
            variance: (a.variance + b.variance) / 2.0,
            df: a.df.min(b.df),
        };
        (
            mean(arm, other_arm),
            within.zip(other_within).map(|(a, b)| mean(a, b)),
        )
    };
    let unit = match units.design {
        // d = B − A: twice the variance of one arm's unit.
        Design::Pairs => VarianceEstimate {
            variance: 2.0 * arm.variance,
            df: arm.df,
        },
        _ => arm,
    };
    Some(RowCalibration { id, unit, within })
}

/// How much more today's runs vary inside than the calibration's did, as variance of the effect:
/// per side, the excess of its pooled within-run variance over the calibrated σ², divided by the
/// iterations behind the side's mean. Zero when today's runs are as quiet as calibrated or
/// quieter (the calibration's own variance then covers them).
fn within_excess(units: &RowUnits, calibrated: Option<VarianceEstimate>) -> f64 {
    let Some(sigma2) = calibrated.map(|c| c.variance) else {
        return 0.0;
    };
    [&units.base_runs, &units.candidate_runs]
        .into_iter()
        .map(|runs| {
            let (mut sum, mut df, mut iterations) = (0.0, 0.0, 0usize);
            for r in runs.iter() {
                iterations += r.n;
                if let Some(v) = r.variance {
                    sum += v * (r.n - 1) as f64;
                    df += (r.n - 1) as f64;
                }
            }
            if df == 0.0 || iterations == 0 {
                return 0.0;
            }
            (sum / df - sigma2).max(0.0) / iterations as f64
        })
        .sum()
}

/// The least variance one unit can have: the variance of a mean of its runs' own iterations
/// (σ²_within over the iterations behind a unit, σ² pooled over the row's runs). The spread
/// between units estimates τ² + σ²/n, so a spread below this is chance or duplicated runs, and a
/// test on it would claim more than the iterations show (identical runs would give p = 0).
/// Zero where no run has two iterations.
fn within_floor(units: &RowUnits) -> f64 {
    let (mut sum, mut df, mut inverse_n, mut runs) = (0.0, 0.0, 0.0, 0usize);
    for r in units.base_runs.iter().chain(&units.candidate_runs) {
        if let Some(v) = r.variance {
            sum += v * (r.n - 1) as f64;
            df += (r.n - 1) as f64;
        }
        inverse_n += 1.0 / r.n.max(1) as f64;
        runs += 1;
    }
    if df == 0.0 || runs == 0 {
        return 0.0;
    }
    let per_run = sum / df * inverse_n / runs as f64;
    match units.design {
        Design::Runs => per_run,
        Design::Boots => per_run / units.runs_per_unit,
        // d = B − A of one run each, or of a boot's mean of its runs' pairs.
        Design::Pairs => 2.0 * per_run / units.runs_per_unit,
        Design::Values => 0.0,
    }
}

/// Whether a unit variance is no more than floating-point rounding of the row's values: identical
/// values (ln 5 three times) leave a variance of 1e-32, not 0, after their mean is taken.
fn only_rounding(variance: f64, units: &RowUnits) -> bool {
    let runs = || units.base_runs.iter().chain(&units.candidate_runs);
    let magnitude = runs().map(|r| r.mean.abs()).fold(0.0_f64, f64::max);
    let iterations = runs().map(|r| r.n).max().unwrap_or(1).max(2) as f64;
    let rounding = 4.0 * iterations * f64::EPSILON * magnitude.max(f64::MIN_POSITIVE);
    variance <= rounding * rounding
}

/// Today's estimate of the row's unit variance, and the units per side.
fn today(units: &RowUnits) -> (Option<VarianceEstimate>, (usize, usize)) {
    let values = |u: &[crate::units::Unit]| u.iter().map(|x| x.value).collect::<Vec<f64>>();
    // Pairs: the spread of the differences (one group); else the spread within each side.
    let (groups, counts) = if units.design == Design::Pairs {
        let k = units.differences.len();
        (vec![units.differences.clone()], (k, k))
    } else {
        let (a, b) = (values(&units.base), values(&units.candidate));
        let counts = (a.len(), b.len());
        (vec![a, b], counts)
    };
    let refs: Vec<&[f64]> = groups.iter().map(Vec::as_slice).collect();
    let estimate = schedlab_stats::variance::pooled_within_groups(&refs)
        .ok()
        .filter(|p| p.df > 0.0)
        .map(|p| VarianceEstimate {
            variance: p.variance,
            df: p.df,
        });
    (estimate, counts)
}

fn effect_of(units: &RowUnits) -> (f64, f64) {
    let mean = |u: &[crate::units::Unit]| u.iter().map(|x| x.value).sum::<f64>() / u.len() as f64;
    let base_mean = mean(&units.base);
    let effect = if units.design == Design::Pairs {
        units.differences.iter().sum::<f64>() / units.differences.len() as f64
    } else {
        mean(&units.candidate) - base_mean
    };
    (effect, base_mean)
}

/// Tests every row at one look: the guard first (it needs every row), then each row's t test
/// and equivalence test at `equivalence_alpha`.
fn test_rows<'a>(
    prepared: &'a [Prepared],
    settings: &Settings,
    equivalence_alpha: f64,
) -> (Vec<Tested<'a>>, Guard) {
    let parts: Vec<_> = prepared
        .iter()
        .map(|p| {
            let (today, counts) = today(&p.units);
            let (effect, base_mean) = effect_of(&p.units);
            (today, counts, effect, base_mean)
        })
        .collect();
    let guard_inputs: Vec<GuardInput> = prepared
        .iter()
        .zip(&parts)
        .filter_map(|(p, (today, counts, effect, _))| {
            let cal = p.calibration?;
            Some(GuardInput {
                today: *today,
                calibrated: cal.unit,
                effect: *effect,
                se_factor: se_factor(p.units.design, *counts),
            })
        })
        .collect();
    let guard = guard(&guard_inputs);
    let tested = prepared
        .iter()
        .zip(parts)
        .map(|(p, (today, counts, effect, base_mean))| {
            test_row(
                p,
                today,
                counts,
                (effect, base_mean),
                guard.factor,
                settings,
                equivalence_alpha,
            )
        })
        .collect();
    (tested, guard)
}

/// One row's variance, t test and equivalence test, the calibrated part widened by the guard's
/// `guard_factor`.
fn test_row<'a>(
    p: &'a Prepared,
    today: Option<VarianceEstimate>,
    counts: (usize, usize),
    (effect, base_mean): (f64, f64),
    guard_factor: f64,
    settings: &Settings,
    equivalence_alpha: f64,
) -> Tested<'a> {
    // Judged on the calibration alone, a run can still show that it was noisier inside
    // than the calibration's runs were: its own iterations' excess joins the variance.
    let within_excess = match (today, p.calibration) {
        (None, Some(cal)) => within_excess(&p.units, cal.within),
        _ => 0.0,
    };
    let calibration = p.calibration.map(|cal| CalibrationUse {
        id: cal.id,
        variance: cal.unit.variance,
        df: cal.unit.df,
        guard_factor,
    });
    let used = match (today, calibration) {
        (Some(t), Some(c)) => Some(VarianceEstimate {
            variance: (t.df * t.variance + c.df * c.guard_factor * c.variance) / (t.df + c.df),
            df: t.df + c.df,
        }),
        (Some(t), None) => Some(t),
        // A calibration this far from today's machine is no evidence about it.
        (None, Some(c)) if c.guard_factor > CALIBRATION_REFUSED => None,
        (None, Some(c)) => Some(VarianceEstimate {
            variance: c.guard_factor * c.variance
                + within_excess / se_factor(p.units.design, counts),
            df: c.df,
        }),
        (None, None) => None,
    };
    let floor = within_floor(&p.units);
    let within_floor = used.filter(|v| v.variance < floor).map(|_| floor);
    let used = used.map(|v| VarianceEstimate {
        variance: v.variance.max(floor),
        df: v.df,
    });
    let source = match (today, calibration) {
        (Some(_), Some(_)) => VarianceSource::Pooled,
        (Some(_), None) => VarianceSource::Today,
        (None, Some(c)) if c.guard_factor > CALIBRATION_REFUSED => VarianceSource::None,
        (None, Some(_)) => VarianceSource::Calibration,
        (None, None) => VarianceSource::None,
    };
    let (test, tost) = match used {
        // No spread at all (every iteration of every run alike) is nothing to test
        // against: a t test would call any difference certain.
        Some(v) if v.df > 0.0 && !only_rounding(v.variance, &p.units) => {
            let se = (v.variance * se_factor(p.units.design, counts)).sqrt();
            let test = t_test_from_estimate(effect, se, v.df, settings.confidence).ok();
            let tost = relative(p.units.scale, effect, se, base_mean).and_then(|(estimate, se)| {
                tost_from_estimate(
                    estimate,
                    se,
                    v.df,
                    equivalence_delta(p.units.scale, settings.min_effect),
                    equivalence_alpha,
                )
                .ok()
            });
            (test, tost)
        }
        _ => (None, None),
    };
    Tested {
        prepared: p,
        effect,
        base_mean,
        variance: RowVariance {
            source,
            today,
            calibration,
            within_excess,
            within_floor,
            used,
        },
        test,
        tost,
    }
}

/// Var(effect) = unit variance × this: 1/k_A + 1/k_B, or 1/K for pairs.
fn se_factor(design: Design, (a, b): (usize, usize)) -> f64 {
    match design {
        Design::Pairs => 1.0 / a as f64,
        _ => 1.0 / a as f64 + 1.0 / b as f64,
    }
}

/// The effect and its standard error as a relative change the equivalence test can read: logs
/// already are; raw differences are divided by the baseline's mean.
fn relative(scale: Scale, effect: f64, se: f64, base_mean: f64) -> Option<(f64, f64)> {
    match scale {
        Scale::Log => Some((effect, se)),
        Scale::Raw => (base_mean != 0.0).then(|| (effect / base_mean.abs(), se / base_mean.abs())),
    }
}

/// TOST's margin is ln(1 + δ) on the log scale; on the raw scale the relative margin is δ
/// itself, which is ln(1 + (e^δ − 1)).
fn equivalence_delta(scale: Scale, min_effect: f64) -> f64 {
    match scale {
        Scale::Log => min_effect,
        Scale::Raw => min_effect.exp_m1(),
    }
}

fn to_ratio(scale: Scale, y: f64, base_mean: f64) -> Option<f64> {
    match scale {
        Scale::Log => Some(y.exp()),
        Scale::Raw => (base_mean != 0.0).then(|| 1.0 + y / base_mean.abs()),
    }
}

fn ratio_interval(
    scale: Scale,
    ci: ConfidenceInterval,
    base_mean: f64,
) -> Option<ConfidenceInterval> {
    Some(ConfidenceInterval {
        low: to_ratio(scale, ci.low, base_mean)?,
        high: to_ratio(scale, ci.high, base_mean)?,
        level: ci.level,
    })
}

/// q-values at one look over every row with a test, in row order (`None` where untested).
fn q_values(tested: &[Tested<'_>], settings: &Settings) -> Vec<Option<f64>> {
    // A restatement is the same effect as the row it restates: in the family once.
    let judged: Vec<usize> = (0..tested.len())
        .filter(|&i| tested[i].test.is_some() && tested[i].prepared.restates.is_none())
        .collect();
    let p: Vec<f64> = judged
        .iter()
        .map(|&i| tested[i].test.map_or(1.0, |t| t.p_value))
        .collect();
    let mut out = vec![None; tested.len()];
    if let Ok(q) = adjust_p_values(&p, settings.adjustment.method()) {
        for (&i, q) in judged.iter().zip(q) {
            out[i] = Some(q);
        }
    }
    out
}

/// What a row's verdict rests on at the look that settles it.
struct Decision {
    verdict: Verdict,
    note: Option<RowNote>,
    q_value: Option<f64>,
    /// The level its q was held to, for the MDE.
    level: f64,
    judged_rows: usize,
    round: Option<u32>,
}

fn decide_fixed(prepared: &[Prepared], settings: &Settings) -> (Vec<Row>, Guard) {
    let (tested, guard) = test_rows(prepared, settings, EQUIVALENCE_ALPHA);
    let q = q_values(&tested, settings);
    let judged = q.iter().filter(|q| q.is_some()).count();
    let rows = tested
        .iter()
        .zip(q)
        .map(|(t, q)| {
            let verdict = verdict(t, q, settings.fdr, EQUIVALENCE_ALPHA, settings);
            let (verdict, note) = match verdict {
                Some(v) => (v, None),
                None => undecided(t, settings),
            };
            build_row(
                t,
                Decision {
                    verdict,
                    note,
                    q_value: q,
                    level: settings.fdr,
                    judged_rows: judged,
                    round: None,
                },
                settings,
            )
        })
        .collect();
    (rows, guard)
}

/// `**` or `≈` when the row is decided at this level, else `None`.
fn verdict(
    t: &Tested<'_>,
    q: Option<f64>,
    level: f64,
    equivalence_alpha: f64,
    settings: &Settings,
) -> Option<Verdict> {
    let q = q?;
    let ratio = to_ratio(t.prepared.units.scale, t.effect, t.base_mean)?;
    if q <= level && (ratio - 1.0).abs() >= settings.min_effect {
        let worse = match t.prepared.better {
            schedlab_core::metric::Better::Lower => ratio > 1.0,
            schedlab_core::metric::Better::Higher => ratio < 1.0,
        };
        return Some(if worse {
            Verdict::Regression
        } else {
            Verdict::Improvement
        });
    }
    if t.tost.is_some_and(|e| e.p_value < equivalence_alpha) {
        return Some(Verdict::Equivalent);
    }
    None
}

/// The verdict of a row that is neither marked nor equivalent: not judged, noisy or
/// inconclusive, with the note that says why or what it could detect.
fn undecided(t: &Tested<'_>, settings: &Settings) -> (Verdict, Option<RowNote>) {
    let units = &t.prepared.units;
    if t.test.is_none() {
        let note = match t.variance.calibration {
            _ if t
                .variance
                .used
                .is_some_and(|v| only_rounding(v.variance, units)) =>
            {
                RowNote::NoSpread
            }
            Some(c) if c.guard_factor > CALIBRATION_REFUSED => RowNote::CalibrationRefused {
                unit: lone_unit(units),
                calibration: c.id,
                factor: c.guard_factor,
            },
            _ => RowNote::OneUnit {
                unit: lone_unit(units),
            },
        };
        return (Verdict::NotJudged, Some(note));
    }
    // The spread the test faces: for pairs, that of their differences, from which pairing took
    // out what moved both arms of a round or a run alike; each side's own units still hold it.
    if units.design == Design::Pairs {
        let spread = (units.differences.len() >= 2)
            .then(|| schedlab_stats::summary::summarize(&units.differences).ok())
            .flatten()
            .and_then(|s| s.std)
            .and_then(|sd| match units.scale {
                Scale::Log => Some(sd.exp_m1() * 100.0),
                Scale::Raw => {
                    let base = t.base_mean.abs();
                    (base > 0.0).then(|| sd / base * 100.0)
                }
            });
        return match spread {
            Some(pct) if pct > settings.noise_cap_pct => (
                Verdict::Noisy,
                Some(RowNote::OverNoiseCap {
                    design: Design::Pairs,
                    spread_pct: pct,
                    cap_pct: settings.noise_cap_pct,
                }),
            ),
            _ => (Verdict::Inconclusive, None),
        };
    }
    let noisiest = [units.base.len(), units.candidate.len()]
        .iter()
        .zip([&units.base, &units.candidate])
        .filter(|(k, _)| **k >= 2)
        .filter_map(|(_, u)| {
            let values: Vec<f64> = u.iter().map(|x| units.scale.back(x.value)).collect();
            // std% does not depend on the scale; taken on values over the largest, it does not
            // overflow near f64's limits (where it would come out as none, and pass the cap).
            let largest = values.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
            let values: Vec<f64> = if largest > 1.0 {
                values.iter().map(|v| v / largest).collect()
            } else {
                values
            };
            schedlab_stats::summary::summarize(&values)
                .ok()
                .and_then(|s| s.std_pct)
        })
        .fold(0.0_f64, |a, b| a.max(b.abs()));
    if noisiest > settings.noise_cap_pct {
        return (
            Verdict::Noisy,
            Some(RowNote::OverNoiseCap {
                design: units.design,
                spread_pct: noisiest,
                cap_pct: settings.noise_cap_pct,
            }),
        );
    }
    (Verdict::Inconclusive, None)
}

/// The one unit each side of a row that is not judged has.
fn lone_unit(units: &RowUnits) -> LoneUnit {
    match units.design {
        Design::Runs => LoneUnit::Run,
        Design::Boots => LoneUnit::Boot,
        Design::Pairs if units.within_runs => LoneUnit::RunHoldingBothCases,
        Design::Pairs => LoneUnit::AbRound,
        Design::Values => LoneUnit::Value,
    }
}

/// A finished row: its numbers at its deciding look, its verdict, MDE and figures.
fn build_row(t: &Tested<'_>, d: Decision, settings: &Settings) -> Row {
    let p = &t.prepared;
    let units = &p.units;
    let scale = units.scale;
    let ratio = to_ratio(scale, t.effect, t.base_mean);
    let ratio_ci = t
        .test
        .and_then(|test| ratio_interval(scale, test.ci, t.base_mean));
    // TOST reads its estimate as a log ratio and returns e^bound; on the raw scale that
    // estimate was the relative change (see `relative`), so the ratio is 1 + bound.
    let equivalence_ci = t.tost.map(|e| match scale {
        Scale::Log => e.ratio_ci,
        Scale::Raw => ConfidenceInterval {
            low: 1.0 + e.ratio_ci.low.ln(),
            high: 1.0 + e.ratio_ci.high.ln(),
            level: e.ratio_ci.level,
        },
    });
    let test = match t.test {
        None => Test::None,
        Some(tt) if units.design == Design::Pairs => Test::PairedT {
            df: tt.df,
            std_err: tt.std_err,
            t: tt.t,
        },
        Some(tt) => Test::StudentT {
            df: tt.df,
            std_err: tt.std_err,
            t: tt.t,
        },
    };
    let (mde_pct, units_needed) = detectable(t, &d, settings);
    let note = match (d.verdict, d.note) {
        (_, Some(note)) => Some(note),
        (Verdict::Inconclusive, None) => Some(RowNote::Inconclusive {
            mde_pct,
            units_needed,
            counted: units.counted(),
            // A pair is one unit of both sides.
            per_side: units.design != Design::Pairs,
            min_effect_pct: settings.min_effect * 100.0,
        }),
        (_, None) => None,
    };
    let interval_used = interval_used(d.verdict, ratio_ci, equivalence_ci);
    let base_side = side_figures(&units.base, &units.base_runs, scale);
    let candidate_side = side_figures(&units.candidate, &units.candidate_runs, scale);
    let styles = style_figures(
        &base_side,
        &candidate_side,
        ratio,
        p.better,
        d.verdict,
        units,
        settings.ministat_confidence,
    );
    Row {
        case: p.label.name.clone(),
        label: p.label.clone(),
        case_short: p.label.short.clone(),
        load: p.label.load.clone(),
        metric: p.metric.clone(),
        unit: p.unit.clone(),
        better: p.better,
        candidate: p.candidate.clone(),
        design: units.design,
        pairs_within_runs: units.within_runs,
        pairs_by_boot: units.pairs_by_boot,
        restates: p.restates,
        scale,
        base_side,
        candidate_side,
        change_pct: ratio.map(change_pct_of),
        ratio,
        ratio_ci,
        test,
        variance: t.variance,
        p_value: t.test.map(|tt| tt.p_value),
        q_value: d.q_value,
        equivalence_p_value: t.tost.map(|e| e.p_value),
        equivalence_ci,
        interval_used,
        mde_pct,
        units_needed,
        decided_at_round: d.round,
        verdict: d.verdict,
        note,
        styles,
    }
}

/// The smallest change the row could detect with 80 % power at the level its q was held to,
/// over the rows judged with it, and the units it would need to see δ.
fn detectable(t: &Tested<'_>, d: &Decision, settings: &Settings) -> (Option<f64>, Option<usize>) {
    let units = &t.prepared.units;
    let scale = units.scale;
    let mde_alpha = d.level / d.judged_rows.max(1) as f64;
    match (t.test, t.variance.used) {
        (Some(tt), Some(v)) if tt.std_err > 0.0 => {
            let mde = mde_t(tt.std_err, tt.df, mde_alpha, MDE_POWER)
                .ok()
                .map(|m| match scale {
                    Scale::Log => m.pct_increase,
                    Scale::Raw if t.base_mean != 0.0 => m.log_effect / t.base_mean.abs() * 100.0,
                    Scale::Raw => f64::NAN,
                })
                .filter(|m| m.is_finite());
            let delta = match scale {
                Scale::Log => settings.min_effect.ln_1p(),
                Scale::Raw => settings.min_effect * t.base_mean.abs(),
            };
            let extra_df = t.variance.calibration.map_or(0.0, |c| c.df);
            let needed = if delta > 0.0 {
                let counted = match units.design {
                    Design::Pairs => Counted::Pairs,
                    _ => Counted::RunsPerSide,
                };
                required_count(
                    counted,
                    v.variance,
                    extra_df,
                    delta,
                    mde_alpha,
                    MDE_POWER,
                    MAX_RUNS_NEEDED,
                )
                .ok()
                .flatten()
            } else {
                None
            };
            (mde, needed)
        }
        _ => (None, None),
    }
}

/// The interval a verdict rests on: TOST's for `≈`, the test's otherwise.
fn interval_used(
    verdict: Verdict,
    ratio_ci: Option<ConfidenceInterval>,
    equivalence_ci: Option<ConfidenceInterval>,
) -> Option<UsedInterval> {
    match verdict {
        Verdict::Equivalent => equivalence_ci.map(|ci| UsedInterval {
            low: ci.low,
            high: ci.high,
            level: ci.level,
            kind: IntervalKind::Equivalence,
        }),
        _ => ratio_ci.map(|ci| UsedInterval {
            low: ci.low,
            high: ci.high,
            level: ci.level,
            kind: IntervalKind::Test,
        }),
    }
}

/// Decides a sequential experiment look by look: look L sees the first L rounds; each look
/// spends the increment of the spending function at L / max_rounds, for the marks (BH at that
/// level) and for equivalence alike; a row keeps the verdict of the first look that decided it.
fn decide_sequential(
    prepared: &[Prepared],
    settings: &Settings,
    plan: SequentialPlan,
) -> (Vec<Row>, Guard, Vec<Look>) {
    let mut rounds: Vec<u32> = prepared
        .iter()
        .flat_map(|p| p.units.base.iter().filter_map(|u| u.round))
        .collect();
    rounds.sort_unstable();
    rounds.dedup();
    let mut decided: Vec<Option<Row>> = vec![None; prepared.len()];
    let mut looks = Vec::new();
    let (mut spent, mut spent_eq) = (0.0, 0.0);
    let mut last: Option<(Vec<Row>, Guard)> = None;
    for look in 1..=rounds.len() {
        let seen = &rounds[..look];
        let restricted: Vec<Prepared> = prepared.iter().map(|p| restrict(p, seen)).collect();
        let fraction = (look as f64 / f64::from(plan.max_rounds.max(1))).min(1.0);
        let cumulative = spent_alpha(plan.spending, fraction, settings.fdr).unwrap_or(0.0);
        let cumulative_eq = spent_alpha(plan.spending, fraction, EQUIVALENCE_ALPHA).unwrap_or(0.0);
        let (level, level_eq) = (cumulative - spent, cumulative_eq - spent_eq);
        let (tested, guard) = test_rows(&restricted, settings, level_eq.max(f64::MIN_POSITIVE));
        if tested.iter().all(|t| t.test.is_none()) {
            // Nothing can be judged yet: this look spends nothing.
            last = Some((
                tested
                    .iter()
                    .map(|t| final_row(t, None, settings, level, 0))
                    .collect(),
                guard,
            ));
            continue;
        }
        spent = cumulative;
        spent_eq = cumulative_eq;
        let q = q_values(&tested, settings);
        let judged = q.iter().filter(|q| q.is_some()).count();
        let round = seen.last().map(|r| r + 1);
        let mut rows = Vec::new();
        for (i, (t, q)) in tested.iter().zip(&q).enumerate() {
            if decided[i].is_none() {
                if let Some(v) = verdict(t, *q, level, level_eq, settings) {
                    decided[i] = Some(build_row(
                        t,
                        Decision {
                            verdict: v,
                            note: None,
                            q_value: *q,
                            level,
                            judged_rows: judged,
                            round,
                        },
                        settings,
                    ));
                }
            }
            rows.push(final_row(t, *q, settings, level, judged));
        }
        looks.push(Look {
            rounds: look as u32,
            level,
            equivalence_level: level_eq,
            decided: decided.iter().filter(|d| d.is_some()).count(),
        });
        last = Some((rows, guard));
    }
    let (last_rows, guard) = last.unwrap_or_else(|| {
        let (rows, guard) = decide_fixed(prepared, settings);
        (rows, guard)
    });
    let rows = last_rows
        .into_iter()
        .zip(decided)
        .map(|(undecided, decided)| decided.unwrap_or(undecided))
        .collect();
    (rows, guard, looks)
}

/// A row left undecided at a look: not judged, noisy or inconclusive.
fn final_row(
    t: &Tested<'_>,
    q: Option<f64>,
    settings: &Settings,
    level: f64,
    judged: usize,
) -> Row {
    let (verdict, note) = undecided(t, settings);
    build_row(
        t,
        Decision {
            verdict,
            note,
            q_value: q,
            level: level.max(f64::MIN_POSITIVE),
            judged_rows: judged,
            round: None,
        },
        settings,
    )
}

/// The row as it stood after the rounds in `seen`.
fn restrict(p: &Prepared, seen: &[u32]) -> Prepared {
    let mut p = p.clone();
    let keep: Vec<bool> = p
        .units
        .base
        .iter()
        .map(|u| u.round.is_some_and(|r| seen.contains(&r)))
        .collect();
    let filter = |v: &mut Vec<crate::units::Unit>| {
        let mut i = 0;
        v.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    };
    filter(&mut p.units.base);
    filter(&mut p.units.candidate);
    let mut i = 0;
    p.units.differences.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    let runs_of = |units: &[crate::units::Unit], all: &[crate::units::RunSummary]| {
        all.iter()
            .filter(|r| units.iter().any(|u| u.runs.contains(&r.run)))
            .copied()
            .collect::<Vec<_>>()
    };
    p.units.base_runs = runs_of(&p.units.base, &p.units.base_runs);
    p.units.candidate_runs = runs_of(&p.units.candidate, &p.units.candidate_runs);
    p
}

fn calibration_summaries(calibrations: &CalibrationSet, rows: &[Row]) -> Vec<CalibrationSummary> {
    let mut out: Vec<CalibrationSummary> = Vec::new();
    for row in rows {
        let Some(used) = row.variance.calibration else {
            continue;
        };
        match out.iter_mut().find(|c| c.id == used.id) {
            Some(c) => c.rows += 1,
            None => {
                if let Some(cal) = calibrations
                    .calibrations
                    .iter()
                    .find(|c| c.id == Some(used.id))
                {
                    out.push(CalibrationSummary {
                        id: used.id,
                        created_at_ns: cal.created_at_ns,
                        label: cal.label.clone(),
                        runs: cal.run_ids.len(),
                        boots: cal.boots,
                        rows: 1,
                    });
                }
            }
        }
    }
    out
}
