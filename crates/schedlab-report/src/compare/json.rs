//! The JSON format of comparisons: the whole model, one document (docs/json-schema.md).
use std::io::Write;

use schedlab_analysis::model::Comparison;

pub fn write(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, c)?;
    writeln!(out)
}
