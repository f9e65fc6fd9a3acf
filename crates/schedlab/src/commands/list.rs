//! `schedlab list`: workloads and built-in suites, one line each (or one JSON document).
use std::process::ExitCode;

use schedlab_core::suite::{Suite, BUILTIN_SUITES};
use schedlab_core::words;
use schedlab_core::workload::WORKLOADS;
use schedlab_report::compare::table::{Align, Table};

use crate::cli::{ListArgs, OutputFormat};
use crate::failure::Failure;
use crate::output::emit;

pub fn list(args: &ListArgs) -> Result<ExitCode, Failure> {
    let suites: Vec<(&str, Suite)> = BUILTIN_SUITES
        .iter()
        .map(|(name, _)| (*name, Suite::builtin(name).expect("built-in suites parse")))
        .collect();
    if args.format == OutputFormat::Json {
        let document = serde_json::json!({
            "workloads": WORKLOADS
                .iter()
                .map(|w| serde_json::json!({
                    "name": w.name,
                    "aliases": w.aliases,
                    "summary": w.summary,
                }))
                .collect::<Vec<_>>(),
            "suites": suites
                .iter()
                .map(|(name, suite)| serde_json::json!({
                    "name": name,
                    "description": suite.description,
                    "cases": suite.cases.len(),
                }))
                .collect::<Vec<_>>(),
        });
        emit(|out| schedlab_report::json::write_versioned(&document, out))?;
        return Ok(ExitCode::SUCCESS);
    }
    // No header: the first word of each line says what it is, as scripts read it.
    let mut table = Table::new(&[("", Align::Left), ("", Align::Left), ("", Align::Left)]);
    for w in WORKLOADS {
        let aliases = if w.aliases.is_empty() {
            String::new()
        } else {
            format!(" (alias {})", w.aliases.join(", "))
        };
        table.push(vec![
            "workload".to_string(),
            w.name.to_string(),
            format!("{}{aliases}", w.summary),
        ]);
    }
    for (name, suite) in &suites {
        table.push(vec![
            "suite".to_string(),
            name.to_string(),
            format!(
                "{} ({})",
                suite.description,
                words::counted(suite.cases.len(), "case")
            ),
        ]);
    }
    emit(|out| table.write_rows_text(out))?;
    Ok(ExitCode::SUCCESS)
}
