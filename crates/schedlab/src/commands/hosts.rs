//! `schedlab hosts`: the machines with stored runs, each with its newest run and hardware.
use std::process::ExitCode;

use schedlab_report::compare::table::{Align, Table};
use schedlab_report::model::format_time_ns;

use crate::cli::{HostsArgs, OutputFormat};
use crate::failure::Failure;
use crate::output::emit;
use crate::store_path::{db_location, open_reader};

pub fn hosts(args: &HostsArgs) -> Result<ExitCode, Failure> {
    let location = db_location(&args.db)?;
    let store = open_reader(&location)?;
    let hosts = store.hosts()?;
    // The hardware as the newest run saw it.
    let mut cpus = Vec::new();
    for h in &hosts {
        let fp = store.fingerprint(h.last.id)?;
        cpus.push((fp.cpu_model, fp.online_cpu_count));
    }
    emit(|out| match args.format {
        OutputFormat::Json => {
            let rows: Vec<serde_json::Value> = hosts
                .iter()
                .zip(&cpus)
                .map(|(h, (model, count))| {
                    serde_json::json!({
                        "hostname": h.hostname,
                        "runs": h.runs,
                        "kernels": h.kernels,
                        "first_started_at": format_time_ns(h.first_started_at_ns),
                        "cpu_model": model,
                        "online_cpu_count": count,
                        "last_run": {
                            "id": h.last.id,
                            "label": h.last.label,
                            "status": h.last.status.as_str(),
                            "started_at": format_time_ns(h.last.started_at_ns),
                            "kernel_release": h.last.kernel_release,
                            "what": h.last.what,
                        },
                    })
                })
                .collect();
            schedlab_report::json::write_versioned(&serde_json::json!({ "hosts": rows }), out)
        }
        OutputFormat::Text => {
            if hosts.is_empty() {
                return writeln!(out, "no stored runs in {}", location.describe());
            }
            // One word a header, and the CPU model, the one value with spaces, last: `awk`
            // finds every other column by its number.
            let mut table = Table::new(&[
                ("host", Align::Left),
                ("runs", Align::Right),
                ("kernels", Align::Right),
                ("cpus", Align::Right),
                ("last_run", Align::Right),
                ("started", Align::Left),
                ("status", Align::Left),
                ("kernel", Align::Left),
                ("label", Align::Left),
                ("cpu_model", Align::Left),
            ]);
            let or_dash = |text: &str| {
                if text.is_empty() {
                    "-".to_string()
                } else {
                    text.to_string()
                }
            };
            for (h, (model, count)) in hosts.iter().zip(&cpus) {
                table.push(vec![
                    or_dash(&h.hostname),
                    h.runs.to_string(),
                    h.kernels.to_string(),
                    count.to_string(),
                    h.last.id.to_string(),
                    format_time_ns(h.last.started_at_ns),
                    h.last.status.as_str().to_string(),
                    or_dash(&h.last.kernel_release),
                    h.last.label.as_deref().map_or("-".to_string(), or_dash),
                    or_dash(model),
                ]);
            }
            table.write_text(out)
        }
    })?;
    Ok(ExitCode::SUCCESS)
}
