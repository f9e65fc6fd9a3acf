//! The text format: per run a header line and the machine, then per case a compact table of every
//! metric's median, min, max and std% over the measured iterations — perf bench's numbers with
//! their spread.
use std::io::Write;

use schedlab_core::metric::Role;

use crate::model::{CaseView, MetricView, RunView};
use crate::RunReport;

pub fn write(report: &RunReport, out: &mut dyn Write) -> std::io::Result<()> {
    for (i, run) in report.runs.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        write_run(run, out)?;
    }
    Ok(())
}

fn write_run(run: &RunView, out: &mut dyn Write) -> std::io::Result<()> {
    let id = run
        .id
        .map_or("(not stored)".to_string(), |id| format!("run {id}"));
    let label = run
        .label
        .as_ref()
        .map_or(String::new(), |l| format!(" {l:?}"));
    let suite = run
        .suite
        .as_ref()
        .map_or(String::new(), |s| format!(" · suite {s}"));
    writeln!(
        out,
        "{id}{label}{suite} · {} · started {}",
        run.status.as_str(),
        run.started_at
    )?;
    let fp = &run.fingerprint;
    let smt = match fp.smt_active {
        Some(true) => "SMT on",
        Some(false) => "SMT off",
        None => "SMT n/a",
    };
    let governor = if fp.cpufreq_governors.is_empty() {
        "no cpufreq".into()
    } else {
        fp.cpufreq_governors.join("/")
    };
    writeln!(
        out,
        "kernel {} · {} CPUs · {smt} · {governor} · {} · boot {}",
        fp.kernel_release,
        fp.online_cpu_count,
        fp.libc,
        fp.boot_id.get(..8).unwrap_or(&fp.boot_id)
    )?;
    if let Some(error) = &run.error {
        writeln!(out, "error: {error}")?;
    }
    for case in &run.cases {
        writeln!(out)?;
        write_case(case, out)?;
    }
    Ok(())
}

fn write_case(case: &CaseView, out: &mut dyn Write) -> std::io::Result<()> {
    let warm = match case.warmup_iterations {
        0 => String::new(),
        1 => ", 1 warm-up".to_string(),
        n => format!(", {n} warm-ups"),
    };
    writeln!(
        out,
        "{}  ({} iterations{warm})",
        case.name, case.measured_iterations
    )?;
    if case.metrics.is_empty() {
        return writeln!(out, "  no iteration finished");
    }
    let width = case
        .metrics
        .iter()
        .map(|m| m.name.len())
        .max()
        .unwrap_or(6)
        .max(6);
    writeln!(
        out,
        "  {:<width$}  {:<6}  {:>12}  {:>12}  {:>12}  {:>7}",
        "metric", "better", "median", "min", "max", "std%"
    )?;
    let mut secondary_started = false;
    for metric in &case.metrics {
        if metric.role == Role::Secondary && !secondary_started {
            secondary_started = true;
            writeln!(out, "  (secondary)")?;
        }
        write_metric(metric, width, out)?;
    }
    Ok(())
}

fn write_metric(metric: &MetricView, width: usize, out: &mut dyn Write) -> std::io::Result<()> {
    let better = metric.better.as_str();
    match &metric.summary {
        Some(s) => writeln!(
            out,
            "  {:<width$}  {better:<6}  {:>12}  {:>12}  {:>12}  {:>7}",
            metric.name,
            format_value(s.median),
            format_value(s.min),
            format_value(s.max),
            s.std_pct.map_or("-".to_string(), |p| format!("{p:.1}%")),
        ),
        None => writeln!(out, "  {:<width$}  {better:<6}  {:>12}", metric.name, "-"),
    }
}

/// Four or five significant digits, without exponent notation for the usual ranges.
pub fn format_value(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 10_000.0 {
        format!("{value:.0}")
    } else if magnitude >= 100.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.3}")
    } else if magnitude == 0.0 {
        "0".to_string()
    } else {
        format!("{value:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_values_by_magnitude() {
        assert_eq!(format_value(188_419.4), "188419");
        assert_eq!(format_value(5.3071), "5.307");
        assert_eq!(format_value(123.45), "123.5");
        assert_eq!(format_value(0.01234), "0.0123");
        assert_eq!(format_value(0.0), "0");
    }
}
