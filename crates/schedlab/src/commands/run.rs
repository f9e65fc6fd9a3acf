//! `schedlab run`: validate the plan, open the store before measuring anything, run case by case
//! with every finished iteration committed at once, then print the summary of what was stored.
use std::process::ExitCode;

use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::record::{RunRecord, RunStatus};
use schedlab_core::runner::{self, NoSink, RunOutcome};
use schedlab_core::sys;
use schedlab_report::RunReport;
use schedlab_store::{SqliteStore, Store, StoreSink};

use super::{db_path, emit, report_format};
use crate::cli::RunArgs;
use crate::failure::Failure;
use crate::plan::run_plan;
use crate::progress::StderrProgress;

pub fn run(args: &RunArgs) -> Result<ExitCode, Failure> {
    let plan = run_plan(args)?;
    let mut store = if args.options.no_store {
        None
    } else {
        Some(SqliteStore::open(&db_path(&args.options.db)?)?)
    };
    sys::install_interrupt_handlers()
        .map_err(|e| Failure::failed(format!("cannot install signal handlers: {e}")))?;
    let fingerprint = Fingerprint::collect();
    let started_at_ns = sys::realtime_ns();
    let mut progress = StderrProgress::new();

    let (run_id, outcome) = match store.as_mut() {
        Some(store) => {
            let run_id = store.begin_run(&plan, &fingerprint, started_at_ns)?;
            let outcome = runner::execute(
                &plan,
                &mut StoreSink {
                    store: &mut *store,
                    run_id,
                },
                &mut progress,
            );
            let error = outcome.error.as_ref().map(ToString::to_string);
            store.finish_run(run_id, outcome.status, sys::realtime_ns(), error.as_deref())?;
            (Some(run_id), outcome)
        }
        None => (None, runner::execute(&plan, &mut NoSink, &mut progress)),
    };

    let record = match (store.as_ref(), run_id) {
        (Some(store), Some(id)) => store.load_run(id)?,
        _ => in_memory_record(plan, fingerprint, started_at_ns, &outcome),
    };
    emit(|out| {
        schedlab_report::write(
            &RunReport::new(&[record]),
            report_format(args.options.format),
            out,
        )
    })?;

    let RunOutcome {
        status,
        error,
        cases,
    } = outcome;
    match (status, error) {
        (RunStatus::Complete, _) => Ok(ExitCode::SUCCESS),
        (_, Some(error)) => {
            let kept: usize = cases.iter().map(|c| c.iterations.len()).sum();
            let mut failure = Failure::from(error);
            let place = run_id.map_or("not stored".to_string(), |id| format!("stored as run {id}"));
            failure.message = format!(
                "{} ({kept} finished iterations kept, {place})",
                failure.message
            );
            Err(failure)
        }
        (_, None) => Err(Failure::failed("the run did not complete")),
    }
}

fn in_memory_record(
    plan: schedlab_core::plan::RunPlan,
    fingerprint: Fingerprint,
    started_at_ns: i64,
    outcome: &RunOutcome,
) -> RunRecord {
    RunRecord {
        id: None,
        label: plan.label.clone(),
        plan,
        fingerprint,
        started_at_ns,
        ended_at_ns: Some(sys::realtime_ns()),
        status: outcome.status,
        error: outcome.error.as_ref().map(ToString::to_string),
        cases: outcome.cases.clone(),
    }
}
