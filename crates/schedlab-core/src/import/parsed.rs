//! What every parser returns (its results, each one iteration, and what the text says of its
//! machine) or why it cannot, how plain number files are read, and the numbers the tools print.
use serde::{Deserialize, Serialize};

use crate::metric::{Measurement, MetricDef};

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
