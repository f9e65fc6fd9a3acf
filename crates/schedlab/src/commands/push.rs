//! `schedlab push --to URL`: copies the runs of the store `--db` names (with their fingerprints,
//! iterations, histograms, metric definitions, experiments and calibrations) into another store.
//! Runs are matched by their globally unique id, so a second push copies nothing twice, and each
//! run goes in in one transaction of the target, so an interrupted push leaves only whole runs.
//! A stop signal ends it between runs: it says what it copied and exits 128 + N.
use std::ops::ControlFlow;
use std::process::ExitCode;

use schedlab_core::sys;
use schedlab_core::words;
use schedlab_store::push::PushReport;
use schedlab_store::{Location, SqliteStore, Store, StoreError};

use crate::cli::{OutputFormat, PushArgs};
use crate::failure::{Failure, FailureKind};
use crate::output::{emit, say};
use crate::select::parse_when;
use crate::store_path::{db_location, open_reader};

pub fn push(args: &PushArgs) -> Result<ExitCode, Failure> {
    let since_ns = args
        .since
        .as_deref()
        .map(|text| parse_when("--since", text, sys::realtime_ns()))
        .transpose()?;
    let source_location = db_location(&args.db)?;
    if args.to.is_empty() {
        return Err(Failure::bad_input(if cfg!(feature = "postgres") {
            "--to is empty: give the store to copy into, a postgres:// URL or an SQLite path"
        } else {
            "--to is empty: give the SQLite file to copy into"
        }));
    }
    let target_location = Location::parse(&args.to).map_err(as_target)?;
    if same_store(&source_location, &target_location) {
        let (to, from) = (target_location.describe(), source_location.describe());
        let spelt = if to == from {
            String::new()
        } else {
            format!(" ({from})")
        };
        return Err(Failure::bad_input(format!(
            "--to {to} is the store --db names{spelt}; push copies into another one"
        )));
    }
    // Ctrl-C, `kill`, a hang-up: the run being copied is finished (its transaction commits or
    // rolls back whole either way) and the push stops before the next.
    sys::install_interrupt_handlers()
        .map_err(|e| Failure::failed(format!("cannot install signal handlers: {e}")))?;
    let source = open_source(&source_location)?;
    let mut target = schedlab_store::open_writer(&target_location, true).map_err(as_target)?;
    let report = schedlab_store::push::push(&*source, &mut *target, since_ns, &mut |_| {
        match sys::interrupt_signal() {
            Some(_) => ControlFlow::Break(()),
            None => ControlFlow::Continue(()),
        }
    })?;
    let (from, to) = (source.describe(), target.describe());
    let stopped_by = report.stopped.then(sys::interrupt_signal).flatten();
    emit(|out| match args.format {
        OutputFormat::Json => {
            schedlab_report::json::write_versioned(&to_json(&report, &from, &to, stopped_by), out)
        }
        OutputFormat::Text => write_text(out, &report, &from, &to),
    })?;
    if let Some(signal) = stopped_by {
        return Err(Failure::new(
            FailureKind::Interrupted { signal },
            format!(
                "push interrupted by {} after {} copied; the target holds whole runs only, and pushing again copies the rest",
                sys::signal_name(signal),
                words::counted(report.copied.len(), "run")
            ),
        ));
    }
    if !report.conflicts.is_empty() {
        return Err(Failure::reported(FailureKind::Failed));
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether two locations are one store: the same text, or SQLite files that are one file
/// under two names (a relative path, `sqlite:`, a symbolic or hard link). A file that does not
/// exist yet is no file `--db` reads.
fn same_store(source: &Location, target: &Location) -> bool {
    use std::os::unix::fs::MetadataExt;
    if source == target {
        return true;
    }
    match (source, target) {
        (Location::Sqlite(a), Location::Sqlite(b)) => {
            match (std::fs::metadata(a), std::fs::metadata(b)) {
                (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
                _ => false,
            }
        }
        // Without the `postgres` feature every store is a file.
        #[cfg_attr(not(feature = "postgres"), allow(unreachable_patterns))]
        _ => false,
    }
}

/// An error of the store `--to` names, naming `--to` where the store's own words name `--db`
/// (its messages are written for the store a command works on).
fn as_target(e: StoreError) -> Failure {
    match e {
        StoreError::BadLocation(why) => Failure::bad_input(format!("--to {why}")),
        StoreError::NotSchedlab { path, why } => Failure::bad_input(format!(
            "--to {}: not a schedlab results database ({why}); push into another store",
            path.display()
        )),
        StoreError::NotAFile { path, reason } | StoreError::Unwritable { path, reason } => {
            Failure::bad_input(format!(
                "--to {}: cannot write a results database there: {reason}",
                path.display()
            ))
        }
        // A server that refuses, is unreachable or is not schedlab's: the same failure, with the
        // message saying it is the target's (the store's messages speak of "the results
        // database", which a reader would take for --db's).
        e => {
            let failure = Failure::from(e);
            Failure::new(failure.kind, format!("--to: {}", failure.message))
        }
    }
}

/// The store runs are copied from, read-only. An SQLite file older than V8 has no run ids to
/// match runs by: it is upgraded first, as `schedlab db upgrade` would.
// Without the `postgres` feature every store is an SQLite file.
#[cfg_attr(not(feature = "postgres"), allow(irrefutable_let_patterns))]
fn open_source(location: &Location) -> Result<Box<dyn Store>, Failure> {
    if let Location::Sqlite(path) = location {
        let reader = SqliteStore::open_existing(path)?;
        if reader.schema_version() < schedlab_store::known_version() {
            drop(reader);
            let writer = SqliteStore::open_existing_writer(path)?;
            say(format_args!(
                "{}: schema version {} → {} (runs get their global ids)",
                path.display(),
                writer.found_version(),
                writer.schema_version()
            ));
        }
    }
    open_reader(location)
}

fn to_json(
    report: &PushReport,
    from: &str,
    to: &str,
    stopped_by: Option<i32>,
) -> serde_json::Value {
    serde_json::json!({
        "from": from,
        "to": to,
        "copied": report.copied.iter().map(|(source, target)| serde_json::json!({
            "run_id": source,
            "target_run_id": target,
        })).collect::<Vec<_>>(),
        "already_there": report.already_there,
        "still_running": report.still_running,
        "conflicts": report.conflicts.iter().map(|(id, why)| serde_json::json!({
            "run_id": id,
            "why": why,
        })).collect::<Vec<_>>(),
        "experiments_copied": report.experiments_copied,
        "experiments_updated": report.experiments_updated,
        "calibrations_copied": report.calibrations_copied,
        "calibrations_already_there": report.calibrations_already_there,
        "interrupted_by": stopped_by.map(sys::signal_name),
    })
}

fn write_text(
    out: &mut dyn std::io::Write,
    report: &PushReport,
    from: &str,
    to: &str,
) -> std::io::Result<()> {
    writeln!(out, "push {from} → {to}")?;
    writeln!(
        out,
        "runs          {} copied, {} already there",
        report.copied.len(),
        report.already_there
    )?;
    if !report.still_running.is_empty() {
        let ids: Vec<String> = report.still_running.iter().map(i64::to_string).collect();
        writeln!(
            out,
            "running       {} left for a later push (still running: {})",
            ids.len(),
            ids.join(", ")
        )?;
    }
    for (id, why) in &report.conflicts {
        writeln!(out, "not copied    run {id}: {why}")?;
    }
    writeln!(
        out,
        "experiments   {} copied, {} updated",
        report.experiments_copied, report.experiments_updated
    )?;
    writeln!(
        out,
        "calibrations  {} copied, {} already there",
        report.calibrations_copied, report.calibrations_already_there
    )?;
    if report.stopped {
        writeln!(
            out,
            "stopped       by a signal before the other runs; push again to copy the rest"
        )?;
    }
    Ok(())
}
