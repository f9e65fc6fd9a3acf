//! The runner: executes a validated plan case by case, iteration by iteration, wrapping each
//! iteration in the secondary counters and handing it to the sink (the store) as soon as it is
//! done, so an interruption or failure loses nothing that finished.
//!
//! Every iteration runs under a watchdog: a deadline (`--iteration-timeout`, else
//! [`default_deadline_ns`]) armed just before the workload starts and disarmed as soon as it
//! returns, so nothing runs beside the timed window. At the deadline the workload's wait wakes,
//! names the tasks that had not finished and stops them; the case is recorded as failed with that
//! report, and the run ends or, with `keep_going`, goes on to the next case (and ends `partial`).
//! Before the deadline the watchdog looks at the tasks every [`look_interval_ns`] (twice what the
//! case is expected to take, from its finished iterations, else its estimate): a task stopped
//! with SIGSTOP cannot finish and its time would include the pause, so it ends the iteration at
//! the first look, whatever the deadline. An iteration that ends in time never sees a look.
//!
//! With `--explain` and `--profile` each case then gets iterations of its own under probes
//! ([`crate::probe`]), after all measured ones: they go to the sink as `ProbeRecord`s, apart
//! from the measured iterations, so nothing that compares cases ever reads them.
//!
//! Every iteration is also held to its declared metrics — the workload's `metrics()` and, for a
//! workload that runs tasks, the runner's own secondary ones: a metric returned but not declared,
//! or declared but not returned, fails the case like a workload error, so no stored run holds a
//! metric nobody described.
use crate::co_runner::{CoRunners, Running};
use crate::counters::{IterationCounters, MachineCounters};
use crate::estimate;
use crate::metric::{self, secondary, Breach, Measurement, MetricDef};
use crate::plan::{CaseSpec, RunPlan};
use crate::probe::{self, ProbeKind, ProbeRecord};
use crate::quiet::{self, Pressure, QuietMark};
use crate::record::{CaseRecord, IterationRecord, RunStatus};
use crate::workload::{tasks, IterationInfo, IterationOutput, Workload, WorkloadSpec};
use crate::{sys, Error};

/// Where finished iterations go. The store implements it; tests can collect in memory.
pub trait RunSink {
    fn record_iteration(
        &mut self,
        case_index: usize,
        case: &CaseSpec,
        iteration: &IterationRecord,
    ) -> Result<(), String>;

    /// A probed or profiled iteration of a case (`--explain`, `--profile`): kept apart from the
    /// measured ones.
    fn record_probe(
        &mut self,
        _case_index: usize,
        _case: &CaseSpec,
        _probe: &ProbeRecord,
    ) -> Result<(), String> {
        Ok(())
    }

    /// A case failed (its workload, or the watchdog): keep why with the case.
    fn record_case_failure(
        &mut self,
        _case_index: usize,
        _case: &CaseSpec,
        _message: &str,
    ) -> Result<(), String> {
        Ok(())
    }

    /// A case has run every iteration it will run for now (its planned ones; with adaptive
    /// stopping, again after the extra ones): the store keeps its summaries.
    fn case_finished(&mut self, _case_index: usize, _case: &CaseSpec) -> Result<(), String> {
        Ok(())
    }
}

/// Sinks that keep nothing (`--no-store`).
pub struct NoSink;

impl RunSink for NoSink {
    fn record_iteration(
        &mut self,
        _: usize,
        _: &CaseSpec,
        _: &IterationRecord,
    ) -> Result<(), String> {
        Ok(())
    }
}

/// Hooks for progress display. They are called between iterations, never inside one.
pub trait RunObserver {
    fn run_starting(&mut self, _plan: &RunPlan) {}
    fn iteration_starting(&mut self, _progress: &Progress<'_>) {}
    fn iteration_finished(&mut self, _progress: &Progress<'_>, _iteration: &IterationRecord) {}
    /// A case failed and `keep_going` moves on: `skipped` planned iterations will not run.
    fn case_failed(&mut self, _case: &CaseSpec, _skipped: u32, _message: &str) {}
    /// schedlab was stopped (Ctrl-Z, SIGSTOP) while the iteration was measured: what it measured
    /// includes the pause, so it is thrown away and run again.
    fn iteration_suspended(&mut self, _progress: &Progress<'_>) {}
    /// A probed or profiled iteration of `case` is about to run.
    fn probe_starting(&mut self, _case: &CaseSpec, _kind: ProbeKind, _index: u32) {}
    /// ... and has been recorded.
    fn probe_finished(&mut self, _case: &CaseSpec, _probe: &ProbeRecord) {}
}

/// How many times in a row an iteration is run again after schedlab was stopped while measuring
/// it, before its case fails.
pub const SUSPENDED_RETRIES: u32 = 3;

/// No progress display.
pub struct Silent;

impl RunObserver for Silent {}

/// Where the run is, for progress display.
pub struct Progress<'a> {
    pub case_index: usize,
    pub case_count: usize,
    pub case: &'a CaseSpec,
    pub iteration: IterationInfo,
    pub iterations_in_case: u32,
}

/// The result of executing a plan.
#[derive(Debug)]
pub struct RunOutcome {
    pub status: RunStatus,
    pub error: Option<Error>,
    pub cases: Vec<CaseRecord>,
}

impl RunOutcome {
    fn stop(status: RunStatus, error: Error, cases: Vec<CaseRecord>) -> Self {
        RunOutcome {
            status,
            error: Some(error),
            cases,
        }
    }
}

/// The default deadline is never shorter than this.
pub const DEADLINE_FLOOR_NS: u64 = 30_000_000_000;
/// ... and is this many times the slowest of the case's median iteration and its estimate.
pub const DEADLINE_FACTOR: u64 = 10;
/// The first iteration of a case whose workload has no estimate has nothing to scale: it gets
/// this long.
pub const DEADLINE_UNKNOWN_NS: u64 = 600_000_000_000;

/// The default deadline of an iteration: [`DEADLINE_FACTOR`] × the slowest of the median wall
/// time of the case's iterations finished so far (`finished_ns`) and the workload's rule-of-thumb
/// estimate, at least [`DEADLINE_FLOOR_NS`]; [`DEADLINE_UNKNOWN_NS`] while neither is known.
/// Generous on purpose: a deadline that fires on a slow but healthy iteration loses a case.
pub fn default_deadline_ns(finished_ns: &[u64], estimate_sec: Option<f64>) -> u64 {
    let median = median_ns(finished_ns);
    let estimate = estimate_sec
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(|s| (s * 1e9).min(u64::MAX as f64 / 100.0) as u64);
    if median.is_none() && estimate.is_none() {
        return DEADLINE_UNKNOWN_NS;
    }
    median
        .unwrap_or(0)
        .max(estimate.unwrap_or(0))
        .saturating_mul(DEADLINE_FACTOR)
        .max(DEADLINE_FLOOR_NS)
}

/// The watchdog looks at an iteration's tasks no sooner than this after its start...
pub const LOOK_FLOOR_NS: u64 = 30_000_000_000;
/// ... and this many times what an iteration of the case is expected to take.
pub const LOOK_FACTOR: u64 = 2;

/// How often the watchdog looks for stopped tasks during an iteration: [`LOOK_FACTOR`] × the
/// median wall time of the case's iterations finished so far (`finished_ns`, warm-up included:
/// measured on this host, minutes ago), else × the estimate, at least [`LOOK_FLOOR_NS`]. Unlike
/// the deadline it need not be generous: a look ends an iteration only when it finds a task
/// stopped, and a healthy iteration is over long before the first.
pub fn look_interval_ns(finished_ns: &[u64], estimate_sec: Option<f64>) -> u64 {
    let estimate = estimate_sec
        .filter(|s| s.is_finite() && *s > 0.0)
        .map(|s| (s * 1e9).min(u64::MAX as f64 / 100.0) as u64);
    median_ns(finished_ns)
        .or(estimate)
        .unwrap_or(0)
        .saturating_mul(LOOK_FACTOR)
        .max(LOOK_FLOOR_NS)
}

fn median_ns(values: &[u64]) -> Option<u64> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    let mid = sorted.len() / 2;
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => Some(sorted[mid]),
        _ => Some(sorted[mid - 1] / 2 + sorted[mid] / 2),
    }
}

/// Runs every case of `plan`: `plan.warmup` warm-up iterations then `plan.iterations` measured
/// ones, pausing `plan.cooldown_ms` between cases; then, with adaptive stopping, more iterations
/// of the cases whose confidence interval is still too wide. Every iteration runs under the
/// watchdog. Stops at the first failure or interruption, keeping everything finished before it;
/// with `plan.keep_going` a failed case is recorded and the next one runs.
pub fn execute(
    plan: &RunPlan,
    sink: &mut dyn RunSink,
    observer: &mut dyn RunObserver,
) -> RunOutcome {
    execute_built(
        plan,
        &WorkloadSpec::build,
        &Pressure::system(),
        sink,
        observer,
    )
}

/// How a case's workload is made from its spec; tests substitute workloads no spec names.
type Build<'a> = &'a dyn Fn(&WorkloadSpec) -> crate::Result<Box<dyn Workload>>;

/// [`execute`] with each case's workload made by `build`.
fn execute_built(
    plan: &RunPlan,
    build: Build<'_>,
    pressure: &Pressure,
    sink: &mut dyn RunSink,
    observer: &mut dyn RunObserver,
) -> RunOutcome {
    let cases: Vec<CaseRecord> = plan
        .cases
        .iter()
        .map(|spec| CaseRecord {
            spec: spec.clone(),
            iterations: Vec::new(),
            error: None,
        })
        .collect();
    let watchdog = match sys::Watchdog::for_current_thread() {
        Ok(watchdog) => watchdog,
        Err(e) => {
            let error = Error::failed(format!(
                "cannot create the iteration watchdog (a POSIX timer): {e}"
            ));
            return RunOutcome::stop(RunStatus::Failed, error, cases);
        }
    };
    let mut run = Execution {
        plan,
        build,
        sink,
        observer,
        cases,
        workloads: plan.cases.iter().map(|_| None).collect(),
        backgrounds: plan.cases.iter().map(|_| None).collect(),
        watchdog,
        durations: vec![Vec::new(); plan.cases.len()],
        failed: Vec::new(),
        threads_before: 0,
        availability: None,
        pressure,
    };
    match run.all() {
        Ok(()) => match run.failures() {
            None => RunOutcome {
                status: RunStatus::Complete,
                error: None,
                cases: run.cases,
            },
            Some((status, error)) => RunOutcome::stop(status, error, run.cases),
        },
        Err(e) => RunOutcome::stop(status_of(&e), e, run.cases),
    }
}

/// Why a step stopped: a case failed (the run may go on), or the run must end (a signal, the
/// store).
enum Stop {
    Case(Error),
    Run(Error),
}

/// The state of one execution: what has been recorded so far and the workloads built for it.
struct Execution<'a> {
    plan: &'a RunPlan,
    build: Build<'a>,
    sink: &'a mut dyn RunSink,
    observer: &'a mut dyn RunObserver,
    cases: Vec<CaseRecord>,
    /// Built when the case starts; dropped when it fails.
    workloads: Vec<Option<Box<dyn Workload>>>,
    /// The co-runners of each case that has some, built with its workload.
    backgrounds: Vec<Option<CoRunners>>,
    watchdog: sys::Watchdog,
    /// Wall time of every finished iteration, per case, for the default deadline.
    durations: Vec<Vec<u64>>,
    /// Cases that failed, in order.
    failed: Vec<usize>,
    /// Workload threads alive before the last iteration started.
    threads_before: usize,
    /// What this machine offers the probes, found before the first probed iteration.
    availability: Option<probe::Availability>,
    /// Where the CPU pressure is read.
    pressure: &'a Pressure,
}

impl Execution<'_> {
    fn all(&mut self) -> Result<(), Error> {
        self.observer.run_starting(self.plan);
        let total = self.plan.warmup + self.plan.iterations;
        for case_index in 0..self.plan.cases.len() {
            if case_index > 0 {
                pause(self.plan.cooldown_ms)?;
            }
            let result = self.case(case_index, total);
            self.settle(case_index, result)?;
            self.finished(case_index)?;
        }
        if let (Some(ci_pct), Some(max)) = (self.plan.until_ci_pct, self.plan.max_iterations) {
            let mut extended = vec![false; self.cases.len()];
            loop {
                let unresolved: Vec<usize> = (0..self.cases.len())
                    .filter(|&i| {
                        let case = &self.cases[i];
                        !self.failed.contains(&i)
                            && case.measured().count() < max as usize
                            && widest_ci_pct(case).is_none_or(|w| w > ci_pct)
                    })
                    .collect();
                if unresolved.is_empty() {
                    break;
                }
                for case_index in unresolved {
                    let index = self.cases[case_index].iterations.len() as u32;
                    let result = self.iteration(case_index, index, false);
                    self.settle(case_index, result)?;
                    extended[case_index] = true;
                }
            }
            for (case_index, _) in extended.iter().enumerate().filter(|(_, e)| **e) {
                self.finished(case_index)?;
            }
        }
        self.probes()
    }

    /// The probed, then the profiled, iterations of every case that did not fail.
    fn probes(&mut self) -> Result<(), Error> {
        if self.plan.explain == 0 && !self.plan.profile {
            return Ok(());
        }
        if self.plan.explain > 0 {
            self.availability = Some(probe::availability());
        }
        let kinds: Vec<(ProbeKind, u32)> = (0..self.plan.explain)
            .map(|i| (ProbeKind::Explain, i))
            .chain(self.plan.profile.then_some((ProbeKind::Profile, 0)))
            .collect();
        for case_index in 0..self.plan.cases.len() {
            for &(kind, index) in &kinds {
                if self.failed.contains(&case_index) || self.workloads[case_index].is_none() {
                    break;
                }
                let result = self.probe_iteration(case_index, kind, index);
                self.settle(case_index, result)?;
            }
        }
        Ok(())
    }

    /// Tells the sink a case has run what it will run for now.
    fn finished(&mut self, case_index: usize) -> Result<(), Error> {
        self.sink
            .case_finished(case_index, &self.plan.cases[case_index])
            .map_err(|e| Error::failed(format!("cannot store the case's summaries: {e}")))
    }

    /// One iteration under probes (`Explain`) or the profiler (`Profile`): run as a measured
    /// one is, with the probes opened before it and read after it, and recorded as a
    /// [`ProbeRecord`].
    fn probe_iteration(
        &mut self,
        case_index: usize,
        kind: ProbeKind,
        index: u32,
    ) -> Result<(), Stop> {
        let limits = self.limits(case_index)?;
        let plan = self.plan;
        let case = &plan.cases[case_index];
        self.observer.probe_starting(case, kind, index);
        // After every measured iteration, so a workload that numbers its iterations sees a new one.
        let info = IterationInfo {
            index: self.cases[case_index].iterations.len() as u32
                + if kind == ProbeKind::Profile {
                    plan.explain
                } else {
                    index
                },
            warmup: false,
        };
        let Some(workload) = self.workloads[case_index].as_mut() else {
            return Err(no_workload(case));
        };
        let mut probes = Probes::open(kind, self.availability.as_ref());
        // The same co-runners as the measured iterations had: the probes explain that setting.
        let co_runners = start_co_runners(self.backgrounds[case_index].as_ref(), case)?;
        self.threads_before = tasks::live_task_threads();
        let around = Around::open(workload.as_ref(), self.pressure);
        let began_ns = sys::monotonic_ns();
        limits.arm(&mut self.watchdog)?;
        if let Some(explainer) = probes.explainer.as_mut() {
            explainer.start();
        }
        let profiling = probes
            .profiler
            .as_ref()
            .map(|p| p.start().map_err(|u| probes.unavailable.push(u)).is_ok())
            .unwrap_or(false);
        let result = workload.run_iteration(info);
        if let Some(explainer) = probes.explainer.as_mut() {
            explainer.stop();
        }
        if let Some(profiler) = &probes.profiler {
            profiler.stop();
        }
        let took_ns = sys::monotonic_ns().saturating_sub(began_ns);
        let expired = sys::deadline_expired();
        let _ = self.watchdog.disarm();
        let ended = around.close(self.pressure, result, took_ns, expired);
        let _ = sys::take_continued();
        let declared = declared_metrics(workload.as_ref());
        let started_at_ns = ended.started_at_ns;
        // The co-runners' measurements are stored with the probed iteration as with a measured
        // one (their latency histograms are the measured iterations' alone); a failure of theirs
        // is this iteration's.
        let output = self.checked_output(case_index, info, limits, ended, declared, co_runners)?;
        let record = probes.record(kind, index, started_at_ns, output.measurements, profiling);
        self.sink
            .record_probe(case_index, case, &record)
            .map_err(|e| not_stored(e, "the probed iteration"))?;
        self.observer.probe_finished(case, &record);
        Ok(())
    }

    /// What an iteration's result means for the run: its output, or why the case or the run
    /// stops (a signal, a look that found a task stopped, the deadline, the workload's error).
    fn judge(
        &self,
        case_index: usize,
        info: IterationInfo,
        deadline_ns: u64,
        took_ns: u64,
        result: crate::Result<IterationOutput>,
        expired: bool,
    ) -> Result<IterationOutput, Stop> {
        match result {
            Ok(output) => Ok(output),
            Err(Error::Interrupted(signal)) => Err(Stop::Run(Error::Interrupted(signal))),
            // Before the deadline: a look found a task stopped.
            Err(Error::TimedOut(detail)) if !expired => Err(Stop::Case(self.stopped_task(
                case_index,
                info,
                took_ns,
                deadline_ns,
                &detail,
            ))),
            Err(Error::TimedOut(detail)) => Err(Stop::Case(self.timed_out(
                case_index,
                info,
                deadline_ns,
                &detail,
            ))),
            // Whatever a workload made of the watchdog's interruption, the deadline is the cause.
            Err(e) if expired => {
                let detail = e.to_string();
                Err(Stop::Case(self.timed_out(
                    case_index,
                    info,
                    deadline_ns,
                    &detail,
                )))
            }
            Err(e) => Err(Stop::Case(e)),
        }
    }

    /// An iteration's output as the case keeps it: judged (see `judge`), with the runner's
    /// measurements and its co-runners' (stopped here, after the iteration's counters), and held
    /// to the metrics `declared` for it and its co-runners.
    fn checked_output(
        &self,
        case_index: usize,
        info: IterationInfo,
        limits: Limits,
        ended: Ended,
        mut declared: Vec<MetricDef>,
        co_runners: Option<Running<'_>>,
    ) -> Result<IterationOutput, Stop> {
        let beside = co_runners.map(Running::stop);
        let mut output = self.judge(
            case_index,
            info,
            limits.deadline_ns,
            ended.took_ns,
            ended.result,
            ended.expired,
        )?;
        output.measurements.extend(ended.secondary);
        if let (Some(beside), Some(background)) = (beside, self.backgrounds[case_index].as_ref()) {
            let case = &self.plan.cases[case_index];
            let beside = beside.map_err(|e| co_runners_failed(e, case, info.index))?;
            declared.extend_from_slice(background.metrics());
            output.measurements.extend(beside.measurements);
            output.attachments.extend(beside.attachments);
        }
        let breaches = metric::check_declared(&declared, &output.measurements);
        if !breaches.is_empty() {
            return Err(Stop::Case(self.undeclared(case_index, info, &breaches)));
        }
        Ok(output)
    }

    fn case(&mut self, case_index: usize, total: u32) -> Result<(), Stop> {
        let case = &self.plan.cases[case_index];
        let workload = (self.build)(&case.workload).map_err(Stop::Case)?;
        self.workloads[case_index] = Some(workload);
        if !case.background.is_empty() {
            let patience =
                |spec: &WorkloadSpec| default_deadline_ns(&[], Some(spec.estimate_sec()));
            let co_runners =
                CoRunners::new(&case.background, self.build, &patience).map_err(|e| {
                    Stop::Case(Error::failed(format!(
                        "case `{}`: cannot build its background: {e}",
                        case.name
                    )))
                })?;
            self.backgrounds[case_index] = Some(co_runners);
        }
        for index in 0..total {
            self.iteration(case_index, index, index < self.plan.warmup)?;
        }
        Ok(())
    }

    /// After a step of a case: a failed case is recorded with why; the run ends unless
    /// `keep_going` is set and the case left no thread running (a thread cannot be killed, and a
    /// stuck one would run beside every later measurement; ending the run ends the process).
    fn settle(&mut self, case_index: usize, result: Result<(), Stop>) -> Result<(), Error> {
        let error = match result {
            Ok(()) => return Ok(()),
            Err(Stop::Run(error)) => return Err(error),
            Err(Stop::Case(error)) => error,
        };
        let message = error.to_string();
        self.cases[case_index].error = Some(message.clone());
        self.failed.push(case_index);
        let ran_tasks = self.workloads[case_index]
            .take()
            .is_some_and(|w| w.runs_tasks());
        self.sink
            .record_case_failure(case_index, &self.plan.cases[case_index], &message)
            .map_err(|e| {
                Error::failed(format!(
                    "cannot store the case's failure: {e} (the case failed: {message})"
                ))
            })?;
        if !self.plan.keep_going {
            return Err(error);
        }
        if ran_tasks {
            let left = self.wait_for_task_threads();
            if left > 0 {
                return Err(Error::failed(format!(
                    "{message}; the run ends here despite --keep-going: {} of the case still \
                     running cannot be stopped, and measuring beside them would be wrong \
                     (they end when schedlab exits)",
                    tasks::threads(left)
                )));
            }
        }
        let planned = self.plan.warmup + self.plan.iterations;
        let skipped = planned.saturating_sub(self.cases[case_index].iterations.len() as u32);
        self.observer
            .case_failed(&self.plan.cases[case_index], skipped, &message);
        Ok(())
    }

    /// Gives a failed case's threads the grace period to return; how many are still running.
    fn wait_for_task_threads(&self) -> usize {
        let left = || tasks::live_task_threads().saturating_sub(self.threads_before);
        let until = sys::monotonic_ns().saturating_add(tasks::GRACE_NS);
        while left() > 0 && sys::monotonic_ns() < until {
            sys::sleep_ns(10_000_000);
        }
        left()
    }

    /// How a run that reached its end went when `keep_going` carried it past failed cases:
    /// `partial` while some case completed (the run is kept, not counted complete), `failed` when
    /// every case failed; the error names the failures. `None` when no case failed.
    fn failures(&self) -> Option<(RunStatus, Error)> {
        let error_of = |i: usize| self.cases[i].error.clone().unwrap_or_default();
        let (failed, cases) = (self.failed.len(), self.cases.len());
        let first = *self.failed.first()?;
        if failed == cases {
            let error = if cases == 1 {
                error_of(first)
            } else {
                format!(
                    "every one of the {cases} cases failed (--keep-going ran them all); the first: {}",
                    error_of(first)
                )
            };
            return Some((RunStatus::Failed, Error::failed(error)));
        }
        let which = if failed == 1 { ":" } else { "; the first:" };
        let error = format!(
            "partial run: {failed} of {cases} cases failed (--keep-going ran the others){which} {}",
            error_of(first)
        );
        Some((RunStatus::Partial, Error::failed(error)))
    }

    fn deadline_ns(&self, case_index: usize) -> u64 {
        match self.plan.iteration_timeout_ms {
            Some(ms) => ms.saturating_mul(1_000_000),
            None => default_deadline_ns(
                &self.durations[case_index],
                estimate::deadline_basis_sec(self.plan, &self.plan.cases[case_index]),
            ),
        }
    }

    fn look_interval_ns(&self, case_index: usize) -> u64 {
        look_interval_ns(
            &self.durations[case_index],
            estimate::deadline_basis_sec(self.plan, &self.plan.cases[case_index]),
        )
    }

    /// Before an iteration, measured or probed: a stop signal ends the run here; else the
    /// iteration's limits, from the case's iterations so far.
    fn limits(&self, case_index: usize) -> Result<Limits, Stop> {
        if let Some(signal) = sys::interrupt_signal() {
            return Err(Stop::Run(Error::Interrupted(signal)));
        }
        Ok(Limits {
            deadline_ns: self.deadline_ns(case_index),
            look_ns: self.look_interval_ns(case_index),
        })
    }

    fn iteration(&mut self, case_index: usize, index: u32, warmup: bool) -> Result<(), Stop> {
        let limits = self.limits(case_index)?;
        let plan = self.plan;
        let case = &plan.cases[case_index];
        let info = IterationInfo { index, warmup };
        let progress = Progress {
            case_index,
            case_count: plan.cases.len(),
            case,
            iteration: info,
            iterations_in_case: (plan.warmup + plan.iterations).max(index + 1),
        };
        self.observer.iteration_starting(&progress);
        let Some(workload) = self.workloads[case_index].as_mut() else {
            return Err(no_workload(case));
        };
        // The guard waits before the co-runners start: the quiet it waits for is the machine's.
        let waited = match &plan.quiet {
            Some(guard) => Some(
                self.pressure
                    .wait_quiet(guard, quiet::SAMPLE_NS)
                    .map_err(Stop::Run)?,
            ),
            None => None,
        };
        // Co-runners start before the iteration and its counters, and stop after them: their
        // CPU time, switches and exits are not the workload's.
        let background = self.backgrounds[case_index].as_ref();
        let co_runners = start_co_runners(background, case)?;
        let mut suspensions = 0;
        let ended = loop {
            self.threads_before = tasks::live_task_threads();
            let around = Around::open(workload.as_ref(), self.pressure);
            limits.arm(&mut self.watchdog)?;
            let began_ns = sys::monotonic_ns();
            let result = workload.run_iteration(info);
            let took_ns = sys::monotonic_ns().saturating_sub(began_ns);
            let expired = sys::deadline_expired();
            let _ = self.watchdog.disarm();
            let ended = around.close(self.pressure, result, took_ns, expired);
            let stopped = matches!(ended.result, Err(Error::Interrupted(_)));
            if !sys::take_continued() || stopped {
                break ended;
            }
            suspensions += 1;
            if ended.result.is_ok() && suspensions <= SUSPENDED_RETRIES {
                self.observer.iteration_suspended(&progress);
                continue;
            }
            return Err(suspended(case, info, suspensions, ended.result.is_ok()));
        };
        let declared = declared_metrics(workload.as_ref());
        let (started_at_ns, took_ns, pressure_pct) =
            (ended.started_at_ns, ended.took_ns, ended.pressure_pct);
        let output = self.checked_output(case_index, info, limits, ended, declared, co_runners)?;
        // A case's own co-runners make pressure by design: only the wait before it is judged.
        let own_pressure = background.is_none().then_some(pressure_pct).flatten();
        let quiet = plan
            .quiet
            .as_ref()
            .zip(waited)
            .map(|(guard, waited)| QuietMark::of(guard, &waited, own_pressure));
        let record = IterationRecord {
            index,
            warmup,
            started_at_ns,
            measurements: output.measurements,
            attachments: output.attachments,
            quiet,
        };
        self.sink
            .record_iteration(case_index, case, &record)
            .map_err(|e| not_stored(e, "the iteration"))?;
        self.observer.iteration_finished(&progress, &record);
        self.cases[case_index].iterations.push(record);
        self.durations[case_index].push(took_ns);
        Ok(())
    }

    /// The error of an iteration whose metrics are not the ones declared: the case, the
    /// workload, and each metric with what is wrong with it and who declares it.
    fn undeclared(&self, case_index: usize, info: IterationInfo, breaches: &[Breach]) -> Error {
        let case = &self.plan.cases[case_index];
        let declarer = |name: &str| {
            if secondary::all().any(|d| d.name == name) {
                "the runner"
            } else {
                "the workload"
            }
        };
        let details: Vec<String> = breaches
            .iter()
            .map(|breach| match breach {
                Breach::Undeclared(name) => format!(
                    "`{name}` is undeclared (returned, but neither the workload nor the runner \
                     declares it)"
                ),
                Breach::Missing(name) => format!(
                    "`{name}` is missing (declared by {}, not returned)",
                    declarer(name)
                ),
                Breach::Repeated(name) => format!("`{name}` was returned more than once"),
                Breach::NotFinite(name, value) => {
                    format!("`{name}` was returned as {value}, not a finite number")
                }
                Breach::Misdescribed(name) => format!(
                    "`{name}` was returned with a unit, direction, role or shape other than {} \
                     declares",
                    declarer(name)
                ),
            })
            .collect();
        Error::failed(format!(
            "case `{}`, iteration {}: workload `{}` broke its declared metrics: {}",
            case.name,
            info.index + 1,
            case.workload.kind(),
            details.join("; ")
        ))
    }

    /// A look's report: which case and iteration, how far in, and the tasks as the workload found
    /// them (the stopped one first) and stopped them.
    fn stopped_task(
        &self,
        case_index: usize,
        info: IterationInfo,
        took_ns: u64,
        deadline_ns: u64,
        detail: &str,
    ) -> Error {
        let kind = if info.warmup { " (warm-up)" } else { "" };
        Error::TimedOut(format!(
            "case `{}`, iteration {}{kind}: a task was found stopped (SIGSTOP or Ctrl-Z) {:.0} s in, \
             before the deadline of {} s: it cannot finish while stopped, and the iteration's time \
             would include the pause; {detail}",
            self.plan.cases[case_index].name,
            info.index + 1,
            took_ns as f64 / 1e9,
            deadline_ns as f64 / 1e9
        ))
    }

    /// The watchdog's report: which case and iteration, which deadline, and what the workload
    /// found stuck and did about it.
    fn timed_out(
        &self,
        case_index: usize,
        info: IterationInfo,
        deadline_ns: u64,
        detail: &str,
    ) -> Error {
        let kind = if info.warmup { " (warm-up)" } else { "" };
        let rule = if self.plan.iteration_timeout_ms.is_some() {
            "--iteration-timeout"
        } else {
            "the default deadline; --iteration-timeout sets another"
        };
        let detail = if detail.is_empty() {
            "the workload stopped at its next check"
        } else {
            detail
        };
        Error::TimedOut(format!(
            "case `{}`, iteration {}{kind}: no result within {} s ({rule}); {detail}",
            self.plan.cases[case_index].name,
            info.index + 1,
            deadline_ns as f64 / 1e9
        ))
    }
}

/// An iteration's deadline, and how often the watchdog looks at its tasks before it.
#[derive(Clone, Copy)]
struct Limits {
    deadline_ns: u64,
    look_ns: u64,
}

impl Limits {
    /// Arms the watchdog for one run of the iteration's workload. Always inlined: it stands
    /// right beside the timed window.
    #[inline(always)]
    fn arm(self, watchdog: &mut sys::Watchdog) -> Result<(), Stop> {
        watchdog
            .arm(self.deadline_ns, Some(self.look_ns))
            .map_err(|e| {
                Stop::Run(Error::failed(format!(
                    "cannot arm the iteration watchdog: {e}"
                )))
            })
    }
}

/// The runner's counters around one run of an iteration's workload: opened just before the
/// watchdog is armed, closed as soon as it is disarmed. Both always inlined: they bracket the
/// timed window.
struct Around {
    started_at_ns: i64,
    counters: Option<IterationCounters>,
    machine: MachineCounters,
}

impl Around {
    #[inline(always)]
    fn open(workload: &dyn Workload, pressure: &Pressure) -> Self {
        let started_at_ns = sys::realtime_ns();
        let counters = workload.runs_tasks().then(IterationCounters::start);
        let machine = MachineCounters::start(pressure);
        // A continue from before this iteration is not this iteration's.
        sys::take_continued();
        Around {
            started_at_ns,
            counters,
            machine,
        }
    }

    /// How the run ended (`result`, in `took_ns`, past the deadline or not), with the counters'
    /// measurements.
    #[inline(always)]
    fn close(
        self,
        pressure: &Pressure,
        result: crate::Result<IterationOutput>,
        took_ns: u64,
        expired: bool,
    ) -> Ended {
        let mut secondary = self
            .counters
            .map(IterationCounters::finish)
            .unwrap_or_default();
        let (machine, pressure_pct) = self.machine.finish(pressure);
        secondary.extend(machine);
        Ended {
            started_at_ns: self.started_at_ns,
            result,
            took_ns,
            expired,
            secondary,
            pressure_pct,
        }
    }
}

/// How one run of an iteration's workload ended, with the runner's measurements around it.
struct Ended {
    /// Wall-clock start, nanoseconds since the Unix epoch.
    started_at_ns: i64,
    result: crate::Result<IterationOutput>,
    took_ns: u64,
    /// The watchdog's deadline had passed.
    expired: bool,
    /// The runner's measures of the tasks and of the machine.
    secondary: Vec<Measurement>,
    /// The machine's CPU pressure during the run, when it could be read.
    pressure_pct: Option<f64>,
}

/// The probes of one probed iteration: the explainer's or the profiler's, and what of them this
/// machine could not give.
struct Probes<'a> {
    explainer: Option<probe::Explainer<'a>>,
    profiler: Option<probe::Profiler>,
    unavailable: Vec<probe::Unavailable>,
}

impl<'a> Probes<'a> {
    /// Opens what `kind` asks for; `availability`, what the machine offers, is known before
    /// the first explained iteration.
    fn open(kind: ProbeKind, availability: Option<&'a probe::Availability>) -> Self {
        let mut unavailable = Vec::new();
        let explainer = match (kind, availability) {
            (ProbeKind::Explain, Some(availability)) => Some(probe::Explainer::open(availability)),
            _ => None,
        };
        let profiler = match kind {
            ProbeKind::Profile => probe::Profiler::open()
                .map_err(|u| unavailable.push(u))
                .ok(),
            ProbeKind::Explain => None,
        };
        Probes {
            explainer,
            profiler,
            unavailable,
        }
    }

    /// The probed iteration's record: the `measurements` taken under the probes and what the
    /// probes found (a profile only when its sampling started: `profiling`).
    fn record(
        self,
        kind: ProbeKind,
        index: u32,
        started_at_ns: i64,
        measurements: Vec<Measurement>,
        profiling: bool,
    ) -> ProbeRecord {
        let mut record = ProbeRecord {
            kind,
            index,
            started_at_ns,
            measurements,
            explanatory: Vec::new(),
            unavailable: self.unavailable,
            attachments: Vec::new(),
            symbols: Vec::new(),
        };
        if let Some(explainer) = self.explainer {
            let (explanatory, unavailable, attachments) = explainer.finish(sys::current_tid());
            record.explanatory = explanatory;
            record.unavailable.extend(unavailable);
            record.attachments = attachments;
        }
        if let Some(profiler) = self.profiler.filter(|_| profiling) {
            let (symbols, measurements) = profiler.finish();
            record.symbols = symbols;
            record.explanatory = measurements;
        }
        record
    }
}

/// Why an iteration cannot run: its case has no workload (never built, or dropped when the case
/// failed).
fn no_workload(case: &CaseSpec) -> Stop {
    Stop::Run(Error::failed(format!(
        "case `{}` has no workload",
        case.name
    )))
}

/// Why a case fails when schedlab was stopped (Ctrl-Z, SIGSTOP) while measuring its iteration:
/// `suspensions` times in a row, or once while the iteration did not finish (`finished` false).
fn suspended(case: &CaseSpec, info: IterationInfo, suspensions: u32, finished: bool) -> Stop {
    let what = if finished {
        format!("{suspensions} times in a row")
    } else {
        // Its deadline (or any failure) came while it was stopped: not the workload's.
        "and did not finish".to_string()
    };
    Stop::Case(Error::failed(format!(
        "{} iteration {} of case `{}` was suspended (Ctrl-Z or SIGSTOP: schedlab was \
         stopped while it measured) {what}; the case fails rather than keep a time that \
         includes the pause",
        if info.warmup { "warm-up" } else { "measured" },
        info.index + 1,
        case.name,
    )))
}

/// Why the run stops when `what` could not be stored: a store stops waiting for a busy database
/// once a stop signal has arrived, and the run then ends as the signal asked, without it.
fn not_stored(error: impl std::fmt::Display, what: &str) -> Stop {
    Stop::Run(match sys::interrupt_signal() {
        Some(signal) => Error::Interrupted(signal),
        None => Error::failed(format!("cannot store {what}: {error}")),
    })
}

/// Starts a case's co-runners, if it has any, before an iteration (measured or probed).
fn start_co_runners<'a>(
    background: Option<&'a CoRunners>,
    case: &CaseSpec,
) -> Result<Option<Running<'a>>, Stop> {
    match background.map(CoRunners::start).transpose() {
        Ok(started) => Ok(started),
        Err(Error::Interrupted(signal)) => Err(Stop::Run(Error::Interrupted(signal))),
        Err(e) => Err(Stop::Case(Error::failed(format!(
            "case `{}`: cannot start its background: {e}",
            case.name
        )))),
    }
}

/// What stopping a case's co-runners after its iteration `index` (from 0) ended in, when it failed.
fn co_runners_failed(error: Error, case: &CaseSpec, index: u32) -> Stop {
    match error {
        Error::Interrupted(signal) => Stop::Run(Error::Interrupted(signal)),
        e => Stop::Case(Error::failed(format!(
            "case `{}`, iteration {}: its background failed: {e}",
            case.name,
            index + 1
        ))),
    }
}

/// The metrics an iteration of `workload` must return: its own, the runner's measures of its
/// tasks when it runs tasks, and the machine's around every iteration.
fn declared_metrics(workload: &dyn Workload) -> Vec<MetricDef> {
    let tasks: &[MetricDef] = if workload.runs_tasks() {
        secondary::TASKS
    } else {
        &[]
    };
    workload
        .metrics()
        .iter()
        .chain(tasks)
        .chain(secondary::MACHINE)
        .copied()
        .collect()
}

/// Sleeps between cases (or between runs); a signal ends the pause with `Interrupted`.
pub fn pause(ms: u64) -> Result<(), Error> {
    match sys::sleep_unless_interrupted(ms.saturating_mul(1_000_000)) {
        Some(signal) => Err(Error::Interrupted(signal)),
        None => Ok(()),
    }
}

/// The widest 95 % CI half-width, in percent, over the case's primary metrics: the t interval of
/// the mean of the log values, so it reads as a relative precision. `None` before it can be known.
pub fn widest_ci_pct(case: &CaseRecord) -> Option<f64> {
    let mut widest: Option<f64> = None;
    let first = case.measured().next()?;
    for m in first
        .measurements
        .iter()
        .filter(|m| m.role == crate::metric::Role::Primary)
    {
        let logs: Vec<f64> = case
            .measured()
            .filter_map(|it| it.measurements.iter().find(|x| x.name == m.name))
            .filter(|x| x.value > 0.0)
            .map(|x| x.value.ln())
            .collect();
        let ci = schedlab_stats::ttest::one_sample_t_test(&logs, 0.95).ok()?;
        let half = ((ci.ci.high - ci.ci.low) / 2.0).exp_m1() * 100.0;
        widest = Some(widest.map_or(half, |w: f64| w.max(half)));
    }
    widest
}

fn status_of(error: &Error) -> RunStatus {
    match error {
        Error::Interrupted(_) => RunStatus::Interrupted,
        Error::InvalidInput(_)
        | Error::InvalidParam { .. }
        | Error::RunFailed(_)
        | Error::TimedOut(_) => RunStatus::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::{Better, MetricShape};
    use crate::workload::fake::{FakeParams, FakeWorkload};
    use crate::workload::IterationOutput;

    /// Keeps (case, iteration, warm-up) of every iteration, (case, message) of every failure and
    /// (case, iterations stored by then) of every finished case; or, given an error, refuses every
    /// iteration with it (a store whose disk is full).
    #[derive(Default)]
    struct Collect(
        Vec<(usize, u32, bool)>,
        Vec<(usize, String)>,
        Vec<(usize, usize)>,
        Option<&'static str>,
    );

    impl RunSink for Collect {
        fn record_iteration(
            &mut self,
            case: usize,
            _: &CaseSpec,
            it: &IterationRecord,
        ) -> Result<(), String> {
            if let Some(error) = self.3 {
                return Err(error.into());
            }
            self.0.push((case, it.index, it.warmup));
            Ok(())
        }

        fn record_case_failure(
            &mut self,
            case: usize,
            _: &CaseSpec,
            message: &str,
        ) -> Result<(), String> {
            self.1.push((case, message.to_string()));
            Ok(())
        }

        fn case_finished(&mut self, case: usize, _: &CaseSpec) -> Result<(), String> {
            let stored = self.0.iter().filter(|(c, _, _)| *c == case).count();
            self.2.push((case, stored));
            Ok(())
        }
    }

    /// Two cases, each with a name of its own (fake's leaves the seed out).
    fn plan(fail_at: Option<u32>) -> RunPlan {
        let fake = |seed, value_usec| {
            WorkloadSpec::Fake(FakeParams {
                seed,
                value_usec,
                fail_at,
                ..Default::default()
            })
        };
        RunPlan::new(None, None, 3, 1, vec![fake(1, 100.0), fake(2, 200.0)]).unwrap()
    }

    #[test]
    fn runs_warmups_then_measured_iterations_for_every_case() {
        let mut sink = Collect::default();
        let outcome = execute(&plan(None), &mut sink, &mut Silent);
        assert_eq!(outcome.status, RunStatus::Complete);
        assert_eq!(sink.0.len(), 8);
        assert_eq!(sink.0[0], (0, 0, true));
        assert_eq!(sink.0[1], (0, 1, false));
        assert_eq!(outcome.cases[1].measured().count(), 3);
        // The fake runs no tasks: its own metrics and the machine's (steal, pressure) only.
        let names: Vec<&str> = outcome.cases[0].iterations[0]
            .measurements
            .iter()
            .map(|m| m.name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "usec_per_op",
                "ops_per_sec",
                "steal_cpu_sec",
                "psi_cpu_some_pct"
            ]
        );
        assert_eq!(
            sink.2,
            [(0, 4), (1, 4)],
            "each case finished after its iterations"
        );
    }

    #[test]
    fn adaptive_stopping_adds_iterations_only_where_the_ci_is_wide() {
        let tight = WorkloadSpec::Fake(FakeParams {
            value_usec: 10.0,
            spread_pct: 0.0,
            ..Default::default()
        });
        let loose = WorkloadSpec::Fake(FakeParams {
            value_usec: 20.0,
            spread_pct: 20.0,
            ..Default::default()
        });
        let plan = RunPlan::new(None, None, 3, 0, vec![tight, loose])
            .unwrap()
            .with_adaptive_stopping(1.0, 9)
            .unwrap();
        let mut sink = Collect::default();
        let outcome = execute(&plan, &mut sink, &mut Silent);
        assert_eq!(outcome.status, RunStatus::Complete);
        assert_eq!(
            outcome.cases[0].measured().count(),
            3,
            "a zero-width CI needs no more"
        );
        assert_eq!(
            outcome.cases[1].measured().count(),
            9,
            "a 20 % spread never reaches 1 %"
        );
        assert!(widest_ci_pct(&outcome.cases[1]).unwrap() > 1.0);
        // Finished after the planned iterations, and the extended case again after its last.
        assert_eq!(sink.2, [(0, 3), (1, 3), (1, 9)]);
        assert_eq!(outcome.cases[1].iterations.last().unwrap().index, 8);
    }

    #[test]
    fn failure_keeps_finished_iterations() {
        let mut sink = Collect::default();
        let outcome = execute(&plan(Some(2)), &mut sink, &mut Silent);
        assert_eq!(outcome.status, RunStatus::Failed);
        assert_eq!(sink.0.len(), 2);
        assert!(outcome.error.unwrap().to_string().contains("--fail-at"));
    }

    #[test]
    fn keep_going_records_a_failed_case_and_runs_the_next() {
        let failing = WorkloadSpec::Fake(FakeParams {
            seed: 1,
            fail_at: Some(1),
            ..Default::default()
        });
        let fine = WorkloadSpec::Fake(FakeParams {
            value_usec: 7.0,
            ..Default::default()
        });
        let plan = RunPlan::new(None, None, 2, 1, vec![failing.clone(), fine]).unwrap();
        let mut sink = Collect::default();
        let stopped = execute(&plan, &mut sink, &mut Silent);
        assert_eq!(stopped.status, RunStatus::Failed);
        assert_eq!(
            stopped.cases[1].iterations.len(),
            0,
            "the run ended at case 0"
        );
        assert_eq!(sink.1.len(), 1);

        let mut sink = Collect::default();
        let outcome = execute(&plan.clone().with_keep_going(true), &mut sink, &mut Silent);
        assert_eq!(outcome.status, RunStatus::Partial);
        assert_eq!(outcome.cases[0].iterations.len(), 1);
        assert!(outcome.cases[0]
            .error
            .as_ref()
            .unwrap()
            .contains("--fail-at"));
        assert_eq!(outcome.cases[1].iterations.len(), 3, "the next case ran");
        assert_eq!(outcome.cases[1].error, None);
        assert_eq!(sink.1[0].0, 0);
        let error = outcome.error.unwrap().to_string();
        assert!(error.contains("--fail-at"), "{error}");
        assert!(
            error.starts_with("partial run: 1 of 2 cases failed"),
            "{error}"
        );

        // When every case fails there is nothing complete: the run failed.
        let all_fail = RunPlan::new(None, None, 2, 1, vec![failing.clone(), failing])
            .unwrap()
            .with_keep_going(true);
        let outcome = execute(&all_fail, &mut NoSink, &mut Silent);
        assert_eq!(outcome.status, RunStatus::Failed);
        let error = outcome.error.unwrap().to_string();
        assert!(error.contains("every one of the 2 cases failed"), "{error}");
    }

    #[test]
    fn default_deadlines_are_generous_and_follow_the_case() {
        let sec = 1_000_000_000;
        assert_eq!(default_deadline_ns(&[], None), DEADLINE_UNKNOWN_NS);
        assert_eq!(default_deadline_ns(&[], Some(0.5)), DEADLINE_FLOOR_NS);
        assert_eq!(default_deadline_ns(&[], Some(10.0)), 100 * sec);
        assert_eq!(
            default_deadline_ns(&[sec, 9 * sec, 2 * sec], None),
            DEADLINE_FLOOR_NS
        );
        assert_eq!(
            default_deadline_ns(&[5 * sec, 9 * sec, 4 * sec], Some(1.0)),
            50 * sec
        );
        assert_eq!(
            default_deadline_ns(&[sec], Some(f64::NAN)),
            DEADLINE_FLOOR_NS
        );
        assert!(default_deadline_ns(&[u64::MAX], Some(1e300)) > DEADLINE_FLOOR_NS);
    }

    #[test]
    fn looks_come_at_twice_the_measured_iteration_else_the_estimate() {
        let sec = 1_000_000_000;
        assert_eq!(look_interval_ns(&[], None), LOOK_FLOOR_NS);
        assert_eq!(look_interval_ns(&[], Some(1.0)), LOOK_FLOOR_NS);
        assert_eq!(look_interval_ns(&[], Some(20.0)), 40 * sec);
        // A finished iteration (the warm-up) speaks over the estimate, either way.
        assert_eq!(look_interval_ns(&[16 * sec], Some(53.6)), 32 * sec);
        assert_eq!(look_interval_ns(&[40 * sec], Some(1.0)), 80 * sec);
        assert_eq!(look_interval_ns(&[sec], Some(f64::INFINITY)), LOOK_FLOOR_NS);
        // semaphore --processes --items 2000000 took 15-16 s an iteration here: its first look
        // comes well within the minute, and the deadline stays ten times its estimate.
        assert!(look_interval_ns(&[], Some(17.0)) <= 40 * sec);
    }

    #[test]
    fn sink_failure_fails_the_run() {
        let mut full = Collect {
            3: Some("disk full"),
            ..Collect::default()
        };
        let outcome = execute(&plan(None), &mut full, &mut Silent);
        assert_eq!(outcome.status, RunStatus::Failed);
        assert!(outcome.error.unwrap().to_string().contains("disk full"));
    }

    /// The fake workload made to break its declared metrics: it leaves `drop` out of every
    /// iteration's results and adds `add`.
    struct Misreporting {
        fake: FakeWorkload,
        drop: Option<&'static str>,
        add: Option<MetricDef>,
    }

    impl Workload for Misreporting {
        fn metrics(&self) -> &'static [MetricDef] {
            self.fake.metrics()
        }

        fn runs_tasks(&self) -> bool {
            self.fake.runs_tasks()
        }

        fn run_iteration(&mut self, info: IterationInfo) -> crate::Result<IterationOutput> {
            let mut output = self.fake.run_iteration(info)?;
            output
                .measurements
                .retain(|m| Some(m.name.as_str()) != self.drop);
            output
                .measurements
                .extend(self.add.map(|def| def.value(1.0)));
            Ok(output)
        }
    }

    fn run_misreporting(
        drop: Option<&'static str>,
        add: Option<MetricDef>,
    ) -> (RunOutcome, Collect) {
        let plan = RunPlan::new(
            None,
            None,
            2,
            1,
            vec![WorkloadSpec::Fake(FakeParams::default())],
        )
        .unwrap();
        let build = |spec: &WorkloadSpec| -> crate::Result<Box<dyn Workload>> {
            let WorkloadSpec::Fake(params) = spec else {
                unreachable!("the plan has fake cases only")
            };
            Ok(Box::new(Misreporting {
                fake: FakeWorkload::new(params.clone()),
                drop,
                add,
            }))
        };
        let mut sink = Collect::default();
        let outcome = execute_built(&plan, &build, &Pressure::system(), &mut sink, &mut Silent);
        (outcome, sink)
    }

    fn run_guarded(pressure: &Pressure, below_pct: f64) -> RunOutcome {
        let plan = RunPlan::new(
            None,
            None,
            2,
            1,
            vec![WorkloadSpec::Fake(FakeParams::default())],
        )
        .unwrap()
        .with_quiet(below_pct, 0)
        .unwrap();
        let build = |spec: &WorkloadSpec| spec.build();
        execute_built(
            &plan,
            &build,
            pressure,
            &mut Collect::default(),
            &mut Silent,
        )
    }

    /// Without PSI to read, the pressure is left out of every iteration (never zeroed) and a
    /// guarded iteration cannot be known quiet: it is marked, with no pressure figure.
    #[test]
    fn a_guard_without_psi_marks_every_iteration_and_stores_no_pressure() {
        let outcome = run_guarded(&Pressure::at("/nonexistent/pressure/cpu"), 50.0);
        assert_eq!(outcome.status, RunStatus::Complete, "{:?}", outcome.error);
        let iterations = &outcome.cases[0].iterations;
        assert_eq!(iterations.len(), 3);
        for it in iterations {
            let mark = it.quiet.expect("guarded");
            assert_eq!(mark.disturbed, Some(quiet::Disturbance::NeverQuiet));
            assert_eq!(mark.before_pct, None);
            assert!(it.measurements.iter().all(|m| m.name != "psi_cpu_some_pct"));
        }
    }

    /// A limit of 100 % is always met: every iteration waits one look and runs unmarked, and
    /// (where PSI is on, as on CI's and this machine's kernels) stores its pressure.
    #[test]
    fn a_guard_that_is_met_waits_one_look_and_marks_nothing() {
        let pressure = Pressure::system();
        pressure.availability().expect("PSI on this machine");
        let outcome = run_guarded(&pressure, 100.0);
        assert_eq!(outcome.status, RunStatus::Complete, "{:?}", outcome.error);
        for it in &outcome.cases[0].iterations {
            let mark = it.quiet.expect("guarded");
            assert_eq!(mark.disturbed, None, "{mark:?}");
            assert!(mark.waited_ns >= quiet::SAMPLE_NS, "{mark:?}");
            assert!(mark.before_pct.is_some_and(|p| p < 100.0), "{mark:?}");
            let psi = it
                .measurements
                .iter()
                .find(|m| m.name == "psi_cpu_some_pct");
            assert!(psi.is_some_and(|m| (0.0..=100.0).contains(&m.value)));
        }
    }

    #[test]
    fn a_metric_the_workload_does_not_declare_fails_the_iteration_loudly() {
        const STRAY_USEC: MetricDef = MetricDef::primary("stray_usec", "usec", Better::Lower);
        let (outcome, sink) = run_misreporting(None, Some(STRAY_USEC));
        assert_eq!(outcome.status, RunStatus::Failed);
        assert!(sink.0.is_empty(), "an undeclared metric is never stored");
        assert!(outcome.cases[0].iterations.is_empty());
        let error = outcome.error.unwrap().to_string();
        for part in [
            "iteration 1:",
            "workload `fake`",
            "`stray_usec` is undeclared",
        ] {
            assert!(error.contains(part), "{part:?} not in {error}");
        }
        assert_eq!(outcome.cases[0].error.as_deref(), Some(error.as_str()));
    }

    #[test]
    fn a_declared_metric_the_workload_leaves_out_fails_the_iteration_loudly() {
        let (outcome, sink) = run_misreporting(Some("ops_per_sec"), None);
        assert_eq!(outcome.status, RunStatus::Failed);
        assert!(sink.0.is_empty(), "an incomplete iteration is never stored");
        let error = outcome.error.unwrap().to_string();
        for part in [
            "workload `fake`",
            "`ops_per_sec` is missing (declared by the workload, not returned)",
        ] {
            assert!(error.contains(part), "{part:?} not in {error}");
        }
    }

    #[test]
    fn a_workload_keeping_to_its_metrics_passes() {
        let (outcome, sink) = run_misreporting(None, None);
        assert_eq!(outcome.status, RunStatus::Complete);
        assert_eq!(sink.0.len(), 3);
    }

    fn spec(json: serde_json::Value) -> WorkloadSpec {
        serde_json::from_value(json).unwrap()
    }

    /// Every workload in every mode whose metric set differs (wakeup's request, pipe and open-loop
    /// modes; cpudl's timing, checked and equivalence modes), each small.
    fn every_mode() -> Vec<WorkloadSpec> {
        use serde_json::json;
        vec![
            spec(json!({"workload": "pipe", "loops": 1000})),
            spec(json!({"workload": "messaging", "groups": 1, "fds": 2, "loops": 10})),
            spec(json!({"workload": "fake"})),
            spec(json!({"workload": "wakeup", "runtime": 1, "workers": 2, "cache_footprint": 16})),
            spec(json!({"workload": "wakeup", "runtime": 1, "workers": 2, "pipe": 64})),
            spec(json!({"workload": "wakeup", "runtime": 1, "workers": 2, "rps": 200})),
            spec(json!({"workload": "semaphore", "items": 1000})),
            spec(json!({"workload": "syscall", "threads": 1, "calls": 1000})),
            spec(json!({"workload": "fanout", "workers": 2, "rounds": 10})),
            spec(json!({"workload": "cpudl", "cpus": 8, "ops": 1000})),
            spec(json!({"workload": "cpudl", "cpus": 8, "ops": 1000, "check": true})),
            spec(json!({"workload": "cpudl", "cpus": 8, "ops": 1000, "equivalence": true})),
            spec(json!({"workload": "cpupri", "threads": 1, "cpus": 8, "ops": 1000})),
        ]
    }

    #[test]
    fn every_declared_metric_is_described_once_and_consistently() {
        for spec in every_mode() {
            let workload = spec.build().unwrap();
            let declared = declared_metrics(workload.as_ref());
            let kind = spec.kind();
            for (i, def) in declared.iter().enumerate() {
                let name = def.name;
                assert!(
                    declared[..i].iter().all(|d| d.name != name),
                    "{kind}: `{name}` declared twice"
                );
                assert!(
                    !name.is_empty()
                        && name
                            .bytes()
                            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
                    "{kind}: `{name}` is not snake_case"
                );
                assert_eq!(
                    def.shape == MetricShape::Count,
                    def.unit == "count",
                    "{kind}: `{name}`: a count has the unit `count` and only a count"
                );
                assert_eq!(
                    def.shape.of_distribution(),
                    def.distribution.is_some(),
                    "{kind}: `{name}`: quantiles and maxima, and only they, name a distribution"
                );
            }
        }
    }

    #[test]
    fn every_workload_in_every_mode_returns_what_it_declares() {
        let plan = RunPlan::new(None, None, 1, 0, every_mode()).unwrap();
        let outcome = execute(&plan, &mut NoSink, &mut Silent);
        assert_eq!(
            outcome.status,
            RunStatus::Complete,
            "{:?}",
            outcome.error.map(|e| e.to_string())
        );
    }
}
