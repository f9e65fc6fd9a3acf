//! A measuring session: what `run`, `ab`, `calibrate` and `campaign next` share. It opens the
//! store (a file, or memory for `run --no-store`), installs the stop-signal handlers, takes the
//! machine's fingerprint once, and drives each run from `begin_run` through the runner into the
//! store to the status it ended with. A run in memory goes through exactly the same steps as a
//! stored one; only its id is not shown, since nothing could find it later.
use schedlab_core::estimate::{self, MeasuredCase};
use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::plan::{CaseSpec, RunPlan};
use schedlab_core::record::{CaseRecord, ExperimentTag, RunRecord, RunStatus};
use schedlab_core::runner::{self, RunObserver, RunOutcome};
use schedlab_core::sys;
use schedlab_core::words;
use schedlab_store::{Location, SqliteStore, Store, StoreSink};

use crate::failure::{Failure, FailureKind};

/// `--explain` needs at least one probe this machine offers: else a one-line error (exit 2)
/// before anything runs. Says what it did to the machine to find out (tracefs mounted).
pub fn check_probes(plan: &RunPlan) -> Result<(), Failure> {
    if plan.explain == 0 {
        return Ok(());
    }
    let availability = schedlab_core::probe::availability();
    if !availability.offers_anything() {
        return Err(Failure::bad_input(availability.why_nothing()));
    }
    for note in availability.notes() {
        crate::output::say(format_args!("{note}"));
    }
    Ok(())
}

/// The quiet-machine guard needs the CPU pressure: asked for without it, exit 2 before anything
/// runs. Without the guard, a machine without PSI is said once: its runs store no pressure.
pub fn check_quiet(plan: &RunPlan) -> Result<(), Failure> {
    let Err(why) = schedlab_core::quiet::Pressure::system().availability() else {
        return Ok(());
    };
    if plan.quiet.is_some() {
        return Err(Failure::bad_input(format!(
            "--quiet-below needs the CPU pressure (PSI), which this machine does not give: {why}"
        )));
    }
    crate::output::say(format_args!(
        "no CPU pressure here ({why}): iterations are stored without psi_cpu_some_pct"
    ));
    Ok(())
}

/// Where a session keeps its runs.
pub enum Storage {
    /// The results database there (a file or a PostgreSQL database), created or upgraded as needed.
    File(Location),
    /// The results database there, which must exist (a campaign lives in one).
    ExistingFile(Location),
    /// Memory: measured and reported, then gone (`run --no-store`).
    Memory,
}

pub struct Session {
    store: Box<dyn Store>,
    in_memory: bool,
    fingerprint: Fingerprint,
}

/// A run the session measured, with how it ended.
pub struct MeasuredRun {
    run_id: i64,
    in_memory: bool,
    outcome: RunOutcome,
}

impl Session {
    /// Opens the store before anything else, so a bad `--db` costs nothing; then installs the
    /// handlers that turn SIGINT, SIGTERM, SIGHUP and SIGQUIT into a clean stop, and takes the
    /// fingerprint every run of the session is stored with.
    pub fn open(storage: Storage) -> Result<Self, Failure> {
        let in_memory = matches!(storage, Storage::Memory);
        let store: Box<dyn Store> = match storage {
            Storage::File(location) => schedlab_store::open_writer(&location, true)?,
            Storage::ExistingFile(location) => schedlab_store::open_writer(&location, false)?,
            Storage::Memory => Box::new(SqliteStore::in_memory()?),
        };
        sys::install_interrupt_handlers()
            .and_then(|()| sys::bound_clean_stops())
            .map_err(|e| Failure::failed(format!("cannot install signal handlers: {e}")))?;
        Ok(Session {
            store,
            in_memory,
            fingerprint: Fingerprint::collect(),
        })
    }

    pub fn store(&self) -> &dyn Store {
        &*self.store
    }

    pub fn store_mut(&mut self) -> &mut dyn Store {
        &mut *self.store
    }

    pub fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    /// Takes the fingerprint again, for the runs that follow: an arm's daemon changed what it
    /// records (sched_ext's state and scheduler).
    pub fn refresh_fingerprint(&mut self) {
        self.fingerprint = Fingerprint::collect();
    }

    /// Runs `plan` as one run, placed in an experiment when `tag` says so: every iteration is
    /// committed as it finishes, and the run's status (complete, partial, interrupted, failed)
    /// when it ends. An error here is the store's; how the run itself went is in the result.
    pub fn measure(
        &mut self,
        plan: &RunPlan,
        tag: Option<ExperimentTag>,
        progress: &mut dyn RunObserver,
    ) -> Result<MeasuredRun, Failure> {
        self.measure_guarded(plan, tag, progress, &mut |_| Ok(()))
    }

    /// As [`Session::measure`], with `guard` asked before the run measures anything and after
    /// it ended (`"before"`, `"after"`): an arm's daemon still running, its scheduler loaded. A
    /// guard that fails before the run records it failed without measuring; after, records the
    /// run failed with the guard's message, its iterations kept but out of every comparison of
    /// complete runs.
    pub fn measure_guarded(
        &mut self,
        plan: &RunPlan,
        tag: Option<ExperimentTag>,
        progress: &mut dyn RunObserver,
        guard: &mut dyn FnMut(&str) -> Result<(), Failure>,
    ) -> Result<MeasuredRun, Failure> {
        let store = &mut *self.store;
        let measured = host_history(&*store, &self.fingerprint.hostname, &plan.cases)?;
        let plan = &RunPlan {
            expected_sec: estimate::expectations(&plan.cases, &measured),
            ..plan.clone()
        };
        let run_id = store.begin_run(plan, &self.fingerprint, sys::realtime_ns())?;
        if let Some(tag) = tag {
            store.tag_run(run_id, tag)?;
        }
        let mut outcome = match guard("before") {
            Ok(()) => runner::execute(
                plan,
                &mut StoreSink {
                    store: &mut *store,
                    run_id,
                },
                progress,
            ),
            Err(failure) => RunOutcome {
                status: RunStatus::Failed,
                error: Some(schedlab_core::Error::failed(failure.message)),
                cases: Vec::new(),
            },
        };
        // A run stopped by a signal keeps its status; one that ran to its end is held to the guard.
        if matches!(outcome.status, RunStatus::Complete | RunStatus::Partial) {
            if let Err(failure) = guard("after") {
                outcome.status = RunStatus::Failed;
                outcome.error = Some(schedlab_core::Error::failed(failure.message));
            }
        }
        let error = outcome.error.as_ref().map(ToString::to_string);
        store
            .finish_run(run_id, outcome.status, sys::realtime_ns(), error.as_deref())
            .map_err(|e| {
                let mut failure = Failure::from(e);
                failure.message = format!(
                    "{}; the run's end is not recorded: run {run_id} keeps what it stored ({}) \
                     and the next command shows it abandoned",
                    failure.message,
                    iterations_kept(&outcome.cases)
                );
                failure
            })?;
        Ok(MeasuredRun {
            run_id,
            in_memory: self.in_memory,
            outcome,
        })
    }

    /// The run as the store holds it, as `show` prints it later; without an id in memory.
    pub fn load(&self, run: &MeasuredRun) -> Result<RunRecord, Failure> {
        let mut record = self.store.load_run(run.run_id)?;
        record.id = run.stored_id();
        Ok(record)
    }

    /// A stop signal that arrived between runs ends the session as one during a run would.
    pub fn check_interrupted(&self) -> Result<(), Failure> {
        match sys::interrupt_signal() {
            Some(signal) => Err(Failure::from(schedlab_core::Error::Interrupted(signal))),
            None => Ok(()),
        }
    }

    /// Records how an experiment's visits ended: complete, interrupted by a signal, or failed
    /// (a visit that ended partial stops the experiment as a failed one does).
    pub fn finish_experiment<T>(
        &mut self,
        experiment_id: i64,
        state: &serde_json::Value,
        visits: &Result<T, Failure>,
    ) -> Result<(), Failure> {
        let status = match visits {
            Ok(_) => RunStatus::Complete,
            Err(failure) => match failure.kind {
                FailureKind::Interrupted { .. } => RunStatus::Interrupted,
                _ => RunStatus::Failed,
            },
        };
        self.store.update_experiment(experiment_id, state, status)?;
        Ok(())
    }
}

impl MeasuredRun {
    /// The run's id in a store that keeps it; `None` in memory, where the id names nothing a
    /// later command could find.
    pub fn stored_id(&self) -> Option<i64> {
        (!self.in_memory).then_some(self.run_id)
    }

    /// The run's id in the session's store when it completed; otherwise a failure of the kind of
    /// its end, naming what was kept and where.
    pub fn completed(self) -> Result<i64, Failure> {
        let place = self
            .stored_id()
            .map_or("not stored".to_string(), |id| format!("stored as run {id}"));
        let RunOutcome {
            status,
            error,
            cases,
        } = self.outcome;
        match (status, error) {
            (RunStatus::Complete, _) => Ok(self.run_id),
            (status, Some(error)) => {
                let mut failure = Failure::from(error);
                if status == RunStatus::Partial {
                    failure.kind = FailureKind::Partial;
                }
                failure.message = format!(
                    "{} ({} kept, {place})",
                    failure.message,
                    iterations_kept(&cases)
                );
                Err(failure)
            }
            (_, None) => Err(Failure::failed("the run did not complete")),
        }
    }
}

/// The finished iterations of a run's cases as `runs` and `show` count them: measured ones, and
/// the warm-ups apart (stored, but not in the summaries).
fn iterations_kept(cases: &[CaseRecord]) -> String {
    let all = cases.iter().flat_map(|c| &c.iterations);
    let warmups = all.clone().filter(|i| i.warmup).count();
    let measured = all.count() - warmups;
    let measured = words::counted(measured, "measured iteration");
    match warmups {
        0 => measured,
        n => format!("{measured} and {}", words::counted(n, "warm-up")),
    }
}

/// What `hostname` has measured of the workloads of `cases`, for their estimates.
pub fn host_history(
    store: &dyn Store,
    hostname: &str,
    cases: &[CaseSpec],
) -> schedlab_store::Result<Vec<MeasuredCase>> {
    let mut kinds: Vec<&str> = cases.iter().map(|c| c.workload.kind()).collect();
    kinds.sort_unstable();
    kinds.dedup();
    let mut measured = Vec::new();
    for kind in kinds {
        measured.extend(store.measured_cases(hostname, kind)?);
    }
    Ok(measured)
}

/// The plan of one visit among several of the same plan (an experiment's arms, a calibration's
/// runs): with an order seed each visit gets a new case order, stored with its run, so no case
/// always follows the same one.
pub fn plan_for_visit(plan: &RunPlan, visit: u32) -> RunPlan {
    match plan.order_seed {
        Some(seed) => plan.clone().shuffled(seed.wrapping_add(u64::from(visit))),
        None => plan.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::workload::fake::FakeParams;
    use schedlab_core::workload::WorkloadSpec;

    fn ended(
        status: RunStatus,
        error: Option<schedlab_core::Error>,
        in_memory: bool,
    ) -> MeasuredRun {
        MeasuredRun {
            run_id: 7,
            in_memory,
            outcome: RunOutcome {
                status,
                error,
                cases: Vec::new(),
            },
        }
    }

    #[test]
    fn a_run_fails_with_the_kind_of_its_end() {
        use schedlab_core::Error;
        assert_eq!(
            ended(RunStatus::Complete, None, false).completed().unwrap(),
            7
        );
        let interrupted = ended(RunStatus::Interrupted, Some(Error::Interrupted(1)), false)
            .completed()
            .unwrap_err();
        assert_eq!(interrupted.kind, FailureKind::Interrupted { signal: 1 });
        assert!(interrupted
            .message
            .ends_with("(0 measured iterations kept, stored as run 7)"));
        let partial = ended(
            RunStatus::Partial,
            Some(Error::failed("1 of 2 cases failed")),
            true,
        )
        .completed()
        .unwrap_err();
        assert_eq!(partial.kind, FailureKind::Partial);
        assert!(
            partial.message.ends_with("not stored)"),
            "{}",
            partial.message
        );
        let failed = ended(RunStatus::Failed, Some(Error::failed("broke")), false);
        assert_eq!(failed.completed().unwrap_err().kind, FailureKind::Failed);
    }

    #[test]
    fn a_run_in_memory_shows_no_id() {
        assert_eq!(ended(RunStatus::Complete, None, true).stored_id(), None);
        assert_eq!(ended(RunStatus::Complete, None, false).stored_id(), Some(7));
    }

    #[test]
    fn each_visit_is_ordered_by_a_seed_of_its_own() {
        let fake = WorkloadSpec::Fake(FakeParams::default());
        let plan = RunPlan::new(None, None, 1, 0, vec![fake]).unwrap();
        assert_eq!(plan_for_visit(&plan, 3), plan, "listed order stays listed");
        let seeded = plan.shuffled(11);
        let seeds: Vec<Option<u64>> = (0..3)
            .map(|visit| plan_for_visit(&seeded, visit).order_seed)
            .collect();
        assert_eq!(seeds, [Some(11), Some(12), Some(13)]);
    }
}
