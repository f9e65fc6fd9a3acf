//! `schedlab run`: validate the plan, open the store before measuring anything, run case by case
//! with every finished iteration committed at once, then print the summary of what was stored.
//! `--no-store` is the same session on a store in memory.
use std::io::Write;
use std::process::ExitCode;

use schedlab_core::estimate::MeasuredCase;
use schedlab_core::plan::RunPlan;
use schedlab_core::words;
use schedlab_core::{estimate, sys};
use schedlab_report::RunReport;

use crate::cli::{OutputFormat, RunArgs};
use crate::failure::Failure;
use crate::output::{emit, report_format};
use crate::plan::run_plan;
use crate::progress::ProgressLine;
use crate::session::{host_history, Session, Storage};
use crate::store_path::{db_location, db_named, is_missing, open_reader};

pub fn run(args: &RunArgs) -> Result<ExitCode, Failure> {
    let plan = run_plan(args)?;
    if args.dry_run {
        return dry_run(&plan, args);
    }
    let storage = if args.no_store {
        // Unused, a --db value must still name a store: a mistyped URL should not pass silently.
        if db_named(&args.db) {
            db_location(&args.db)?;
        }
        Storage::Memory
    } else {
        Storage::File(db_location(&args.db)?)
    };
    let mut session = Session::open(storage)?;
    let mut progress = ProgressLine::new(args.quiet);
    let measured = session.measure(&plan, None, &mut progress)?;
    progress.finish();
    let record = session.load(&measured)?;
    let printed = emit(|out| {
        schedlab_report::write(&RunReport::new(&[record]), report_format(args.format), out)
    });
    // How the run ended comes first: after a hang-up stdout may be a terminal that is gone, and
    // that must not turn an interrupted run's 129 into a 1.
    measured.completed()?;
    printed.map(|()| ExitCode::SUCCESS)
}

/// One case of a dry run: where it runs in the order and how long an iteration should take.
struct Estimated {
    name: String,
    seconds: Option<f64>,
    source: estimate::EstimateSource,
    host_factor: Option<(f64, usize)>,
    kind: &'static str,
}

/// A dry run's estimate of the whole plan.
struct PlanEstimate {
    /// The plan's cases, in the order they would run.
    rows: Vec<Estimated>,
    iterations_per_case: u64,
    /// The duration of the cases whose iterations have an estimate, with the cool-downs.
    known_sec: f64,
    unknown_cases: usize,
}

/// Lists the cases in the order they would run, with an estimated duration, and runs nothing;
/// `--format json` prints the whole plan and the estimate as one document.
fn dry_run(plan: &RunPlan, args: &RunArgs) -> Result<ExitCode, Failure> {
    let location = db_location(&args.db)?;
    // History is optional: a missing or unreadable database just means rules of thumb.
    let store = (!is_missing(&location))
        .then(|| open_reader(&location).ok())
        .flatten();
    let measured = store
        .as_ref()
        .and_then(|s| host_history(&**s, &sys::hostname(), &plan.cases).ok())
        .unwrap_or_default();
    let estimate = estimate_plan(plan, &measured);
    if args.format == OutputFormat::Json {
        let plan = RunPlan {
            expected_sec: estimate::expectations(&plan.cases, &measured),
            ..plan.clone()
        };
        return emit(|out| write_dry_run_json(&plan, &estimate, out)).map(|()| ExitCode::SUCCESS);
    }
    emit(|out| write_dry_run_text(plan, &estimate, out))?;
    Ok(ExitCode::SUCCESS)
}

/// How long each of `plan`'s cases should take, from `measured` on this host or rules of thumb.
fn estimate_plan(plan: &RunPlan, measured: &[MeasuredCase]) -> PlanEstimate {
    let per_case = u64::from(plan.warmup + plan.iterations);
    let mut known_total = 0.0;
    let mut unknown = 0;
    let mut rows = Vec::new();
    for case in &plan.cases {
        let estimate::Estimate {
            sec: seconds,
            source,
            host_factor,
        } = estimate::iteration_estimate(case, measured);
        match seconds {
            Some(sec) => known_total += sec * per_case as f64,
            None => unknown += 1,
        }
        rows.push(Estimated {
            name: case.name.clone(),
            seconds,
            source,
            host_factor,
            kind: case.workload.kind(),
        });
    }
    known_total += plan.cooldown_ms as f64 / 1000.0 * plan.cases.len().saturating_sub(1) as f64;
    PlanEstimate {
        rows,
        iterations_per_case: per_case,
        known_sec: known_total,
        unknown_cases: unknown,
    }
}

/// The dry run as one JSON document: the plan (with its expected durations) and the estimate.
fn write_dry_run_json(
    plan: &RunPlan,
    estimate: &PlanEstimate,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let cases: Vec<serde_json::Value> = estimate
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            serde_json::json!({
                "position": i + 1,
                "case": r.name,
                "iteration_sec": r.seconds,
                "source": r.source.as_str(),
                "host_factor": r.host_factor.map(|(factor, _)| factor),
            })
        })
        .collect();
    let document = serde_json::json!({
        "dry_run": true,
        "plan": plan,
        "estimate": {
            "iterations_per_case": estimate.iterations_per_case,
            "cases": cases,
            "known_sec": estimate.known_sec,
            "unknown_cases": estimate.unknown_cases,
        },
    });
    schedlab_report::json::write_versioned(&document, out)
}

/// The dry run for a reader: the plan's shape, each case's estimate and the whole duration.
fn write_dry_run_text(
    plan: &RunPlan,
    estimate: &PlanEstimate,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let what = plan
        .suite
        .as_deref()
        .map_or("run".to_string(), |s| format!("suite {s}"));
    let order = match plan.order_seed {
        Some(seed) => format!("random order (--order-seed {seed})"),
        None => "listed order".to_string(),
    };
    writeln!(
        out,
        "{what}: {} × ({} + {}), {order}, cool-down {:.1} s, scale {}",
        words::counted(plan.cases.len(), "case"),
        words::counted(plan.iterations as usize, "iteration"),
        words::counted(plan.warmup as usize, "warm-up"),
        plan.cooldown_ms as f64 / 1000.0,
        plan.scale
    )?;
    if let (Some(ci), Some(max)) = (plan.until_ci_pct, plan.max_iterations) {
        writeln!(
            out,
            "adaptive stopping: until the 95% CI is within ±{ci}% or {max} iterations"
        )?;
    }
    for (i, r) in estimate.rows.iter().enumerate() {
        let est = r.seconds.map_or("?".to_string(), |s| format!("{s:.2} s"));
        let source = match r.host_factor {
            Some((factor, cases)) => format!(
                "rule of thumb × {factor:.2}, from {} on this host",
                words::counted(cases, &format!("other {} case", r.kind))
            ),
            None => r.source.as_str().to_string(),
        };
        writeln!(out, "{:>4}  {}  ~{est}/iteration ({source})", i + 1, r.name)?;
    }
    let unknown = estimate.unknown_cases;
    let unknown_note = if unknown > 0 {
        format!(" + {} of unknown duration", words::counted(unknown, "case"))
    } else {
        String::new()
    };
    writeln!(
        out,
        "estimated duration: {}{unknown_note}",
        format_duration(estimate.known_sec)
    )
}

fn format_duration(seconds: f64) -> String {
    let total = seconds.round() as u64;
    match (total / 3600, total / 60 % 60, total % 60) {
        (0, 0, s) => format!("{s} s"),
        (0, m, s) => format!("{m} min {s} s"),
        (h, m, _) => format!("{h} h {m} min"),
    }
}
