//! `schedlab runs`: stored runs, newest first, all of them or those `--host`, `--kernel` and
//! `--where` select.
use std::process::ExitCode;

use schedlab_report::compare::table::{Align, Table};
use schedlab_report::model::format_time_ns;

use crate::cli::{OutputFormat, RunsArgs};
use crate::failure::Failure;
use crate::output::emit;
use crate::select::selection;
use crate::store_path::{db_location, is_missing, open_reader};

pub fn runs(args: &RunsArgs) -> Result<ExitCode, Failure> {
    if args.limit == Some(0) {
        return Err(Failure::bad_input(
            "--limit must be at least 1, not 0 (leave it out for every run)",
        ));
    }
    let location = db_location(&args.db)?;
    let selection = selection(&args.select)?;
    let missing = is_missing(&location);
    let runs = if !missing {
        open_reader(&location)?.select_runs(&selection, args.limit)?
    } else {
        Vec::new()
    };
    emit(|out| match args.format {
        OutputFormat::Json => {
            let rows: Vec<serde_json::Value> = runs
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "id": r.id,
                        "label": r.label,
                        "suite": r.suite,
                        "what": r.what,
                        "status": r.status.as_str(),
                        "started_at": format_time_ns(r.started_at_ns),
                        "ended_at": r.ended_at_ns.map(format_time_ns),
                        "cases": r.case_count,
                        "measured_iterations": r.measured_iterations,
                        "kernel_release": r.kernel_release,
                        "boot_id": r.boot_id,
                        "hostname": r.hostname,
                    })
                })
                .collect();
            schedlab_report::json::write_versioned(&serde_json::json!({ "runs": rows }), out)
        }
        OutputFormat::Text => {
            if runs.is_empty() {
                return if missing {
                    // Said apart, since a mistyped --db reads as an empty store.
                    writeln!(
                        out,
                        "no stored runs: {} does not exist yet",
                        location.describe()
                    )
                } else if selection.is_empty() {
                    writeln!(out, "no stored runs in {}", location.describe())
                } else {
                    writeln!(out, "no stored run matches in {}", location.describe())
                };
            }
            let mut table = Table::new(&[
                ("id", Align::Right),
                ("label", Align::Left),
                ("status", Align::Left),
                ("started", Align::Left),
                ("cases", Align::Right),
                ("iters", Align::Right),
                ("host", Align::Left),
                ("kernel", Align::Left),
                ("what", Align::Left),
            ]);
            for r in &runs {
                table.push(vec![
                    r.id.to_string(),
                    r.label.clone().unwrap_or_else(|| "-".to_string()),
                    r.status.as_str().to_string(),
                    format_time_ns(r.started_at_ns),
                    r.case_count.to_string(),
                    r.measured_iterations.to_string(),
                    r.hostname.clone(),
                    r.kernel_release.clone(),
                    r.what.clone(),
                ]);
            }
            table.write_text(out)?;
            Ok(())
        }
    })?;
    Ok(ExitCode::SUCCESS)
}
