//! The text format: per run a header line and the machine, then per case a compact table of every
//! metric's median, min, max and std% over the measured iterations — perf bench's numbers with
//! their spread — and for a matrix, per scaling series, the medians against the parameter it
//! varies, as mmtests prints a benchmark per client count. Lines keep within a mail's 80
//! columns: sentences wrap, and the table's columns are as wide as their widest cell.
use std::io::Write;

use schedlab_core::fingerprint::{Fingerprint, GuestOrigin};
use schedlab_core::metric::{MetricShape, Role};
use schedlab_core::words;

use crate::model::RunView;
use crate::number::format_value;
use crate::wrap::{wrap, WIDTH};
use crate::RunReport;
use schedlab_analysis::case_summary::{CaseSummary, MetricSummary, RunScaling};
use schedlab_analysis::latency_table::LatencyTable;

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
    write_run_line(run, out)?;
    let fp = &run.fingerprint;
    write_machine(fp, out)?;
    if let Some(guest) = &fp.guest {
        write_guest(guest, fp.numa_nodes, out)?;
    }
    if let Some(error) = &run.error {
        write_wrapped(&format!("error: {error}"), 2, out)?;
    }
    for case in &run.cases {
        writeln!(out)?;
        write_case(case, out)?;
    }
    for series in &run.scaling {
        writeln!(out)?;
        write_scaling(series, out)?;
    }
    Ok(())
}

/// The run's first line: its id and label, suite and order, status and start.
fn write_run_line(run: &RunView, out: &mut dyn Write) -> std::io::Result<()> {
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
    let order = run.order_seed.map_or(String::new(), |seed| {
        format!(" (random order, --order-seed {seed})")
    });
    write_wrapped(
        &format!(
            "{id}{label}{suite}{order} · {} · started {}",
            run.status.as_str(),
            run.started_at
        ),
        2,
        out,
    )
}

/// The machine the run measured, or for an imported run where it came from and what is known.
fn write_machine(fp: &Fingerprint, out: &mut dyn Write) -> std::io::Result<()> {
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
    let Some(imported) = &fp.imported else {
        return write_wrapped(
            &format!(
                "kernel {} · {} CPUs · {smt} · {governor} · {} · boot {}",
                fp.kernel_release,
                fp.online_cpu_count,
                fp.libc,
                fp.boot_id.get(..8).unwrap_or(&fp.boot_id)
            ),
            2,
            out,
        );
    };
    // Not measured here: say where from and what is known, not empty fields as facts.
    let known = |field: &str, value: &str| {
        if imported.known.contains_key(field) {
            value.to_string()
        } else {
            "unknown".to_string()
        }
    };
    write_wrapped(
        &format!(
            "imported: {} {} from {} · host {} · kernel {} · machine {}",
            imported.tool,
            imported
                .tool_version
                .as_deref()
                .unwrap_or("(version unknown)"),
            imported.files.join(", "),
            known("hostname", &fp.hostname),
            known("kernel_release", &fp.kernel_release),
            if imported.known.contains_key("cpu_model") {
                format!(
                    "{} · {} CPUs · {smt} · {governor}",
                    fp.cpu_model, fp.online_cpu_count
                )
            } else {
                "unknown".to_string()
            }
        ),
        2,
        out,
    )
}

/// A QEMU guest that `campaign run` booted: on what, and whether its timings are a CPU's.
fn write_guest(guest: &GuestOrigin, numa_nodes: u32, out: &mut dyn Write) -> std::io::Result<()> {
    let emulated = if guest.accelerator == "tcg" {
        " (emulated: its timings are QEMU's, not the kernel's)"
    } else {
        ""
    };
    writeln!(
        out,
        "guest of {} under {}{emulated} · {} NUMA node{} · booted in {:.1} s",
        guest.host.hostname,
        guest.accelerator,
        numa_nodes,
        if numa_nodes == 1 { "" } else { "s" },
        guest.boot_ms as f64 / 1e3
    )
}

/// Table lines stay within this many columns; more metrics continue in another block.
const SCALING_WIDTH: usize = WIDTH;

/// `text` wrapped at the mail's width, the lines after the first indented by `indent`.
fn write_wrapped(text: &str, indent: usize, out: &mut dyn Write) -> std::io::Result<()> {
    for line in wrap(text, WIDTH, indent) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// One scaling series: a row per value of the parameter, a column per primary metric holding
/// `median ±std%`, in blocks as wide as a terminal.
fn write_scaling(series: &RunScaling, out: &mut dyn Write) -> std::io::Result<()> {
    let g = &series.grouping;
    let fixed = g.fixed_label();
    write_wrapped(
        &format!(
            "scaling: {} over {} (median ±std% of the iterations){}{fixed}",
            g.workload,
            g.parameter,
            if fixed.is_empty() { "" } else { " · " }
        ),
        2,
        out,
    )?;
    let values: Vec<String> = g.values.iter().map(|v| format!("{v}")).collect();
    let first = values
        .iter()
        .map(String::len)
        .chain([g.parameter.len()])
        .max()
        .unwrap_or(0);
    let columns: Vec<(String, Vec<String>)> = series
        .metrics
        .iter()
        .map(|m| {
            let cells = m
                .median
                .iter()
                .zip(&m.std_pct)
                .map(|(median, std)| match (median, std) {
                    (Some(v), Some(p)) => format!("{} ±{p:.1}%", format_value(*v)),
                    (Some(v), None) => format_value(*v),
                    (None, _) => "-".to_string(),
                })
                .collect();
            (m.metric.clone(), cells)
        })
        .collect();
    if columns.is_empty() {
        return writeln!(out, "  no primary metric was measured");
    }
    let chars = |s: &String| s.chars().count();
    let width = |(name, cells): &(String, Vec<String>)| {
        cells
            .iter()
            .map(chars)
            .chain([chars(name)])
            .max()
            .unwrap_or(0)
    };
    let mut blocks: Vec<Vec<&(String, Vec<String>)>> = vec![Vec::new()];
    let mut used = 2 + first;
    for column in &columns {
        let w = 2 + width(column);
        let block = blocks.last_mut().expect("never empty");
        if !block.is_empty() && used + w > SCALING_WIDTH {
            blocks.push(Vec::new());
            used = 2 + first;
        }
        used += w;
        blocks.last_mut().expect("never empty").push(column);
    }
    for (b, block) in blocks.iter().enumerate() {
        if b > 0 {
            writeln!(out)?;
        }
        write!(out, "  {:>first$}", g.parameter)?;
        for column in block {
            write!(out, "  {:>w$}", column.0, w = width(column))?;
        }
        writeln!(out)?;
        for (i, value) in values.iter().enumerate() {
            write!(out, "  {value:>first$}")?;
            for column in block {
                write!(out, "  {:>w$}", column.1[i], w = width(column))?;
            }
            writeln!(out)?;
        }
    }
    Ok(())
}

fn write_case(case: &CaseSummary, out: &mut dyn Write) -> std::io::Result<()> {
    let warm = match case.warmup_iterations {
        0 => String::new(),
        n => format!(", {}", words::counted(n, "warm-up")),
    };
    write_wrapped(
        &format!(
            "{}  ({}{warm})",
            case.name,
            words::counted(case.measured_iterations, "iteration")
        ),
        2,
        out,
    )?;
    if let Some(error) = &case.error {
        write_wrapped(&format!("  failed: {error}"), 4, out)?;
    }
    if case.metrics.is_empty() {
        return writeln!(out, "  no iteration finished");
    }
    let cells: Vec<[String; 6]> = case.metrics.iter().map(metric_cells).collect();
    let header = ["metric", "better", "median", "min", "max", "std%"].map(String::from);
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in &cells {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    write_metric_line(&header, &widths, out)?;
    let mut secondary_started = false;
    for (metric, row) in case.metrics.iter().zip(&cells) {
        if metric.role == Role::Secondary && !secondary_started {
            secondary_started = true;
            writeln!(out, "  (secondary)")?;
        }
        write_metric_line(row, &widths, out)?;
    }
    if !case.latency_tables.is_empty() {
        write_latency_note(case.measured_iterations, out)?;
    }
    for table in &case.latency_tables {
        write_latency_table(table, out)?;
    }
    Ok(())
}

/// Says what the metric table and the schbench-style tables each summarise: both print a p99 of
/// the same run, and over several iterations the two differ.
fn write_latency_note(iterations: usize, out: &mut dyn Write) -> std::io::Result<()> {
    if iterations <= 1 {
        return write_wrapped(
            "  (tables below: percentiles of the one iteration's samples, as schbench prints them)",
            3,
            out,
        );
    }
    write_wrapped(
        &format!(
            "  (metrics above: median, min and max over the {iterations} iterations of each \
             iteration's value, e.g. its own p99)"
        ),
        3,
        out,
    )?;
    write_wrapped(
        "  (tables below: percentiles of all iterations' samples merged, as schbench prints them)",
        3,
        out,
    )
}

/// schbench's percentile block, from the merged histograms: each percentile with the samples
/// since the previous one, the starred one schbench wants you to read, then min and max.
fn write_latency_table(table: &LatencyTable, out: &mut dyn Write) -> std::io::Result<()> {
    // Whole numbers like schbench's for request rates; latencies keep their sub-µs part.
    let show = |v: f64| match table.unit.as_str() {
        "usec" if v < 1.0 => format!("{v:.3}"),
        "usec" => format!("{v:.1}"),
        _ => format!("{v:.0}"),
    };
    // schbench's own line: that the iterations were merged is said above the tables.
    write_wrapped(
        &format!(
            "  {} percentiles ({}) runtime {} (s) ({} total samples)",
            table.title, table.unit, table.runtime_sec, table.total_samples
        ),
        4,
        out,
    )?;
    for row in &table.rows {
        let value = show(row.value);
        writeln!(
            out,
            // schbench's own line, "(1 samples)" included, so scripts that read schbench read it.
            "    {}{:2.1}th: {value:<10} ({} samples)",
            if row.starred { "* " } else { "  " },
            row.percentile,
            row.samples
        )?;
    }
    writeln!(
        out,
        "      min={}, max={}",
        show(table.min),
        show(table.max)
    )
}

/// A metric's cells: name, direction, median, min, max and std%.
fn metric_cells(metric: &MetricSummary) -> [String; 6] {
    let better = metric.better.as_str().to_string();
    match &metric.summary {
        Some(s) => [
            metric.name.clone(),
            better,
            format_of(metric.shape, s.median),
            format_of(metric.shape, s.min),
            format_of(metric.shape, s.max),
            s.std_pct.map_or("-".to_string(), |p| format!("{p:.1}%")),
        ],
        None => [
            metric.name.clone(),
            better,
            "-".into(),
            String::new(),
            String::new(),
            String::new(),
        ],
    }
}

/// One line of the metric table: the name and direction left, the numbers right.
fn write_metric_line(
    cells: &[String; 6],
    widths: &[usize; 6],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut line = format!(
        "  {:<a$}  {:<b$}",
        cells[0],
        cells[1],
        a = widths[0],
        b = widths[1]
    );
    for (cell, width) in cells.iter().zip(widths).skip(2) {
        line.push_str(&format!("  {cell:>width$}"));
    }
    writeln!(out, "{}", line.trim_end())
}

/// A value of a metric of `shape`: a count as a whole number (`81`, not `81.000`; the median of
/// an even number of counts, halfway between two, rounded: `55`, not `54.500`), anything else as
/// [`format_value`].
fn format_of(shape: MetricShape, value: f64) -> String {
    if shape == MetricShape::Count {
        format!("{:.0}", value.round())
    } else {
        format_value(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_counts_its_iterations_in_words() {
        let line = |measured, warmup| {
            let case = CaseSummary {
                name: "pipe:process loops=1000".into(),
                workload: "pipe".into(),
                params: serde_json::Value::Null,
                background: Vec::new(),
                measured_iterations: measured,
                warmup_iterations: warmup,
                error: None,
                metrics: Vec::new(),
                latency_tables: Vec::new(),
            };
            let mut out = Vec::new();
            write_case(&case, &mut out).unwrap();
            String::from_utf8(out)
                .unwrap()
                .lines()
                .next()
                .unwrap()
                .to_string()
        };
        assert_eq!(line(1, 0), "pipe:process loops=1000  (1 iteration)");
        assert_eq!(
            line(0, 1),
            "pipe:process loops=1000  (0 iterations, 1 warm-up)"
        );
        assert_eq!(
            line(5, 2),
            "pipe:process loops=1000  (5 iterations, 2 warm-ups)"
        );
    }

    #[test]
    fn latency_table_reads_like_schbench() {
        use schedlab_analysis::latency_table::LatencyRow;
        let row = |percentile, value, samples, starred| LatencyRow {
            percentile,
            value,
            samples,
            starred,
        };
        let table = LatencyTable {
            title: "Wakeup Latencies".into(),
            unit: "usec".into(),
            attachment: "wakeup_latency_ns".into(),
            iterations: 5,
            runtime_sec: 10,
            total_samples: 1000,
            rows: vec![row(50.0, 9.3, 500, false), row(99.0, 52.0, 490, true)],
            min: 0.042,
            max: 8057.0,
        };
        let mut out = Vec::new();
        write_latency_table(&table, &mut out).unwrap();
        let expected = concat!(
            "  Wakeup Latencies percentiles (usec) runtime 10 (s) (1000 total samples)\n",
            "      50.0th: 9.3        (500 samples)\n",
            "    * 99.0th: 52.0       (490 samples)\n",
            "      min=0.042, max=8057.0\n",
        );
        assert_eq!(String::from_utf8(out).unwrap(), expected);
    }

    /// The metric table and the schbench-style tables print different p99s of one run; the case
    /// says which is which, and only where there are tables.
    #[test]
    fn a_case_with_tables_says_what_each_summarises() {
        let text = |measured, tables: Vec<LatencyTable>| {
            let case = CaseSummary {
                name: "wakeup".into(),
                workload: "wakeup".into(),
                params: serde_json::Value::Null,
                background: Vec::new(),
                measured_iterations: measured,
                warmup_iterations: 0,
                error: None,
                // A case with no metric prints no tables either.
                metrics: vec![MetricSummary {
                    name: "wakeup_p99_usec".into(),
                    unit: "usec".into(),
                    better: schedlab_core::metric::Better::Lower,
                    role: Role::Primary,
                    shape: MetricShape::Quantile(99.0),
                    quantile_p: Some(99.0),
                    distribution: Some("wakeup".into()),
                    values: vec![1.0],
                    warmup_values: Vec::new(),
                    summary: None,
                }],
                latency_tables: tables,
            };
            let mut out = Vec::new();
            write_case(&case, &mut out).unwrap();
            String::from_utf8(out).unwrap()
        };
        let table = LatencyTable {
            title: "Wakeup Latencies".into(),
            unit: "usec".into(),
            attachment: "wakeup_latency_ns".into(),
            iterations: 3,
            runtime_sec: 1,
            total_samples: 1,
            rows: Vec::new(),
            min: 1.0,
            max: 1.0,
        };
        let three = text(3, vec![table.clone()]);
        assert!(three.contains(
            "  (metrics above: median, min and max over the 3 iterations of each iteration's\n   \
             value, e.g. its own p99)\n  (tables below: percentiles of all iterations' samples \
             merged, as schbench\n   prints them)\n  Wakeup Latencies"
        ), "{three}");
        let one = text(1, vec![table]);
        assert!(!one.contains("metrics above"), "{one}");
        assert!(one.contains("(tables below: percentiles of the one iteration's samples"));
        assert!(!text(3, Vec::new()).contains("tables below"));
    }

    #[test]
    fn whole_counts_read_as_whole_numbers() {
        assert_eq!(format_of(MetricShape::Count, 81.0), "81");
        assert_eq!(format_of(MetricShape::Count, 3643.0), "3643");
        // The median of an even number of counts may fall between two: a count all the same.
        assert_eq!(format_of(MetricShape::Count, 3643.5), "3644");
        assert_eq!(format_of(MetricShape::Count, 54.5), "55");
        assert_eq!(format_of(MetricShape::Scalar, 81.0), "81.000");
    }
}
