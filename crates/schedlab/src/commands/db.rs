//! `schedlab db check` and `schedlab db upgrade`: the results database itself. `check` only reads
//! (it may run beside a benchmark) and says what is wrong and what to do; `upgrade` is the one
//! place an older schema is brought up to date on purpose, since readers never write.
use std::process::ExitCode;

use schedlab_core::words;
use schedlab_report::model::format_time_ns;
#[cfg(feature = "postgres")]
use schedlab_store::PgStore;
use schedlab_store::{known_version, CheckReport, Location, SqliteStore, OLDEST_READABLE_VERSION};

use crate::cli::{DbAction, DbArgs, DbCheckArgs, DbUpgradeArgs, OutputFormat};
use crate::failure::{Failure, FailureKind};
use crate::output::{emit, emit_line};
use crate::store_path::db_location;

pub fn db(args: &DbArgs) -> Result<ExitCode, Failure> {
    match &args.action {
        DbAction::Check(a) => check(a),
        DbAction::Upgrade(a) => upgrade(a),
    }
}

fn check(args: &DbCheckArgs) -> Result<ExitCode, Failure> {
    let location = db_location(&args.db)?;
    let report = match &location {
        Location::Sqlite(path) => SqliteStore::check(path, args.quick)?,
        #[cfg(feature = "postgres")]
        Location::Postgres(url) => PgStore::check(url)?,
    };
    let server = location.is_server();
    emit(|out| match args.format {
        OutputFormat::Json => {
            schedlab_report::json::write_versioned(&to_json(&report, server), out)
        }
        OutputFormat::Text => write_text(out, &report, server),
    })?;
    if !report.ok() {
        // The report on stdout names what is wrong.
        return Err(Failure::reported(FailureKind::Failed));
    }
    Ok(ExitCode::SUCCESS)
}

/// What checked the pages: SQLite's pragma, or nobody for a server, which keeps its own.
fn pragma_name(report: &CheckReport, server: bool) -> &'static str {
    if server {
        "none: PostgreSQL keeps its own pages sound"
    } else if report.quick {
        "quick_check"
    } else {
        "integrity_check"
    }
}

fn to_json(report: &CheckReport, server: bool) -> serde_json::Value {
    let runs: serde_json::Map<String, serde_json::Value> = report
        .runs_by_status
        .iter()
        .map(|(status, n)| (status.clone(), (*n).into()))
        .collect();
    let abandoned: Vec<serde_json::Value> = report
        .abandoned_runs
        .iter()
        .map(|r| {
            serde_json::json!({
                "id": r.id,
                "label": r.label,
                "started_at": format_time_ns(r.started_at_ns),
                "reason": r.reason,
            })
        })
        .collect();
    serde_json::json!({
        "path": report.path.display().to_string(),
        "ok": report.ok(),
        "check": pragma_name(report, server),
        "integrity_problems": report.integrity_problems,
        "database_schema_version": report.schema_version,
        "known_schema_version": known_version(),
        "oldest_readable_schema_version": OLDEST_READABLE_VERSION,
        "schema_problem": report.schema_problem,
        "runs_by_status": runs,
        "abandoned_runs": abandoned,
        "summaries": {
            "runs_compared": report.summaries.runs,
            "problems": report.summaries.problems,
            "more_problems": report.summaries.more_problems,
        },
    })
}

fn write_text(
    out: &mut dyn std::io::Write,
    report: &CheckReport,
    server: bool,
) -> std::io::Result<()> {
    writeln!(out, "database   {}", report.path.display())?;
    if report.integrity_problems.is_empty() {
        writeln!(out, "integrity  ok ({})", pragma_name(report, server))?;
    } else {
        writeln!(
            out,
            "integrity  {} found by {}:",
            words::counted(report.integrity_problems.len(), "problem"),
            pragma_name(report, server)
        )?;
        for problem in &report.integrity_problems {
            writeln!(out, "  {problem}")?;
        }
    }
    match (report.schema_version, &report.schema_problem) {
        (_, Some(problem)) => writeln!(out, "schema     cannot be trusted: {problem}")?,
        (Some(0), None) => writeln!(
            out,
            "schema     none yet (an empty file; the first run creates it)"
        )?,
        (Some(version), None) => writeln!(
            out,
            "schema     version {version} (this schedlab writes {} and reads {} and newer)",
            known_version(),
            OLDEST_READABLE_VERSION
        )?,
        (None, None) => writeln!(out, "schema     unreadable")?,
    }
    if !report.runs_by_status.is_empty() {
        let total: i64 = report.runs_by_status.iter().map(|(_, n)| n).sum();
        let parts: Vec<String> = report
            .runs_by_status
            .iter()
            .map(|(status, n)| match report.abandoned_runs.len() {
                // Stored as running, some are judged abandoned when read: say which the count holds.
                abandoned if status == "running" && abandoned > 0 => {
                    format!("{n} {status} ({abandoned} of them abandoned, below)")
                }
                _ => format!("{n} {status}"),
            })
            .collect();
        writeln!(out, "runs       {total}: {}", parts.join(", "))?;
    }
    if report.abandoned_runs.is_empty() {
        writeln!(out, "abandoned  none found")?;
    } else {
        writeln!(out, "abandoned  {}:", report.abandoned_runs.len())?;
        for r in &report.abandoned_runs {
            writeln!(
                out,
                "  run {} ({}) started {}: {}",
                r.id,
                r.label.as_deref().unwrap_or("-"),
                format_time_ns(r.started_at_ns),
                r.reason
            )?;
        }
    }
    write_summaries(out, report)?;
    if report.ok() {
        writeln!(out, "result     ok")
    } else if report.integrity_problems.is_empty() && report.schema_problem.is_none() {
        writeln!(
            out,
            "result     the summaries `history` and `changes` read differ from the stored \
             iterations, which are intact: a bug to report"
        )
    } else {
        writeln!(
            out,
            "result     damaged: stop writing to it and keep a copy; `sqlite3 {} .recover | sqlite3 NEW.db` may salvage the rows",
            report.path.display()
        )
    }
}

/// The summaries line: how many runs' summaries were compared with their iterations, and what
/// differed.
fn write_summaries(out: &mut dyn std::io::Write, report: &CheckReport) -> std::io::Result<()> {
    let check = &report.summaries;
    if report.schema_version.is_none_or(|v| v < 9) {
        return writeln!(out, "summaries  none before schema version 9");
    }
    let compared = words::counted(check.runs, "run");
    if check.problems.is_empty() {
        return writeln!(
            out,
            "summaries  ok ({compared} compared with their iterations)"
        );
    }
    writeln!(
        out,
        "summaries  {} differ from their iterations ({compared} compared):",
        check.problems.len() + check.more_problems
    )?;
    for problem in &check.problems {
        writeln!(out, "  {problem}")?;
    }
    if check.more_problems > 0 {
        writeln!(out, "  and {} more", check.more_problems)?;
    }
    Ok(())
}

fn upgrade(args: &DbUpgradeArgs) -> Result<ExitCode, Failure> {
    let location = db_location(&args.db)?;
    let (from, to) = match &location {
        Location::Sqlite(path) => {
            let store = SqliteStore::open_existing_writer(path)?;
            (store.found_version(), store.schema_version())
        }
        #[cfg(feature = "postgres")]
        Location::Postgres(url) => {
            let store = PgStore::open_writer(url)?;
            (store.found_version(), store.schema_version())
        }
    };
    let path = location.describe();
    if from == to {
        emit_line(format_args!(
            "{path}: schema version {to}, nothing to upgrade"
        ))?;
    } else {
        emit_line(format_args!("{path}: schema version {from} → {to}"))?;
    }
    Ok(ExitCode::SUCCESS)
}
