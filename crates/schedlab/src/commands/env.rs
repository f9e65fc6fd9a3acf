//! `schedlab env`: the machine fingerprint stored with every run.
use std::process::ExitCode;

use schedlab_core::fingerprint::Fingerprint;
use serde::Serialize;

use crate::cli::{EnvArgs, OutputFormat};
use crate::failure::Failure;
use crate::output::emit;

/// The version of `env --format json`: bumped when a field is renamed, removed or changes
/// meaning (docs/json-schema.md); fields may be added without a bump.
pub const ENV_SCHEMA_VERSION: u32 = 1;

/// The fingerprint's fields at the top level, as before the version was added, so readers of
/// the older output keep working.
#[derive(Serialize)]
struct EnvDocument<'a> {
    schema_version: u32,
    #[serde(flatten)]
    fingerprint: &'a Fingerprint,
}

pub fn env(args: &EnvArgs) -> Result<ExitCode, Failure> {
    let fp = Fingerprint::collect();
    emit(|out| match args.format {
        OutputFormat::Json => {
            let document = EnvDocument {
                schema_version: ENV_SCHEMA_VERSION,
                fingerprint: &fp,
            };
            serde_json::to_writer_pretty(&mut *out, &document)?;
            writeln!(out)
        }
        OutputFormat::Text => {
            let fields = fp.fields();
            let width = fields.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
            for (key, v) in fields {
                let shown = match v {
                    serde_json::Value::String(s) if s.is_empty() => "-".to_string(),
                    serde_json::Value::String(s) => s,
                    serde_json::Value::Null => "-".to_string(),
                    serde_json::Value::Array(items) if items.is_empty() => "-".to_string(),
                    serde_json::Value::Array(items) => items
                        .iter()
                        .map(|i| i.as_str().map_or(i.to_string(), str::to_string))
                        .collect::<Vec<_>>()
                        .join(" "),
                    serde_json::Value::Object(map) if map.is_empty() => "-".to_string(),
                    other => other.to_string(),
                };
                writeln!(out, "{key:<width$}  {shown}")?;
            }
            Ok(())
        }
    })?;
    Ok(ExitCode::SUCCESS)
}
