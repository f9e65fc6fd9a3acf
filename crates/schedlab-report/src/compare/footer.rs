//! The statistics footer in words: what a unit is and how rows were tested, what the marks mean,
//! the tally, and one sentence per note of the analysis ([`schedlab_analysis::notes::Note`]),
//! the same in every style and format.
use schedlab_analysis::model::{Comparison, Footer};
use schedlab_analysis::notes::{
    DisturbedRun, GuardMethod, LeftOutRun, Note, RestatedMetric, SideBuilds, TestedOn, UnitsOf,
};
use schedlab_analysis::settings::EQUIVALENCE_ALPHA;
use schedlab_analysis::units::Scale;
use schedlab_core::metric::Restatement;
use schedlab_core::words;
use schedlab_stats::sequential::Spending;

use super::block::Block;
use super::phrases::{level_text, unmatched};
use crate::model::format_time_ns;

/// What `?` means, in the footer's legend: each row's note says which.
const NOT_JUDGED: &str = "no usable variance estimate: one unit per side, a refused calibration \
                          or no spread at all";

/// The footer as the closing block of a text or Markdown report: its lines, then the unmatched
/// cases × metrics.
pub fn block(c: &Comparison) -> Block {
    let mut items = lines(c);
    items.extend(unmatched_lines(c));
    Block::List(items)
}

/// The footer in one line (`--brief`): the tally and what a mark needs. What the units are and
/// every note are left to the full footer.
pub fn brief_block(c: &Comparison) -> Block {
    Block::List(vec![brief(c)])
}

/// `2 of 3 judged rows marked; 0 not judged; ** q <= 0.05 and |change| >= 1%`.
pub fn brief(c: &Comparison) -> String {
    let tally = tally(&c.footer);
    if c.footer.comparisons == 0 {
        return tally;
    }
    format!(
        "{tally}; ** q <= {} and |change| >= {}%",
        c.settings.fdr,
        c.settings.min_effect * 100.0
    )
}

/// Every line of the footer, in order.
pub fn lines(c: &Comparison) -> Vec<String> {
    let f = &c.footer;
    let mut lines = vec![units_and_test(c), marks(c), tally(f)];
    lines.extend(f.notes.iter().map(|note| sentence(c, note)));
    lines
}

/// The cases × metrics present on one side only, as the footer lists them after its lines.
pub fn unmatched_lines(c: &Comparison) -> Vec<String> {
    c.unmatched
        .iter()
        .map(|u| format!("unmatched: {}", unmatched(u)))
        .collect()
}

/// The count in words: `4 of 6 judged rows marked; 0 not judged`, or `no row judged; 2 not
/// judged` where nothing could be.
pub fn tally(f: &Footer) -> String {
    if f.comparisons == 0 {
        format!("no row judged; {} not judged", f.not_judged)
    } else {
        format!(
            "{} of {} judged rows marked; {} not judged",
            f.marked, f.comparisons, f.not_judged
        )
    }
}

/// The bound on false marks if nothing changed, with its assumption; `None` where no bound
/// holds (nothing was judged).
pub fn false_mark_bound(c: &Comparison) -> Option<String> {
    c.footer.notes.iter().find_map(|note| match note {
        Note::FalseMarkBound {
            assumes_calibrations,
        } => Some(bound(c, *assumes_calibrations)),
        _ => None,
    })
}

fn units_and_test(c: &Comparison) -> String {
    let units: Vec<String> = c.footer.units.iter().map(|u| unit_text(*u)).collect();
    let test = match c.footer.tested_on {
        None => "none possible".to_string(),
        Some(on) => format!(
            "Student's t on {} with the df of the variance estimate ({} CI)",
            match on {
                TestedOn::Log => "ln x",
                TestedOn::Raw => "x (a value is zero or below, so no ln)",
                TestedOn::LogAndRaw => "ln x (on x where a value is zero or below)",
            },
            level_text(c.settings.confidence)
        ),
    };
    format!("units: {}; test: {test}", units.join("; "))
}

fn unit_text(units: UnitsOf) -> String {
    match units {
        UnitsOf::Runs {
            mean_of,
            boots_recorded,
        } => format!(
            "runs (each run's mean of {} over its iterations; {})",
            match mean_of {
                Scale::Log => "ln x",
                Scale::Raw => "x",
            },
            if boots_recorded {
                "all runs on one boot"
            } else {
                "imported runs, whose boots are not recorded"
            }
        ),
        UnitsOf::PairsWithinRuns { by_boot: false } => {
            "pairs of cases within each run (the difference of each run's summaries)".to_string()
        }
        UnitsOf::PairsWithinRuns { by_boot: true } => {
            "pairs of cases within each run, per boot (the mean over each boot's runs of the \
             difference of each run's summaries; the runs span several boots)"
                .to_string()
        }
        UnitsOf::Boots => "boots (the mean of each boot's run summaries)".to_string(),
        UnitsOf::AbPairs => {
            "A/B pairs of interleaved runs (the difference of each round's run summaries)"
                .to_string()
        }
        UnitsOf::Values => "the values as given".to_string(),
    }
}

/// The legend of the marks; where no row could be judged, only `?` can stand in the table, so
/// only it is explained.
fn marks(c: &Comparison) -> String {
    let f = &c.footer;
    if f.comparisons == 0 {
        return format!("marks: ? not judged ({NOT_JUDGED})");
    }
    let s = &c.settings;
    let delta = s.min_effect * 100.0;
    let pairs = f
        .units
        .iter()
        .any(|u| matches!(u, UnitsOf::AbPairs | UnitsOf::PairsWithinRuns { .. }));
    format!(
        "marks: ** q <= {} ({} over {} judged rows) and |change| >= {delta}%; ≈ within ±{delta}% \
         (TOST, α = {EQUIVALENCE_ALPHA}); ~ inconclusive (MDE: smallest change detectable at 80% \
         power); ? not judged ({NOT_JUDGED}); ?? units vary more than {}%{}",
        s.fdr,
        s.adjustment.describe(),
        f.comparisons,
        s.noise_cap_pct,
        if pairs {
            " (pairs: their differences)"
        } else {
            ""
        }
    )
}

fn bound(c: &Comparison, assumes_calibrations: bool) -> String {
    let mut bound = format!(
        "if nothing changed, P(any false mark) <= {} ({})",
        c.settings.fdr,
        c.settings.adjustment.describe()
    );
    if assumes_calibrations {
        let names: Vec<String> = c
            .calibrations
            .iter()
            .map(|cal| {
                format!(
                    "calibration {} ({}, {} on {})",
                    cal.id,
                    format_time_ns(cal.created_at_ns),
                    words::counted(cal.runs, "run"),
                    words::counted(cal.boots, "boot"),
                )
            })
            .collect();
        bound.push_str(&format!(
            ", assuming {} still describe{} this machine",
            names.join(" and "),
            if names.len() == 1 { "s" } else { "" }
        ));
    }
    bound
}

/// One note as a sentence.
fn sentence(c: &Comparison, note: &Note) -> String {
    match note {
        Note::Sequential {
            max_rounds,
            spending,
        } => format!(
            "sequential (schedlab ab --until-decided): one look per round over at most \
             {max_rounds} rounds, {} alpha spending for the marks (BH within each look) and for ≈ \
             alike; a row keeps the verdict of the first look that decided it",
            match spending {
                Spending::OBrienFleming => "O'Brien–Fleming-type",
                Spending::Pocock => "Pocock-type",
            }
        ),
        Note::FalseMarkBound {
            assumes_calibrations,
        } => bound(c, *assumes_calibrations),
        Note::MadeInBlocks {
            first,
            first_span_ns: (first_from, first_to),
            second,
            second_span_ns: (second_from, second_to),
        } => format!(
            "the runs of {first} ({} to {}) all came before those of {second} ({} to {}), on one \
             boot: what drifted between the two blocks (other load, temperature, a daemon) reads \
             as a change, and the bound above assumes runs that could have come in any order — \
             alternate the labels run by run, or use `schedlab ab`",
            format_time_ns(*first_from),
            format_time_ns(*first_to),
            format_time_ns(*second_from),
            format_time_ns(*second_to),
        ),
        Note::Guard {
            method,
            measured,
            factor,
            rows,
        } => guard(*method, *measured, *factor, *rows),
        Note::GuardNotApplied { rows, needed } => format!(
            "stale-calibration guard not applied: with one unit per side it needs at least \
             {needed} calibrated rows with a variance above 0 (this report has {rows})"
        ),
        Note::CalibrationRefused { limit } => format!(
            "today's spread is more than {limit:.0}× the calibrated one: the calibration does not \
             describe this machine now, so rows resting on it alone are not judged (?); give each \
             side two or more runs, or calibrate again"
        ),
        Note::CalibratedWithinRunPairs => {
            "pairs of cases within runs with a calibration: it holds each case's own run-to-run \
             variance, drift that pairing cancels, so those rows use the two cases' variances \
             added (more than a pair's when a run moves both cases alike: fewer marks, never more)"
                .to_string()
        }
        Note::CalibrationTooWide { times } => format!(
            "today's runs vary {times:.1}× less than the calibration says: if the machine was \
             disturbed while it was calibrated, its verdicts here are needlessly weak — run \
             `schedlab calibrate` again on a quiet machine under a new --label, or compare with \
             `--calibration none`"
        ),
        Note::NoVariance => "? rows have one unit per side and no calibration: `schedlab \
             calibrate` the cases on this machine (on several boots for kernels), give each side \
             more runs or boots under one label, or interleave A and B with `schedlab ab` \
             (settings) or `schedlab campaign` (kernels)"
            .to_string(),
        Note::ManyBuilds { sides } => many_builds(sides),
        Note::MachinesDiffer { fields } => format!(
            "the runs were measured on machines that differ in {}: a difference between the \
             sides may be the machine's, not the kernel's",
            fields.join(", ")
        ),
        Note::LeftOut {
            sides,
            every_side,
            runs,
        } => left_out(sides, *every_side, runs),
        Note::Restated { metrics } => restated(metrics),
        Note::Disturbed { dropped, runs } => disturbed(*dropped, runs),
    }
}

/// `ops_per_sec` restates `usec_per_op` (its reciprocal): …
fn restated(metrics: &[RestatedMetric]) -> String {
    let pairs: Vec<String> = metrics
        .iter()
        .map(|m| {
            format!(
                "{} restates {} ({})",
                m.metric,
                m.of,
                match m.how {
                    Restatement::Reciprocal => "its reciprocal",
                    Restatement::Multiple => "a multiple",
                }
            )
        })
        .collect();
    format!(
        "{}: one measurement, one effect, so such rows are shown with the verdict of the row they \
         restate in parentheses, (**), untested and not counted",
        pairs.join("; ")
    )
}

fn guard(method: GuardMethod, measured: f64, factor: f64, rows: usize) -> String {
    format!(
        "stale-calibration guard: today's spread is {measured:.2}× the calibrated one ({} over \
         {rows} rows); calibrated variances {}",
        match method {
            GuardMethod::ZScale => "robust scale of the rows' z-scores",
            _ => "median variance ratio",
        },
        if factor > 1.0 {
            format!("widened ×{factor:.2}")
        } else if measured < 1.0 {
            "used as they are (the guard never narrows them)".to_string()
        } else {
            "used as they are".to_string()
        }
    )
}

fn many_builds(sides: &[SideBuilds]) -> String {
    let per_side: Vec<String> = sides
        .iter()
        .map(|s| {
            let builds: Vec<&str> = s
                .builds
                .iter()
                .map(|b| b.as_deref().unwrap_or("not recorded"))
                .collect();
            format!("{}: {}", s.side, builds.join(", "))
        })
        .collect();
    format!(
        "measured by more than one build or tool ({}): a change in the measuring code moves \
         results as a kernel's would (docs/fidelity.md), so compare runs of one build where that \
         matters",
        per_side.join("; ")
    )
}

fn left_out(sides: &[String], every_side: bool, runs: &[LeftOutRun]) -> String {
    let whose = if every_side {
        "every side".to_string()
    } else {
        sides.join(", ")
    };
    let runs: Vec<String> = runs
        .iter()
        .map(|r| {
            format!(
                "run {} ({})",
                r.id.map_or("?".into(), |i| i.to_string()),
                r.status.as_str()
            )
        })
        .collect();
    format!(
        "left out of {whose}: {} (--include-incomplete uses them)",
        runs.join(", ")
    )
}

/// The iterations the quiet-machine guard marked disturbed, run by run; left out or not.
fn disturbed(dropped: bool, runs: &[DisturbedRun]) -> String {
    let marked: usize = runs.iter().map(|r| r.disturbed).sum();
    let measured: usize = runs.iter().map(|r| r.measured).sum();
    let id = |r: &DisturbedRun| r.id.map_or("?".into(), |i| i.to_string());
    let each: Vec<String> = runs
        .iter()
        .map(|r| format!("run {}: {} of {}", id(r), r.disturbed, r.measured))
        .collect();
    let whole: Vec<String> = runs
        .iter()
        .filter(|r| r.disturbed == r.measured)
        .map(|r| format!("run {}", id(r)))
        .collect();
    let what = format!(
        "{marked} of these runs' {measured} measured iterations ran on a machine the quiet guard \
         (run --quiet-below) found busy ({})",
        each.join("; ")
    );
    if !dropped {
        return format!(
            "{what}: they are compared with the others; --drop-disturbed leaves them out"
        );
    }
    match whole.as_slice() {
        [] => format!("{what}: left out (--drop-disturbed)"),
        _ => format!(
            "{what}: left out (--drop-disturbed), and with them {} {}, which had no other",
            if whole.len() == 1 {
                "the whole of"
            } else {
                "the whole runs"
            },
            whole.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use schedlab_analysis::notes::{DisturbedRun, LeftOutRun, Note, SideBuilds, UnitsOf};
    use schedlab_analysis::units::Scale;
    use schedlab_analysis::{compare, CalibrationSet, Settings, Side};
    use schedlab_core::metric::Better;
    use schedlab_core::record::RunStatus;

    use super::{sentence, unit_text};

    /// A comparison of two plain-value sides: what the sentences read their settings from.
    fn comparison() -> schedlab_analysis::Comparison {
        let side = |name: &str, values: Vec<f64>| {
            Side::from_values(
                name,
                vec![("c".into(), "usec".into(), Better::Lower, values)],
            )
        };
        compare(
            side("a", vec![1.0, 2.0, 3.0]),
            vec![side("b", vec![1.5, 2.5, 3.5])],
            &CalibrationSet::default(),
            Settings::default(),
            None,
        )
    }

    /// The notes that the comparison corpus of the commands does not reach, word for word as
    /// the analysis wrote them before it returned facts.
    #[test]
    fn each_note_reads_as_it_did_when_the_analysis_wrote_it() {
        let c = comparison();
        for (note, text) in [
            (
                Note::GuardNotApplied { rows: 3, needed: 8 },
                "stale-calibration guard not applied: with one unit per side it needs at least 8 \
                 calibrated rows with a variance above 0 (this report has 3)",
            ),
            (
                Note::CalibratedWithinRunPairs,
                "pairs of cases within runs with a calibration: it holds each case's own \
                 run-to-run variance, drift that pairing cancels, so those rows use the two cases' \
                 variances added (more than a pair's when a run moves both cases alike: fewer marks, \
                 never more)",
            ),
            (
                Note::CalibrationTooWide { times: 5.04 },
                "today's runs vary 5.0× less than the calibration says: if the machine was \
                 disturbed while it was calibrated, its verdicts here are needlessly weak — run \
                 `schedlab calibrate` again on a quiet machine under a new --label, or compare with \
                 `--calibration none`",
            ),
            (
                Note::ManyBuilds {
                    sides: vec![
                        SideBuilds {
                            side: "base".into(),
                            builds: vec![Some("schedlab 0.1.0 aaa".into()), None],
                        },
                        SideBuilds {
                            side: "cand".into(),
                            builds: vec![Some("schedlab 0.1.0 bbb".into())],
                        },
                    ],
                },
                "measured by more than one build or tool (base: schedlab 0.1.0 aaa, not recorded; \
                 cand: schedlab 0.1.0 bbb): a change in the measuring code moves results as a \
                 kernel's would (docs/fidelity.md), so compare runs of one build where that matters",
            ),
            (
                Note::MachinesDiffer {
                    fields: vec!["cpu_model", "smt_active"],
                },
                "the runs were measured on machines that differ in cpu_model, smt_active: a \
                 difference between the sides may be the machine's, not the kernel's",
            ),
            (
                Note::LeftOut {
                    sides: vec!["a".into(), "b".into()],
                    every_side: true,
                    runs: vec![LeftOutRun {
                        id: None,
                        status: RunStatus::Interrupted,
                    }],
                },
                "left out of every side: run ? (interrupted) (--include-incomplete uses them)",
            ),
            (
                Note::Disturbed {
                    dropped: false,
                    runs: vec![DisturbedRun {
                        id: Some(3),
                        disturbed: 2,
                        measured: 5,
                    }],
                },
                "2 of these runs' 5 measured iterations ran on a machine the quiet guard (run \
                 --quiet-below) found busy (run 3: 2 of 5): they are compared with the others; \
                 --drop-disturbed leaves them out",
            ),
            (
                Note::Disturbed {
                    dropped: true,
                    runs: vec![
                        DisturbedRun {
                            id: Some(3),
                            disturbed: 2,
                            measured: 5,
                        },
                        DisturbedRun {
                            id: Some(4),
                            disturbed: 5,
                            measured: 5,
                        },
                    ],
                },
                "7 of these runs' 10 measured iterations ran on a machine the quiet guard (run \
                 --quiet-below) found busy (run 3: 2 of 5; run 4: 5 of 5): left out \
                 (--drop-disturbed), and with them the whole of run 4, which had no other",
            ),
        ] {
            assert_eq!(sentence(&c, &note), text);
        }
    }

    #[test]
    fn units_read_as_they_did() {
        for (units, text) in [
            (
                UnitsOf::Boots,
                "boots (the mean of each boot's run summaries)",
            ),
            (
                UnitsOf::PairsWithinRuns { by_boot: true },
                "pairs of cases within each run, per boot (the mean over each boot's runs of the \
                 difference of each run's summaries; the runs span several boots)",
            ),
            (
                UnitsOf::Runs {
                    mean_of: Scale::Raw,
                    boots_recorded: false,
                },
                "runs (each run's mean of x over its iterations; imported runs, whose boots are \
                 not recorded)",
            ),
        ] {
            assert_eq!(unit_text(units), text);
        }
    }
}
