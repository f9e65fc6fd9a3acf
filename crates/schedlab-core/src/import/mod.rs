//! Reading what the reference tools printed: one pure parser per tool (`perf bench sched`,
//! hackbench, schbench, ministat-style number files), shared by `schedlab import` (files kept from
//! earlier runs) and the `external` workload (a reference binary run as each iteration). Each
//! parser finds every result in a text, turns it into metrics named as schedlab's own workloads
//! name the same quantity, and fails on the first line it cannot read, naming it. Nothing here
//! touches the OS.
use serde::{Deserialize, Serialize};

use crate::metric::MetricDef;

pub mod hackbench;
mod parsed;
pub mod perf_bench;
pub mod plain;
pub mod schbench;

pub use parsed::{ParseError, Parsed, PlainOptions, ToolResult};

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
