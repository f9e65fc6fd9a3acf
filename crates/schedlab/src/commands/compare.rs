//! `schedlab compare`: load each side's runs, refuse comparisons across machines that differ where
//! it matters, build the comparison and render it in the chosen style and format. The loader is
//! shared with `schedlab report`.
use std::process::ExitCode;

use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::record::{ExperimentTag, RunRecord};
use schedlab_report::compare::text::Style;
use schedlab_report::compare::{
    self, AdjustmentName, Comparison, MetricFilter, Settings, Side, Verdict,
};
use schedlab_store::{SqliteStore, Store};

use super::{db_path, emit};
use crate::cli::{AdjustArg, CompareArgs, CompareFormat, CompareStyle, DecisionArgs, SidesArgs};
use crate::failure::Failure;

/// ministat's confidence levels, the only ones its t table (and so our ministat style) knows.
const CONFIDENCE_LEVELS: [f64; 6] = [80.0, 90.0, 95.0, 98.0, 99.0, 99.5];

pub fn settings(args: &DecisionArgs) -> Result<Settings, Failure> {
    if !(args.min_effect.is_finite() && (0.0..100.0).contains(&args.min_effect)) {
        return Err(Failure::bad_input(
            "--min-effect must be a percentage from 0 to 100",
        ));
    }
    if !(args.fdr > 0.0 && args.fdr < 1.0) {
        return Err(Failure::bad_input(
            "--fdr must be between 0 and 1 (e.g. 0.05)",
        ));
    }
    if !(args.noise_cap.is_finite() && args.noise_cap > 0.0) {
        return Err(Failure::bad_input(
            "--noise-cap must be a positive percentage",
        ));
    }
    if !CONFIDENCE_LEVELS.contains(&args.confidence) {
        return Err(Failure::bad_input(format!(
            "--confidence must be one of ministat's levels: 80, 90, 95, 98, 99, 99.5 (not {})",
            args.confidence
        )));
    }
    Ok(Settings {
        min_effect: args.min_effect / 100.0,
        fdr: args.fdr,
        adjustment: match args.adjust {
            AdjustArg::Bh => AdjustmentName::Bh,
            AdjustArg::By => AdjustmentName::By,
            AdjustArg::Holm => AdjustmentName::Holm,
        },
        confidence: args.confidence / 100.0,
        noise_cap_pct: args.noise_cap,
        ministat_confidence: args.confidence / 100.0,
        ..Settings::default()
    })
}

pub fn style(style: CompareStyle) -> Style {
    match style {
        CompareStyle::Schedtests => Style::Schedtests,
        CompareStyle::Mmtests => Style::Mmtests,
        CompareStyle::Ministat => Style::Ministat,
        CompareStyle::Benchstat => Style::Benchstat,
    }
}

/// Prints the comparison and decides the exit status.
pub fn render(
    comparison: &Comparison,
    style: CompareStyle,
    format: CompareFormat,
    fail_on_regression: bool,
) -> Result<ExitCode, Failure> {
    let style = self::style(style);
    emit(|out| match format {
        CompareFormat::Text => compare::text::write(comparison, style, out),
        CompareFormat::Markdown => compare::markdown::write(comparison, style, out),
        CompareFormat::Csv => compare::csv::write(comparison, out),
        CompareFormat::Json => compare::json::write(comparison, out),
    })?;
    Ok(gate(comparison, fail_on_regression))
}

/// The exit status: 1 when `--fail-on-regression` is given and a row is marked a regression.
pub fn gate(comparison: &Comparison, fail_on_regression: bool) -> ExitCode {
    let regressions = comparison
        .rows
        .iter()
        .filter(|r| r.verdict == Verdict::Regression)
        .count();
    if fail_on_regression && regressions > 0 {
        eprintln!("schedlab: {regressions} regression(s) marked (--fail-on-regression)");
        return ExitCode::from(crate::failure::EXIT_FAILED);
    }
    ExitCode::SUCCESS
}

pub fn compare(args: &CompareArgs) -> Result<ExitCode, Failure> {
    let loaded = load_comparison(&args.sides)?;
    render(
        &loaded.comparison,
        args.style,
        args.format,
        args.sides.decision.fail_on_regression,
    )
}

/// A comparison with the stored runs it was built from, for reports that show more than rows.
pub struct LoadedComparison {
    pub comparison: Comparison,
    pub base_runs: Vec<RunRecord>,
    /// In the order of the candidates.
    pub candidate_runs: Vec<Vec<RunRecord>>,
}

/// Loads each side's runs, refuses machines that differ where it matters, and compares; a
/// comparison without a single row is bad input.
pub fn load_comparison(args: &SidesArgs) -> Result<LoadedComparison, Failure> {
    let settings = settings(&args.decision)?;
    let store = SqliteStore::open_existing(&db_path(&args.db)?)?;
    // Each side's runs with their experiment tags: runs of `schedlab ab` or a campaign are
    // compared as A/B pairs.
    type Loaded = (Vec<RunRecord>, Vec<Option<ExperimentTag>>);
    let load = |side: &str| -> Result<Loaded, Failure> {
        let ids = store.resolve(side)?;
        let runs = ids
            .iter()
            .map(|&id| store.load_run(id))
            .collect::<Result<Vec<_>, _>>()?;
        let tags = ids
            .iter()
            .map(|&id| store.run_tag(id))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((runs, tags))
    };
    let (base_runs, base_tags) = load(&args.base)?;
    let candidate_runs: Vec<Loaded> = args
        .candidates
        .iter()
        .map(|c| load(c))
        .collect::<Result<Vec<_>, _>>()?;
    if !args.allow_fingerprint_mismatch {
        let reference = &base_runs[0];
        for run in base_runs
            .iter()
            .chain(candidate_runs.iter().flat_map(|(runs, _)| runs))
        {
            check_comparable(reference, run)?;
        }
    }
    let filter = MetricFilter {
        names: args.metrics.to_vec(),
        all: args.all_metrics,
    };
    let base = Side::from_runs(&args.base, &base_runs, &base_tags, &filter);
    let candidates: Vec<Side> = args
        .candidates
        .iter()
        .zip(&candidate_runs)
        .map(|(name, (runs, tags))| Side::from_runs(name, runs, tags, &filter))
        .collect();
    let comparison = compare::compare(base, candidates, settings);
    if comparison.rows.is_empty() {
        return Err(Failure::bad_input(format!(
            "nothing to compare: no case and metric is present on both sides{}",
            if args.metrics.is_empty() {
                ""
            } else {
                " (check --metric)"
            }
        )));
    }
    Ok(LoadedComparison {
        comparison,
        base_runs,
        candidate_runs: candidate_runs.into_iter().map(|(runs, _)| runs).collect(),
    })
}

/// A fingerprint field that must match, by name and how to read it.
type ComparedField = (&'static str, fn(&Fingerprint) -> String);

/// Kernel differences are the point of a comparison; hardware and tuning differences are not.
fn check_comparable(reference: &RunRecord, run: &RunRecord) -> Result<(), Failure> {
    let (a, b) = (&reference.fingerprint, &run.fingerprint);
    let fields: [ComparedField; 4] = [
        ("CPU model", |f| f.cpu_model.clone()),
        ("online CPU count", |f| f.online_cpu_count.to_string()),
        ("SMT", |f| format!("{:?}", f.smt_active)),
        ("cpufreq governor", |f| f.cpufreq_governors.join(",")),
    ];
    for (name, get) in fields {
        if get(a) != get(b) {
            let id = |r: &RunRecord| r.id.map_or("?".into(), |i| i.to_string());
            return Err(Failure::bad_input(format!(
                "refusing to compare: {name} differs (run {}: {:?}, run {}: {:?}); \
                 pass --allow-fingerprint-mismatch to compare anyway",
                id(reference),
                get(a),
                id(run),
                get(b)
            )));
        }
    }
    Ok(())
}
