//! Suites: named lists of cases in TOML. The built-in ones are files embedded in the binary; a
//! user's own suite file has the same format (docs/suites.md).
use serde::Deserialize;

use crate::workload::WorkloadSpec;
use crate::{Error, Result};

/// A parsed suite file.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    #[serde(skip)]
    pub name: String,
    pub description: String,
    /// Measured iterations per case, unless the command line says otherwise.
    pub iterations: Option<u32>,
    /// Warm-up iterations per case, unless the command line says otherwise.
    pub warmup: Option<u32>,
    #[serde(rename = "case")]
    pub cases: Vec<WorkloadSpec>,
}

/// The suites compiled into schedlab, by name.
pub const BUILTIN_SUITES: &[(&str, &str)] = &[("quick", include_str!("../suites/quick.toml"))];

impl Suite {
    /// Parses suite text; errors name the line and column.
    pub fn parse(name: &str, text: &str) -> Result<Self> {
        let mut suite: Suite = toml::from_str(text)
            .map_err(|e| Error::invalid(format!("suite {name}: {}", one_line(&e, text))))?;
        suite.name = name.to_string();
        if suite.cases.is_empty() {
            return Err(Error::invalid(format!(
                "suite {name} has no [[case]] entries"
            )));
        }
        Ok(suite)
    }

    pub fn builtin(name: &str) -> Option<Self> {
        BUILTIN_SUITES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| Suite::parse(n, text).expect("built-in suites parse (tested)"))
    }

    /// A built-in suite by name, or else a suite file at that path.
    pub fn load(name_or_path: &str) -> Result<Self> {
        if let Some(suite) = Suite::builtin(name_or_path) {
            return Ok(suite);
        }
        let path = std::path::Path::new(name_or_path);
        if !path.exists() {
            let names: Vec<&str> = BUILTIN_SUITES.iter().map(|(n, _)| *n).collect();
            return Err(Error::invalid(format!(
                "no built-in suite or suite file named {name_or_path:?} (built-in: {})",
                names.join(", ")
            )));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::invalid(format!("cannot read suite file {name_or_path}: {e}")))?;
        Suite::parse(name_or_path, &text)
    }
}

/// toml's messages span several lines with a source excerpt; keep the position and the reason.
/// Errors inside a `[[case]]` table are reported by toml at the table (the workload tag makes serde
/// buffer the table), so an unknown key is looked up inside the table to point at its own line.
fn one_line(error: &toml::de::Error, text: &str) -> String {
    let reason = error.message().trim().replace('\n', " ");
    match error.span() {
        Some(span) => {
            let mut at = span.start.min(text.len());
            if let Some(key) = unknown_field(&reason) {
                // The span may cover only the `[[case]]` header: search to the next table.
                let rest = &text[at..];
                let table_end = rest[1..].find("\n[").map_or(rest.len(), |i| i + 1);
                let table = &rest[..table_end];
                if let Some(offset) = table.find(&format!("\n{key}")) {
                    at += offset + 1;
                }
            }
            let before = &text[..at];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("line {line}, column {column}: {reason}")
        }
        None => reason,
    }
}

fn unknown_field(reason: &str) -> Option<&str> {
    let rest = reason.strip_prefix("unknown field `")?;
    rest.split_once('`').map(|(key, _)| key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_suite_parses_and_validates() {
        for (name, _) in BUILTIN_SUITES {
            let suite = Suite::builtin(name).unwrap();
            for case in &suite.cases {
                case.validate().unwrap();
            }
        }
    }

    #[test]
    fn quick_has_pipe_and_messaging() {
        let quick = Suite::builtin("quick").unwrap();
        assert!(quick.cases.iter().any(|c| c.kind() == "pipe"));
        assert!(quick.cases.iter().any(|c| c.kind() == "messaging"));
    }

    #[test]
    fn errors_name_line_and_column() {
        let text = "description = \"x\"\n[[case]]\nworkload = \"pipe\"\nloopz = 3\n";
        let err = Suite::parse("mine.toml", text).unwrap_err().to_string();
        assert!(err.contains("line 4"), "{err}");
        assert!(err.contains("loopz"), "{err}");
    }

    #[test]
    fn hackbench_is_an_alias() {
        let text = "description = \"x\"\n[[case]]\nworkload = \"hackbench\"\ngroups = 2\n";
        let suite = Suite::parse("s", text).unwrap();
        assert_eq!(suite.cases[0].kind(), "messaging");
    }

    #[test]
    fn unknown_suite_lists_builtins() {
        let err = Suite::load("no-such-suite").unwrap_err().to_string();
        assert!(err.contains("quick"));
    }
}
