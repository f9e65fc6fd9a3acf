//! The [`Store`] trait every backend implements: one transaction per method, so an interrupted
//! process leaves the store as it was after the last completed call.
use std::ops::ControlFlow;

use schedlab_core::estimate::MeasuredCase;
use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::plan::RunPlan;
use schedlab_core::record::{ExperimentTag, IterationRecord, RunRecord, RunStatus};

use crate::error::Result;
use crate::fleet::{CaseSeries, SeriesQuery};
use crate::records::{
    Experiment, ExperimentKind, KeepMeasurement, RunProvenance, RunSummary, StoredCalibration,
};
use crate::select::{HostSummary, RunSelection};

/// A results store. Every method is one transaction: an interrupted process leaves the store as
/// it was after the last completed call.
pub trait Store {
    /// Records a new run (status `running`) with its plan and fingerprint; returns its id.
    fn begin_run(
        &mut self,
        plan: &RunPlan,
        fingerprint: &Fingerprint,
        started_at_ns: i64,
    ) -> Result<i64>;
    fn record_iteration(
        &mut self,
        run_id: i64,
        case_index: usize,
        iteration: &IterationRecord,
    ) -> Result<()>;
    /// Records the run's end, with the summaries of every case not yet summarised (or whose
    /// iterations grew since). `Abandoned` is refused: it is derived when runs are read.
    fn finish_run(
        &mut self,
        run_id: i64,
        status: RunStatus,
        ended_at_ns: i64,
        error: Option<&str>,
    ) -> Result<()>;
    /// Keeps the summaries of the case (and of the run's other cases of its name) from its stored
    /// iterations: called when it has run what it will run for now ([`RunSink::case_finished`]).
    /// [`Store::finish_run`] summarises whatever is left.
    fn summarise_case(&mut self, run_id: i64, case_index: usize) -> Result<()>;
    /// Records a probed or profiled iteration of a case (`--explain`, `--profile`), in tables of
    /// its own that no reader of measured iterations sees (V10).
    fn record_probe(
        &mut self,
        run_id: i64,
        case_index: usize,
        probe: &schedlab_core::probe::ProbeRecord,
    ) -> Result<()>;
    /// Every probed and profiled iteration of a run, each with its case's position in the run,
    /// in case order; none in a file older than V10.
    fn load_probes(&self, run_id: i64) -> Result<Vec<(usize, schedlab_core::probe::ProbeRecord)>>;
    /// Marks a case as failed with why (a workload error, or the watchdog's report).
    fn record_case_failure(&mut self, run_id: i64, case_index: usize, message: &str) -> Result<()>;
    /// Stored runs, newest first. A `running` run whose process or boot is gone is listed as
    /// `abandoned` ([`liveness`]).
    fn list_runs(&self, limit: Option<usize>) -> Result<Vec<RunSummary>>;
    /// One run with every case and iteration; the status is derived as for [`Store::list_runs`],
    /// and an abandoned run's error says why it was judged so.
    fn load_run(&self, run_id: i64) -> Result<RunRecord>;
    /// As [`Store::load_run`], with only the measurements `keep` takes: a comparison of hundreds
    /// of runs reads the metrics it compares, not every secondary one each iteration stored.
    fn load_run_keeping(&self, run_id: i64, keep: &KeepMeasurement<'_>) -> Result<RunRecord>;
    /// A run's fingerprint alone.
    fn fingerprint(&self, run_id: i64) -> Result<Fingerprint>;
    /// The series `query` asks for — each case's runs with their stored summaries, never their
    /// iterations — handed to `visit` one at a time (a host's, or a case's over every host, read
    /// in one transaction), so a fleet's histories are judged one by one in bounded memory.
    /// `visit` breaks to stop.
    fn case_series(
        &self,
        query: &SeriesQuery,
        visit: &mut dyn FnMut(CaseSeries) -> ControlFlow<()>,
    ) -> Result<()>;
    /// Run ids for a run id or a label (a label may name many runs), oldest first.
    fn resolve(&self, id_or_label: &str) -> Result<Vec<i64>>;
    /// Every case of `workload` that `hostname` has measured, each with the median wall time of
    /// its newest (up to 50) measured iterations: what estimates go by
    /// ([`schedlab_core::estimate`]). A case whose stored parameters this version cannot read is
    /// left out.
    fn measured_cases(&self, hostname: &str, workload: &str) -> Result<Vec<MeasuredCase>>;
    /// Records a new experiment; its (kind, name) must be new.
    fn create_experiment(&mut self, experiment: &Experiment) -> Result<i64>;
    fn experiment(&self, kind: ExperimentKind, name: &str) -> Result<Option<Experiment>>;
    /// Every experiment of `kind`, newest first.
    fn experiments(&self, kind: ExperimentKind) -> Result<Vec<Experiment>>;
    fn update_experiment(
        &mut self,
        id: i64,
        state: &serde_json::Value,
        status: RunStatus,
    ) -> Result<()>;
    /// Places a run in an experiment.
    fn tag_run(&mut self, run_id: i64, tag: ExperimentTag) -> Result<()>;
    fn run_tag(&self, run_id: i64) -> Result<Option<ExperimentTag>>;
    fn experiment_by_id(&self, id: i64) -> Result<Option<Experiment>>;
    /// Records a calibration; returns its id.
    fn save_calibration(&mut self, calibration: &StoredCalibration) -> Result<i64>;
    /// Every stored calibration, newest first.
    fn calibrations(&self) -> Result<Vec<StoredCalibration>>;
    /// Stored runs that match `selection`, newest first, as [`Store::list_runs`] lists them:
    /// one query, as [`defaults::select_runs_default`] would answer from whole runs.
    fn select_runs(
        &self,
        selection: &RunSelection,
        limit: Option<usize>,
    ) -> Result<Vec<RunSummary>>;
    /// The machines with stored runs, each with its newest run, newest first, as
    /// [`defaults::hosts_default`] would answer from every run.
    fn hosts(&self) -> Result<Vec<HostSummary>>;
    /// Where the store is, for messages: a path, or a URL without its password.
    fn describe(&self) -> String;
    /// What [`push`](push::push) copies of a run beyond [`Store::load_run`]: its globally unique
    /// id, the status and error as stored (never derived), its owner and its place in an
    /// experiment. `uuid` is `None` in a file older than V8 that no writer has upgraded.
    fn run_provenance(&self, run_id: i64) -> Result<RunProvenance>;
    /// The id of the run with this globally unique id, when this store has it.
    fn run_by_uuid(&self, uuid: &str) -> Result<Option<i64>>;
    /// Stores a run copied from another store, with every case, iteration, measurement, metric
    /// definition and attachment, in one transaction; `experiment_id` is the experiment's id in
    /// this store. Returns `None`, storing nothing, when a run with its uuid is already here.
    fn copy_run(
        &mut self,
        run: &RunRecord,
        provenance: &RunProvenance,
        experiment_id: Option<i64>,
    ) -> Result<Option<i64>>;
}
