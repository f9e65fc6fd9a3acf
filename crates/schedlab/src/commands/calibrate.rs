//! `schedlab calibrate`: run the same cases several times, apart in time, and store this
//! machine's noise model — per case × metric the variance between runs, within runs and (when
//! the label's runs span several boots) between boots. Each calibrate run is a stored run under
//! one label, so calibrating again on later boots with the same label builds a calibration that
//! knows the boot-to-boot component. `--from` computes one from stored runs, `--list` and
//! `--show` read them back.
use std::process::ExitCode;

use schedlab_analysis::calibration::{report, Calibration};
use schedlab_analysis::MachineKey;
use schedlab_core::plan::validate_label;
use schedlab_core::record::{RunRecord, RunStatus};
use schedlab_core::{runner, sys};
use schedlab_report::calibration::{write_json, write_text};
use schedlab_report::compare::table::{Align, Table};
use schedlab_report::model::format_time_ns;
use schedlab_store::{Store, StoredCalibration};

use crate::cli::{CalibrateArgs, OutputFormat};
use crate::failure::Failure;
use crate::output::{emit, say};
use crate::plan::plan_from_parts;
use crate::progress::ProgressLine;
use crate::session::{plan_for_visit, Session, Storage};
use crate::store_path::{db_location, open_existing_writer, open_reader};

/// The level the report's detectable changes are stated at.
const REPORT_ALPHA: f64 = 0.05;
const DEFAULT_RUNS: u32 = 6;
const DEFAULT_PAUSE_SEC: f64 = 5.0;

pub fn calibrate(args: &CalibrateArgs) -> Result<ExitCode, Failure> {
    let reads_stored = args.list || args.show.is_some() || args.from.is_some();
    if reads_stored && args.workload.is_some() {
        return Err(Failure::bad_input(
            "--list, --show and --from read stored runs; they take no workload",
        ));
    }
    if reads_stored {
        // They run nothing: an option that shapes runs would be ignored, so it is refused.
        let given = args.plan.first_given().or_else(|| {
            [
                ("--runs", args.runs.is_some()),
                ("--pause", args.pause.is_some()),
                ("--label", args.label.is_some()),
            ]
            .iter()
            .find(|(_, g)| *g)
            .map(|(f, _)| *f)
        });
        if let Some(flag) = given {
            return Err(Failure::bad_input(format!(
                "--list, --show and --from read stored runs; {flag} does not apply"
            )));
        }
    }
    if args.list {
        return list(args);
    }
    if let Some(id) = args.show {
        return show(args, id);
    }
    if let Some(label) = &args.from {
        let mut store = open_existing_writer(&db_location(&args.db)?)?;
        return compute_and_store(&mut *store, label, None, args.format);
    }
    measure(args)
}

fn measure(args: &CalibrateArgs) -> Result<ExitCode, Failure> {
    let runs = args.runs.unwrap_or(DEFAULT_RUNS);
    let pause = args.pause.unwrap_or(DEFAULT_PAUSE_SEC);
    let mut plan = plan_from_parts(
        args.suite.as_ref(),
        args.workload.as_ref(),
        &args.plan,
        args.label.as_ref(),
    )?;
    let label = match &plan.label {
        Some(label) => label.clone(),
        None => format!(
            "calibrate-{}",
            plan.suite
                .clone()
                .unwrap_or_else(|| plan.cases[0].workload.kind().to_string())
        ),
    };
    validate_label(&label)?;
    plan.label = Some(label.clone());
    let mut session = Session::open(Storage::File(db_location(&args.db)?))?;
    for i in 0..runs {
        if i > 0 {
            runner::pause((pause * 1000.0).round() as u64).map_err(Failure::from)?;
        }
        if !args.quiet {
            say(format_args!(
                "schedlab: calibration run {} of {} (label {label})",
                i + 1,
                runs
            ));
        }
        // A new case order per run, as separate runs would have.
        let visit = plan_for_visit(&plan, i);
        let mut progress = ProgressLine::new(args.quiet);
        let measured = session.measure(&visit, None, &mut progress)?;
        progress.finish();
        measured.completed()?;
    }
    let cases: Vec<String> = plan.cases.iter().map(|c| c.name.clone()).collect();
    compute_and_store(session.store_mut(), &label, Some(&cases), args.format)
}

/// Computes a calibration from every complete run of `label` on this machine (restricted to
/// `cases` when given), stores it and prints its report.
fn compute_and_store(
    store: &mut dyn Store,
    label: &str,
    cases: Option<&[String]>,
    format: OutputFormat,
) -> Result<ExitCode, Failure> {
    let ids = store.resolve(label)?;
    let runs: Vec<RunRecord> = ids
        .iter()
        .map(|&id| store.load_run(id))
        .collect::<Result<Vec<_>, _>>()?;
    let complete: Vec<&RunRecord> = runs
        .iter()
        .filter(|r| r.status == RunStatus::Complete)
        .collect();
    // The machine of the newest complete run: a calibration describes one machine.
    let Some(newest) = complete.last() else {
        return Err(Failure::bad_input(format!(
            "{label} has no complete run to calibrate from"
        )));
    };
    let machine = MachineKey::of(&newest.fingerprint);
    let mine: Vec<&RunRecord> = complete
        .iter()
        .copied()
        .filter(|r| MachineKey::of(&r.fingerprint) == machine)
        .collect();
    let mut calibration =
        Calibration::from_runs(label, &mine, sys::realtime_ns()).map_err(|e| {
            Failure::bad_input(format!(
                "cannot calibrate from {label}: {}",
                schedlab_report::refusals::calibration(&e)
            ))
        })?;
    if let Some(cases) = cases {
        calibration.cases.retain(|c| cases.contains(&c.case));
        if calibration.cases.is_empty() {
            return Err(Failure::bad_input(format!(
                "cannot calibrate from {label}: no case of this plan has 3 complete runs with the same iteration count"
            )));
        }
    }
    let model = serde_json::to_value(&calibration)
        .map_err(|e| Failure::failed(format!("cannot encode the calibration: {e}")))?;
    let id = store.save_calibration(&StoredCalibration {
        id: None,
        created_at_ns: calibration.created_at_ns,
        label: label.to_string(),
        hostname: calibration.machine.hostname.clone(),
        run_ids: calibration.run_ids.clone(),
        model,
    })?;
    calibration.id = Some(id);
    print_report(&calibration, format)
}

fn print_report(calibration: &Calibration, format: OutputFormat) -> Result<ExitCode, Failure> {
    let r = report(calibration, REPORT_ALPHA);
    emit(|out| match format {
        OutputFormat::Text => write_text(&r, out),
        OutputFormat::Json => write_json(&r, out),
    })?;
    Ok(ExitCode::SUCCESS)
}

fn stored(store: &dyn Store) -> Result<Vec<Calibration>, Failure> {
    store
        .calibrations()?
        .into_iter()
        .map(|s| {
            let id = s.id;
            serde_json::from_value::<Calibration>(s.model)
                .map(|mut c| {
                    c.id = id;
                    c
                })
                .map_err(|e| {
                    Failure::failed(format!(
                        "calibration {} is unreadable: {e}",
                        id.unwrap_or_default()
                    ))
                })
        })
        .collect()
}

fn show(args: &CalibrateArgs, id: i64) -> Result<ExitCode, Failure> {
    let store = open_reader(&db_location(&args.db)?)?;
    let calibration = stored(&*store)?
        .into_iter()
        .find(|c| c.id == Some(id))
        .ok_or_else(|| Failure::bad_input(format!("no calibration with id {id}")))?;
    print_report(&calibration, args.format)
}

fn list(args: &CalibrateArgs) -> Result<ExitCode, Failure> {
    // A missing file is exit 2, as for every reader but `runs` (docs/cli.md, "The `--db` value").
    let calibrations = stored(&*open_reader(&db_location(&args.db)?)?)?;
    emit(|out| match args.format {
        OutputFormat::Json => {
            let rows: Vec<serde_json::Value> = calibrations
                .iter()
                .map(|c| {
                    serde_json::json!({
                        "id": c.id,
                        "created_at": format_time_ns(c.created_at_ns),
                        "label": c.label,
                        "hostname": c.machine.hostname,
                        "runs": c.run_ids.len(),
                        "boots": c.boots,
                        "cases": c.cases.iter().map(|k| &k.case).collect::<Vec<_>>(),
                    })
                })
                .collect();
            schedlab_report::json::write_versioned(
                &serde_json::json!({ "calibrations": rows }),
                out,
            )
        }
        OutputFormat::Text => {
            if calibrations.is_empty() {
                return writeln!(
                    out,
                    "no calibrations stored (see `schedlab calibrate --help`)"
                );
            }
            let mut table = Table::new(&[
                ("id", Align::Right),
                ("created", Align::Left),
                ("label", Align::Left),
                ("host", Align::Left),
                ("runs", Align::Right),
                ("boots", Align::Right),
                ("cases", Align::Right),
            ]);
            for c in &calibrations {
                table.push(vec![
                    c.id.unwrap_or_default().to_string(),
                    format_time_ns(c.created_at_ns),
                    c.label.clone(),
                    c.machine.hostname.clone(),
                    c.run_ids.len().to_string(),
                    c.boots.to_string(),
                    c.cases.len().to_string(),
                ]);
            }
            table.write_text(out)
        }
    })?;
    Ok(ExitCode::SUCCESS)
}
