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
/// ones. Stops at the first failure or interruption, keeping everything finished before it.
pub fn execute(
    plan: &RunPlan,
    sink: &mut dyn RunSink,
    observer: &mut dyn RunObserver,
) -> RunOutcome {
    let mut cases: Vec<CaseRecord> = Vec::with_capacity(plan.cases.len());
    let total = plan.warmup + plan.iterations;
    for (case_index, case) in plan.cases.iter().enumerate() {
        cases.push(CaseRecord {
            spec: case.clone(),
            iterations: Vec::with_capacity(total as usize),
        });
        let mut workload = match case.workload.build() {
            Ok(w) => w,
            Err(e) => return RunOutcome::stop(status_of(&e), e, cases),
        };
        for index in 0..total {
            if let Some(signal) = sys::interrupt_signal() {
                return RunOutcome::stop(RunStatus::Interrupted, Error::Interrupted(signal), cases);
            }
            let info = IterationInfo {
                index,
                warmup: index < plan.warmup,
            };
            let progress = Progress {
                case_index,
                case_count: plan.cases.len(),
                case,
                iteration: info,
                iterations_in_case: total,
            };
            observer.iteration_starting(&progress);
            let started_at_ns = sys::realtime_ns();
            let counters = workload.runs_tasks().then(IterationCounters::start);
            let result = workload.run_iteration(info);
            let secondary = counters.map(IterationCounters::finish).unwrap_or_default();
            let mut output = match result {
                Ok(output) => output,
                Err(e) => return RunOutcome::stop(status_of(&e), e, cases),
            };
            output.measurements.extend(secondary);
            let record = IterationRecord {
                index,
                warmup: info.warmup,
                started_at_ns,
                measurements: output.measurements,
                attachments: output.attachments,
            };
            if let Err(e) = sink.record_iteration(case_index, case, &record) {
                let error = Error::failed(format!("cannot store the iteration: {e}"));
                return RunOutcome::stop(RunStatus::Failed, error, cases);
            }
            observer.iteration_finished(&progress, &record);
            cases
                .last_mut()
                .expect("case pushed above")
                .iterations
                .push(record);
        }
    }
    RunOutcome {
        status: RunStatus::Complete,
        error: None,
        cases,
    }
}

fn status_of(error: &Error) -> RunStatus {
    match error {
        Error::Interrupted(_) => RunStatus::Interrupted,
        Error::InvalidInput(_) | Error::RunFailed(_) => RunStatus::Failed,
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
