//! The `external` workload: a reference tool the user built (a schbench, hackbench or perf) run
//! as each iteration, its output read by the same parser `schedlab import` uses. schedlab never
//! fetches or builds the tool; the user names it. Each iteration starts the command in a process
//! group of its own, waits for it (stop signals and the iteration's deadline end the whole group),
//! and fails loudly when it exits non-zero, is killed, prints nothing the parser reads, or prints
//! more than one result. The runner's counters see the tool as a reaped child: its CPU time,
//! context switches and migrations are the iteration's.
//!
//! Imported results (`schedlab import`) are stored as cases of this workload too, with no command
//! and the files they came from; such a case cannot be run.
use serde::{Deserialize, Serialize};

use super::definition::{IterationInfo, IterationOutput, Workload};
use super::definition::{field, Choice, FieldValue, Given, Param, ParamKind, WorkloadParams};
use super::tasks::TaskBudget;
use crate::import::{PlainOptions, Tool, TOOLS};
use crate::metric::MetricDef;
use crate::sys::{self, ChildExit, CommandError};
use crate::words::check_printable;
use crate::{Error, Result};

/// Lines of the tool's output quoted when it cannot be read.
const QUOTED_LINES: usize = 5;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExternalParams {
    /// Which parser reads the output; required.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parser: Option<Tool>,
    /// The program and its arguments.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// The case's name, when the one made from the command is not wanted (to line it up with an
    /// import of the same tool, or with a native case).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case: Option<String>,
    /// `plain` only: the metric the number is, and its direction.
    pub metric: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub higher_is_better: bool,
    /// The tool's version, where known (`perf --version`; the user's `--tool-version`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_version: Option<String>,
    /// An imported case: the files its results were read from. It has no command and cannot run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub imported_from: Vec<String>,
}

impl Default for ExternalParams {
    fn default() -> Self {
        ExternalParams {
            parser: None,
            command: Vec::new(),
            case: None,
            metric: PlainOptions::default().name,
            higher_is_better: false,
            tool_version: None,
            imported_from: Vec::new(),
        }
    }
}

const EXTERNAL_NOTE: &str = "The tool is the user's: schedlab never fetches or builds it. Each \
iteration runs the command once in its own process group; its output (stdout, then stderr) must \
hold exactly one result. docs/import.md says what each parser reads and which metrics it makes.";

impl Choice for Tool {
    const ALL: &'static [Self] = &[Tool::PerfBench, Tool::Hackbench, Tool::Schbench, Tool::Plain];

    fn name(self) -> &'static str {
        self.as_str()
    }
}

/// A case name, metric or tool version: printable text.
fn printable(key: &'static str, given: Given) -> Result<String> {
    let text = String::from_given(given).map_err(|reason| Error::param(key, reason))?;
    check_printable(&text).map_err(|reason| Error::param(key, reason))?;
    Ok(text)
}

impl WorkloadParams for ExternalParams {
    const NAME: &'static str = "external";
    const SUMMARY: &'static str =
        "a reference tool you built (perf bench, hackbench, schbench) run as each iteration, its output parsed";
    const REFERENCE_NOTE: Option<&'static str> = Some(EXTERNAL_NOTE);
    // No `work_size` parameter: the tool's work size is in its own arguments, which schedlab
    // does not interpret, so `--scale` leaves the case as it is.
    const PARAMS: &'static [Param<Self>] = &[
        Param::new(field!(parser), "parser", ParamKind::Choice(TOOLS))
            .value("TOOL")
            .help("The parser that reads the tool's output (required)."),
        Param::new(field!(case, set: |p: &mut Self, given| { p.case = Some(printable("case", given)?); Ok(()) }), "case", ParamKind::Text)
            .value("NAME")
            .help("Name the case (default: `external:TOOL PROGRAM ARGS`).")
            .details(
                "Name the case instead of `external:TOOL PROGRAM ARGS` (the program's file name, \
                 not its directory), e.g. to compare with an import of the same tool's logs, \
                 which is named from what its output says.",
            ),
        Param::new(field!(metric, set: |p: &mut Self, given| { p.metric = printable("metric", given)?; Ok(()) }), "metric", ParamKind::Text)
            .value("NAME")
            .help("`plain` only: the metric the printed number is (snake_case, unit suffix)."),
        Param::new(field!(higher_is_better), "higher-is-better", ParamKind::Switch)
            .help("`plain` only: a higher number is better."),
        Param::new(field!(tool_version, set: |p: &mut Self, given| { p.tool_version = Some(printable("tool_version", given)?); Ok(()) }), "tool-version", ParamKind::Text)
            .value("TEXT")
            .help("The tool's version, kept with the case (perf's is asked for when not given)."),
        Param::new(field!(command), "command", ParamKind::Command)
            .value("CMD")
            .help("The program to run and its arguments, after `--`."),
    ];

    fn check_rules(&self) -> Result<()> {
        if !self.imported_from.is_empty() {
            return Ok(());
        }
        if self.parser.is_none() {
            return Err(Error::invalid(format!(
                "--parser is required: one of {}",
                TOOLS.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
            )));
        }
        let Some(program) = self.command.first() else {
            return Err(Error::invalid(
                "give the command to run after `--`: schedlab run external --parser TOOL -- CMD ARGS…",
            ));
        };
        if sys::find_program(program).is_none() {
            return Err(Error::invalid(format!(
                "cannot run {program:?}: {}",
                sys::why_not_runnable(program)
            )));
        }
        // The one command line known to print several results: found before it runs, not after.
        if self.parser == Some(Tool::PerfBench)
            && self.command.windows(2).any(|w| w[0] == "sched" && w[1] == "all")
        {
            return Err(Error::invalid(
                "`perf bench sched all` prints two results (messaging and pipe) and an iteration \
                 takes one: run `perf bench sched messaging` and `perf bench sched pipe` as two \
                 cases (two runs, or a suite with both)",
            ));
        }
        let plain = self.plain();
        if self.parser == Some(Tool::Plain) {
            plain.check().map_err(|e| Error::param("metric", e))?;
        } else if plain != PlainOptions::default() {
            return Err(Error::invalid(
                "--metric and --higher-is-better are for --parser plain (the other parsers name \
                 their metrics)",
            ));
        }
        Ok(())
    }

    /// The tool, whose own tasks schedlab cannot know.
    fn task_budget(&self) -> TaskBudget {
        TaskBudget::tasks(1, "tasks", "")
    }

    fn case_name(&self) -> String {
        if let Some(case) = &self.case {
            return case.clone();
        }
        let tool = self.parser.map_or("?", Tool::as_str);
        let mut words: Vec<&str> = Vec::new();
        if let Some((program, args)) = self.command.split_first() {
            words.push(program.rsplit('/').next().unwrap_or(program));
            words.extend(args.iter().map(String::as_str));
        }
        format!("external:{tool} {}", words.join(" "))
    }


    fn estimate_sec(&self) -> f64 {
        // Unknown until it has run: the first iteration gets the runner's long deadline.
        f64::NAN
    }

    /// perf says its version; the other tools print none (hackbench only inside its help).
    fn finish_command_line(&mut self) -> Result<()> {
        if let (Some(Tool::PerfBench), None, Some(program)) =
            (self.parser, &self.tool_version, self.command.first())
        {
            self.tool_version = perf_version(program);
        }
        Ok(())
    }

    fn metric_lists(&self) -> &'static [&'static [MetricDef]] {
        match self.parser {
            Some(Tool::PerfBench) => &[crate::import::perf_bench::METRICS],
            Some(Tool::Hackbench) => &[crate::import::hackbench::METRICS],
            Some(Tool::Schbench) => &[crate::import::schbench::METRICS],
            // A metric the user names restates nothing.
            Some(Tool::Plain) | None => &[],
        }
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        if !self.imported_from.is_empty() {
            return Err(Error::invalid(
                "an imported case holds results read from files; it cannot be run",
            ));
        }
        let parser = self
            .parser
            .ok_or_else(|| Error::invalid("--parser is required"))?;
        let plain = self.plain();
        Ok(Box::new(ExternalWorkload {
            metrics: Box::leak(parser.metrics(&plain).into_boxed_slice()),
            parser,
            plain,
            command: self.command.clone(),
        }))
    }
}

impl ExternalParams {
    /// How `plain` output is read: one number, the metric named by `metric`.
    pub fn plain(&self) -> PlainOptions {
        PlainOptions {
            name: self.metric.clone(),
            higher_is_better: self.higher_is_better,
            ..PlainOptions::default()
        }
    }
}

/// `perf --version`'s answer (`perf version 6.1.187`) when the program is perf: only a program
/// named perf is asked, as a wrapper script given `--version` might run the benchmark instead.
fn perf_version(program: &str) -> Option<String> {
    let name = program.rsplit('/').next()?;
    if !name.starts_with("perf") {
        return None;
    }
    let run = sys::run_command(&[program.to_string(), "--version".to_string()], &|| {
        sys::interrupt_signal().is_some()
    })
    .ok()?;
    let text = String::from_utf8_lossy(&run.stdout);
    let line = text.lines().next()?.trim();
    (run.exit == ChildExit::Code(0) && !line.is_empty()).then(|| line.to_string())
}

pub struct ExternalWorkload {
    parser: Tool,
    plain: PlainOptions,
    command: Vec<String>,
    /// Made once per case (a `plain` metric is named by the user).
    metrics: &'static [MetricDef],
}

/// The last lines of a stream, for an error message.
fn tail(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(QUOTED_LINES);
    lines[start..].join(" | ")
}

impl Workload for ExternalWorkload {
    fn metrics(&self) -> &'static [MetricDef] {
        self.metrics
    }

    fn run_iteration(&mut self, _info: IterationInfo) -> Result<IterationOutput> {
        let program = &self.command[0];
        let stop = || sys::interrupt_signal().is_some() || sys::deadline_expired();
        let run = match sys::run_command(&self.command, &stop) {
            Ok(run) => run,
            Err(CommandError::Stopped { stdout, stderr }) => {
                if let Some(signal) = sys::interrupt_signal() {
                    return Err(Error::Interrupted(signal));
                }
                if sys::deadline_expired() {
                    return Err(Error::TimedOut(format!(
                        "{program} was still running; its process group was stopped (SIGTERM, \
                         then SIGKILL)"
                    )));
                }
                return Err(Error::failed(format!(
                    "{program} was stopped (output so far: {} {})",
                    tail(&stdout),
                    tail(&stderr)
                )));
            }
            Err(CommandError::Spawn(e)) => {
                return Err(Error::failed(format!("cannot run {program}: {e}")))
            }
            Err(CommandError::TooMuchOutput) => {
                return Err(Error::failed(format!(
                    "{program} printed more than {} MiB; it was stopped",
                    sys::MAX_OUTPUT_BYTES >> 20
                )))
            }
            Err(CommandError::Io(e)) => {
                return Err(Error::failed(format!("waiting for {program}: {e}")))
            }
        };
        let quoted = || {
            let (out, err) = (tail(&run.stdout), tail(&run.stderr));
            match (out.is_empty(), err.is_empty()) {
                (true, true) => "it printed nothing".to_string(),
                (false, true) => format!("stdout: {out}"),
                (true, false) => format!("stderr: {err}"),
                (false, false) => format!("stdout: {out}; stderr: {err}"),
            }
        };
        match run.exit {
            ChildExit::Code(0) => {}
            ChildExit::Code(code) => {
                return Err(Error::failed(format!(
                    "{program} exited with code {code} ({})",
                    quoted()
                )))
            }
            ChildExit::Signal(signal) => {
                return Err(Error::failed(format!(
                    "{program} was killed by {} ({})",
                    sys::signal_name(signal),
                    quoted()
                )))
            }
        }
        // perf and hackbench print on stdout, schbench on stderr; a tool's stray warnings on the
        // other stream are read too, so they cannot hide.
        let mut text = String::from_utf8_lossy(&run.stdout).into_owned();
        if !run.stderr.is_empty() {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&String::from_utf8_lossy(&run.stderr));
        }
        let parsed = self.parser.parse_text(&text, &self.plain).map_err(|e| {
            Error::failed(format!(
                "{program}'s output is not {} output: {e} (stdout, then stderr; {})",
                self.parser,
                quoted()
            ))
        })?;
        let [result] = <[_; 1]>::try_from(parsed.results).map_err(|results: Vec<_>| {
            Error::failed(format!(
                "{program} printed {} {} results; an iteration takes one (run the tool once)",
                results.len(),
                self.parser
            ))
        })?;
        Ok(result.measurements.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_path(name: &str) -> String {
        format!(
            "{}/tests/fixtures/import/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    /// `sh -c SCRIPT`: the tool stands in for a real one by printing a captured output.
    fn params(parser: Tool, script: &str) -> ExternalParams {
        ExternalParams {
            parser: Some(parser),
            command: vec!["/bin/sh".into(), "-c".into(), script.into()],
            ..Default::default()
        }
    }

    fn run(params: &ExternalParams) -> Result<IterationOutput> {
        params.validate()?;
        params.build()?.run_iteration(IterationInfo::FIRST)
    }

    #[test]
    fn a_captured_output_becomes_the_iterations_metrics() {
        let p = params(
            Tool::PerfBench,
            &format!("cat {}", fixture_path("perf-pipe.txt")),
        );
        let out = run(&p).unwrap();
        let names: Vec<&str> = out.measurements.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["time_sec", "usec_per_op", "ops_per_sec"]);
        assert_eq!(out.measurements[1].value, 17.769450);
        // schbench prints on stderr.
        let p = params(
            Tool::Schbench,
            &format!("cat {} >&2", fixture_path("schbench.txt")),
        );
        let out = run(&p).unwrap();
        assert_eq!(out.measurements.len(), 18);
    }

    #[test]
    fn failures_are_loud() {
        for (script, says) in [
            ("echo 'Time: 1.0'; exit 3", "exited with code 3"),
            ("kill -SEGV $$", "killed by SIGSEGV"),
            ("true", "printed nothing"),
            ("echo hello", "not hackbench output"),
            ("echo 'Time: 1.0'; echo 'Time: 2.0'", "printed 2 hackbench results"),
        ] {
            let err = run(&params(Tool::Hackbench, script)).unwrap_err();
            assert!(matches!(err, Error::RunFailed(_)), "{script}: {err:?}");
            assert!(err.to_string().contains(says), "{script}: {err}");
        }
    }

    #[test]
    fn the_command_must_exist_and_a_parser_be_named() {
        let mut p = params(Tool::Hackbench, "true");
        p.command[0] = "/nonexistent/hackbench".into();
        assert!(p.validate().unwrap_err().is_invalid_input());
        p.command.clear();
        assert!(p.validate().unwrap_err().to_string().contains("after `--`"));
        let p = ExternalParams {
            parser: None,
            ..params(Tool::Hackbench, "true")
        };
        assert!(p.validate().unwrap_err().to_string().contains("--parser"));
        let p = ExternalParams {
            metric: "time_sec".into(),
            ..params(Tool::Hackbench, "true")
        };
        assert!(p.validate().unwrap_err().to_string().contains("--parser plain"));
    }

    #[test]
    fn plain_output_is_the_named_metric() {
        let p = ExternalParams {
            metric: "latency_usec".into(),
            ..params(Tool::Plain, "echo 42.5")
        };
        let out = run(&p).unwrap();
        assert_eq!(out.measurements[0].name, "latency_usec");
        assert_eq!(out.measurements[0].unit, "usec");
        assert_eq!(out.measurements[0].value, 42.5);
    }

    #[test]
    fn case_names_come_from_the_program_and_its_arguments() {
        let p = ExternalParams {
            parser: Some(Tool::PerfBench),
            command: ["/usr/bin/perf", "bench", "sched", "pipe", "-l", "20000"]
                .map(String::from)
                .to_vec(),
            ..Default::default()
        };
        assert_eq!(p.case_name(), "external:perf-bench perf bench sched pipe -l 20000");
        let named = ExternalParams {
            case: Some("perf-bench:pipe process loops=20000".into()),
            ..p
        };
        assert_eq!(named.case_name(), "perf-bench:pipe process loops=20000");
    }

    #[test]
    fn an_imported_case_cannot_run() {
        let p = ExternalParams {
            parser: Some(Tool::Hackbench),
            imported_from: vec!["old.log".into()],
            ..Default::default()
        };
        p.validate().unwrap();
        assert!(p.build().is_err());
    }
}
