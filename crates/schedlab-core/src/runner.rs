//! The runner: executes a validated plan case by case, iteration by iteration, wrapping each
//! iteration in the secondary counters and handing it to the sink (the store) as soon as it is
//! done, so an interruption or failure loses nothing that finished.
use crate::counters::IterationCounters;
use crate::plan::{CaseSpec, RunPlan};
use crate::record::{CaseRecord, IterationRecord, RunStatus};
use crate::workload::IterationInfo;
use crate::{sys, Error};

/// Where finished iterations go. The store implements it; tests can collect in memory.
pub trait RunSink {
    fn record_iteration(
        &mut self,
        case_index: usize,
        case: &CaseSpec,
        iteration: &IterationRecord,
    ) -> Result<(), String>;

    /// A case failed (its workload, or the watchdog): keep why with the case.
    fn record_case_failure(
        &mut self,
        _case_index: usize,
        _case: &CaseSpec,
        _message: &str,
    ) -> Result<(), String> {
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
}

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

/// Runs every case of `plan`: `plan.warmup` warm-up iterations then `plan.iterations` measured
/// ones, pausing `plan.cooldown_ms` between cases; then, with adaptive stopping, more iterations
/// of the cases whose confidence interval is still too wide. Stops at the first failure or
/// interruption, keeping everything finished before it.
pub fn execute(
    plan: &RunPlan,
    sink: &mut dyn RunSink,
    observer: &mut dyn RunObserver,
) -> RunOutcome {
    let mut run = Execution {
        plan,
        sink,
        observer,
        cases: plan
            .cases
            .iter()
            .map(|spec| CaseRecord {
                spec: spec.clone(),
                iterations: Vec::new(),
                error: None,
            })
            .collect(),
        workloads: Vec::with_capacity(plan.cases.len()),
    };
    match run.all() {
        Ok(()) => RunOutcome {
            status: RunStatus::Complete,
            error: None,
            cases: run.cases,
        },
        Err(e) => RunOutcome::stop(status_of(&e), e, run.cases),
    }
}

/// The state of one execution: what has been recorded so far and the workloads built for it.
struct Execution<'a> {
    plan: &'a RunPlan,
    sink: &'a mut dyn RunSink,
    observer: &'a mut dyn RunObserver,
    cases: Vec<CaseRecord>,
    workloads: Vec<Box<dyn crate::workload::Workload>>,
}

impl Execution<'_> {
    fn all(&mut self) -> Result<(), Error> {
        self.observer.run_starting(self.plan);
        let total = self.plan.warmup + self.plan.iterations;
        for case_index in 0..self.plan.cases.len() {
            if case_index > 0 {
                cool_down(self.plan.cooldown_ms)?;
            }
            self.workloads
                .push(self.plan.cases[case_index].workload.build()?);
            for index in 0..total {
                self.iteration(case_index, index, index < self.plan.warmup)?;
            }
        }
        if let (Some(ci_pct), Some(max)) = (self.plan.until_ci_pct, self.plan.max_iterations) {
            loop {
                let unresolved: Vec<usize> = (0..self.cases.len())
                    .filter(|&i| {
                        let case = &self.cases[i];
                        case.measured().count() < max as usize
                            && widest_ci_pct(case).is_none_or(|w| w > ci_pct)
                    })
                    .collect();
                if unresolved.is_empty() {
                    break;
                }
                for case_index in unresolved {
                    let index = self.cases[case_index].iterations.len() as u32;
                    self.iteration(case_index, index, false)?;
                }
            }
        }
        Ok(())
    }

    fn iteration(&mut self, case_index: usize, index: u32, warmup: bool) -> Result<(), Error> {
        if let Some(signal) = sys::interrupt_signal() {
            return Err(Error::Interrupted(signal));
        }
        let case = &self.plan.cases[case_index];
        let info = IterationInfo { index, warmup };
        let progress = Progress {
            case_index,
            case_count: self.plan.cases.len(),
            case,
            iteration: info,
            iterations_in_case: (self.plan.warmup + self.plan.iterations).max(index + 1),
        };
        self.observer.iteration_starting(&progress);
        let workload = &mut self.workloads[case_index];
        let started_at_ns = sys::realtime_ns();
        let counters = workload.runs_tasks().then(IterationCounters::start);
        let result = workload.run_iteration(info);
        let secondary = counters.map(IterationCounters::finish).unwrap_or_default();
        let mut output = result?;
        output.measurements.extend(secondary);
        let record = IterationRecord {
            index,
            warmup,
            started_at_ns,
            measurements: output.measurements,
            attachments: output.attachments,
        };
        self.sink
            .record_iteration(case_index, case, &record)
            .map_err(|e| Error::failed(format!("cannot store the iteration: {e}")))?;
        self.observer.iteration_finished(&progress, &record);
        self.cases[case_index].iterations.push(record);
        Ok(())
    }
}

/// Sleeps between cases; a signal ends the pause and the run.
fn cool_down(ms: u64) -> Result<(), Error> {
    let deadline = sys::monotonic_ns() + ms * 1_000_000;
    loop {
        if let Some(signal) = sys::interrupt_signal() {
            return Err(Error::Interrupted(signal));
        }
        let now = sys::monotonic_ns();
        if now >= deadline {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_nanos(
            (deadline - now).min(50_000_000),
        ));
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
        Error::InvalidInput(_) | Error::RunFailed(_) | Error::TimedOut(_) => RunStatus::Failed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::fake::FakeParams;
    use crate::workload::WorkloadSpec;

    #[derive(Default)]
    struct Collect(Vec<(usize, u32, bool)>);

    impl RunSink for Collect {
        fn record_iteration(
            &mut self,
            case: usize,
            _: &CaseSpec,
            it: &IterationRecord,
        ) -> Result<(), String> {
            self.0.push((case, it.index, it.warmup));
            Ok(())
        }
    }

    fn plan(fail_at: Option<u32>) -> RunPlan {
        let fake = |seed| {
            WorkloadSpec::Fake(FakeParams {
                seed,
                fail_at,
                ..Default::default()
            })
        };
        RunPlan::new(None, None, 3, 1, vec![fake(1), fake(2)]).unwrap()
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
        // The fake runs no tasks, so only its own metrics are recorded.
        assert_eq!(outcome.cases[0].iterations[0].measurements.len(), 2);
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
    fn sink_failure_fails_the_run() {
        struct Broken;
        impl RunSink for Broken {
            fn record_iteration(
                &mut self,
                _: usize,
                _: &CaseSpec,
                _: &IterationRecord,
            ) -> Result<(), String> {
                Err("disk full".into())
            }
        }
        let outcome = execute(&plan(None), &mut Broken, &mut Silent);
        assert_eq!(outcome.status, RunStatus::Failed);
        assert!(outcome.error.unwrap().to_string().contains("disk full"));
    }
}
