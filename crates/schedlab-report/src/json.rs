//! The JSON format: the report model as one pretty-printed document (docs/json-schema.md).
use std::io::Write;

use crate::RunReport;

pub fn write(report: &RunReport, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    writeln!(out)
}
