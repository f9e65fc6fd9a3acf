//! Reading what the reference tools printed: one pure parser per tool (`perf bench sched`,
//! hackbench, schbench, ministat-style number files), shared by `schedlab import` (files kept from
//! earlier runs) and the `external` workload (a reference binary run as each iteration). Each
//! parser finds every result in a text, turns it into metrics named as schedlab's own workloads
//! name the same quantity, and fails on the first line it cannot read, naming it. Nothing here
//! touches the OS.
use serde::{Deserialize, Serialize};

use crate::metric::{Measurement, MetricDef};

pub mod hackbench;
pub mod perf_bench;
pub mod plain;
pub mod schbench;

/// The reference tool whose output a text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tool {
    /// `perf bench sched pipe` and `perf bench sched messaging`, default or `-f simple` output.
    PerfBench,
    /// rt-tests' hackbench (`Time: N`).
    Hackbench,
    /// schbench's text output (stderr) or its `-j` JSON.
    Schbench,
    /// Numbers, one a line, as ministat reads them.
    Plain,
}

/// Every tool, with what its output holds, for help and errors.
pub const TOOLS: &[(&str, &str)] = &[
    (
        "perf-bench",
        "perf bench sched pipe / messaging output, default or -f simple",
    ),
    ("hackbench", "hackbench's output (`Time: N`)"),
    ("schbench", "schbench's text output or its -j JSON"),
    (
        "plain",
        "numbers as ministat reads them: one a line, `#` comments",
    ),
];

impl Tool {
    pub fn as_str(self) -> &'static str {
        match self {
            Tool::PerfBench => "perf-bench",
            Tool::Hackbench => "hackbench",
            Tool::Schbench => "schbench",
            Tool::Plain => "plain",
        }
    }

    pub fn parse(name: &str) -> Option<Tool> {
        match name {
            "perf-bench" => Some(Tool::PerfBench),
            "hackbench" => Some(Tool::Hackbench),
            "schbench" => Some(Tool::Schbench),
            "plain" => Some(Tool::Plain),
            _ => None,
        }
    }

    /// Every metric an output of this tool can hold; which ones a result has depends on what the
    /// tool printed (pipe or messaging, text or JSON), so all but `plain`'s are optional.
    pub fn metrics(self, plain: &PlainOptions) -> Vec<MetricDef> {
        match self {
            Tool::PerfBench => perf_bench::METRICS.to_vec(),
            Tool::Hackbench => hackbench::METRICS.to_vec(),
            Tool::Schbench => schbench::METRICS.to_vec(),
            Tool::Plain => vec![plain.def()],
        }
    }

    /// Every result in `text`, in the order printed.
    pub fn parse_text(self, text: &str, plain: &PlainOptions) -> Result<Parsed, ParseError> {
        let parsed = match self {
            Tool::PerfBench => perf_bench::parse(text)?,
            Tool::Hackbench => hackbench::parse(text)?,
            Tool::Schbench => schbench::parse(text)?,
            Tool::Plain => plain::parse(text, plain)?,
        };
        if parsed.results.is_empty() {
            return Err(ParseError::at(
                text.lines().count().max(1),
                format!("no {} result found", self.as_str()),
            ));
        }
        Ok(parsed)
    }
}

impl std::fmt::Display for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One result a tool printed: one iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    /// What the output says was run (`perf-bench:pipe process loops=20000`), the default case name
    /// of an import.
    pub case: String,
    /// The 1-based line the result starts on.
    pub line: usize,
    /// When the tool says the result was taken (schbench's JSON `time`), nanoseconds since the
    /// Unix epoch.
    pub at_ns: Option<i64>,
    pub measurements: Vec<Measurement>,
}

/// What a text held: its results and what it says of the machine it ran on.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Parsed {
    pub results: Vec<ToolResult>,
    /// `uname -r` of the machine, where the output records it (schbench's JSON `version`).
    pub kernel_release: Option<String>,
    /// The host name, where the output records it (schbench's JSON `hostname`).
    pub hostname: Option<String>,
}

/// Why a text is not the tool's output: the first line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based.
    pub line: usize,
    pub message: String,
}

impl ParseError {
    pub fn at(line: usize, message: impl Into<String>) -> Self {
        ParseError {
            line,
            message: message.into(),
        }
    }
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// How a plain number file is read and what its numbers are: the column (1-based) and the
/// characters that separate columns, as ministat's `-C` and `-d`; the metric's name, whose unit
/// comes from its suffix (`_usec`, `_sec`, `_count`, `X_per_sec` → `X/sec`; else `value`), and
/// its direction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlainOptions {
    pub name: String,
    pub higher_is_better: bool,
    pub column: usize,
    pub delimiters: String,
}

impl Default for PlainOptions {
    fn default() -> Self {
        PlainOptions {
            name: "value".to_string(),
            higher_is_better: false,
            column: 1,
            delimiters: " \t".to_string(),
        }
    }
}

/// Unit suffixes a plain metric's name may end with, and the unit each means.
const UNIT_SUFFIXES: &[(&str, &str)] = &[
    ("_nsec", "nsec"),
    ("_usec", "usec"),
    ("_msec", "msec"),
    ("_sec", "sec"),
    ("_count", "count"),
    ("_bytes", "bytes"),
    ("_pct", "%"),
];

impl PlainOptions {
    /// Checks the name (snake_case, as every metric's), the column and the delimiters.
    pub fn check(&self) -> Result<(), String> {
        if self.column == 0 {
            return Err("the column starts at 1".to_string());
        }
        if self.delimiters.is_empty() {
            return Err("the delimiters must not be empty".to_string());
        }
        let ok = !self.name.is_empty()
            && self.name.len() <= 64
            && self.name.starts_with(|c: char| c.is_ascii_lowercase())
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if ok {
            Ok(())
        } else {
            Err(format!(
                "metric name {:?} must be snake_case (a-z, 0-9, _), start with a letter and end \
                 with its unit (`latency_usec`, `time_sec`, `ops_per_sec`)",
                self.name
            ))
        }
    }

    pub fn unit(&self) -> String {
        if let Some(what) = self.name.strip_suffix("_per_sec") {
            let what = what.rsplit('_').next().unwrap_or(what);
            return format!("{what}/sec");
        }
        UNIT_SUFFIXES
            .iter()
            .find(|(suffix, _)| self.name.ends_with(suffix))
            .map_or("value", |(_, unit)| unit)
            .to_string()
    }

    /// The metric's definition. Metric definitions are static (workloads declare them as
    /// constants); a user-named one is made once per import or run and kept for the process.
    pub fn def(&self) -> MetricDef {
        use crate::metric::Better;
        let name: &'static str = Box::leak(self.name.clone().into_boxed_str());
        let unit: &'static str = Box::leak(self.unit().into_boxed_str());
        let better = if self.higher_is_better {
            Better::Higher
        } else {
            Better::Lower
        };
        let def = MetricDef::primary(name, unit, better);
        if unit == "count" {
            def.count()
        } else {
            def
        }
    }
}

/// A number as the tools print it (`0.355`, `17.769450`, `56276`); finite only.
pub(crate) fn number(text: &str) -> Option<f64> {
    text.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

#[cfg(test)]
pub(crate) mod testdata {
    /// A captured fixture (crates/schedlab-core/tests/fixtures/import).
    pub fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/import/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// Each `(fixture, line, says)`: the fixture fails to parse at that line, with a message
    /// that contains `says`.
    pub fn assert_rejected(
        parse: impl Fn(&str) -> Result<super::Parsed, super::ParseError>,
        cases: &[(&str, usize, &str)],
    ) {
        for (file, line, says) in cases {
            let err = parse(&fixture(file)).unwrap_err();
            assert_eq!(err.line, *line, "{file}: {err}");
            assert!(err.message.contains(says), "{file}: {err}");
        }
    }

    /// The value of metric `name` in `measurements`.
    pub fn value(measurements: &[crate::metric::Measurement], name: &str) -> Option<f64> {
        measurements
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_round_trip_through_their_names() {
        for (name, _) in TOOLS {
            assert_eq!(Tool::parse(name).unwrap().as_str(), *name);
        }
        assert_eq!(Tool::parse("perf"), None);
    }

    #[test]
    fn plain_metrics_take_their_unit_from_the_name() {
        let unit = |name: &str| {
            PlainOptions {
                name: name.into(),
                ..Default::default()
            }
            .unit()
        };
        assert_eq!(unit("latency_usec"), "usec");
        assert_eq!(unit("time_sec"), "sec");
        assert_eq!(unit("ops_per_sec"), "ops/sec");
        assert_eq!(unit("bogo_ops_per_sec"), "ops/sec");
        assert_eq!(unit("runs_count"), "count");
        assert_eq!(unit("value"), "value");
        let bad = PlainOptions {
            name: "Latency-us".into(),
            ..Default::default()
        };
        assert!(bad.check().unwrap_err().contains("snake_case"));
    }
}
