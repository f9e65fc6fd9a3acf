//! Co-runners: the workloads a case runs beside each of its iterations (a suite case's
//! `background`, `run --background`), started before the iteration and stopped after it, their
//! own results stored with it — how the foreground and the background share the CPUs is a result.
//!
//! A scenario runs its groups as it would alone ([`scenario::Background`], metrics under
//! `background_`). Any other workload runs in a process of its own, forked before the iteration:
//! it repeats the workload's iterations back to back until told to stop, then finishes the
//! iteration it is in (so every iteration it counts is whole, and at least one is) and writes
//! what it achieved to a memfd the parent reads once it has exited. Its iterations completed, their
//! rate, and the mean of each of its primary metrics are stored as secondary metrics named
//! `background_<workload>_…`. A co-runner whose iteration fails its own verification fails the
//! case's iteration, naming it.
//!
//! Nothing outlives a stop: the process is in a group of its own (a terminal's Ctrl-C reaches
//! only schedlab, which then stops it), dies with schedlab by PR_SET_PDEATHSIG, and its own
//! tasks die with it by theirs. A stop signal, or an iteration that does not end within the
//! patience given, ends it with SIGTERM and then SIGKILL.
use std::cell::RefCell;
use std::io::{Read, Seek, Write};

use serde::{Deserialize, Serialize};

use crate::metric::{Better, MetricDef, MetricShape, Role};
use crate::sys::{self, AsFd, ChildExit, ChildSet, OwnedFd};
use crate::workload::scenario::{self, BackgroundRun, BACKGROUND_PREFIX};
use crate::workload::{IterationInfo, IterationOutput, Workload, WorkloadSpec};
use crate::{Error, Result};

/// How long a co-runner that was told to stop gets to exit once SIGTERM was sent.
const GRACE_NS: u64 = 1_000_000_000;
/// The longest error message a co-runner's process reports.
const MAX_MESSAGE_CHARS: usize = 2000;

/// The co-runners of one case, built once for all its iterations.
pub struct CoRunners {
    members: Vec<Member>,
    metrics: Vec<MetricDef>,
}

enum Member {
    Scenario(scenario::Background),
    Workload(Repeater),
}

/// A workload repeated in a process of its own.
struct Repeater {
    /// The co-runner as messages name it (its case name).
    name: String,
    /// Run only in the forked process, on its copy (an iteration needs it mutable).
    workload: RefCell<Box<dyn Workload>>,
    /// The workload's primary metrics whose means are stored, in order.
    averaged: Vec<MetricDef>,
    iterations: MetricDef,
    rate: MetricDef,
    /// `averaged` as stored: prefixed, secondary.
    stored: Vec<MetricDef>,
    /// How long a stop waits for the iteration in progress.
    patience_ns: u64,
}

/// What a co-runner's process writes for its parent.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Report {
    iterations: u64,
    /// From its start to the end of its last whole iteration.
    ran_ns: u64,
    /// Per averaged metric: the sum of its values and how many iterations returned it.
    sums: Vec<(f64, u64)>,
    error: Option<String>,
}

impl CoRunners {
    /// Builds every co-runner of `specs` (`build` makes a workload from its spec, as the runner
    /// makes the case's); `patience_ns(spec)` is how long a stop waits for an iteration of it to
    /// end. Two co-runners whose metrics would share a name are refused.
    pub fn new(
        specs: &[WorkloadSpec],
        build: &dyn Fn(&WorkloadSpec) -> Result<Box<dyn Workload>>,
        patience_ns: &dyn Fn(&WorkloadSpec) -> u64,
    ) -> Result<Self> {
        let mut members = Vec::new();
        let mut metrics: Vec<MetricDef> = Vec::new();
        for spec in specs {
            let member = match spec {
                WorkloadSpec::Scenario(params) => {
                    Member::Scenario(scenario::Background::new(params.scenario.clone()))
                }
                _ => Member::Workload(Repeater::new(spec, build(spec)?, patience_ns(spec))),
            };
            for def in member.metrics() {
                if metrics.iter().any(|d| d.name == def.name) {
                    return Err(Error::invalid(format!(
                        "two co-runners would store a metric named {}: give each workload once",
                        def.name
                    )));
                }
                metrics.push(def);
            }
            members.push(member);
        }
        Ok(CoRunners { members, metrics })
    }

    /// The metrics every iteration of the case gets from its co-runners.
    pub fn metrics(&self) -> &[MetricDef] {
        &self.metrics
    }

    /// Starts every co-runner: the processes first (a fork while a scenario's threads run could
    /// copy a lock one of them holds), then the scenarios.
    pub fn start(&self) -> Result<Running<'_>> {
        let mut running = Running {
            processes: Vec::new(),
            scenarios: Vec::new(),
        };
        for member in &self.members {
            if let Member::Workload(repeater) = member {
                running.processes.push(repeater.start()?);
            }
        }
        for member in &self.members {
            if let Member::Scenario(background) = member {
                running.scenarios.push(background.start()?);
            }
        }
        Ok(running)
    }
}

impl Member {
    fn metrics(&self) -> Vec<MetricDef> {
        match self {
            Member::Scenario(background) => background.metrics().to_vec(),
            Member::Workload(repeater) => [repeater.iterations, repeater.rate]
                .into_iter()
                .chain(repeater.stored.iter().copied())
                .collect(),
        }
    }
}

/// Co-runners started for one iteration. Dropped without [`Running::stop`], they are killed.
pub struct Running<'a> {
    processes: Vec<Process<'a>>,
    scenarios: Vec<BackgroundRun<'a>>,
}

impl Running<'_> {
    /// Stops every co-runner and measures what each achieved; the first failure is the error,
    /// after every co-runner was stopped.
    pub fn stop(self) -> Result<IterationOutput> {
        let mut output = IterationOutput::default();
        let mut first_error = None;
        for process in self.processes {
            match process.stop() {
                Ok(measured) => output.measurements.extend(measured.measurements),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        for run in self.scenarios {
            match run.stop() {
                Ok(measured) => {
                    output.measurements.extend(measured.measurements);
                    output.attachments.extend(measured.attachments);
                }
                Err(e) => {
                    first_error.get_or_insert(Error::failed(format!("its scenario: {e}")));
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(output),
        }
    }
}

impl Repeater {
    fn new(spec: &WorkloadSpec, workload: Box<dyn Workload>, patience_ns: u64) -> Self {
        let prefix = format!("{BACKGROUND_PREFIX}{}_", spec.kind());
        let named = |def: MetricDef, name: String| MetricDef {
            name: scenario::intern(name),
            role: Role::Secondary,
            // A mean of per-iteration percentiles is no percentile of one distribution.
            shape: match def.shape {
                MetricShape::Count => MetricShape::Count,
                _ => MetricShape::Scalar,
            },
            distribution: None,
            restates: None,
            ..def
        };
        let averaged: Vec<MetricDef> = workload
            .metrics()
            .iter()
            .filter(|d| d.role == Role::Primary && d.restates.is_none())
            .copied()
            .collect();
        let stored = averaged
            .iter()
            .map(|d| named(*d, format!("{prefix}{}", d.name)))
            .collect();
        Repeater {
            name: spec.case_name(),
            workload: RefCell::new(workload),
            iterations: MetricDef::secondary_count(
                scenario::intern(format!("{prefix}iterations_count")),
                Better::Higher,
            ),
            rate: MetricDef::secondary(
                scenario::intern(format!("{prefix}iterations_per_sec")),
                "iterations/sec",
                Better::Higher,
            ),
            averaged,
            stored,
            patience_ns,
        }
    }

    fn start(&self) -> Result<Process<'_>> {
        let failed = |what: &str, e: std::io::Error| {
            Error::failed(format!("co-runner `{}`: cannot {what}: {e}", self.name))
        };
        let (stop_read, stop_write) = sys::pipe().map_err(|e| failed("make a pipe", e))?;
        sys::set_nonblocking(stop_read.as_fd()).map_err(|e| failed("make a pipe", e))?;
        let report = sys::memfd("schedlab-co-runner").map_err(|e| failed("make a file", e))?;
        let mut children = ChildSet::apart();
        let child_report = report.try_clone().map_err(|e| failed("make a file", e))?;
        children
            .spawn(|| {
                // The forked process's own copy of the workload: the parent's is never run.
                let mut workload = self.workload.borrow_mut();
                repeat(workload.as_mut(), &self.averaged, &stop_read, child_report)
            })
            .map_err(|e| failed("start its process", e))?;
        Ok(Process {
            owner: self,
            children,
            stop: stop_write,
            report,
        })
    }
}

/// A co-runner's process, running.
struct Process<'a> {
    owner: &'a Repeater,
    children: ChildSet,
    stop: OwnedFd,
    report: OwnedFd,
}

impl Process<'_> {
    /// Asks the process to stop after its current iteration, waits for it (within its patience;
    /// at once on a stop signal), and reads what it achieved.
    fn stop(mut self) -> Result<IterationOutput> {
        let owner = self.owner;
        let _ = sys::write_full(self.stop.as_fd(), b"s");
        let until = sys::monotonic_ns().saturating_add(owner.patience_ns);
        let mut exit = None;
        while exit.is_none() {
            if let Some(signal) = sys::interrupt_signal() {
                self.children.terminate_all(GRACE_NS);
                return Err(Error::Interrupted(signal));
            }
            if sys::monotonic_ns() >= until {
                self.children.terminate_all(GRACE_NS);
                return Err(Error::failed(format!(
                    "co-runner `{}` did not end its iteration within {:.0} s of the case's \
                     iteration's end; it was killed (give it less work per iteration)",
                    owner.name,
                    owner.patience_ns as f64 / 1e9
                )));
            }
            match self.children.reap_one(true) {
                Ok(Some((_, how))) => exit = Some(how),
                Ok(None) => sys::sleep_ns(2_000_000),
                Err(e) => {
                    return Err(Error::failed(format!(
                        "co-runner `{}`: cannot wait for its process: {e}",
                        owner.name
                    )))
                }
            }
        }
        let report = read_report(self.report).map_err(|e| {
            Error::failed(format!(
                "co-runner `{}` ended ({}) without a readable report: {e}",
                owner.name,
                describe(exit)
            ))
        })?;
        if let Some(error) = report.error {
            return Err(Error::failed(format!(
                "co-runner `{}` failed: {error}",
                owner.name
            )));
        }
        if exit != Some(ChildExit::Code(0)) || report.iterations == 0 {
            return Err(Error::failed(format!(
                "co-runner `{}` ended ({}) after {} iterations",
                owner.name,
                describe(exit),
                report.iterations
            )));
        }
        let mut measurements = vec![
            owner.iterations.value(report.iterations as f64),
            owner
                .rate
                .value(report.iterations as f64 / (report.ran_ns.max(1) as f64 / 1e9)),
        ];
        for ((def, source), (sum, count)) in
            owner.stored.iter().zip(&owner.averaged).zip(&report.sums)
        {
            if *count > 0 {
                measurements.push(def.value(sum / *count as f64));
            } else if !source.optional {
                return Err(Error::failed(format!(
                    "co-runner `{}` returned no {} in {} iterations",
                    owner.name, source.name, report.iterations
                )));
            }
        }
        Ok(IterationOutput::from(measurements))
    }
}

fn describe(exit: Option<ChildExit>) -> String {
    match exit {
        Some(ChildExit::Code(code)) => format!("status {code}"),
        Some(ChildExit::Signal(signal)) => format!("killed by {}", sys::signal_name(signal)),
        None => "not reaped".to_string(),
    }
}

fn read_report(file: OwnedFd) -> std::io::Result<Report> {
    let mut file = std::fs::File::from(file);
    file.rewind()?;
    let mut text = String::new();
    file.read_to_string(&mut text)?;
    serde_json::from_str(&text).map_err(std::io::Error::other)
}

/// The co-runner's process: the workload's iterations back to back until a byte arrives on
/// `stop`, then its report into `report`.
fn repeat(
    workload: &mut dyn Workload,
    averaged: &[MetricDef],
    stop: &OwnedFd,
    report: OwnedFd,
) -> sys::TaskCode {
    let began_ns = sys::monotonic_ns();
    let mut out = Report {
        sums: vec![(0.0, 0); averaged.len()],
        ..Report::default()
    };
    // The stop is looked for after each iteration, never before the first: every co-runner
    // completes at least one, however short the case's iteration.
    loop {
        let info = IterationInfo {
            index: u32::try_from(out.iterations).unwrap_or(u32::MAX),
            warmup: false,
        };
        match workload.run_iteration(info) {
            Ok(output) => {
                for (def, (sum, count)) in averaged.iter().zip(&mut out.sums) {
                    let value = output.measurements.iter().find(|m| m.name == def.name);
                    if let Some(value) = value.filter(|m| m.value.is_finite()) {
                        *sum += value.value;
                        *count += 1;
                    }
                }
                out.iterations += 1;
                out.ran_ns = sys::monotonic_ns().saturating_sub(began_ns);
            }
            Err(e) => {
                let mut message = e.to_string();
                if message.chars().count() > MAX_MESSAGE_CHARS {
                    message = message.chars().take(MAX_MESSAGE_CHARS).collect();
                }
                out.error = Some(format!("its iteration {}: {message}", out.iterations + 1));
                break;
            }
        }
        let mut byte = [0u8; 1];
        match sys::read_interruptible(stop.as_fd(), &mut byte) {
            Ok(_) => break,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                out.error = Some(format!("cannot read its stop pipe: {e}"));
                break;
            }
        }
    }
    let mut file = std::fs::File::from(report);
    let written = serde_json::to_vec(&out)
        .map_err(std::io::Error::other)
        .and_then(|bytes| file.write_all(&bytes));
    match written {
        Ok(()) => sys::task_code::OK,
        Err(e) => sys::task_code::from_io_error(&e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A co-runner's process completes at least one iteration however soon it is stopped, and
    /// what it reports is what it did; a failing one is named.
    #[test]
    fn a_co_runner_counts_whole_iterations_and_names_its_failure() {
        let spec =
            |json: serde_json::Value| -> WorkloadSpec { serde_json::from_value(json).unwrap() };
        let pipe = spec(serde_json::json!({"workload": "pipe", "loops": 200}));
        let co_runners =
            CoRunners::new(&[pipe], &WorkloadSpec::build, &|_| 30_000_000_000).unwrap();
        let names: Vec<&str> = co_runners.metrics().iter().map(|d| d.name).collect();
        assert!(names.contains(&"background_pipe_usec_per_op"), "{names:?}");
        assert!(co_runners
            .metrics()
            .iter()
            .all(|d| d.role == Role::Secondary));
        for wait_ns in [0, 200_000_000] {
            let running = co_runners.start().unwrap();
            sys::sleep_ns(wait_ns);
            let measured = running.stop().unwrap();
            let value = |name: &str| {
                measured
                    .measurements
                    .iter()
                    .find(|m| m.name == name)
                    .map(|m| m.value)
            };
            let iterations = value("background_pipe_iterations_count").unwrap();
            assert!(iterations >= 1.0, "{measured:?}");
            assert!(
                value("background_pipe_usec_per_op").unwrap() > 0.0,
                "{measured:?}"
            );
            assert!(value("background_pipe_iterations_per_sec").unwrap() > 0.0);
        }

        let failing = spec(serde_json::json!({"workload": "fake", "fail_at": 0}));
        let co_runners =
            CoRunners::new(&[failing], &WorkloadSpec::build, &|_| 30_000_000_000).unwrap();
        let error = co_runners.start().unwrap().stop().unwrap_err().to_string();
        assert!(
            error.contains("co-runner `fake:") && error.contains("failed"),
            "{error}"
        );
    }
}
