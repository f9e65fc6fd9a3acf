//! schedlab's results store: the [`Store`] trait every backend implements, the SQLite backend
//! (one file per machine, the default) and the PostgreSQL backend (one database for a fleet), each
//! with its migrations of one schema, [`push`](push::push) which copies runs between stores, and
//! [`StoreSink`], which lets the runner write each iteration the moment it finishes.
//!
//! Readers and writers open the database differently: [`SqliteStore::open_existing`] is read-only
//! (it writes nothing, migrates nothing and never blocks a run), [`SqliteStore::open`] and
//! [`SqliteStore::open_existing_writer`] create or upgrade the schema in one exclusive transaction
//! and retry busy writes with backoff; [`SqliteStore::in_memory`] is a writer whose database lives
//! and dies in memory, with the same schema, for runs that are not kept (`run --no-store`).
//! [`Location`] turns a `--db` value into a backend or an error; [`open_reader`] and
//! [`open_writer`] open whichever it names. [`PgStore`] keeps the same promises on a server:
//! readers run read-only transactions (PostgreSQL's MVCC never makes a writer wait for them),
//! every write is one transaction, and each run carries a globally unique id.
#![forbid(unsafe_code)]
// println! and eprintln! panic when the reader has gone (`| head`, a dropped ssh session's
// terminal); output goes through writers whose errors are handled.
#![cfg_attr(not(test), deny(clippy::print_stdout, clippy::print_stderr))]
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::Duration;

use schedlab_core::estimate::MeasuredCase;
use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::metric::{MetricShape, Role};
use schedlab_core::plan::{CaseSpec, RunPlan};
use schedlab_core::record::{ExperimentTag, IterationRecord, RunRecord, RunStatus};
use schedlab_core::runner::RunSink;
use thiserror::Error;

mod backend;
mod check;
mod fleet;
#[doc(hidden)]
pub mod generate;
mod legacy;
pub mod liveness;
mod load;
mod location;
mod migrations;
#[cfg(feature = "postgres")]
mod pg;
mod probes;
pub mod push;
mod retry;
mod rows;
mod schema;
pub mod select;
mod sql;
mod sqlite;
mod summaries;
#[cfg(feature = "postgres")]
#[doc(hidden)]
pub mod testing;
mod transactions;

pub use check::{AbandonedRun, CheckReport};
pub use fleet::{CaseSeries, MetricChoice, SeriesQuery};
#[cfg(feature = "postgres")]
pub use location::PgUrl;
pub use location::{Location, KNOWN_SCHEMES};
#[cfg(feature = "postgres")]
pub use pg::PgStore;
pub use retry::{Patience, STOP_GRACE};
pub use schema::{known_version, OLDEST_READABLE_VERSION};
pub use select::{HostSummary, RunSelection};
pub use sqlite::SqliteStore;
pub use summaries::SummaryCheck;

#[derive(Debug, Error)]
pub enum StoreError {
    #[error("{path} is not a schedlab results database ({why}); choose another file with --db or SCHEDLAB_DB")]
    NotSchedlab { path: PathBuf, why: String },
    #[error("cannot write the results database {path}: {reason}")]
    Unwritable { path: PathBuf, reason: String },
    /// A writer's path is a directory, a device, a FIFO or a socket: `--db /dev/null` may have
    /// meant to keep nothing.
    #[error("cannot write the results database {path}: {reason}; --no-store keeps nothing")]
    NotAFile { path: PathBuf, reason: String },
    #[error("cannot open the results database {path}: {reason}")]
    Unopenable { path: PathBuf, reason: String },
    /// The file is (or was) an SQLite database but SQLite, or its schema history, says it is
    /// broken.
    #[error("{path} is damaged ({detail}); `schedlab db check` says more")]
    Damaged { path: PathBuf, detail: String },
    #[error("{path}: this database has schema version {version}; this schedlab knows up to {known} — upgrade schedlab")]
    Newer {
        path: PathBuf,
        version: i64,
        known: i64,
    },
    #[error("{path}: this database has schema version {version} and this schedlab reads {oldest} and newer; a writer must upgrade it first: `schedlab db upgrade --db {path}`")]
    NeedsUpgrade {
        path: PathBuf,
        version: i64,
        oldest: i64,
    },
    /// A `--db` value that names no store this schedlab has.
    #[error("--db {0}")]
    BadLocation(String),
    /// Another process held the write lock for longer than the store's patience.
    #[error("the results database {path} stayed busy for {} s ({detail}); another process holds it", waited.as_secs())]
    Busy {
        path: PathBuf,
        waited: Duration,
        detail: String,
    },
    /// A stop signal arrived while the database was busy or unreachable, and waiting ended
    /// [`STOP_GRACE`] after the signal (`since`: how long after, when it ended) instead of after
    /// the patience.
    #[error("{} arrived while the results database {path} was busy ({detail}); stopped waiting {:.1} s after it", schedlab_core::sys::signal_name(*signal), since.as_secs_f64())]
    Stopped {
        path: PathBuf,
        signal: i32,
        since: Duration,
        detail: String,
    },
    /// A write through a store opened read-only: a bug in the caller, not in the file.
    #[error("the results database {path} was opened read-only and cannot store anything")]
    ReadOnly { path: PathBuf },
    #[error("{0}")]
    NotFound(String),
    #[error("{0}")]
    Exists(String),
    #[error("the results database is inconsistent: {0}")]
    Corrupt(String),
    #[error("database error: {0}")]
    Database(#[from] rusqlite::Error),
    /// An error the PostgreSQL server or the connection to it reported.
    #[cfg(feature = "postgres")]
    #[error("PostgreSQL: {}", pg::error_text(.0))]
    Postgres(#[from] postgres::Error),
}

/// Whether a reader wants a stored measurement, by its (current) name, role and shape: decided on
/// each stored row before anything of it is copied.
pub type KeepMeasurement<'a> = dyn Fn(&str, Role, MetricShape) -> bool + 'a;

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// One line of `schedlab runs`.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub id: i64,
    pub label: Option<String>,
    pub suite: Option<String>,
    /// The first case's name, or the suite's, to say what ran.
    pub what: String,
    pub case_count: usize,
    pub measured_iterations: usize,
    pub status: RunStatus,
    pub started_at_ns: i64,
    pub ended_at_ns: Option<i64>,
    pub kernel_release: String,
    pub boot_id: String,
    /// The machine's hostname, as its fingerprint has it.
    pub hostname: String,
}

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
    /// one query, as [`select::select_runs_default`] would answer from whole runs.
    fn select_runs(
        &self,
        selection: &RunSelection,
        limit: Option<usize>,
    ) -> Result<Vec<RunSummary>>;
    /// The machines with stored runs, each with its newest run, newest first, as
    /// [`select::hosts_default`] would answer from every run.
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

/// Refuses to store `abandoned`, which every backend derives when runs are read.
fn refuse_derived_status(status: RunStatus) -> Result<()> {
    if status == RunStatus::Abandoned {
        return Err(StoreError::Corrupt(
            "`abandoned` is derived when runs are read and is never stored".into(),
        ));
    }
    Ok(())
}

/// A run's identity and stored state, as [`Store::run_provenance`] reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunProvenance {
    pub uuid: Option<String>,
    /// The status as stored: `running` for a run a reader derives as abandoned.
    pub status: RunStatus,
    pub error: Option<String>,
    pub owner: liveness::StoredOwner,
    pub tag: Option<ExperimentTag>,
}

/// Opens the store `location` names for reading only: an SQLite file read-only, a PostgreSQL
/// database in read-only transactions. Neither migrates anything nor makes a writer wait.
pub fn open_reader(location: &Location) -> Result<Box<dyn Store>> {
    Ok(match location {
        Location::Sqlite(path) => Box::new(SqliteStore::open_existing(path)?),
        #[cfg(feature = "postgres")]
        Location::Postgres(url) => Box::new(PgStore::open_reader(url)?),
    })
}

/// Opens the store `location` names for writing, its schema created or upgraded; a missing SQLite
/// file is created when `create` says so, else it is an error. A PostgreSQL database must exist
/// (schedlab creates its tables, not the database).
pub fn open_writer(location: &Location, create: bool) -> Result<Box<dyn Store>> {
    Ok(match location {
        Location::Sqlite(path) if create => Box::new(SqliteStore::open(path)?),
        Location::Sqlite(path) => Box::new(SqliteStore::open_existing_writer(path)?),
        #[cfg(feature = "postgres")]
        Location::Postgres(url) => Box::new(PgStore::open_writer(url)?),
    })
}

/// A calibration as the store keeps it: who and when, and the model as JSON owned by the
/// analysis (`schedlab_analysis::Calibration`), so the store needs no statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredCalibration {
    pub id: Option<i64>,
    pub created_at_ns: i64,
    pub label: String,
    pub hostname: String,
    pub run_ids: Vec<i64>,
    pub model: serde_json::Value,
}

/// `schedlab ab` (settings interleaved within a boot) or `schedlab campaign` (kernels across boots).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExperimentKind {
    Ab,
    Campaign,
}

impl ExperimentKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ExperimentKind::Ab => "ab",
            ExperimentKind::Campaign => "campaign",
        }
    }
}

/// An interleaved experiment: what it runs (`spec`) and how far it got (`state`), both JSON owned by
/// the command that drives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Experiment {
    pub id: Option<i64>,
    pub kind: ExperimentKind,
    pub name: String,
    pub spec: serde_json::Value,
    pub state: serde_json::Value,
    pub status: RunStatus,
    pub created_at_ns: i64,
}

/// Adapts a store to the runner's sink for one run.
pub struct StoreSink<'a> {
    pub store: &'a mut dyn Store,
    pub run_id: i64,
}

impl RunSink for StoreSink<'_> {
    fn record_iteration(
        &mut self,
        case_index: usize,
        _case: &CaseSpec,
        iteration: &IterationRecord,
    ) -> std::result::Result<(), String> {
        self.store
            .record_iteration(self.run_id, case_index, iteration)
            .map_err(|e| e.to_string())
    }

    fn record_probe(
        &mut self,
        case_index: usize,
        _case: &CaseSpec,
        probe: &schedlab_core::probe::ProbeRecord,
    ) -> std::result::Result<(), String> {
        self.store
            .record_probe(self.run_id, case_index, probe)
            .map_err(|e| e.to_string())
    }

    fn record_case_failure(
        &mut self,
        case_index: usize,
        _case: &CaseSpec,
        message: &str,
    ) -> std::result::Result<(), String> {
        self.store
            .record_case_failure(self.run_id, case_index, message)
            .map_err(|e| e.to_string())
    }

    fn case_finished(
        &mut self,
        case_index: usize,
        _case: &CaseSpec,
    ) -> std::result::Result<(), String> {
        self.store
            .summarise_case(self.run_id, case_index)
            .map_err(|e| e.to_string())
    }
}

/// The default database path: `$XDG_DATA_HOME/schedlab/results.db`, else
/// `$HOME/.local/share/schedlab/results.db`; `None` when neither gives a place.
pub fn default_db_path() -> Option<PathBuf> {
    default_db_path_in(
        std::env::var_os("XDG_DATA_HOME").as_deref(),
        std::env::var_os("HOME").as_deref(),
    )
}

/// [`default_db_path`] for these values of `XDG_DATA_HOME` and `HOME`. A relative
/// `XDG_DATA_HOME` is ignored, as the XDG Base Directory specification says; an empty or
/// relative `HOME` is none, so the database never lands wherever the working directory is.
pub fn default_db_path_in(
    xdg_data_home: Option<&std::ffi::OsStr>,
    home: Option<&std::ffi::OsStr>,
) -> Option<PathBuf> {
    let absolute = |value: &std::ffi::OsStr| Path::new(value).is_absolute();
    let data_home = xdg_data_home
        .filter(|v| absolute(v))
        .map(PathBuf::from)
        .or_else(|| {
            home.filter(|v| absolute(v))
                .map(|h| Path::new(h).join(".local/share"))
        })?;
    Some(data_home.join("schedlab").join("results.db"))
}
