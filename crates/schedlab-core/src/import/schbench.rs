//! schbench's output: the text it prints on stderr, or the JSON `-j FILE` writes.
//!
//! The text is tables — `Wakeup Latencies percentiles (usec) runtime 5 (s) (247 total samples)`,
//! a line per percentile, `min=…, max=…` — for wake-up and request latencies and requests per
//! second, then `average rps:` (or `final rps goal was` with -A) and `sched delay:`. With a
//! runtime over `-i` seconds the same tables come every interval, ending `current rps:`; those are
//! progress, not results, and are skipped. Pipe mode (-p) prints the wake-up table and `avg worker
//! transfer: … ops/sec …MB/s`. Each final summary is one result. The lines schbench prints about
//! its set-up (`setting worker threads to 2`, `warmup done, zeroing stats`, pinning) are skipped;
//! any other line is an error.
//!
//! schbench before its April 2023 rework (seed 000's 2021 logs) printed one table, `Latency
//! percentiles (usec) runtime 5 (s) (97 total samples)` with seven percentiles (50th to 99.9th) and
//! `min=…, max=…`, `*99.0th: 20 (24391 samples)` until December 2021 and `* 99.0th: 20         (…)`
//! since; before October 2020 the header was `Latency percentiles (usec)` and a row `*99.0th: 20`
//! (`*99.0000th: 20` before August 2019). Its latencies are wake-up latencies, from the waker's timestamp to the woken worker
//! running (from December 2021 taken after the worker's `-c` spin, less the spin's length; with
//! `-n` after its matrix work, which the output does not show). The output of -R and -A (request
//! times) and -a (several thread counts) is refused. Normal mode's table has nothing after it, and
//! its interval reports are the same table: a table followed by one with a longer runtime is
//! progress, any other is a result. Pipe mode prints no interval reports, and its table ends with
//! the `avg worker transfer:` line the new format prints too.
//!
//! The JSON is one object (`{"normal": {"version", "hostname", "cmdline", …}, "int": {"time",
//! "wakeup_latency_pct50.0", …, "runtime"}}`); a file of several objects is one result each. It
//! names the kernel and host, which the import keeps. Keys schedlab has no metric for (the
//! minima, a percentile it does not know) are left out.
use serde_json::Value;

use super::parsed::{number, ParseError, Parsed, ToolResult};
use crate::metric::{Better, Measurement, MetricDef, MetricShape};

const fn latency(name: &'static str, distribution: &'static str, p: f64) -> MetricDef {
    MetricDef::primary(name, "usec", Better::Lower)
        .quantile(distribution, p)
        .optional()
}

const fn latency_max(name: &'static str, distribution: &'static str) -> MetricDef {
    MetricDef::primary(name, "usec", Better::Lower)
        .max_of(distribution)
        .optional()
}

const fn rps(name: &'static str, p: f64) -> MetricDef {
    MetricDef::primary(name, "requests/sec", Better::Higher)
        .quantile("rps", p)
        .optional()
}

/// Named as the `wakeup` workload names the same quantities; the 20th percentiles, the 75th, 95th
/// and 99.5th (only schbench before 2023 printed them), the RPS tails and the per-worker rates are
/// schbench's own. All optional: which ones a result has depends on the mode, on what took samples
/// and on the version of schbench.
pub const METRICS: &[MetricDef] = &[
    latency("wakeup_p20_usec", "wakeup", 20.0),
    latency("wakeup_p50_usec", "wakeup", 50.0),
    latency("wakeup_p75_usec", "wakeup", 75.0),
    latency("wakeup_p90_usec", "wakeup", 90.0),
    latency("wakeup_p95_usec", "wakeup", 95.0),
    latency("wakeup_p99_usec", "wakeup", 99.0),
    latency("wakeup_p99_5_usec", "wakeup", 99.5),
    latency("wakeup_p99_9_usec", "wakeup", 99.9),
    latency_max("wakeup_max_usec", "wakeup"),
    latency("request_p20_usec", "request", 20.0),
    latency("request_p50_usec", "request", 50.0),
    latency("request_p90_usec", "request", 90.0),
    latency("request_p99_usec", "request", 99.0),
    latency("request_p99_9_usec", "request", 99.9),
    latency_max("request_max_usec", "request"),
    rps("requests_p20_per_sec", 20.0),
    rps("requests_p50_per_sec", 50.0),
    rps("requests_p90_per_sec", 90.0),
    rps("requests_p99_per_sec", 99.0),
    rps("requests_p99_9_per_sec", 99.9),
    MetricDef::primary("requests_avg_per_sec", "requests/sec", Better::Higher).optional(),
    MetricDef::primary_count("wakeup_samples_count", Better::Higher).optional(),
    MetricDef::primary_count("request_samples_count", Better::Higher).optional(),
    MetricDef::primary("message_sched_delay_usec", "usec", Better::Lower).optional(),
    MetricDef::primary("worker_sched_delay_usec", "usec", Better::Lower).optional(),
    MetricDef::primary("worker_ops_per_sec", "ops/sec", Better::Higher).optional(),
    MetricDef::primary("worker_mib_per_sec", "MiB/sec", Better::Higher)
        .multiple_of(MetricDef::primary(
            "worker_ops_per_sec",
            "ops/sec",
            Better::Higher,
        ))
        .optional(),
];

fn def(name: &str) -> MetricDef {
    *METRICS
        .iter()
        .find(|d| d.name == name)
        .expect("a metric of the table")
}

fn quantile(distribution: &str, p: f64) -> Option<MetricDef> {
    METRICS
        .iter()
        .find(|d| d.distribution == Some(distribution) && d.shape == MetricShape::Quantile(p))
        .copied()
}

fn max_of(distribution: &str) -> Option<MetricDef> {
    METRICS
        .iter()
        .find(|d| d.distribution == Some(distribution) && d.shape == MetricShape::Max)
        .copied()
}

pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    if text.trim_start().starts_with('{') {
        parse_json(text)
    } else {
        parse_text(text)
    }
}

/// The distribution a table header names, and its total sample count.
fn table_header(line: &str) -> Option<(&'static str, Option<u64>)> {
    let (label, rest) = line.split_once(" percentiles (")?;
    let distribution = match label {
        "Wakeup Latencies" => "wakeup",
        "Request Latencies" => "request",
        "RPS" => "rps",
        _ => return None,
    };
    // `usec) runtime 5 (s) (247 total samples)`
    let samples = rest
        .rsplit_once('(')
        .and_then(|(_, tail)| tail.split_whitespace().next())
        .and_then(|n| n.parse().ok());
    Some((distribution, samples))
}

/// `* 99.0th: 16208      (22 samples)` → (99.0, 16208).
fn percentile_row(line: &str) -> Option<(f64, f64)> {
    let line = line.trim_start_matches('*').trim();
    let (p, rest) = line.split_once("th:")?;
    let p = number(p)?;
    let value = number(rest.split_whitespace().next()?)?;
    (p > 0.0 && p < 100.0).then_some((p, value))
}

/// `min=3, max=24839` → (3, 24839).
fn min_max(line: &str) -> Option<(f64, f64)> {
    let (min, max) = line.split_once(',')?;
    let min = number(min.trim().strip_prefix("min=")?)?;
    let max = number(max.trim().strip_prefix("max=")?)?;
    Some((min, max))
}

/// The percentiles schbench printed before its 2023 rework, in its order: it had no option to
/// change them, so a table without all seven was cut or edited.
const OLD_PERCENTILES: [f64; 7] = [50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9];

const OLD_HEADER: &str = "Latency percentiles (";

/// The header of a table of schbench before 2023.
#[derive(Debug, PartialEq)]
struct OldHeader {
    /// Not printed before October 2020, when schbench printed no interval reports.
    runtime_sec: Option<u64>,
    total_samples: Option<u64>,
}

/// `Latency percentiles (usec) runtime 5 (s) (97 total samples)`, or the same without the total,
/// or (before October 2020) without the runtime either.
fn old_table_header(line: &str) -> Option<OldHeader> {
    let rest = line.strip_prefix("Latency percentiles (usec)")?;
    let words: Vec<&str> = rest.split_whitespace().collect();
    let (runtime, total) = match words.as_slice() {
        [] => (None, None),
        ["runtime", runtime, "(s)"] => (Some(runtime), None),
        ["runtime", runtime, "(s)", total, "total", "samples)"] => {
            (Some(runtime), Some(total.strip_prefix('(')?))
        }
        _ => return None,
    };
    Some(OldHeader {
        runtime_sec: runtime.map(|r| r.parse()).transpose().ok()?,
        total_samples: total.map(|t| t.parse()).transpose().ok()?,
    })
}

/// Why a line schbench before 2023 printed only with -R, -A or -a is refused: no metric here is
/// what those modes' tables hold.
fn old_mode_not_read(line: &str) -> Option<&'static str> {
    if line.starts_with("final rps was ") || line.starts_with("rps: ") {
        Some(
            "schbench before 2023 printed this with -R or -A, whose table holds request times \
             less -c's think time, not wake-up latencies; that mode is not read",
        )
    } else if (line.starts_with("cputime ") && line.contains(" threads "))
        || line.starts_with("autobench rps ")
    {
        Some(
            "schbench before 2023 printed this with -a, whose table is of the last of the thread \
             counts it tried; that mode is not read",
        )
    } else {
        None
    }
}

/// `93916.92 ops/sec 91.72MB/s` (after `avg worker transfer:`) → (ops/sec, MiB/sec): per worker,
/// sizes in powers of 1024.
fn worker_transfer(rest: &str) -> Result<(f64, f64), &'static str> {
    let words: Vec<&str> = rest.split_whitespace().collect();
    let (ops, size) = match words.as_slice() {
        [ops, "ops/sec", size] => (number(ops), size.strip_suffix("/s")),
        _ => (None, None),
    };
    let ops = ops.ok_or("an `avg worker transfer` line")?;
    let mib = size
        .and_then(mib_of)
        .ok_or("a transfer rate such as 91.72MB/s")?;
    Ok((ops, mib))
}

fn cut_short(start: usize, what: &str) -> ParseError {
    ParseError::at(
        start,
        format!("the schbench {what} that starts here has no end: the output was cut short"),
    )
}

/// A table of schbench before 2023.
struct OldTable {
    runtime_sec: Option<u64>,
    summary: Summary,
    percentiles_read: usize,
}

/// The tables of schbench before 2023 not yet known to be results or progress.
#[derive(Default)]
struct OldTables {
    /// The table whose rows come next.
    open: Option<OldTable>,
    /// The last complete table: a result unless one with a longer runtime follows.
    latest: Option<OldTable>,
    /// The complete table `latest` followed with a longer runtime: progress, unless `latest` ends
    /// with `avg worker transfer:`. Pipe mode prints no progress, so this was then a run's last.
    superseded: Option<OldTable>,
}

impl OldTables {
    fn begin(&mut self, n: usize, header: OldHeader, results: &mut Vec<ToolResult>) {
        let longer = |latest: &OldTable| match (header.runtime_sec, latest.runtime_sec) {
            (Some(this), Some(before)) => this > before,
            _ => false,
        };
        match self.latest.take() {
            Some(latest) if longer(&latest) => self.superseded = Some(latest),
            latest => {
                self.latest = latest;
                self.finish(results);
            }
        }
        let samples = header
            .total_samples
            .map(|total| def("wakeup_samples_count").value(total as f64));
        let summary = Summary {
            start: Some(n),
            measurements: samples.into_iter().collect(),
            ..Summary::default()
        };
        self.open = Some(OldTable {
            runtime_sec: header.runtime_sec,
            summary,
            percentiles_read: 0,
        });
    }

    /// A line of the open table.
    fn row(&mut self, n: usize, line: &str) -> Result<(), ParseError> {
        let bad = |what: &str| ParseError::at(n, format!("{what}: {line:?}"));
        let table = self.open.as_mut().expect("an open table");
        let start = table.summary.start.unwrap_or(n);
        if line.contains("th:") {
            let (p, value) = percentile_row(line).ok_or_else(|| bad("a percentile row"))?;
            let expected = OLD_PERCENTILES.get(table.percentiles_read).copied();
            if expected != Some(p) {
                return Err(bad(&format!(
                    "a {p}th percentile where schbench before 2023 printed {}",
                    expected.map_or("`min=…, max=…`".to_string(), |e| format!("its {e}th"))
                )));
            }
            table.percentiles_read += 1;
            let def = quantile("wakeup", p).expect("a metric for each old percentile");
            table.summary.push(n, def.value(value))
        } else if line.starts_with("min=") {
            let (_, max) = min_max(line).ok_or_else(|| bad("a `min=…, max=…` line"))?;
            if table.percentiles_read < OLD_PERCENTILES.len() {
                return Err(bad(&format!(
                    "the table that starts at line {start} ends after {} of the {} percentiles \
                     schbench printed before 2023",
                    table.percentiles_read,
                    OLD_PERCENTILES.len()
                )));
            }
            table.summary.push(n, def("wakeup_max_usec").value(max))?;
            self.latest = self.open.take();
            Ok(())
        } else {
            Err(cut_short(start, "table"))
        }
    }

    /// Pipe mode's last line: `latest` is its table.
    fn transfer(
        &mut self,
        n: usize,
        (ops, mib): (f64, f64),
        results: &mut Vec<ToolResult>,
    ) -> Result<(), ParseError> {
        let mut pipe = self.latest.take().expect("a table to end").summary;
        pipe.push(n, def("worker_ops_per_sec").value(ops))?;
        pipe.push(n, def("worker_mib_per_sec").value(mib))?;
        if let Some(normal) = self.superseded.take() {
            results.push(normal.summary.result("request"));
        }
        results.push(pipe.result("pipe"));
        Ok(())
    }

    /// Something other than an old table follows: the latest is a normal-mode run's last table.
    fn finish(&mut self, results: &mut Vec<ToolResult>) {
        self.superseded = None;
        if let Some(latest) = self.latest.take() {
            results.push(latest.summary.result("request"));
        }
    }
}

/// Lines about schbench's set-up and progress that hold no result.
const SET_UP: &[&str] = &[
    "setting worker threads to ",
    "warmup done, zeroing stats",
    "auto pinning message and worker threads",
    "Pinning to message thread index ",
    "split mode: ",
    "matrix sizes: ",
    "pipe size too big, using ",
];

/// One summary being read: its measurements so far and where it started.
#[derive(Default)]
struct Summary {
    start: Option<usize>,
    measurements: Vec<Measurement>,
    /// The table whose rows come next.
    table: Option<&'static str>,
    /// `average rps:` or `final rps goal was` seen: the next `sched delay:` ends a final summary.
    final_rps: bool,
}

impl Summary {
    fn push(&mut self, n: usize, m: Measurement) -> Result<(), ParseError> {
        if self.measurements.iter().any(|old| old.name == m.name) {
            return Err(ParseError::at(
                n,
                format!("{} given twice in one summary", m.name),
            ));
        }
        self.start.get_or_insert(n);
        self.measurements.push(m);
        Ok(())
    }

    fn result(self, mode: &str) -> ToolResult {
        ToolResult {
            case: format!("schbench:{mode}"),
            line: self.start.unwrap_or(1),
            at_ns: None,
            measurements: self.measurements,
        }
    }
}

fn parse_text(text: &str) -> Result<Parsed, ParseError> {
    let mut results = Vec::new();
    let mut summary = Summary::default();
    let mut old = OldTables::default();
    for (index, raw) in text.lines().enumerate() {
        let n = index + 1;
        let line = raw.trim();
        let bad = |what: &str| ParseError::at(n, format!("{what}: {line:?}"));
        if line.is_empty() || SET_UP.iter().any(|s| line.starts_with(s)) {
            continue;
        }
        if line.starts_with(OLD_HEADER) {
            let header =
                old_table_header(line).ok_or_else(|| bad("a `Latency percentiles` header"))?;
            if let Some(open) = &old.open {
                return Err(cut_short(open.summary.start.unwrap_or(n), "table"));
            }
            if let Some(start) = summary.start {
                return Err(cut_short(start, "summary"));
            }
            old.begin(n, header, &mut results);
            continue;
        }
        if old.open.is_some() {
            old.row(n, line)?;
            continue;
        }
        if let Some(why) = old_mode_not_read(line) {
            return Err(bad(why));
        }
        if let (Some(rest), Some(_)) = (line.strip_prefix("avg worker transfer:"), &old.latest) {
            let transfer = worker_transfer(rest).map_err(&bad)?;
            old.transfer(n, transfer, &mut results)?;
            continue;
        }
        old.finish(&mut results);
        summary_line(n, line, &mut summary, &mut results)?;
    }
    if let Some(open) = &old.open {
        return Err(cut_short(open.summary.start.unwrap_or(1), "table"));
    }
    old.finish(&mut results);
    if let Some(start) = summary.start {
        return Err(ParseError::at(
            start,
            "the schbench summary that starts here has no end (`average rps:` and `sched \
             delay:`, or `avg worker transfer:`): the output was cut short",
        ));
    }
    Ok(Parsed {
        results,
        ..Parsed::default()
    })
}

/// A line of schbench's current summary: a table's header, its percentile rows and `min=…`
/// line, the rates, the sched delays that end a request summary, or the worker transfer that
/// ends a pipe one.
fn summary_line(
    n: usize,
    line: &str,
    summary: &mut Summary,
    results: &mut Vec<ToolResult>,
) -> Result<(), ParseError> {
    let bad = |what: &str| ParseError::at(n, format!("{what}: {line:?}"));
    if let Some((distribution, samples)) = table_header(line) {
        summary.start.get_or_insert(n);
        summary.table = Some(distribution);
        let count = match distribution {
            "wakeup" => Some("wakeup_samples_count"),
            "request" => Some("request_samples_count"),
            _ => None,
        };
        if let (Some(name), Some(samples)) = (count, samples) {
            summary.push(n, def(name).value(samples as f64))?;
        }
    } else if line.contains("th:") {
        let distribution = summary
            .table
            .ok_or_else(|| bad("a percentile outside a table"))?;
        let (p, value) = percentile_row(line).ok_or_else(|| bad("a percentile row"))?;
        let def = quantile(distribution, p).ok_or_else(|| {
            bad(&format!(
                "a {p}th percentile, which schbench does not print"
            ))
        })?;
        summary.push(n, def.value(value))?;
    } else if line.starts_with("min=") {
        let (_, max) = min_max(line).ok_or_else(|| bad("a `min=…, max=…` line"))?;
        // A table without samples prints only this line, without its header.
        if let Some(distribution) = summary.table.take() {
            if let Some(def) = max_of(distribution) {
                summary.push(n, def.value(max))?;
            }
        }
    } else if let Some(value) = line.strip_prefix("average rps:") {
        let rps = number(value).ok_or_else(|| bad("a rate"))?;
        summary.push(n, def("requests_avg_per_sec").value(rps))?;
        summary.final_rps = true;
    } else if line.starts_with("final rps goal was ") {
        summary.final_rps = true;
    } else if let Some(rest) = line.strip_prefix("sched delay:") {
        // `message 0 (usec) worker 0 (usec)`
        let words: Vec<&str> = rest.split_whitespace().collect();
        let (message, worker) = match words.as_slice() {
            ["message", m, "(usec)", "worker", w, "(usec)"] => (number(m), number(w)),
            _ => (None, None),
        };
        let (Some(message), Some(worker)) = (message, worker) else {
            return Err(bad(
                "a `sched delay: message N (usec) worker N (usec)` line",
            ));
        };
        summary.push(n, def("message_sched_delay_usec").value(message))?;
        summary.push(n, def("worker_sched_delay_usec").value(worker))?;
        if summary.final_rps {
            results.push(std::mem::take(summary).result("request"));
        }
    } else if line.starts_with("current rps:") {
        // The end of an interval's progress report.
        *summary = Summary::default();
    } else if let Some(rest) = line.strip_prefix("avg worker transfer:") {
        let (ops, mib) = worker_transfer(rest).map_err(&bad)?;
        summary.push(n, def("worker_ops_per_sec").value(ops))?;
        summary.push(n, def("worker_mib_per_sec").value(mib))?;
        results.push(std::mem::take(summary).result("pipe"));
    } else {
        return Err(bad("not schbench output"));
    }
    Ok(())
}

/// schbench's pretty size (`91.72MB`, units B, KB, MB, GB, … in powers of 1024) in MiB.
fn mib_of(text: &str) -> Option<f64> {
    const UNITS: [(&str, i32); 6] = [
        ("PB", 5),
        ("TB", 4),
        ("GB", 3),
        ("MB", 2),
        ("KB", 1),
        ("B", 0),
    ];
    let (value, power) = UNITS
        .iter()
        .find_map(|(unit, power)| Some((text.strip_suffix(unit)?, *power)))?;
    Some(number(value)? * 1024f64.powi(power - 2))
}

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

fn parse_json(text: &str) -> Result<Parsed, ParseError> {
    let mut parsed = Parsed::default();
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    loop {
        let start = stream.byte_offset();
        let value = match stream.next() {
            None => break,
            Some(Ok(value)) => value,
            Some(Err(e)) => {
                return Err(ParseError::at(
                    e.line(),
                    format!("not schbench's JSON: {e}"),
                ))
            }
        };
        // The offset before the object may sit on the whitespace in front of it.
        let skipped = text[start..].len() - text[start..].trim_start().len();
        let line = line_of(text, start + skipped);
        let bad = |what: &str| ParseError::at(line, format!("schbench JSON object {what}"));
        let normal = value
            .get("normal")
            .ok_or_else(|| bad("has no `normal` part"))?;
        let int = value
            .get("int")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("has no `int` part"))?;
        for (field, known) in [
            ("version", &mut parsed.kernel_release),
            ("hostname", &mut parsed.hostname),
        ] {
            let Some(this) = normal.get(field).and_then(Value::as_str) else {
                continue;
            };
            match known {
                Some(earlier) if earlier != this => {
                    return Err(bad(&format!(
                        "says {field} {this:?}, an earlier one {earlier:?}: import results of \
                         different machines or kernels separately"
                    )))
                }
                _ => *known = Some(this.to_string()),
            }
        }
        let mut measurements = Vec::new();
        for (key, value) in int {
            let Some(def) = json_metric(key) else {
                continue;
            };
            let value = value
                .as_f64()
                .filter(|v| v.is_finite())
                .ok_or_else(|| bad(&format!("has a {key} that is not a number")))?;
            measurements.push(def.value(value));
        }
        if measurements.is_empty() {
            return Err(bad("holds no latency or rate schedlab reads"));
        }
        // serde_json keeps keys sorted; the table's order reads better.
        measurements.sort_by_key(|m| METRICS.iter().position(|d| d.name == m.name));
        let pipe = !int.keys().any(|k| k.starts_with("request_latency_"));
        let at_ns = int
            .get("time")
            .and_then(Value::as_i64)
            .and_then(|sec| sec.checked_mul(1_000_000_000));
        parsed.results.push(ToolResult {
            case: format!("schbench:{}", if pipe { "pipe" } else { "request" }),
            line,
            at_ns,
            measurements,
        });
    }
    Ok(parsed)
}

/// The metric of a key of the JSON's `int` part: `wakeup_latency_pct99.0`, `rps_pct50.0`,
/// `request_latency_max`; `None` for the rest (minima, runtime, time, unknown percentiles).
fn json_metric(key: &str) -> Option<MetricDef> {
    let (distribution, stat) = if let Some(stat) = key.strip_prefix("wakeup_latency_") {
        ("wakeup", stat)
    } else if let Some(stat) = key.strip_prefix("request_latency_") {
        ("request", stat)
    } else if let Some(stat) = key.strip_prefix("rps_") {
        ("rps", stat)
    } else {
        return None;
    };
    if stat == "max" {
        return max_of(distribution).filter(|d| d.better == Better::Lower);
    }
    quantile(distribution, number(stat.strip_prefix("pct")?)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::perf_bench::names;
    use crate::import::testdata::{assert_rejected, fixture, value};

    fn one(name: &str) -> (ToolResult, Parsed) {
        let parsed = parse(&fixture(name)).unwrap();
        assert_eq!(parsed.results.len(), 1, "{name}");
        (parsed.results[0].clone(), parsed)
    }

    #[test]
    fn request_mode_text() {
        let (r, parsed) = one("schbench.txt");
        assert_eq!(r.case, "schbench:request");
        assert_eq!(r.line, 1);
        let v = |name| value(&r.measurements, name);
        assert_eq!(v("wakeup_p50_usec"), Some(16.0));
        assert_eq!(v("wakeup_p99_usec"), Some(16208.0));
        assert_eq!(v("wakeup_p99_9_usec"), Some(24864.0));
        assert_eq!(v("wakeup_max_usec"), Some(24839.0));
        assert_eq!(v("wakeup_samples_count"), Some(247.0));
        assert_eq!(v("request_p90_usec"), Some(58176.0));
        assert_eq!(v("request_max_usec"), Some(129515.0));
        assert_eq!(v("requests_p20_per_sec"), Some(33.0));
        assert_eq!(v("requests_p50_per_sec"), Some(40.0));
        assert_eq!(v("requests_avg_per_sec"), Some(49.40));
        assert_eq!(v("message_sched_delay_usec"), Some(0.0));
        assert_eq!(r.measurements.len(), 18);
        assert_eq!(parsed.kernel_release, None);
    }

    #[test]
    fn interval_reports_are_progress_not_results() {
        let (r, _) = one("schbench-intervals.txt");
        assert_eq!(r.line, 39);
        assert_eq!(value(&r.measurements, "wakeup_samples_count"), Some(463.0));
        assert_eq!(value(&r.measurements, "requests_avg_per_sec"), Some(92.60));
    }

    #[test]
    fn pipe_mode_text() {
        let (r, _) = one("schbench-pipe.txt");
        assert_eq!(r.case, "schbench:pipe");
        assert_eq!(
            names(&r.measurements),
            [
                "wakeup_samples_count",
                "wakeup_p20_usec",
                "wakeup_p50_usec",
                "wakeup_p90_usec",
                "wakeup_p99_usec",
                "wakeup_p99_9_usec",
                "wakeup_max_usec",
                "worker_ops_per_sec",
                "worker_mib_per_sec"
            ]
        );
        assert_eq!(value(&r.measurements, "worker_ops_per_sec"), Some(93916.92));
        assert_eq!(value(&r.measurements, "worker_mib_per_sec"), Some(91.72));
    }

    /// Every measurement of `r`, in order, as (name, value).
    fn all(r: &ToolResult) -> Vec<(&str, f64)> {
        r.measurements
            .iter()
            .map(|m| (m.name.as_str(), m.value))
            .collect()
    }

    /// What a table of schbench before 2023 holds: its total (if printed), the 50th to 99.9th percentile, the max.
    fn old_table(
        samples: impl Into<Option<f64>>,
        percentiles: [f64; 7],
        max: f64,
    ) -> Vec<(&'static str, f64)> {
        let names = [
            "wakeup_p50_usec",
            "wakeup_p75_usec",
            "wakeup_p90_usec",
            "wakeup_p95_usec",
            "wakeup_p99_usec",
            "wakeup_p99_5_usec",
            "wakeup_p99_9_usec",
        ];
        let mut all: Vec<_> = samples
            .into()
            .map(|total| ("wakeup_samples_count", total))
            .into_iter()
            .collect();
        all.extend(names.into_iter().zip(percentiles));
        all.push(("wakeup_max_usec", max));
        all
    }

    #[test]
    fn schbench_before_2023_normal_mode() {
        let (r, _) = one("schbench-2022.txt");
        assert_eq!((r.case.as_str(), r.line), ("schbench:request", 1));
        let table = [4392.0, 11088.0, 15792.0, 22624.0, 29984.0, 29984.0, 29984.0];
        assert_eq!(all(&r), old_table(97.0, table, 29977.0));
        let (r, _) = one("schbench-2021.txt");
        assert_eq!((r.case.as_str(), r.line), ("schbench:request", 1));
        let table = [80.0, 5192.0, 8528.0, 9296.0, 13456.0, 17312.0, 17312.0];
        assert_eq!(all(&r), old_table(100.0, table, 17280.0));
    }

    #[test]
    fn schbench_before_october_2020_has_no_runtime_or_total() {
        let (r, _) = one("schbench-2020.txt");
        assert_eq!((r.case.as_str(), r.line), ("schbench:request", 1));
        let table = [35.0, 59.0, 1250.0, 3452.0, 5208.0, 6488.0, 6488.0];
        assert_eq!(all(&r), old_table(None, table, 6489.0));
        let (r, _) = one("schbench-2020-pipe.txt");
        assert_eq!((r.case.as_str(), r.line), ("schbench:pipe", 1));
        let table = [3.0, 5.0, 16.0, 25.0, 36.0, 43.0, 86.0];
        let mut expected = old_table(None, table, 8537.0);
        expected.extend([
            ("worker_ops_per_sec", 81684.31),
            ("worker_mib_per_sec", 319.08),
        ]);
        assert_eq!(all(&r), expected);
        // Without runtimes no table is another's progress: those versions printed none.
        let text = fixture("schbench-2020.txt").repeat(2);
        let lines: Vec<usize> = parse(&text)
            .unwrap()
            .results
            .iter()
            .map(|r| r.line)
            .collect();
        assert_eq!(lines, [1, 10]);
    }

    /// The three headers schbench printed before 2023; for a day in October 2020 (8d43844) the
    /// runtime came without the total.
    #[test]
    fn old_headers() {
        let header = |runtime_sec, total_samples| {
            Some(OldHeader {
                runtime_sec,
                total_samples,
            })
        };
        for (line, expected) in [
            ("Latency percentiles (usec)", header(None, None)),
            (
                "Latency percentiles (usec) runtime 30 (s)",
                header(Some(30), None),
            ),
            (
                "Latency percentiles (usec) runtime 30 (s) (4888154 total samples)",
                header(Some(30), Some(4888154)),
            ),
            ("Latency percentiles (usec) runtime x (s)", None),
            (
                "Latency percentiles (usec) runtime 30 (s) (4888154 samples)",
                None,
            ),
        ] {
            assert_eq!(old_table_header(line), expected, "{line}");
        }
    }

    #[test]
    fn schbench_before_2023_interval_reports_are_progress() {
        let (r, _) = one("schbench-2022-intervals.txt");
        assert_eq!((r.case.as_str(), r.line), ("schbench:request", 19));
        let table = [6312.0, 10608.0, 15696.0, 19552.0, 25312.0, 35776.0, 35776.0];
        assert_eq!(all(&r), old_table(100.0, table, 35830.0));
    }

    #[test]
    fn schbench_before_2023_pipe_mode() {
        let (r, _) = one("schbench-2022-pipe.txt");
        assert_eq!((r.case.as_str(), r.line), ("schbench:pipe", 1));
        let table = [3.0, 3.0, 6.0, 18.0, 41.0, 45.0, 3316.0];
        let mut expected = old_table(470092.0, table, 59385.0);
        expected.extend([
            ("worker_ops_per_sec", 47779.21),
            ("worker_mib_per_sec", 186.64),
        ]);
        assert_eq!(all(&r), expected);
        let (r, _) = one("schbench-2021-pipe.txt");
        assert_eq!((r.case.as_str(), r.line), ("schbench:pipe", 1));
        let table = [2.0, 3.0, 3.0, 6.0, 20.0, 22.0, 3476.0];
        let mut expected = old_table(666804.0, table, 19443.0);
        expected.extend([
            ("worker_ops_per_sec", 67696.48),
            ("worker_mib_per_sec", 264.44),
        ]);
        assert_eq!(all(&r), expected);
    }

    /// Logs of several runs in one file: each run's last table is its result.
    #[test]
    fn schbench_before_2023_runs_one_after_another() {
        let found = |text: &str| -> Vec<(String, usize, Option<f64>)> {
            let parsed = parse(text).unwrap();
            let p50 = |r: &ToolResult| value(&r.measurements, "wakeup_p50_usec");
            parsed
                .results
                .iter()
                .map(|r| (r.case.clone(), r.line, p50(r)))
                .collect()
        };
        let joined = |names: &[&str]| names.iter().map(|name| fixture(name)).collect::<String>();
        let request = |line, p50| ("schbench:request".to_string(), line, Some(p50));
        let pipe = |line, p50| ("schbench:pipe".to_string(), line, Some(p50));
        // A runtime no longer than the table's before it starts another run.
        let intervals = "schbench-2022-intervals.txt";
        assert_eq!(
            found(&joined(&[intervals, intervals])),
            [request(19, 6312.0), request(46, 6312.0)]
        );
        let three = joined(&[
            "schbench-2022.txt",
            "schbench-2021-pipe.txt",
            "schbench-2021.txt",
        ]);
        assert_eq!(
            found(&three),
            [request(1, 4392.0), pipe(10, 2.0), request(20, 80.0)]
        );
        // Pipe mode prints no progress, so a shorter table before its own was another run's
        // last: here the intervals' first report stands for a run of `-r 2`.
        let first_report: String = fixture(intervals)
            .lines()
            .take(9)
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(
            found(&(first_report + &fixture("schbench-2022-pipe.txt"))),
            [request(1, 9200.0), pipe(10, 3.0)]
        );
        // Either format after the other.
        let mixed = joined(&[
            "schbench-2021.txt",
            "schbench.txt",
            "schbench-2022-pipe.txt",
        ]);
        assert_eq!(
            found(&mixed),
            [request(1, 80.0), request(10, 16.0), pipe(29, 3.0)]
        );
    }

    #[test]
    fn json_names_its_kernel_and_host() {
        let (r, parsed) = one("schbench.json");
        assert_eq!(r.case, "schbench:request");
        assert_eq!(parsed.kernel_release.as_deref(), Some("6.18.44-fc-v669"));
        assert_eq!(parsed.hostname.as_deref(), Some("vm"));
        assert_eq!(r.at_ns, Some(1_795_471_816_000_000_000));
        let v = |name| value(&r.measurements, name);
        assert_eq!(v("wakeup_p20_usec"), Some(4.0));
        assert_eq!(v("wakeup_p99_9_usec"), Some(17248.0));
        assert_eq!(v("wakeup_max_usec"), Some(17250.0));
        assert_eq!(v("request_p50_usec"), Some(16016.0));
        assert_eq!(v("requests_p50_per_sec"), Some(95.0));
        assert_eq!(v("requests_p99_9_per_sec"), Some(105.0));
        // Minima have no metric; RPS's max is no latency.
        assert_eq!(r.measurements.len(), 17);
        let (r, _) = one("schbench-pipe.json");
        assert_eq!(r.case, "schbench:pipe");
        assert_eq!(value(&r.measurements, "wakeup_p99_9_usec"), Some(1622.0));
    }

    #[test]
    fn several_json_objects_are_several_results() {
        let one = fixture("schbench.json");
        let text = format!("{one}\n{}\n", fixture("schbench-pipe.json"));
        let parsed = parse(&text).unwrap();
        assert_eq!(parsed.results.len(), 2);
        assert_eq!(parsed.results[1].line, 2);
        assert_eq!(parsed.results[1].case, "schbench:pipe");
        let other_host = one.replace("\"vm\"", "\"box2\"");
        let err = parse(&format!("{one}\n{other_host}")).unwrap_err();
        assert_eq!(err.line, 2);
        assert!(err.message.contains("separately"), "{err}");
    }

    #[test]
    fn malformed_output_names_its_line() {
        assert_rejected(
            parse,
            &[
                ("malformed-schbench-truncated.txt", 1, "cut short"),
                (
                    "malformed-schbench-bad-percentile.txt",
                    4,
                    "a percentile row",
                ),
                (
                    "malformed-schbench-truncated.json",
                    1,
                    "not schbench's JSON",
                ),
                ("hackbench.txt", 1, "not schbench output"),
                ("malformed-schbench-2022-truncated.txt", 10, "cut short"),
                (
                    "malformed-schbench-2022-missing-row.txt",
                    5,
                    "a 99th percentile where schbench before 2023 printed its 95th",
                ),
                (
                    "malformed-schbench-2021-bad-number.txt",
                    7,
                    "a percentile row",
                ),
                ("schbench-2022-rps.txt", 1, "with -R or -A"),
            ],
        );
    }

    #[test]
    fn the_names_are_the_wakeup_workloads() {
        use crate::workload::wakeup::metrics as native;
        let native_defs = native::REQUEST_MODE.iter().chain(native::PIPE_MODE);
        let mut shared = 0;
        for native in native_defs {
            if let Some(ours) = METRICS.iter().find(|d| d.name == native.name) {
                assert!(ours.describes(&native.value(1.0)), "{}", native.name);
                shared += 1;
            }
        }
        // Every latency quantile and max, RPS median and mean, the sample counts and delays.
        assert!(shared >= 17, "{shared}");
    }
}
