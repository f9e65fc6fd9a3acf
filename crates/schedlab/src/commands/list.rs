//! `schedlab list`: workloads and built-in suites, one line each.
use std::process::ExitCode;

use schedlab_core::suite::{Suite, BUILTIN_SUITES};
use schedlab_core::workload::WORKLOADS;

use super::emit;
use crate::failure::Failure;

pub fn list() -> Result<ExitCode, Failure> {
    emit(|out| {
        for w in WORKLOADS {
            let aliases = if w.aliases.is_empty() {
                String::new()
            } else {
                format!(" (alias {})", w.aliases.join(", "))
            };
            writeln!(out, "workload  {:<12} {}{aliases}", w.name, w.summary)?;
        }
        for (name, _) in BUILTIN_SUITES {
            let suite = Suite::builtin(name).expect("built-in suites parse");
            writeln!(
                out,
                "suite     {:<12} {} ({} cases)",
                name,
                suite.description,
                suite.cases.len()
            )?;
        }
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}
