//! schedlab's reports: one model built from stored runs ([`model`]), and one module per output
//! format, each writing the model to any `io::Write`.
#![forbid(unsafe_code)]
// println! and eprintln! panic when the reader has gone (`| head`, a dropped ssh session's
// terminal); output goes through writers whose errors are handled.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]

pub mod calibration;
pub mod compare;
pub mod csv;
pub mod history;
pub mod json;
pub mod model;
pub mod number;
pub mod refusals;
pub mod text;
pub mod wrap;

pub use model::{RunReport, RUN_SCHEMA_VERSION, SCHEMA_VERSION};

/// The output formats of `run` and `show`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
}

/// Writes `report` in `format`.
pub fn write(
    report: &RunReport,
    format: Format,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        Format::Text => text::write(report, out),
        Format::Json => json::write(report, out),
    }
}
