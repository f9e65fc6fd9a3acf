//! The JSON format of comparisons: the whole model, one document (docs/json-schema.md).
use std::io::Write;

use schedlab_analysis::model::Comparison;
use schedlab_stats::ministat::MinistatVitals;

pub fn write(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, c)?;
    writeln!(out)
}

/// One dataset alone: `{"schema_version", "datasets": [{name, n, min, max, median, avg,
/// stddev}]}`.
pub fn write_dataset(
    name: &str,
    vitals: &MinistatVitals,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let document = serde_json::json!({
        "datasets": [{
            "name": name,
            "n": vitals.n,
            "min": vitals.min,
            "max": vitals.max,
            "median": vitals.median,
            "avg": vitals.avg,
            "stddev": vitals.stddev,
        }],
    });
    crate::json::write_versioned(&document, out)
}
