//! The SQLite backend: one file, marked with an application id so schedlab never writes into
//! somebody else's database, in WAL mode so readers never wait for a run and a killed run loses
//! nothing committed.
//!
//! A store is opened as a reader or a writer. A reader opens the file `SQLITE_OPEN_READONLY` and
//! writes nothing at all — no migration, no pragma that writes, no journal mode — so any number of
//! `runs`, `show` or `compare` beside a benchmark cannot make its writes fail. A writer begins
//! every transaction IMMEDIATE (a deferred transaction that turns into a write gets SQLITE_BUSY at
//! once in WAL mode, whatever the busy timeout) and, when SQLite still answers busy, retries the
//! whole transaction with backoff for minutes: the caller's data stays in memory meanwhile.
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags, Transaction, TransactionBehavior};
use schedlab_core::sys;

use crate::check::CheckReport;
use crate::retry::{retry, Attempt, Patience, STOP_LOCK_WAIT};
use crate::schema::{self, not_a_file, Shape};
use crate::sql::Lite;
use crate::summaries;
use crate::transactions::Backend;
use crate::{Result, StoreError};

/// The first pause after SQLite answered busy: a writer's transaction is short.
const FIRST_PAUSE: Duration = Duration::from_millis(10);

pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
    writer: bool,
    /// The schema version readers query against; 0 for a file without a schema yet.
    version: i64,
    /// The version the file had when it was opened, before a writer upgraded it.
    found_version: i64,
    patience: Patience,
    busy_retries: Cell<u64>,
    in_memory: bool,
}

/// What [`SqliteStore::path`] and messages name a store in memory by: SQLite's own name for one.
const IN_MEMORY: &str = ":memory:";

impl SqliteStore {
    /// Opens a results database for writing at `path`, creating the file (and its directory) if
    /// needed and bringing its schema to the current version. Refuses files that are not
    /// schedlab databases, damaged ones and ones a newer schedlab wrote.
    pub fn open(path: &Path) -> Result<Self> {
        SqliteStore::open_writer(path, true)
    }

    /// Opens an existing results database for writing (upgrading its schema); a missing file is
    /// an error, not a new database.
    pub fn open_existing_writer(path: &Path) -> Result<Self> {
        if !path.exists() {
            return Err(missing(path));
        }
        SqliteStore::open_writer(path, false)
    }

    /// Opens an existing results database read-only, for commands that only read. It writes
    /// nothing to the file, so it never blocks or fails a writer; a schema older than this
    /// schedlab's is read as far as it goes (see [`crate::OLDEST_READABLE_VERSION`]); a file
    /// with no schema yet reads as an empty store. A missing file is an error and is not created.
    pub fn open_existing(path: &Path) -> Result<Self> {
        if !path.exists() {
            return Err(missing(path));
        }
        if let Some(reason) = not_a_file(path) {
            return Err(StoreError::Unopenable {
                path: path.to_path_buf(),
                reason: reason.into(),
            });
        }
        schema::refuse_foreign_file(path)?;
        // No SQLITE_OPEN_URI: a path is a path, never `file:` parameters.
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_with_flags(path, flags).map_err(|e| StoreError::Unopenable {
                path: path.to_path_buf(),
                reason: schema::sqlite_text(&e),
            })?;
        let mut store = SqliteStore::new(conn, path, false)?;
        let shape = store.read_tx(|db| schema::inspect(db.0, path))?;
        store.version = match shape {
            Shape::Empty => 0,
            Shape::Schedlab { version } => {
                schema::check_readable(path, version)?;
                version
            }
        };
        store.found_version = store.version;
        Ok(store)
    }

    /// Checks the database at `path` read-only: SQLite's integrity check (`quick_check` when
    /// `quick`), the schema version and the runs by status.
    pub fn check(path: &Path, quick: bool) -> Result<CheckReport> {
        crate::check::check(path, quick)
    }

    fn open_writer(path: &Path, create: bool) -> Result<Self> {
        let unwritable = |reason: String| StoreError::Unwritable {
            path: path.to_path_buf(),
            reason,
        };
        if let Some(reason) = not_a_file(path) {
            return Err(StoreError::NotAFile {
                path: path.to_path_buf(),
                reason: reason.to_string(),
            });
        }
        schema::refuse_foreign_file(path)?;
        if create {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                // Only the default database's folder is made: a named path whose folder is
                // missing is more likely a typo than a wish for a new tree of folders.
                if crate::default_db_path().as_deref() == Some(path) {
                    std::fs::create_dir_all(parent).map_err(|e| unwritable(e.to_string()))?;
                } else if !parent.is_dir() {
                    return Err(unwritable(format!(
                        "its folder {} does not exist (create it first)",
                        parent.display()
                    )));
                }
            }
        }
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| unwritable(schema::sqlite_text(&e)))?;
        SqliteStore::new(conn, path, true)?.into_current_writer()
    }

    /// A store in this process's memory, gone when it is dropped: the schema, migrations and
    /// queries of a file, for runs that are measured and reported but not kept (`--no-store`).
    pub fn in_memory() -> Result<Self> {
        let path = Path::new(IN_MEMORY);
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn =
            Connection::open_in_memory_with_flags(flags).map_err(|e| schema::classify(path, e))?;
        let mut store = SqliteStore::new(conn, path, true)?;
        store.in_memory = true;
        store.into_current_writer()
    }

    /// Whether this store lives in memory only ([`SqliteStore::in_memory`]): what it holds is
    /// not kept, and its ids name nothing a later command could find.
    pub fn is_in_memory(&self) -> bool {
        self.in_memory
    }

    /// Makes a writer's database current: refused unchanged when foreign or newer, in WAL mode
    /// when it is a file, its schema migrated to this schedlab's version.
    fn into_current_writer(self) -> Result<Self> {
        let mut store = self;
        // A copy: the store is written to while its path is quoted in errors.
        let path_buf = store.path.clone();
        let path = path_buf.as_path();
        // Look before touching anything: a foreign or newer file is refused unchanged.
        let shape = store.read_tx(|db| schema::inspect(db.0, path))?;
        store.found_version = match shape {
            Shape::Empty => 0,
            Shape::Schedlab { version } => version,
        };
        // WAL lets readers beside a run; nobody else can open a database in memory.
        if !store.in_memory {
            store.retry(|| {
                let mode: String = store
                    .conn
                    .query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
                if !mode.eq_ignore_ascii_case("wal") {
                    store.conn.pragma_update(None, "journal_mode", "WAL")?;
                }
                Ok(())
            })?;
        }
        if store.found_version < schema::known_version() {
            // EXCLUSIVE, and the schema inspected again inside: of N processes opening one new
            // file, the first creates schema and mark in one commit and the others find it done.
            // Foreign keys are not enforced meanwhile (a connection setting, which SQLite ignores
            // inside a transaction): a migration that rebuilds a table drops the old one, and
            // with enforcement on that drop would cascade into its children. `migrate_in`
            // checks every key before the commit instead.
            let enforce = |on: &str| {
                store
                    .conn
                    .pragma_update(None, "foreign_keys", on)
                    .map_err(|e| schema::classify(path, e))
            };
            enforce("OFF")?;
            let migrated = store.retry(|| {
                let tx = Transaction::new_unchecked(&store.conn, TransactionBehavior::Exclusive)?;
                schema::migrate_in(&tx, path, &fill_summaries)?;
                tx.commit()?;
                Ok(())
            });
            enforce("ON")?;
            migrated?;
        }
        store.version = schema::known_version();
        Ok(store)
    }

    fn new(conn: Connection, path: &Path, writer: bool) -> Result<Self> {
        let patience = Patience::default();
        let classify = |e| schema::classify(path, e);
        conn.busy_timeout(patience.busy_timeout).map_err(classify)?;
        if writer {
            // A connection setting, not a write to the file.
            conn.pragma_update(None, "foreign_keys", "ON")
                .map_err(classify)?;
        }
        Ok(SqliteStore {
            conn,
            path: path.to_path_buf(),
            writer,
            version: 0,
            found_version: 0,
            patience,
            busy_retries: Cell::new(0),
            in_memory: false,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this store was opened for writing.
    pub fn is_writer(&self) -> bool {
        self.writer
    }

    /// The schema version queries run against (0: an empty file seen by a reader).
    pub fn schema_version(&self) -> i64 {
        self.version
    }

    /// The schema version the file had when it was opened, before a writer upgraded it.
    pub fn found_version(&self) -> i64 {
        self.found_version
    }

    /// Changes how long this store waits for other processes' locks.
    pub fn set_patience(&mut self, patience: Patience) -> Result<()> {
        self.conn
            .busy_timeout(patience.busy_timeout)
            .map_err(|e| schema::classify(&self.path, e))?;
        self.patience = patience;
        Ok(())
    }

    /// How many times a transaction was retried because the database was busy.
    pub fn busy_retries(&self) -> u64 {
        self.busy_retries.get()
    }

    /// Runs SQLite's own consistency check; `Ok(())` when it answers "ok".
    pub fn integrity_check(&self) -> Result<()> {
        let answer: String =
            self.read_tx(|db| Ok(db.0.query_row("PRAGMA integrity_check", [], |r| r.get(0))?))?;
        if answer == "ok" {
            Ok(())
        } else {
            Err(StoreError::Corrupt(answer))
        }
    }

    /// Runs `attempt` until it does not fail with busy or locked (see [`retry`]).
    fn retry<T>(&self, mut attempt: impl FnMut() -> Result<T>) -> Result<T> {
        retry(
            &self.patience,
            FIRST_PAUSE,
            || self.path.clone(),
            |_| {
                if sys::interrupt_signal().is_some() {
                    // SQLite's own wait would outlast the stop's grace. The process is ending, so
                    // the setting is not restored; setting a timeout cannot fail.
                    let _ = self.conn.busy_timeout(STOP_LOCK_WAIT);
                }
                match attempt() {
                    Err(StoreError::Database(e)) if is_busy(&e) => {
                        self.busy_retries.set(self.busy_retries.get() + 1);
                        Attempt::Transient(format!("SQLite: {}", schema::sqlite_text(&e)))
                    }
                    other => Attempt::Done(other.map_err(|e| self.classify(e))),
                }
            },
        )
    }

    fn classify(&self, e: StoreError) -> StoreError {
        let e = match e {
            StoreError::Database(e) => schema::classify(&self.path, e),
            other => other,
        };
        match e {
            // A reader writes nothing, but SQLite must create the WAL index beside the file.
            StoreError::Unwritable { path, reason } if !self.writer => StoreError::Unopenable {
                reason: format!(
                    "{reason} (reading a WAL database needs its -wal and -shm files, or a \
                     directory this user may create them in)"
                ),
                path,
            },
            other => other,
        }
    }
}

/// Fills the summaries of every run a file held when it reaches V9 (see [`schema::AfterMigration`]).
fn fill_summaries(conn: &Connection, version: i64) -> Result<()> {
    if version == schema::V_SUMMARIES {
        summaries::fill(&mut Lite(conn))?;
    }
    Ok(())
}

fn missing(path: &Path) -> StoreError {
    StoreError::NotFound(format!(
        "no results database at {} (nothing has been stored there yet)",
        path.display()
    ))
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

impl Backend for SqliteStore {
    type Db<'t> = Lite<'t>;

    fn version(&self) -> i64 {
        self.version
    }

    /// A deferred transaction, so it sees one snapshot, retried while busy.
    fn read_tx<T>(&self, mut body: impl FnMut(&mut Lite<'_>) -> Result<T>) -> Result<T> {
        self.retry(|| {
            let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Deferred)?;
            let value = body(&mut Lite(&tx))?;
            tx.commit()?;
            Ok(value)
        })
    }

    /// Begun IMMEDIATE, retried whole while the database is busy. SQLite answers busy before it
    /// commits anything, so no attempt follows one that may have committed.
    fn write_tx<T>(&self, mut body: impl FnMut(&mut Lite<'_>, bool) -> Result<T>) -> Result<T> {
        if !self.writer {
            return Err(StoreError::ReadOnly {
                path: self.path.clone(),
            });
        }
        self.retry(|| {
            let tx = Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)?;
            let value = body(&mut Lite(&tx), false)?;
            tx.commit()?;
            Ok(value)
        })
    }

    fn location(&self) -> String {
        self.path.display().to_string()
    }
}

// The undo statements of the upgrade tests, shared with the binary's tests.
#[cfg(test)]
#[path = "../tests/support/downgrade.rs"]
mod downgrade;

#[cfg(test)]
mod tests {
    use super::downgrade::downgrade_to_v8;
    use super::*;
    use rusqlite::params;
    use schedlab_core::fingerprint::Fingerprint;
    use schedlab_core::metric::{secondary, Measurement, MetricDef, MetricShape};
    use schedlab_core::plan::RunPlan;
    use schedlab_core::record::{IterationRecord, RunRecord, RunStatus};

    use crate::rows::to_json;
    use crate::{ExperimentKind, Store, StoredCalibration};
    use schedlab_core::runner::{execute, Silent};
    use schedlab_core::workload::fake::FakeParams;
    use schedlab_core::workload::WorkloadSpec;

    use crate::StoreSink;

    fn plan(label: &str) -> RunPlan {
        let fake = WorkloadSpec::Fake(FakeParams::default());
        RunPlan::new(None, Some(label.into()), 3, 1, vec![fake]).unwrap()
    }

    /// A run of `plan` begun in `store`, with nothing recorded yet.
    fn begin(store: &mut SqliteStore, plan: &RunPlan) -> i64 {
        store.begin_run(plan, &Fingerprint::collect(), 5).unwrap()
    }

    /// The first measured iteration, with no measurement and no attachment.
    fn empty_iteration() -> IterationRecord {
        IterationRecord {
            index: 0,
            warmup: false,
            started_at_ns: 6,
            measurements: vec![],
            attachments: vec![],
            quiet: None,
        }
    }

    fn run_into(store: &mut SqliteStore, plan: &RunPlan) -> i64 {
        let fp = Fingerprint::collect();
        let id = store.begin_run(plan, &fp, 1_000).unwrap();
        let outcome = execute(plan, &mut StoreSink { store, run_id: id }, &mut Silent);
        store.finish_run(id, outcome.status, 2_000, None).unwrap();
        id
    }

    #[test]
    fn run_round_trips_with_every_sample() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let plan = plan("base");
        let id = run_into(&mut store, &plan);
        let run = store.load_run(id).unwrap();
        assert_eq!(run.status, RunStatus::Complete);
        assert_eq!(run.plan, plan);
        assert_eq!(run.cases[0].iterations.len(), 4);
        assert!(run.cases[0].iterations[0].warmup);
        assert_eq!(
            run.cases[0].iterations[1].measurements[0].name,
            "usec_per_op"
        );
        store.integrity_check().unwrap();
    }

    #[test]
    fn calibrations_round_trip_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let calibration = |at: i64| StoredCalibration {
            id: None,
            created_at_ns: at,
            label: "cal".into(),
            hostname: "h".into(),
            run_ids: vec![1, 2, 3],
            model: serde_json::json!({ "cases": [] }),
        };
        let old = store.save_calibration(&calibration(10)).unwrap();
        let new = store.save_calibration(&calibration(20)).unwrap();
        let stored = store.calibrations().unwrap();
        assert_eq!(
            stored.iter().map(|c| c.id).collect::<Vec<_>>(),
            vec![Some(new), Some(old)]
        );
        assert_eq!(stored[1].run_ids, vec![1, 2, 3]);
        assert_eq!(stored[1].model, serde_json::json!({ "cases": [] }));
    }

    #[test]
    fn a_running_run_whose_owner_is_gone_reads_as_abandoned() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let plan = plan("dead");
        let id = begin(&mut store, &plan);
        let iteration = empty_iteration();
        store.record_iteration(id, 0, &iteration).unwrap();
        let status = |store: &SqliteStore| {
            let listed = store.list_runs(None).unwrap()[0].status;
            let loaded = store.load_run(id).unwrap();
            assert_eq!(listed, loaded.status);
            (loaded.status, loaded.error)
        };
        // This process runs it: alive.
        assert_eq!(status(&store), (RunStatus::Running, None));
        let set = |store: &SqliteStore, sql: &str| store.conn.execute(sql, []).unwrap();
        // The pid now names another process (start time differs).
        set(
            &store,
            "UPDATE runs SET owner_start_ticks = owner_start_ticks + 1",
        );
        let (s, why) = status(&store);
        assert_eq!(s, RunStatus::Abandoned);
        assert!(why.unwrap().contains("another process"));
        assert_eq!(store.load_run(id).unwrap().cases[0].iterations.len(), 1);
        // Another host's process cannot be looked up from here: its run lives while it has
        // stored something lately...
        set(&store, "UPDATE runs SET owner_host = 'elsewhere'");
        let now = sys::realtime_ns();
        set(&store, &format!("UPDATE runs SET started_at_ns = {now}"));
        set(
            &store,
            &format!("UPDATE iterations SET started_at_ns = {now}"),
        );
        assert_eq!(status(&store), (RunStatus::Running, None));
        assert!(crate::check::check(&dir.path().join("r.db"), true)
            .unwrap()
            .abandoned_runs
            .is_empty());
        // ... and is abandoned once it has been silent for longer than a live one can be.
        set(&store, "UPDATE runs SET started_at_ns = 1000000000000");
        set(
            &store,
            "UPDATE iterations SET started_at_ns = 2000000000000",
        );
        let (s, why) = status(&store);
        assert_eq!(s, RunStatus::Abandoned);
        let why = why.unwrap();
        assert!(
            why.contains("nothing stored since 1970-01-01T00:33:20Z")
                && why.contains("on elsewhere"),
            "{why}"
        );
        let checked = crate::check::check(&dir.path().join("r.db"), true).unwrap();
        assert_eq!(checked.abandoned_runs[0].id, id);
        assert!(checked.abandoned_runs[0]
            .reason
            .starts_with("nothing stored"));
        // A run of an earlier boot, stored before owners were recorded.
        set(
            &store,
            "UPDATE runs SET owner_pid = NULL, owner_start_ticks = NULL, owner_boot_id = NULL,
                             owner_host = NULL, boot_id = 'an-earlier-boot'",
        );
        assert_eq!(status(&store).0, RunStatus::Abandoned);
        // Only `running` runs are judged; the derived status is never written.
        store
            .finish_run(id, RunStatus::Failed, 7, Some("x"))
            .unwrap();
        assert_eq!(status(&store).0, RunStatus::Failed);
        assert!(store.finish_run(id, RunStatus::Abandoned, 8, None).is_err());
    }

    #[test]
    fn one_case_of_a_running_run_is_judged_by_every_case_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let cases = [100.0, 200.0].map(|value_usec| {
            WorkloadSpec::Fake(FakeParams {
                value_usec,
                ..FakeParams::default()
            })
        });
        let plan = RunPlan::new(None, None, 3, 0, cases.to_vec()).unwrap();
        let (first, second) = (&plan.cases[0].name, &plan.cases[1].name);
        let id = begin(&mut store, &plan);
        let now = sys::realtime_ns();
        let at = |started_at_ns| IterationRecord {
            started_at_ns,
            ..empty_iteration()
        };
        // Another host's run: the first case ran long ago, the second has just stored one.
        store
            .record_iteration(id, 0, &at(2_000_000_000_000))
            .unwrap();
        store.record_iteration(id, 1, &at(now)).unwrap();
        let set = |sql: &str| store.conn.execute(sql, []).unwrap();
        set("UPDATE runs SET owner_host = 'elsewhere', started_at_ns = 1000000000000");
        let series = |case: &str| {
            let query = crate::SeriesQuery {
                selection: crate::RunSelection::default(),
                cases: vec![case.to_string()],
                metrics: crate::MetricChoice::All,
                per_host: false,
            };
            let mut runs = Vec::new();
            store
                .case_series(&query, &mut |s| {
                    runs.extend(s.runs);
                    std::ops::ControlFlow::Continue(())
                })
                .unwrap();
            runs
        };
        let run = &series(first)[0];
        assert_eq!(run.id, Some(id));
        assert_eq!(run.status, RunStatus::Running);
        let mut every = Vec::new();
        let query = crate::SeriesQuery {
            selection: crate::RunSelection::default(),
            cases: Vec::new(),
            metrics: crate::MetricChoice::All,
            per_host: false,
        };
        store
            .case_series(&query, &mut |s| {
                every.push(s.case);
                std::ops::ControlFlow::Continue(())
            })
            .unwrap();
        assert_eq!(every, [first.clone(), second.clone()]);
        // Silent in every case, it is abandoned, however it is read.
        set("UPDATE iterations SET started_at_ns = 2000000000000");
        let whole = store.load_run(id).unwrap();
        assert_eq!(whole.status, RunStatus::Abandoned);
        assert_eq!(series(second)[0].status, whole.status);
    }

    #[test]
    fn a_database_without_the_v5_columns_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let id = store
            .begin_run(&plan("old"), &Fingerprint::collect(), sys::realtime_ns())
            .unwrap();
        for column in [
            "owner_pid",
            "owner_start_ticks",
            "owner_boot_id",
            "owner_host",
        ] {
            store
                .conn
                .execute(&format!("ALTER TABLE runs DROP COLUMN {column}"), [])
                .unwrap();
        }
        store
            .conn
            .execute_batch(
                "ALTER TABLE cases DROP COLUMN error;
                 DELETE FROM refinery_schema_history WHERE version >= 5;
                 PRAGMA user_version = 4;",
            )
            .unwrap();
        drop(store);
        // A reader takes the file as the V4 file it now is.
        let store = SqliteStore::open_existing(&dir.path().join("r.db")).unwrap();
        // This boot's run with no recorded process cannot be looked up: it stays running while
        // it may still store (its start is recent).
        assert_eq!(store.list_runs(None).unwrap()[0].status, RunStatus::Running);
        let run = store.load_run(id).unwrap();
        assert_eq!(
            (run.status, run.cases[0].error.clone()),
            (RunStatus::Running, None)
        );
    }

    #[test]
    fn case_failures_are_kept_with_the_case() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let id = begin(&mut store, &plan("cases"));
        store
            .record_case_failure(id, 0, "worker 1 was stopped")
            .unwrap();
        assert!(store.record_case_failure(id, 9, "no such case").is_err());
        let run = store.load_run(id).unwrap();
        assert_eq!(run.cases[0].error.as_deref(), Some("worker 1 was stopped"));
    }

    #[test]
    fn a_store_in_memory_has_the_schema_of_a_file_and_shares_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut on_file = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let mut in_memory = SqliteStore::in_memory().unwrap();
        assert!(in_memory.is_in_memory() && !on_file.is_in_memory());
        assert_eq!(in_memory.schema_version(), schema::known_version());
        assert_eq!(in_memory.found_version(), 0, "migrated from empty");
        let plan = plan("memory");
        let on_file_id = run_into(&mut on_file, &plan);
        let on_file_run = on_file.load_run(on_file_id).unwrap();
        let in_memory_id = run_into(&mut in_memory, &plan);
        let in_memory_run = in_memory.load_run(in_memory_id).unwrap();
        let shape = |run: &RunRecord| {
            (
                run.status,
                run.plan.clone(),
                run.cases
                    .iter()
                    .map(|c| (c.spec.clone(), c.iterations.len()))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(shape(&in_memory_run), shape(&on_file_run));
        assert_eq!(in_memory.list_runs(None).unwrap().len(), 1);
        assert!(SqliteStore::in_memory()
            .unwrap()
            .list_runs(None)
            .unwrap()
            .is_empty());
    }

    #[test]
    fn survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let id = run_into(&mut SqliteStore::open(&path).unwrap(), &plan("x"));
        let store = SqliteStore::open_existing(&path).unwrap();
        assert_eq!(store.load_run(id).unwrap().cases[0].measured().count(), 3);
    }

    #[test]
    fn refuses_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let text = dir.path().join("notes.txt");
        std::fs::write(
            &text,
            "this is not a database, just some text that is long enough",
        )
        .unwrap();
        assert!(matches!(
            SqliteStore::open(&text),
            Err(StoreError::NotSchedlab { .. })
        ));

        let other = dir.path().join("other.db");
        Connection::open(&other)
            .unwrap()
            .execute("CREATE TABLE t (x)", [])
            .unwrap();
        assert!(matches!(
            SqliteStore::open(&other),
            Err(StoreError::NotSchedlab { .. })
        ));
    }

    /// A file too short to be a database but not empty (a byte, a word) is someone's file:
    /// SQLite would take it for a new database and write over it.
    #[test]
    fn refuses_short_foreign_files_and_leaves_them_alone() {
        let dir = tempfile::tempdir().unwrap();
        for (name, bytes) in [("one.db", &b"x"[..]), ("word.db", &b"hello\n"[..])] {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            assert!(
                matches!(
                    SqliteStore::open(&path),
                    Err(StoreError::NotSchedlab { .. })
                ),
                "{name}"
            );
            assert!(
                matches!(
                    SqliteStore::open_existing(&path),
                    Err(StoreError::NotSchedlab { .. })
                ),
                "{name}"
            );
            assert_eq!(std::fs::read(&path).unwrap(), bytes, "{name} was written");
        }
        // An empty file is a new database, as SQLite has it.
        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        assert!(SqliteStore::open(&empty).is_ok());
    }

    /// A finished run in a new database at `path`, written and closed (the WAL checkpointed).
    fn stored_db(path: &Path) -> i64 {
        let mut store = SqliteStore::open(path).unwrap();
        run_into(&mut store, &plan("stored"))
    }

    fn raw(path: &Path) -> Connection {
        Connection::open(path).unwrap()
    }

    /// A new file with the schema of `version`, as an older schedlab left it, opened raw.
    fn file_at_version(path: &Path, version: i64) -> Connection {
        let conn = raw(path);
        let tx = conn.unchecked_transaction().unwrap();
        schema::migrate_to(&tx, path, version, &fill_summaries).unwrap();
        tx.commit().unwrap();
        conn
    }

    /// Stores a complete run of `plan` (without its cases) as a writer before V5 did: no owner
    /// and no uuid.
    fn insert_old_run(conn: &Connection, plan: &RunPlan, started_at_ns: i64) {
        conn.execute(
            "INSERT INTO runs (label, plan_json, fingerprint_json, boot_id, kernel_release,
                               hostname, started_at_ns, status, schedlab_version)
             VALUES (?1, ?2, ?3, 'b', 'k', 'h', ?4, 'complete', 'old')",
            params![
                plan.label,
                to_json(plan).unwrap(),
                to_json(&Fingerprint::collect()).unwrap(),
                started_at_ns
            ],
        )
        .unwrap();
    }

    /// Stores the first case of `plan` as case 1 of run 1, as a writer before V5 did.
    fn insert_old_case(conn: &Connection, plan: &RunPlan) {
        conn.execute(
            "INSERT INTO cases (run_id, position, name, workload, spec_json) VALUES (1, 0, ?1, 'fake', ?2)",
            params![plan.cases[0].name, to_json(&plan.cases[0]).unwrap()],
        )
        .unwrap();
    }

    #[test]
    fn readers_write_nothing_and_cannot_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let id = stored_db(&path);
        let before = std::fs::read(&path).unwrap();
        {
            let mut reader = SqliteStore::open_existing(&path).unwrap();
            assert!(!reader.is_writer());
            assert_eq!(reader.list_runs(None).unwrap().len(), 1);
            assert_eq!(reader.load_run(id).unwrap().cases[0].measured().count(), 3);
            assert!(reader.calibrations().unwrap().is_empty());
            assert!(matches!(
                reader.begin_run(&plan("x"), &Fingerprint::collect(), 1),
                Err(StoreError::ReadOnly { .. })
            ));
        }
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn readers_never_create_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing.db");
        assert!(matches!(
            SqliteStore::open_existing(&path),
            Err(StoreError::NotFound(_))
        ));
        assert!(matches!(
            SqliteStore::open_existing_writer(&path),
            Err(StoreError::NotFound(_))
        ));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn an_empty_file_reads_as_an_empty_store() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.db");
        std::fs::write(&path, b"").unwrap();
        let reader = SqliteStore::open_existing(&path).unwrap();
        assert_eq!(reader.schema_version(), 0);
        assert!(reader.list_runs(None).unwrap().is_empty());
        assert!(matches!(reader.resolve("1"), Err(StoreError::NotFound(_))));
        assert!(matches!(reader.resolve("x"), Err(StoreError::NotFound(_))));
        assert!(reader.measured_cases("h", "fake").unwrap().is_empty());
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        // A writer fills it.
        let mut writer = SqliteStore::open(&path).unwrap();
        assert_eq!(writer.found_version(), 0);
        run_into(&mut writer, &plan("now"));
    }

    #[test]
    fn older_schemas_are_read_and_upgraded_by_writers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v1.db");
        let plan = plan("old");
        {
            let conn = raw(&path);
            conn.pragma_update(None, "journal_mode", "WAL").unwrap();
            drop(conn);
            let conn = file_at_version(&path, 1);
            insert_old_run(&conn, &plan, 5);
            insert_old_case(&conn, &plan);
            conn.execute(
                "INSERT INTO iterations (case_id, position, warmup, started_at_ns) VALUES (1, 0, 0, 6)",
                [],
            )
            .unwrap();
        }
        let reader = SqliteStore::open_existing(&path).unwrap();
        assert_eq!(reader.schema_version(), 1);
        assert_eq!(reader.list_runs(None).unwrap().len(), 1);
        let run = reader.load_run(1).unwrap();
        assert!(run.cases[0].iterations[0].attachments.is_empty());
        assert_eq!(reader.run_tag(1).unwrap(), None);
        assert_eq!(reader.experiment(ExperimentKind::Ab, "x").unwrap(), None);
        assert!(reader.calibrations().unwrap().is_empty());
        drop(reader);

        let writer = SqliteStore::open(&path).unwrap();
        assert_eq!(writer.found_version(), 1);
        assert_eq!(writer.schema_version(), schema::known_version());
        assert_eq!(writer.load_run(1).unwrap().cases[0].iterations.len(), 1);
        let history: i64 = writer
            .conn
            .query_row("SELECT count(*) FROM refinery_schema_history", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(history, schema::known_version());
    }

    /// V6 rebuilds `runs` to allow `partial`: nothing of a V5 file is lost on the way (foreign
    /// keys are off during migrations, so the old table's drop cascades nowhere), run ids are
    /// never reused, and keys are enforced again afterwards.
    #[test]
    fn upgrading_to_partial_keeps_every_run_case_and_id() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v5.db");
        let plan = plan("v5");
        {
            let conn = file_at_version(&path, 5);
            for id in 1..=3 {
                conn.execute(
                    "INSERT INTO runs (id, label, plan_json, fingerprint_json, boot_id, kernel_release,
                                       hostname, started_at_ns, status, schedlab_version, owner_pid,
                                       owner_host)
                     VALUES (?1, 'v5', ?2, ?3, 'b', 'k', 'h', 5, 'failed', 'old', 42, 'h')",
                    params![
                        id,
                        to_json(&plan).unwrap(),
                        to_json(&Fingerprint::collect()).unwrap()
                    ],
                )
                .unwrap();
                conn.execute(
                    "INSERT INTO cases (run_id, position, name, workload, spec_json, error)
                     VALUES (?1, 0, ?2, 'fake', ?3, 'it broke')",
                    params![id, plan.cases[0].name, to_json(&plan.cases[0]).unwrap()],
                )
                .unwrap();
            }
            // A run someone deleted by hand: its id must not come back.
            conn.execute("DELETE FROM cases WHERE run_id = 3", [])
                .unwrap();
            conn.execute("DELETE FROM runs WHERE id = 3", []).unwrap();
        }
        let mut writer = SqliteStore::open(&path).unwrap();
        assert_eq!(writer.found_version(), 5);
        assert_eq!(writer.list_runs(None).unwrap().len(), 2);
        let run = writer.load_run(2).unwrap();
        assert_eq!(run.status, RunStatus::Failed);
        assert_eq!(run.cases[0].error.as_deref(), Some("it broke"));
        let id = writer.begin_run(&plan, &Fingerprint::collect(), 9).unwrap();
        assert_eq!(id, 4, "ids go on from the highest ever given");
        writer
            .finish_run(
                id,
                RunStatus::Partial,
                10,
                Some("partial run: 1 of 2 cases failed"),
            )
            .unwrap();
        drop(writer);
        let reader = SqliteStore::open_existing(&path).unwrap();
        assert_eq!(reader.load_run(id).unwrap().status, RunStatus::Partial);
        assert_eq!(
            reader.list_runs(None).unwrap()[0].status,
            RunStatus::Partial
        );
        let writer = SqliteStore::open(&path).unwrap();
        let orphan = writer.conn.execute(
            "INSERT INTO cases (run_id, position, name, workload, spec_json) VALUES (99, 0, 'x', 'fake', '{}')",
            [],
        );
        assert!(orphan.is_err(), "foreign keys are enforced again");
    }

    /// Measurements of one iteration of every shape: the wakeup latencies (quantiles and the max
    /// of the `wakeup` distribution), a count, a scalar and the runner's secondary wall time.
    fn every_shape() -> Vec<Measurement> {
        use schedlab_core::workload::wakeup::metrics as wakeup;
        let mut out: Vec<Measurement> = wakeup::WAKEUP_QUANTILES
            .iter()
            .zip([5.0, 9.0, 40.0, 120.0, 900.0])
            .map(|(def, v)| def.value(v))
            .collect();
        out.push(wakeup::WAKEUP_SAMPLES_COUNT.value(1e4));
        out.push(wakeup::REQUESTS_AVG_PER_SEC.value(2e3));
        out.push(secondary::WALL_TIME_SEC.value(1.5));
        out
    }

    fn iteration_of(index: u32, measurements: Vec<Measurement>) -> IterationRecord {
        IterationRecord {
            index,
            warmup: false,
            started_at_ns: 10 + i64::from(index),
            measurements,
            attachments: Vec::new(),
            quiet: None,
        }
    }

    #[test]
    fn metric_definitions_are_stored_with_the_run_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let mut store = SqliteStore::open(&path).unwrap();
        let plan = plan("shapes");
        let id = begin(&mut store, &plan);
        for index in 0..2 {
            store
                .record_iteration(id, 0, &iteration_of(index, every_shape()))
                .unwrap();
        }
        let run = store.load_run(id).unwrap();
        for iteration in &run.cases[0].iterations {
            assert_eq!(iteration.measurements, every_shape());
        }
        let p99_9 = &run.cases[0].iterations[0].measurements[3];
        assert_eq!(p99_9.shape, MetricShape::Quantile(99.9));
        assert_eq!(p99_9.distribution.as_deref(), Some("wakeup"));
        let definitions: i64 = store
            .conn
            .query_row("SELECT count(*) FROM metrics", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            definitions,
            every_shape().len() as i64,
            "one per case and metric"
        );
        let here = Fingerprint::collect().hostname;
        assert_eq!(median_wall_time_sec(&store, &here, &plan), Some(1.5));
    }

    /// The median wall time `hostname` measured for the plan's first case.
    fn median_wall_time_sec(store: &dyn Store, hostname: &str, plan: &RunPlan) -> Option<f64> {
        let case = &plan.cases[0];
        let measured = store
            .measured_cases(hostname, case.workload.kind())
            .unwrap();
        assert!(measured.len() <= 1, "{measured:?}");
        measured
            .into_iter()
            .find(|m| m.name == case.name && m.workload == case.workload)
            .map(|m| m.median_sec)
    }

    /// Estimates go by this host's newest 50 measured iterations of a case: not its warm-ups,
    /// older iterations, or another host's.
    #[test]
    fn measured_cases_are_this_hosts_newest_measured_iterations() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let plan = plan("history");
        let here = Fingerprint::collect();
        let elsewhere = Fingerprint {
            hostname: format!("{}-elsewhere", here.hostname),
            ..here.clone()
        };
        let wall = |sec: f64| vec![secondary::WALL_TIME_SEC.value(sec)];
        let id = store.begin_run(&plan, &elsewhere, 1).unwrap();
        store
            .record_iteration(id, 0, &iteration_of(0, wall(1e6)))
            .unwrap();
        let id = store.begin_run(&plan, &here, 2).unwrap();
        let warmup = IterationRecord {
            warmup: true,
            ..iteration_of(0, wall(1e6))
        };
        store.record_iteration(id, 0, &warmup).unwrap();
        for index in 1..=60 {
            store
                .record_iteration(id, 0, &iteration_of(index, wall(f64::from(index))))
                .unwrap();
        }
        // 11 to 60: the newest 50.
        assert_eq!(
            median_wall_time_sec(&store, &here.hostname, &plan),
            Some(35.5)
        );
        assert_eq!(
            median_wall_time_sec(&store, &elsewhere.hostname, &plan),
            Some(1e6)
        );
        assert!(store
            .measured_cases(&here.hostname, "pipe")
            .unwrap()
            .is_empty());
        assert!(store.measured_cases("nobody", "fake").unwrap().is_empty());
    }

    /// A V6 file holds measurements as schedlab wrote them then, without definitions: a reader
    /// reads it as it is, a writer upgrades it to V7, and both read every run alike, with the
    /// shapes the names gave before V7 — identical to the declared ones for the wakeup latencies.
    #[test]
    fn a_v6_file_reads_alike_before_and_after_its_upgrade_to_v7() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v6.db");
        let plan = plan("v6");
        {
            let conn = file_at_version(&path, 6);
            insert_old_run(&conn, &plan, 5);
            insert_old_case(&conn, &plan);
            for position in 0..2 {
                conn.execute(
                    "INSERT INTO iterations (case_id, position, warmup, started_at_ns) VALUES (1, ?1, 0, 6)",
                    [position],
                )
                .unwrap();
                for m in every_shape() {
                    conn.execute(
                        "INSERT INTO measurements (iteration_id, name, unit, better, role, value)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        params![
                            position + 1,
                            m.name,
                            m.unit,
                            m.better.as_str(),
                            m.role.as_str(),
                            m.value
                        ],
                    )
                    .unwrap();
                }
            }
        }
        let reader = SqliteStore::open_existing(&path).unwrap();
        assert_eq!(reader.schema_version(), 6);
        let before = reader.load_run(1).unwrap();
        assert_eq!(median_wall_time_sec(&reader, "h", &plan), Some(1.5));
        drop(reader);
        // Every metric of `every_shape` reads as declared: the old names of the latencies gave
        // the shapes the wakeup workload now declares, and a `count` unit a count.
        for iteration in &before.cases[0].iterations {
            assert_eq!(iteration.measurements, every_shape());
        }

        let writer = SqliteStore::open(&path).unwrap();
        assert_eq!(writer.found_version(), 6);
        assert_eq!(writer.schema_version(), schema::known_version());
        assert_eq!(writer.load_run(1).unwrap(), before);
        drop(writer);
        let reader = SqliteStore::open_existing(&path).unwrap();
        assert_eq!(reader.load_run(1).unwrap(), before);
        reader.integrity_check().unwrap();
    }

    /// A metric stored under a name it has since lost reads under its current name, with the
    /// definition stored with it, so its history and comparisons run on across the rename.
    #[test]
    fn measurements_stored_under_a_former_name_read_under_the_current_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let mut store = SqliteStore::open(&path).unwrap();
        let id = begin(&mut store, &plan("renamed"));
        store
            .record_iteration(id, 0, &iteration_of(0, every_shape()))
            .unwrap();
        for table in ["measurements", "metrics"] {
            let sql =
                format!("UPDATE {table} SET name = 'rps_avg' WHERE name = 'requests_avg_per_sec'");
            assert_eq!(store.conn.execute(&sql, []).unwrap(), 1, "{table}");
        }
        drop(store);
        let reader = SqliteStore::open_existing(&path).unwrap();
        let run = reader.load_run(id).unwrap();
        assert_eq!(run.cases[0].iterations[0].measurements, every_shape());
    }

    /// Runs stored before V8 have no global id: a reader of such a file says so, and the upgrade
    /// gives every run its own random UUID, in the form new runs get.
    #[test]
    fn runs_stored_before_v8_get_uuids_when_the_file_is_upgraded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v7.db");
        {
            let conn = file_at_version(&path, 7);
            for n in 0..20 {
                insert_old_run(&conn, &plan("v7"), n);
            }
        }
        let reader = SqliteStore::open_existing(&path).unwrap();
        assert_eq!(reader.schema_version(), 7);
        assert_eq!(reader.run_provenance(1).unwrap().uuid, None);
        drop(reader);
        let mut writer = SqliteStore::open(&path).unwrap();
        assert_eq!(writer.found_version(), 7);
        let new = begin(&mut writer, &plan("v8"));
        let mut uuids: Vec<String> = (1..=new)
            .map(|id| writer.run_provenance(id).unwrap().uuid.unwrap())
            .collect();
        for uuid in &uuids {
            let parsed = uuid::Uuid::parse_str(uuid).unwrap();
            assert_eq!(parsed.get_version_num(), 4, "{uuid}");
            assert_eq!(
                parsed.hyphenated().to_string(),
                *uuid,
                "lower-case, hyphenated"
            );
            assert!(writer.run_by_uuid(uuid).unwrap().is_some());
        }
        uuids.sort();
        uuids.dedup();
        assert_eq!(uuids.len(), 21);
        writer.integrity_check().unwrap();
    }

    /// Runs of many shapes: a suite whose cases ran in random order, two cases of one name, a
    /// run stopped in its second case, one still running, values of 0, a former metric name.
    fn runs_of_every_shape(store: &mut SqliteStore) {
        let fake = |value_usec, seed, effect_pct| {
            WorkloadSpec::Fake(FakeParams {
                value_usec,
                seed,
                effect_pct,
                spread_pct: 10.0,
                ..FakeParams::default()
            })
        };
        let cases = vec![fake(100.0, 1, 0.0), fake(200.0, 2, 0.0)];
        let mut suite = RunPlan::new(None, Some("suite".into()), 3, 1, cases).unwrap();
        // Plans no longer hold two cases of one name that differ; runs stored before may.
        let mut twin = suite.cases[0].clone();
        twin.workload = fake(100.0, 3, 5.0);
        suite.cases.push(twin);
        assert_eq!(
            suite.cases[0].name, suite.cases[2].name,
            "two cases of one name"
        );
        for seed in 0..3 {
            run_into(store, &suite.clone().shuffled(seed));
        }
        run_into(store, &suite);
        let stopped = begin(store, &suite);
        for (case, index) in [(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1)] {
            let values = vec![fake_value(10.0 + f64::from(index)), zero_count()];
            store
                .record_iteration(stopped, case, &iteration_of(index, values))
                .unwrap();
        }
        store.summarise_case(stopped, 0).unwrap();
        store
            .finish_run(stopped, RunStatus::Interrupted, 9, Some("SIGINT"))
            .unwrap();
        let running = begin(store, &suite);
        for index in 0..3 {
            let values = vec![fake_value(20.0 + f64::from(index)), zero_count()];
            store
                .record_iteration(running, 1, &iteration_of(index, values))
                .unwrap();
        }
        let renamed = begin(store, &plan("renamed"));
        store
            .record_iteration(renamed, 0, &iteration_of(0, every_shape()))
            .unwrap();
        store
            .finish_run(renamed, RunStatus::Complete, 10, None)
            .unwrap();
        store
            .conn
            .execute(
                "UPDATE measurements SET name = 'rps_avg' WHERE name = 'requests_avg_per_sec'",
                [],
            )
            .unwrap();
    }

    fn fake_value(v: f64) -> Measurement {
        schedlab_core::workload::fake::USEC_PER_OP.value(v)
    }

    fn zero_count() -> Measurement {
        MetricDef::secondary_count("migrations", schedlab_core::metric::Better::Lower).value(0.0)
    }

    /// Every series of every case, with every metric, as `store` reads them.
    fn every_series(store: &SqliteStore) -> Vec<crate::CaseSeries> {
        let query = crate::SeriesQuery {
            selection: crate::RunSelection::default(),
            cases: Vec::new(),
            metrics: crate::MetricChoice::All,
            per_host: false,
        };
        let mut all = Vec::new();
        store
            .case_series(&query, &mut |s| {
                all.push(s);
                std::ops::ControlFlow::Continue(())
            })
            .unwrap();
        all
    }

    /// A V8 file reads the same series from its iterations as V9 reads from its summaries, and
    /// the upgrade fills the summaries with the same numbers, bit for bit.
    #[test]
    fn a_v8_file_reads_the_same_series_before_and_after_its_upgrade() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let mut store = SqliteStore::open(&path).unwrap();
        runs_of_every_shape(&mut store);
        drop(store);
        let current = SqliteStore::open_existing(&path).unwrap();
        let before = every_series(&current);
        assert_eq!(before.len(), 3);
        let runs: Vec<usize> = before.iter().map(|s| s.runs.len()).collect();
        assert_eq!(
            runs,
            [6, 6, 1],
            "the suite's two case names, and the renamed run's"
        );
        let checked = SqliteStore::check(&path, false).unwrap();
        assert!(checked.ok(), "{:?}", checked.summaries);
        assert_eq!(checked.summaries.runs, 7);
        drop(current);

        downgrade_to_v8(&path);
        let v8 = SqliteStore::open_existing(&path).unwrap();
        assert_eq!(v8.schema_version(), 8);
        assert_eq!(every_series(&v8), before);
        drop(v8);
        let writer = SqliteStore::open(&path).unwrap();
        assert_eq!(writer.found_version(), 8);
        let summarised: i64 = writer
            .conn
            .query_row("SELECT count(*) FROM summaries", [], |r| r.get(0))
            .unwrap();
        assert!(summarised > 10, "{summarised}");
        drop(writer);
        let upgraded = SqliteStore::open_existing(&path).unwrap();
        assert_eq!(every_series(&upgraded), before);
        assert!(SqliteStore::check(&path, false).unwrap().ok());
    }

    /// `db check` compares every summary with the iterations and names what differs.
    #[test]
    fn check_finds_summaries_that_differ_from_the_iterations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let mut store = SqliteStore::open(&path).unwrap();
        runs_of_every_shape(&mut store);
        store
            .conn
            .execute_batch(
                "UPDATE summaries SET raw_mean = raw_mean * (1 + 1e-12)
                  WHERE run_id = 1 AND metric = 'usec_per_op';
                 DELETE FROM summarised_cases WHERE run_id = 2;",
            )
            .unwrap();
        drop(store);
        let report = SqliteStore::check(&path, false).unwrap();
        assert!(!report.ok());
        let problems = report.summaries.problems.join("\n");
        assert!(
            problems.contains("run 1, case") && problems.contains("usec_per_op"),
            "{problems}"
        );
        assert!(
            problems.contains("run 2, case") && problems.contains("do not say what they cover"),
            "{problems}"
        );
        assert_eq!(report.summaries.problems.len(), 4, "{problems}");
    }

    #[test]
    fn a_damaged_definition_is_reported_not_guessed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let mut store = SqliteStore::open(&path).unwrap();
        let id = begin(&mut store, &plan("bad"));
        store
            .record_iteration(id, 0, &iteration_of(0, every_shape()))
            .unwrap();
        // The CHECK constraints keep a writer from storing this; a damaged file can hold it.
        store
            .conn
            .execute_batch(
                "PRAGMA ignore_check_constraints = ON;
                 UPDATE metrics SET quantile_p = NULL WHERE name = 'wakeup_p50_usec';",
            )
            .unwrap();
        let e = store.load_run(id).unwrap_err();
        assert!(matches!(e, StoreError::Corrupt(_)), "{e}");
        assert!(e.to_string().contains("wakeup_p50_usec"), "{e}");
    }

    #[test]
    fn a_newer_schema_is_refused_by_readers_and_writers() {
        let dir = tempfile::tempdir().unwrap();
        for how in [
            "INSERT INTO refinery_schema_history VALUES (999, 'future', '2030-01-01T00:00:00Z', '1')",
            "PRAGMA user_version = 999",
        ] {
            let path = dir.path().join(format!("future{}.db", how.len()));
            stored_db(&path);
            raw(&path).execute_batch(how).unwrap();
            let before = std::fs::read(&path).unwrap();
            for result in [
                SqliteStore::open_existing(&path).map(drop),
                SqliteStore::open(&path).map(drop),
            ] {
                let e = result.unwrap_err();
                assert!(matches!(e, StoreError::Newer { version: 999, .. }), "{e}");
                assert!(e.to_string().contains("upgrade schedlab"), "{e}");
            }
            assert_eq!(std::fs::read(&path).unwrap(), before);
        }
    }

    #[test]
    fn damaged_history_rows_are_reported_without_panicking() {
        let dir = tempfile::tempdir().unwrap();
        for (n, damage) in [
            "UPDATE refinery_schema_history SET checksum = 'garbage' WHERE version = 2",
            "UPDATE refinery_schema_history SET applied_on = 'yesterday' WHERE version = 1",
            "UPDATE refinery_schema_history SET version = 'two' WHERE version = 2",
            "UPDATE refinery_schema_history SET name = NULL WHERE version = 3",
            "UPDATE refinery_schema_history SET name = 'other' WHERE version = 3",
            "UPDATE refinery_schema_history SET checksum = '12345' WHERE version = 1",
            "DELETE FROM refinery_schema_history WHERE version = 2",
            "DELETE FROM refinery_schema_history",
            "DROP TABLE refinery_schema_history",
            "ALTER TABLE refinery_schema_history RENAME COLUMN checksum TO sum",
        ]
        .iter()
        .enumerate()
        {
            let path = dir.path().join(format!("damaged{n}.db"));
            stored_db(&path);
            raw(&path).execute_batch(damage).unwrap();
            for result in [
                SqliteStore::open_existing(&path).map(drop),
                SqliteStore::open(&path).map(drop),
            ] {
                let e = result.unwrap_err();
                assert!(matches!(e, StoreError::Damaged { .. }), "{damage}: {e}");
                assert!(e.to_string().contains("schedlab db check"), "{damage}: {e}");
            }
            let report = SqliteStore::check(&path, false).unwrap();
            assert!(report.schema_problem.is_some(), "{damage}");
            assert!(!report.ok());
        }
    }

    #[test]
    fn writers_leave_foreign_databases_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other.db");
        raw(&other).execute("CREATE TABLE t (x)", []).unwrap();
        let before = std::fs::read(&other).unwrap();
        for result in [
            SqliteStore::open(&other).map(drop),
            SqliteStore::open_existing(&other).map(drop),
        ] {
            assert!(matches!(result, Err(StoreError::NotSchedlab { .. })));
        }
        assert_eq!(std::fs::read(&other).unwrap(), before);
        let mode: String = raw(&other)
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "delete");
    }

    #[test]
    fn damaged_files_say_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("good.db");
        stored_db(&path);
        let good = std::fs::read(&path).unwrap();

        let truncated = dir.path().join("truncated.db");
        std::fs::write(&truncated, &good[..good.len() / 2]).unwrap();
        let scribbled = dir.path().join("scribbled.db");
        let mut bytes = good.clone();
        for (i, b) in bytes[100..4096].iter_mut().enumerate() {
            *b = (i as u8).wrapping_mul(151).wrapping_add(17);
        }
        std::fs::write(&scribbled, &bytes).unwrap();
        for path in [&truncated, &scribbled] {
            for result in [
                SqliteStore::open_existing(path).map(drop),
                SqliteStore::open(path).map(drop),
            ] {
                let e = result.unwrap_err();
                assert!(matches!(e, StoreError::Damaged { .. }), "{e}");
            }
            let report = SqliteStore::check(path, false).unwrap();
            assert!(!report.integrity_problems.is_empty());
        }
    }

    #[test]
    fn check_reports_runs_by_status() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let mut store = SqliteStore::open(&path).unwrap();
        run_into(&mut store, &plan("a"));
        let id = store
            .begin_run(&plan("b"), &Fingerprint::collect(), 3)
            .unwrap();
        store
            .finish_run(id, RunStatus::Failed, 4, Some("boom"))
            .unwrap();
        drop(store);
        let report = SqliteStore::check(&path, false).unwrap();
        assert!(report.ok(), "{report:?}");
        assert_eq!(report.schema_version, Some(schema::known_version()));
        let count = |status: &str| {
            report
                .runs_by_status
                .iter()
                .find(|(s, _)| s == status)
                .map(|(_, n)| *n)
        };
        assert_eq!(count("complete"), Some(1));
        assert_eq!(count("failed"), Some(1));
        assert_eq!(count("running"), Some(0));
        assert!(report.abandoned_runs.is_empty());
        assert!(SqliteStore::check(&path, true).unwrap().ok());
    }

    #[test]
    fn writers_opening_one_new_file_at_once_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new.db");
        let writers = 8;
        let barrier = std::sync::Barrier::new(writers);
        std::thread::scope(|scope| {
            for i in 0..writers {
                let (path, barrier) = (&path, &barrier);
                scope.spawn(move || {
                    barrier.wait();
                    let mut store = SqliteStore::open(path).unwrap();
                    run_into(&mut store, &plan(&format!("w{i}")));
                });
            }
        });
        let store = SqliteStore::open_existing(&path).unwrap();
        assert_eq!(store.list_runs(None).unwrap().len(), writers);
        store.integrity_check().unwrap();
    }

    #[test]
    fn busy_writes_are_retried_until_the_lock_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let mut store = SqliteStore::open(&path).unwrap();
        let id = store
            .begin_run(&plan("p"), &Fingerprint::collect(), 1)
            .unwrap();
        let iteration = |index| IterationRecord {
            index,
            warmup: false,
            started_at_ns: 2,
            measurements: vec![],
            attachments: vec![],
            quiet: None,
        };

        // Held for the whole attempt: the store gives up after its patience, saying why.
        let holder = raw(&path);
        holder.execute_batch("BEGIN IMMEDIATE").unwrap();
        store
            .set_patience(Patience {
                busy_timeout: Duration::from_millis(5),
                total: Duration::from_millis(100),
            })
            .unwrap();
        let e = store.record_iteration(id, 0, &iteration(0)).unwrap_err();
        assert!(matches!(e, StoreError::Busy { .. }), "{e}");
        assert!(store.busy_retries() > 0);

        // Released while the store waits: the write lands.
        store
            .set_patience(Patience {
                busy_timeout: Duration::from_millis(5),
                total: Duration::from_secs(600),
            })
            .unwrap();
        let retries_before = store.busy_retries();
        let stored = std::thread::scope(|scope| {
            let writer = scope.spawn(|| store.record_iteration(id, 0, &iteration(0)));
            std::thread::sleep(Duration::from_millis(300));
            holder.execute_batch("COMMIT").unwrap();
            writer.join().unwrap()
        });
        stored.unwrap();
        assert!(store.busy_retries() > retries_before);
        assert_eq!(store.load_run(id).unwrap().cases[0].iterations.len(), 1);
    }

    #[test]
    fn reports_unwritable_paths() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, "x").unwrap();
        // A path below a regular file cannot be created.
        assert!(matches!(
            SqliteStore::open(&file.join("r.db")),
            Err(StoreError::Unwritable { .. })
        ));
        assert!(matches!(
            SqliteStore::open(dir.path()),
            Err(StoreError::NotAFile { .. })
        ));
    }
}
