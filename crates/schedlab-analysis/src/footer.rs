//! The facts under a comparison's tables: what a unit is, what the rows were tested on, the
//! counts, and the notes (see [`crate::notes::Note`]) that say what the verdicts assume and
//! what else differs between the sides. Worded by `schedlab-report`.
use crate::model::{CalibrationSummary, Footer, Guard, Row, Verdict};
use crate::notes::{
    DisturbedRun, GuardMethod, LeftOutRun, Note, RestatedMetric, SideBuilds, TestedOn, UnitsOf,
};
use crate::series::{Exclusion, Origin, Side};
use crate::settings::{SequentialPlan, GUARD_MIN_ROWS};
use crate::units::{Design, Scale};

/// Above this guard factor a calibration does not describe today's machine at all (a stale
/// calibration of the A/A tests, τ half the true one, gives about 3): rows that rest on it alone
/// are not judged rather than judged on a variance scaled up by a guess.
pub const CALIBRATION_REFUSED: f64 = 10.0;

/// Below this median ratio of today's variance to the calibrated one, the footer says that the
/// calibration looks much noisier than today (4×: well beyond what chance gives at a few df).
const CALIBRATION_TOO_WIDE: f64 = 0.25;

pub(crate) fn footer(
    rows: &[Row],
    guard: &Guard,
    calibrations: &[CalibrationSummary],
    sequential: Option<SequentialPlan>,
    sides: &[&Side],
) -> Footer {
    let comparisons = rows.iter().filter(|r| r.p_value.is_some()).count();
    let mut notes = Vec::new();
    if let Some(plan) = sequential {
        notes.push(Note::Sequential {
            max_rounds: plan.max_rounds,
            spending: plan.spending,
        });
    }
    if comparisons > 0 {
        let calibrated_rows = rows
            .iter()
            .any(|r| r.p_value.is_some() && r.variance.calibration.is_some());
        notes.push(Note::FalseMarkBound {
            assumes_calibrations: calibrated_rows && !calibrations.is_empty(),
        });
        notes.extend(made_in_blocks(sides, rows));
    }
    notes.extend(calibration_notes(rows, guard));
    if rows
        .iter()
        .any(|r| r.verdict == Verdict::NotJudged && r.variance.used.is_none())
    {
        notes.push(Note::NoVariance);
    }
    notes.extend(restated(rows));
    notes.extend(measured_differently(sides));
    notes.extend(left_out(sides));
    notes.extend(disturbed(sides));
    Footer {
        comparisons,
        marked: rows
            .iter()
            .filter(|r| r.verdict.is_marked() && r.restates.is_none())
            .count(),
        not_judged: rows
            .iter()
            .filter(|r| r.verdict == Verdict::NotJudged && r.restates.is_none())
            .count(),
        units: units_of(rows, sides),
        tested_on: tested_on(rows),
        notes,
    }
}

/// The metrics shown as restatements of others, once per pair of names.
fn restated(rows: &[Row]) -> Option<Note> {
    let mut metrics: Vec<RestatedMetric> = Vec::new();
    for row in rows {
        let Some(r) = row.restates else { continue };
        let named = RestatedMetric {
            metric: row.metric.clone(),
            of: r.metric.to_string(),
            how: r.how,
        };
        if !metrics.contains(&named) {
            metrics.push(named);
        }
    }
    (!metrics.is_empty()).then_some(Note::Restated { metrics })
}

/// What one unit stands for, once per kind, in the order of their nouns.
fn units_of(rows: &[Row], sides: &[&Side]) -> Vec<UnitsOf> {
    let mut designs: Vec<(Design, bool, bool)> = rows
        .iter()
        .map(|r| (r.design, r.pairs_within_runs, r.pairs_by_boot))
        .collect();
    designs.sort_by_key(|(d, within, by_boot)| (d.noun(), *within, *by_boot));
    designs.dedup();
    let mean_of = if rows.iter().all(|r| r.scale == Scale::Raw) {
        Scale::Raw
    } else {
        Scale::Log
    };
    // Imported runs record no boot: they cannot be told apart by boot, nor said to share one.
    let boots_recorded = !sides
        .iter()
        .flat_map(|s| &s.runs)
        .any(|r| r.boot_id.is_empty());
    designs
        .into_iter()
        .map(|d| match d {
            (Design::Pairs, true, by_boot) => UnitsOf::PairsWithinRuns { by_boot },
            (Design::Runs, _, _) => UnitsOf::Runs {
                mean_of,
                boots_recorded,
            },
            (Design::Boots, _, _) => UnitsOf::Boots,
            (Design::Pairs, _, _) => UnitsOf::AbPairs,
            (Design::Values, _, _) => UnitsOf::Values,
        })
        .collect()
}

/// The scale of the judged rows; `None` when no row was judged.
fn tested_on(rows: &[Row]) -> Option<TestedOn> {
    let judged = || rows.iter().filter(|r| r.p_value.is_some());
    judged().next()?;
    Some(
        match (
            judged().any(|r| r.scale == Scale::Log),
            judged().any(|r| r.scale == Scale::Raw),
        ) {
            (true, true) => TestedOn::LogAndRaw,
            (false, true) => TestedOn::Raw,
            _ => TestedOn::Log,
        },
    )
}

/// What the guard found, whether it refused the calibration, and what calibrated rows assume.
fn calibration_notes(rows: &[Row], guard: &Guard) -> Vec<Note> {
    let mut notes = Vec::new();
    match guard.method {
        GuardMethod::VarianceRatio | GuardMethod::ZScale => notes.push(Note::Guard {
            method: guard.method,
            measured: guard.measured,
            factor: guard.factor,
            rows: guard.rows,
        }),
        GuardMethod::TooFewRows => notes.push(Note::GuardNotApplied {
            rows: guard.rows,
            needed: GUARD_MIN_ROWS,
        }),
        GuardMethod::Unused => {}
    }
    if guard.factor > CALIBRATION_REFUSED {
        notes.push(Note::CalibrationRefused {
            limit: CALIBRATION_REFUSED,
        });
    }
    let calibrated_within_run_pairs = rows
        .iter()
        .any(|r| r.pairs_within_runs && r.variance.calibration.is_some());
    if calibrated_within_run_pairs {
        notes.push(Note::CalibratedWithinRunPairs);
    }
    // Within-run pairs vary less than the calibration's runs by design: not a sign of a
    // disturbed calibration.
    if let Some(ratio) = guard
        .today_over_calibrated
        .filter(|r| *r < CALIBRATION_TOO_WIDE && !calibrated_within_run_pairs)
    {
        notes.push(Note::CalibrationTooWide { times: 1.0 / ratio });
    }
    notes
}

/// The runs each side left out; the sides of `--across` share their runs, and so the runs they
/// leave out: one note per set of runs.
fn left_out(sides: &[&Side]) -> Vec<Note> {
    let mut groups: Vec<(Vec<LeftOutRun>, Vec<String>)> = Vec::new();
    for side in sides {
        if side.origin != Origin::Runs
            || side
                .excluded
                .iter()
                .all(|r| r.left_out == Some(Exclusion::AllDisturbed))
        {
            continue;
        }
        let runs: Vec<LeftOutRun> = side
            .excluded
            .iter()
            .filter(|r| r.left_out != Some(Exclusion::AllDisturbed))
            .map(|r| LeftOutRun {
                id: r.id,
                status: r.status,
            })
            .collect();
        match groups.iter_mut().find(|(r, _)| *r == runs) {
            Some((_, names)) => names.push(side.name.clone()),
            None => groups.push((runs, vec![side.name.clone()])),
        }
    }
    groups
        .into_iter()
        .map(|(runs, names)| Note::LeftOut {
            every_side: names.len() > 1 && names.len() == sides.len(),
            sides: names,
            runs,
        })
        .collect()
}

/// The runs with iterations the quiet-machine guard marked disturbed, once each (the sides of
/// `--across` share their runs), and whether they were left out: a reader of a comparison that
/// kept them learns they are there.
fn disturbed(sides: &[&Side]) -> Option<Note> {
    let mut runs: Vec<DisturbedRun> = Vec::new();
    for side in sides.iter().filter(|s| s.origin == Origin::Runs) {
        let compared = side.runs.iter().chain(
            side.excluded
                .iter()
                .filter(|r| r.left_out == Some(Exclusion::AllDisturbed)),
        );
        for run in compared.filter(|r| r.disturbed_iterations > 0) {
            if run.id.is_some() && runs.iter().any(|r| r.id == run.id) {
                continue;
            }
            runs.push(DisturbedRun {
                id: run.id,
                disturbed: run.disturbed_iterations,
                measured: run.measured_iterations,
            });
        }
    }
    (!runs.is_empty()).then(|| Note::Disturbed {
        dropped: sides.iter().any(|s| s.disturbed_dropped),
        runs,
    })
}

/// A note for each candidate whose rows take runs as units while its runs and the baseline's
/// were made in two blocks of time, one side's all before the other's: the bound on false marks
/// holds for runs that are exchangeable in time, and whatever drifted between the blocks (other
/// load, temperature, a daemon waking up) reads as a change. Interleaved runs carry such drift
/// into both sides alike. Imported runs and runs whose start is not known say nothing either way.
fn made_in_blocks(sides: &[&Side], rows: &[Row]) -> Vec<Note> {
    let Some((base, candidates)) = sides.split_first() else {
        return Vec::new();
    };
    let span = |side: &Side| {
        let starts: Vec<i64> = side
            .runs
            .iter()
            .filter(|r| !r.imported && r.started_at_ns > 0)
            .map(|r| r.started_at_ns)
            .collect();
        let first = starts.iter().min()?;
        let last = starts.iter().max()?;
        (starts.len() >= 2 && starts.len() == side.runs.len()).then_some((*first, *last))
    };
    let Some(base_span) = span(base) else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    for candidate in candidates {
        let judged_on_runs = rows.iter().any(|r| {
            r.candidate == candidate.name && r.design == Design::Runs && r.p_value.is_some()
        });
        let Some(candidate_span) = span(candidate).filter(|_| judged_on_runs) else {
            continue;
        };
        let (first, second) = if base_span.1 < candidate_span.0 {
            ((*base, base_span), (*candidate, candidate_span))
        } else if candidate_span.1 < base_span.0 {
            ((*candidate, candidate_span), (*base, base_span))
        } else {
            continue;
        };
        notes.push(Note::MadeInBlocks {
            first: first.0.name.clone(),
            first_span_ns: first.1,
            second: second.0.name.clone(),
            second_span_ns: second.1,
        });
    }
    notes
}

/// Notes for runs that were not measured alike: by more than one schedlab build or tool (a change
/// in the measuring code moves results as a kernel's would), or on machines whose hardware or
/// tuning differ. The rows stand as computed; the notes say what else differs between the sides.
fn measured_differently(sides: &[&Side]) -> Vec<Note> {
    let mut notes = Vec::new();
    let runs = || sides.iter().flat_map(|s| s.runs.iter());
    let mut builds: Vec<&str> = runs().filter_map(|r| r.measured_by.as_deref()).collect();
    builds.sort_unstable();
    builds.dedup();
    if builds.len() > 1 {
        let sides = sides
            .iter()
            .map(|side| {
                let mut by: Vec<Option<String>> = Vec::new();
                for run in &side.runs {
                    if !by.contains(&run.measured_by) {
                        by.push(run.measured_by.clone());
                    }
                }
                SideBuilds {
                    side: side.name.clone(),
                    builds: by,
                }
            })
            .collect();
        notes.push(Note::ManyBuilds { sides });
    }
    // An imported run's machine fields are empty where nobody knew them: not a difference.
    let mut keys = runs()
        .filter(|r| !r.imported)
        .filter_map(|r| r.machine.as_ref());
    if let Some(first) = keys.next() {
        let mut fields: Vec<&'static str> = Vec::new();
        for key in keys {
            for field in first.differences(key) {
                if !fields.contains(&field) {
                    fields.push(field);
                }
            }
        }
        if !fields.is_empty() {
            notes.push(Note::MachinesDiffer { fields });
        }
    }
    notes
}
