//! `schedlab env`: the machine fingerprint stored with every run.
use std::process::ExitCode;

use schedlab_core::fingerprint::Fingerprint;

use super::emit;
use crate::cli::{EnvArgs, OutputFormat};
use crate::failure::Failure;

pub fn env(args: &EnvArgs) -> Result<ExitCode, Failure> {
    let fp = Fingerprint::collect();
    emit(|out| match args.format {
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &fp)?;
            writeln!(out)
        }
        OutputFormat::Text => {
            let value = serde_json::to_value(&fp).map_err(std::io::Error::other)?;
            for (key, v) in value.as_object().into_iter().flatten() {
                let shown = match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Null => "-".to_string(),
                    serde_json::Value::Array(items) if items.is_empty() => "-".to_string(),
                    serde_json::Value::Array(items) => items
                        .iter()
                        .map(|i| i.as_str().map_or(i.to_string(), str::to_string))
                        .collect::<Vec<_>>()
                        .join(", "),
                    other => other.to_string(),
                };
                writeln!(out, "{key:<18} {shown}")?;
            }
            Ok(())
        }
    })?;
    Ok(ExitCode::SUCCESS)
}
