//! `schedlab list`: workloads and built-in suites, one line each.
use std::process::ExitCode;

use schedlab_core::suite::{Suite, BUILTIN_SUITES};
use schedlab_core::words;
use schedlab_core::workload::WORKLOADS;
use schedlab_report::compare::table::{Align, Table};

use crate::failure::Failure;
use crate::output::emit;

pub fn list() -> Result<ExitCode, Failure> {
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
    for (name, _) in BUILTIN_SUITES {
        let suite = Suite::builtin(name).expect("built-in suites parse");
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
