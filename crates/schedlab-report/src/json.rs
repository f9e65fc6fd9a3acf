//! The JSON format: the report model as one pretty-printed document, and the envelope every
//! other JSON output shares: one object that carries `schema_version` beside its fields
//! (docs/json-schema.md), so a field can be added, or the version raised, without breaking a
//! reader.
use std::io::Write;

use serde::Serialize;

use crate::{RunReport, SCHEMA_VERSION};

pub fn write(report: &RunReport, out: &mut dyn Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    writeln!(out)
}

/// `body`'s fields with `schema_version` first.
#[derive(Serialize)]
struct Versioned<'a, T: Serialize> {
    schema_version: u32,
    #[serde(flatten)]
    body: &'a T,
}

/// Writes `body`, which serializes as an object (a struct or a map), as one pretty-printed JSON
/// object with `schema_version` ([`SCHEMA_VERSION`]) before its fields. A list goes under a
/// key of its own (`{"runs": [...]}`), never bare.
pub fn write_versioned<T: Serialize>(body: &T, out: &mut dyn Write) -> std::io::Result<()> {
    let document = Versioned {
        schema_version: SCHEMA_VERSION,
        body,
    };
    serde_json::to_writer_pretty(&mut *out, &document)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_version_comes_first_beside_the_fields() {
        let mut out = Vec::new();
        write_versioned(&serde_json::json!({ "runs": [1, 2] }), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["schema_version"], SCHEMA_VERSION);
        assert_eq!(value["runs"], serde_json::json!([1, 2]));
        assert!(text.find("schema_version") < text.find("runs"), "{text}");
    }
}
