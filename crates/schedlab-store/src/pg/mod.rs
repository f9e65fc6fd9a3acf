//! The PostgreSQL backend: one database a fleet of machines writes into at once, behind the same
//! [`Store`] trait as SQLite and with the same schema (`migrations/postgres`, version for version).
//!
//! A reader runs every query in a read-only, repeatable-read transaction: PostgreSQL's MVCC never
//! makes a writer wait for it, and a run is read as one snapshot. A writer makes each call one
//! transaction, as SQLite does, so every iteration is committed the moment it finishes. Integer ids
//! come from identity columns, so concurrent writers never collide; each run also carries a UUID
//! made by the writer, which makes `begin_run` safe to retry and lets `push` recognise runs it has
//! copied. A connection that drops (a server restart, a network blip) is reopened and the
//! transaction retried with backoff for the store's patience, the iteration waiting in memory.
//! A lock another session holds is waited for in bounded steps (`lock_timeout`) and retried the
//! same way, so a stop signal is never held up by it.
use std::cell::{Cell, RefCell};
use std::time::Duration;

use postgres::{Client, IsolationLevel, NoTls};
use schedlab_core::sys;

use crate::error::postgres_error_text;
use crate::location::PgUrl;
use crate::retry::{lock_wait, retry, Attempt, Patience};
use crate::sql::{Db, Pg};
use crate::summaries;
use crate::transactions::Backend;
use crate::{Result, StoreError};

mod schema;
mod tls;

pub use schema::known_version;

/// The oldest schema a reader reads: the first PostgreSQL had.
const OLDEST_READABLE_VERSION: i64 = crate::schema::V_RUN_UUID;

/// The first pause after a dropped connection.
const FIRST_PAUSE: Duration = Duration::from_millis(50);
/// How long data sent may go unacknowledged before the connection counts as dropped.
const UNACKNOWLEDGED_LIMIT: Duration = Duration::from_secs(30);
/// How long a new connection may take unless the URL says (`connect_timeout`), and once a stop
/// signal has arrived, whatever the URL says: the stop's grace is 5 s.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
const STOP_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

pub struct PgStore {
    client: RefCell<Client>,
    url: PgUrl,
    writer: bool,
    /// The schema version found when the store was opened (0: no schema yet).
    found_version: i64,
    /// The version queries run against: the current one for a writer, the found one for a reader.
    version: i64,
    patience: Patience,
    /// The lock wait set on the connection (see [`limit_lock_waits`]).
    lock_wait: Cell<Duration>,
}

/// Errors worth a new attempt: the connection went away, a lock stayed held for one step of the
/// wait, or the server asked to try again.
fn is_transient(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        Some(code) => {
            let code = code.code();
            // serialization failure, deadlock, lock not available, shutdown, cannot connect now,
            // connection exceptions
            matches!(
                code,
                "40001" | "40P01" | "55P03" | "57P01" | "57P02" | "57P03"
            ) || code.starts_with("08")
        }
        None => std::error::Error::source(e)
            .is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some()),
    }
}

/// What a transient failure is said to be when waiting for it ends: a lock timeout names the
/// lock's holder, which the server's own message leaves out.
fn transient_text(e: &postgres::Error) -> String {
    if e.code() == Some(&postgres::error::SqlState::LOCK_NOT_AVAILABLE) {
        format!(
            "another session holds a lock on its tables: {}",
            postgres_error_text(e)
        )
    } else {
        postgres_error_text(e)
    }
}

pub(crate) fn connect(url: &PgUrl) -> Result<Client> {
    let unopenable = |reason: String| StoreError::Unopenable {
        path: url.redacted().into(),
        reason,
    };
    let config = driver_config(url, sys::interrupt_signal().is_some());
    let tls = tls::client_config(url).map_err(unopenable)?;
    let client = match tls {
        None => config.connect(NoTls),
        Some(tls) => config.connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls)),
    };
    client.map_err(|e| unopenable(postgres_error_text(&e)))
}

/// The driver's settings for `url`: what the URL says, and schedlab's bounds on every wait where
/// it says nothing (`stopping`: a stop signal has arrived).
fn driver_config(url: &PgUrl, stopping: bool) -> postgres::Config {
    let mut config = url.config();
    if config.get_password().is_none() {
        if let Some(password) = std::env::var_os("PGPASSWORD") {
            config.password(password.as_encoded_bytes());
        }
    }
    let mut connect_timeout = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(CONNECT_TIMEOUT);
    if stopping {
        connect_timeout = connect_timeout.min(STOP_CONNECT_TIMEOUT);
    }
    config.connect_timeout(connect_timeout);
    // A server whose host died or whose network is cut sends nothing more, not even a reset: a
    // statement sent to it would wait for the kernel's 15 minutes of retransmission, with a stop
    // signal unseen all that time. Bounded, the connection fails within 30 s and is reopened as a
    // dropped one is. This acts only while data is in flight, between iterations. Keepalives
    // stay at the driver's 2 hours: shorter, they would send probes during long iterations,
    // inside the timed window, to cover only a server that dies after taking a statement and
    // before answering it.
    if !url.names("tcp_user_timeout") {
        config.tcp_user_timeout(UNACKNOWLEDGED_LIMIT);
    }
    config.application_name("schedlab");
    config
}

/// Bounds how long one statement waits for a lock another session holds (a migration, a
/// maintenance command, a `LOCK TABLE`): it then fails with lock_not_available, which [`retry`]
/// treats as transient. Unbounded, such a wait would hold a run's store call, and the stop signal
/// that should end it, for as long as the lock is held. Set per session; a writer sets it after
/// migrating, so that writers opening a new database queue on the advisory lock for as long as
/// the first one's migration takes.
fn limit_lock_waits(
    client: &mut Client,
    wait: Duration,
) -> std::result::Result<(), postgres::Error> {
    client.batch_execute(&format!("SET lock_timeout = {}", wait.as_millis().max(1)))
}

impl PgStore {
    /// Opens the database for reading: nothing is created or migrated, and every query runs in a
    /// read-only transaction. A database with no schedlab schema yet reads as an empty store.
    pub fn open_reader(url: &PgUrl) -> Result<Self> {
        let mut client = connect(url)?;
        let patience = Patience::default();
        limit_lock_waits(&mut client, patience.busy_timeout).map_err(|e| unopenable(url, &e))?;
        let shown = url.redacted();
        let version = {
            let mut tx = client
                .build_transaction()
                .read_only(true)
                .start()
                .map_err(|e| unopenable(url, &e))?;
            let version = schema::inspect(&mut tx, &shown)?;
            tx.commit()?;
            version
        };
        // PostgreSQL arrived with V8 and migrates in one transaction, so a database is empty or
        // complete at a version some schedlab wrote; a reader reads V8 as it is, as it reads an
        // older SQLite file (histories from the iterations, before V9's summaries).
        if version != 0 && version < OLDEST_READABLE_VERSION {
            return Err(StoreError::NeedsUpgrade {
                path: shown.into(),
                version,
                oldest: OLDEST_READABLE_VERSION,
            });
        }
        Ok(PgStore {
            client: RefCell::new(client),
            url: url.clone(),
            writer: false,
            found_version: version,
            version,
            patience,
            lock_wait: Cell::new(patience.busy_timeout),
        })
    }

    /// Opens the database for writing, creating or upgrading schedlab's tables in it.
    pub fn open_writer(url: &PgUrl) -> Result<Self> {
        let mut client = connect(url)?;
        let shown = url.redacted();
        let found_version =
            schema::migrate(&mut client, &shown, &fill_summaries).map_err(|e| match e {
                StoreError::Postgres(e) => StoreError::Unwritable {
                    path: shown.clone().into(),
                    reason: postgres_error_text(&e),
                },
                other => other,
            })?;
        let patience = Patience::default();
        limit_lock_waits(&mut client, patience.busy_timeout).map_err(|e| unopenable(url, &e))?;
        Ok(PgStore {
            client: RefCell::new(client),
            url: url.clone(),
            writer: true,
            found_version,
            version: known_version(),
            patience,
            lock_wait: Cell::new(patience.busy_timeout),
        })
    }

    /// What `schedlab db check` says of a PostgreSQL database, read-only: its schema (version,
    /// history) and runs by status, with the abandoned ones. The server keeps its own pages
    /// sound, so there is no file-level check to make.
    pub fn check(url: &PgUrl) -> Result<crate::CheckReport> {
        let mut report = crate::CheckReport::empty(url.redacted().into(), false);
        let store = match PgStore::open_reader(url) {
            Ok(store) => store,
            Err(StoreError::Damaged { detail, .. }) => {
                report.schema_problem = Some(detail);
                return Ok(report);
            }
            Err(StoreError::NeedsUpgrade { version, .. }) => {
                report.schema_version = Some(version);
                return Ok(report);
            }
            Err(e) => return Err(e),
        };
        report.schema_version = Some(store.version);
        let mut counts: Vec<(String, i64)> = crate::check::STATUSES
            .iter()
            .map(|s| (s.to_string(), 0))
            .collect();
        if store.has_schema() {
            let rows = store.read_tx(|db| {
                db.query(
                    "SELECT status, count(*) FROM runs GROUP BY status",
                    &[],
                    |r| Ok((r.try_get::<_, String>(0)?, r.try_get::<_, i64>(1)?)),
                )
            })?;
            for (status, n) in rows {
                match counts.iter_mut().find(|(s, _)| *s == status) {
                    Some(entry) => entry.1 = n,
                    None => counts.push((status, n)),
                }
            }
            report.abandoned_runs =
                store.read_tx(|db| crate::check::abandoned_runs(db, store.version))?;
            report.summaries = store.read_tx(|db| summaries::verify(db, store.version))?;
        }
        report.runs_by_status = counts;
        Ok(report)
    }

    /// The schema version the database had when it was opened, before a writer upgraded it.
    pub fn found_version(&self) -> i64 {
        self.found_version
    }

    /// The schema version queries run against (0: no schema yet, seen by a reader).
    pub fn schema_version(&self) -> i64 {
        self.version
    }

    /// Changes how long one statement waits for a lock and how long a transaction is retried
    /// after a lock wait or a dropped connection.
    pub fn set_patience(&mut self, patience: Patience) -> Result<()> {
        limit_lock_waits(self.client.get_mut(), patience.busy_timeout)?;
        self.lock_wait.set(patience.busy_timeout);
        self.patience = patience;
        Ok(())
    }

    /// Runs `attempt` on the connection until it does not fail transiently, reconnecting when the
    /// connection is gone (see [`retry`]). `attempt` learns whether an earlier attempt may have
    /// committed before its answer was lost.
    fn retry<T>(&self, mut attempt: impl FnMut(&mut Client, bool) -> Result<T>) -> Result<T> {
        let location = || self.url.redacted().into();
        retry(&self.patience, FIRST_PAUSE, location, |retrying| {
            let mut client = self.client.borrow_mut();
            if client.is_closed() {
                match connect(&self.url) {
                    Ok(fresh) => *client = fresh,
                    Err(e) => return Attempt::Transient(e.to_string()),
                }
                // A new session starts with the server's default (normally no bound at all).
                self.lock_wait.set(Duration::MAX);
            }
            let wait = lock_wait(&self.patience);
            if wait != self.lock_wait.get() {
                if let Err(e) = limit_lock_waits(&mut client, wait) {
                    return Attempt::Transient(postgres_error_text(&e));
                }
                self.lock_wait.set(wait);
            }
            match attempt(&mut client, retrying) {
                Err(StoreError::Postgres(e)) if is_transient(&e) => {
                    Attempt::Transient(transient_text(&e))
                }
                other => Attempt::Done(other),
            }
        })
    }

    /// Whether the database holds a schema (a reader may meet an empty one).
    fn has_schema(&self) -> bool {
        self.version > 0
    }
}

/// Fills the summaries of every run a database held when it reaches V9.
fn fill_summaries(db: &mut Pg<'_>, version: i64) -> Result<()> {
    if version == crate::schema::V_SUMMARIES {
        summaries::fill(db)?;
    }
    Ok(())
}

fn unopenable(url: &PgUrl, e: &postgres::Error) -> StoreError {
    StoreError::Unopenable {
        path: url.redacted().into(),
        reason: postgres_error_text(e),
    }
}

impl Backend for PgStore {
    type Db<'t> = Pg<'t>;

    fn version(&self) -> i64 {
        self.version
    }

    /// A read-only, repeatable-read transaction, so it sees one snapshot and never makes a
    /// writer wait.
    fn read_tx<T>(&self, mut body: impl FnMut(&mut Pg<'_>) -> Result<T>) -> Result<T> {
        self.retry(|client, _| {
            let tx = client
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()?;
            let mut db = Pg::new(tx);
            let value = body(&mut db)?;
            db.tx.commit()?;
            Ok(value)
        })
    }

    /// Retried whole after a dropped connection.
    fn write_tx<T>(&self, mut body: impl FnMut(&mut Pg<'_>, bool) -> Result<T>) -> Result<T> {
        if !self.writer {
            return Err(StoreError::ReadOnly {
                path: self.url.redacted().into(),
            });
        }
        self.retry(|client, retrying| {
            let mut db = Pg::new(client.transaction()?);
            let value = body(&mut db, retrying)?;
            db.tx.commit()?;
            Ok(value)
        })
    }

    fn location(&self) -> String {
        self.url.redacted()
    }

    fn is_duplicate_uuid(e: &StoreError) -> bool {
        matches!(e, StoreError::Postgres(e)
            if e.as_db_error().and_then(|d| d.constraint()) == Some("runs_by_uuid"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fresh_pg_database;
    use crate::Store;
    use schedlab_core::fingerprint::Fingerprint;
    use schedlab_core::plan::RunPlan;
    use schedlab_core::record::RunStatus;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// A fresh database's URL with `query` added, and the CA that signed the test server's
    /// certificate; `None` without a test server.
    fn url_with(test: &str, query: &str) -> Option<(PgUrl, String)> {
        let url = fresh_pg_database(test)?;
        let ca = std::env::var("SCHEDLAB_TEST_PG_CA").expect("scripts/with-postgres sets it");
        let query = query.replace("{ca}", &ca);
        Some((PgUrl::parse(&format!("{url}?{query}")).unwrap(), ca))
    }

    /// A writer on a fresh database named after `test`, with the database's URL; `None` without
    /// a test server.
    fn fresh_writer(test: &str) -> Option<(String, PgUrl, PgStore)> {
        let url = fresh_pg_database(test)?;
        let pg = PgUrl::parse(&url).unwrap();
        let store = PgStore::open_writer(&pg).unwrap();
        Some((url, pg, store))
    }

    fn uses_tls(url: &PgUrl) -> bool {
        let mut client = connect(url).unwrap();
        client
            .query_one(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                &[],
            )
            .unwrap()
            .get(0)
    }

    #[test]
    fn tls_is_verified_against_the_given_root_certificate() {
        let Some((url, _)) = url_with("tls_verified", "sslmode=verify-full&sslrootcert={ca}")
        else {
            return;
        };
        assert!(uses_tls(&url));
        // The whole store works over it.
        let mut store = PgStore::open_writer(&url).unwrap();
        let fake = schedlab_core::workload::WorkloadSpec::Fake(Default::default());
        let plan = RunPlan::new(None, Some("tls".into()), 1, 0, vec![fake]).unwrap();
        let id = store.begin_run(&plan, &Fingerprint::collect(), 1).unwrap();
        assert_eq!(
            PgStore::open_reader(&url).unwrap().resolve("tls").unwrap(),
            [id]
        );
    }

    #[test]
    fn an_unknown_certificate_is_refused_when_tls_is_required() {
        let Some((url, _)) = url_with("tls_unknown", "sslmode=require") else {
            return;
        };
        // The test CA is not among the webpki roots.
        let e = PgStore::open_reader(&url).map(drop).unwrap_err();
        assert!(matches!(e, StoreError::Unopenable { .. }), "{e}");
        let message = e.to_string();
        assert!(message.contains("certificate"), "{message}");
        assert!(!message.contains('\n'), "{message}");
    }

    #[test]
    fn prefer_encrypts_without_checking_and_disable_does_not_encrypt() {
        let Some((prefer, _)) = url_with("tls_prefer", "application_name=x") else {
            return;
        };
        assert!(uses_tls(&prefer));
        let Some((disable, _)) = url_with("tls_disable", "sslmode=disable") else {
            return;
        };
        assert!(!uses_tls(&disable));
    }

    #[test]
    fn a_root_certificate_file_without_certificates_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let url = PgUrl::parse(&format!(
            "postgres://127.0.0.1:1/x?sslmode=require&sslrootcert={}",
            empty.display()
        ))
        .unwrap();
        let message = PgStore::open_reader(&url)
            .map(drop)
            .unwrap_err()
            .to_string();
        assert!(message.contains("empty.pem"), "{message}");
    }

    #[test]
    fn a_server_that_is_not_there_is_a_one_line_error_without_the_password() {
        let url = PgUrl::parse("postgres://u:hunter2@127.0.0.1:1/x?connect_timeout=5").unwrap();
        let e = PgStore::open_writer(&url).map(drop).unwrap_err();
        assert!(matches!(e, StoreError::Unopenable { .. }), "{e}");
        let message = e.to_string();
        assert!(
            !message.contains("hunter2") && !message.contains('\n'),
            "{message}"
        );
    }

    /// Every wait on the network is bounded where the URL does not bound it itself, and a stop
    /// shortens a new connection's.
    #[test]
    fn waits_on_the_network_are_bounded_unless_the_url_says() {
        let plain = PgUrl::parse("postgres://u@db.example/lab").unwrap();
        let config = driver_config(&plain, false);
        assert_eq!(config.get_connect_timeout(), Some(&CONNECT_TIMEOUT));
        // No probe inside a timed window: keepalives keep the driver's 2 hours.
        assert_eq!(config.get_keepalives_idle(), Duration::from_secs(2 * 3600));
        assert_eq!(config.get_tcp_user_timeout(), Some(&UNACKNOWLEDGED_LIMIT));
        let stopping = driver_config(&plain, true);
        assert_eq!(stopping.get_connect_timeout(), Some(&STOP_CONNECT_TIMEOUT));

        let given = PgUrl::parse(
            "postgres://u@db.example/lab?connect_timeout=1&keepalives_idle=600&tcp_user_timeout=120",
        )
        .unwrap();
        let config = driver_config(&given, true);
        assert_eq!(config.get_connect_timeout(), Some(&Duration::from_secs(1)));
        assert_eq!(config.get_keepalives_idle(), Duration::from_secs(600));
        assert_eq!(
            config.get_tcp_user_timeout(),
            Some(&Duration::from_secs(120))
        );
    }

    /// A lock another session holds is waited for in steps of the patience's lock wait, each a
    /// transient failure: held past the patience it ends the call as busy, naming the lock, and
    /// once it is gone the call goes through. (Without a bound, the first call would wait for
    /// as long as the lock is held: the watchdog fails the test then.)
    #[test]
    fn a_lock_another_session_holds_is_waited_for_in_bounded_steps() {
        let Some((url, _, mut store)) = fresh_writer("held_lock") else {
            return;
        };
        store
            .set_patience(Patience {
                busy_timeout: Duration::from_millis(100),
                total: Duration::from_millis(500),
            })
            .unwrap();
        let held = crate::testing::HeldTables::lock(&url, &["runs"]);
        let (sent, answer) = std::sync::mpsc::channel();
        let store = std::thread::spawn(move || {
            let fake = schedlab_core::workload::WorkloadSpec::Fake(Default::default());
            let plan = RunPlan::new(None, Some("locked".into()), 1, 0, vec![fake]).unwrap();
            let begin = |store: &mut PgStore| store.begin_run(&plan, &Fingerprint::collect(), 1);
            sent.send(begin(&mut store).map(drop)).unwrap();
            drop(held);
            sent.send(begin(&mut store).map(drop)).unwrap();
        });
        let watchdog = Duration::from_secs(60);
        let first = answer
            .recv_timeout(watchdog)
            .expect("the call waited for the lock");
        match first {
            Err(StoreError::Busy { detail, .. }) => {
                assert!(detail.contains("another session holds a lock"), "{detail}")
            }
            other => panic!("{other:?}"),
        }
        let second = answer.recv_timeout(watchdog).expect("the call waited");
        assert!(second.is_ok(), "{second:?}");
        store.join().unwrap();
    }

    /// Another host's run is judged by its silence on PostgreSQL as on SQLite: running while it
    /// stores, abandoned (in `runs`, `show` and `db check`) once it has been quiet too long.
    #[test]
    fn another_hosts_silent_run_reads_abandoned() {
        let Some((_, pg, mut store)) = fresh_writer("silent_run") else {
            return;
        };
        let fake = schedlab_core::workload::WorkloadSpec::Fake(Default::default());
        let plan = RunPlan::new(None, Some("far".into()), 1, 0, vec![fake]).unwrap();
        let now = sys::realtime_ns();
        let id = store
            .begin_run(&plan, &Fingerprint::collect(), now)
            .unwrap();
        let iteration = schedlab_core::record::IterationRecord {
            index: 0,
            warmup: false,
            started_at_ns: now,
            measurements: Vec::new(),
            attachments: Vec::new(),
            quiet: None,
        };
        store.record_iteration(id, 0, &iteration).unwrap();
        let mut raw = connect(&pg).unwrap();
        raw.batch_execute("UPDATE runs SET owner_host = 'elsewhere'")
            .unwrap();
        let reader = PgStore::open_reader(&pg).unwrap();
        assert_eq!(
            reader.list_runs(None).unwrap()[0].status,
            RunStatus::Running
        );
        // Three hours of silence: more than the quick suite's 1 h 25 min.
        let earlier = now - 3 * 3_600 * 1_000_000_000;
        raw.execute("UPDATE runs SET started_at_ns = $1", &[&earlier])
            .unwrap();
        raw.execute("UPDATE iterations SET started_at_ns = $1", &[&earlier])
            .unwrap();
        assert_eq!(
            reader.list_runs(None).unwrap()[0].status,
            RunStatus::Abandoned
        );
        let loaded = reader.load_run(id).unwrap();
        assert_eq!(loaded.status, RunStatus::Abandoned);
        let why = loaded.error.unwrap();
        assert!(
            why.contains("nothing stored since") && why.contains("on elsewhere"),
            "{why}"
        );
        let checked = PgStore::check(&pg).unwrap();
        assert_eq!(checked.abandoned_runs.len(), 1);
        assert_eq!(checked.abandoned_runs[0].id, id);
        assert!(checked.abandoned_runs[0]
            .reason
            .starts_with("nothing stored since"));
    }

    /// A database that holds another application's tables is refused, unchanged.
    #[test]
    fn another_applications_database_is_refused() {
        let Some(url) = fresh_pg_database("foreign") else {
            return;
        };
        let url = PgUrl::parse(&url).unwrap();
        connect(&url)
            .unwrap()
            .batch_execute("CREATE TABLE runs (x int)")
            .unwrap();
        for result in [
            PgStore::open_writer(&url).map(drop),
            PgStore::open_reader(&url).map(drop),
        ] {
            assert!(
                matches!(result, Err(StoreError::NotSchedlab { .. })),
                "{result:?}"
            );
        }
        let history = connect(&url)
            .unwrap()
            .query_one("SELECT to_regclass('refinery_schema_history') IS NULL", &[])
            .unwrap()
            .get::<_, bool>(0);
        assert!(history, "nothing was created");
    }

    /// A reader looking at a database while a writer creates its schema finds it empty or
    /// whole, never "not a schedlab database": the migration commits every table and the history
    /// at once, and the reader sees both in one snapshot. Four readers poll, on a new connection
    /// each time, across the commits of forty new databases; with the two tables looked up in two
    /// statements this failed within the first few databases (and once in CI).
    #[test]
    fn a_reader_during_schema_creation_sees_no_schema_or_all_of_it() {
        for attempt in 0..40 {
            let Some(url) = fresh_pg_database(&format!("creation_{attempt}")) else {
                return;
            };
            let url = PgUrl::parse(&url).unwrap();
            let shown = url.redacted();
            let created = AtomicBool::new(false);
            std::thread::scope(|scope| {
                let readers: Vec<_> = (0..4)
                    .map(|_| {
                        scope.spawn(|| {
                            let mut versions = Vec::new();
                            while !created.load(Ordering::SeqCst) {
                                // A new connection each time, as each reading command makes: a
                                // new server process's first looks at the catalog are its slowest.
                                let mut reader = connect(&url).unwrap();
                                let mut tx =
                                    reader.build_transaction().read_only(true).start().unwrap();
                                match schema::inspect(&mut tx, &shown) {
                                    Ok(v) => versions.push(v),
                                    Err(e) => panic!("attempt {attempt}, after {versions:?}: {e}"),
                                }
                                tx.commit().unwrap();
                            }
                            versions
                        })
                    })
                    .collect();
                // The readers stop on the flag, which is set even when the open fails.
                let opened = PgStore::open_writer(&url);
                created.store(true, Ordering::SeqCst);
                opened.unwrap();
                for reader in readers {
                    let versions = reader.join().unwrap();
                    assert!(versions.iter().all(|v| [0, known_version()].contains(v)));
                }
            });
        }
    }

    /// Writers opening one new database at once all succeed: one migrates, the others find it
    /// done; a newer schema is refused.
    #[test]
    fn writers_opening_one_new_database_at_once_all_succeed() {
        let Some(url) = fresh_pg_database("migrate_race") else {
            return;
        };
        let url = PgUrl::parse(&url).unwrap();
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..6)
                .map(|_| scope.spawn(|| PgStore::open_writer(&url).map(|s| s.found_version())))
                .collect();
            let found: Vec<i64> = handles
                .into_iter()
                .map(|h| h.join().unwrap().unwrap())
                .collect();
            assert_eq!(found.iter().filter(|&&v| v == 0).count(), 1, "{found:?}");
        });
        let reader = PgStore::open_reader(&url).unwrap();
        assert_eq!(reader.schema_version(), known_version());
        connect(&url)
            .unwrap()
            .batch_execute(
                "INSERT INTO refinery_schema_history VALUES (999, 'future', '2030-01-01T00:00:00Z', '1')",
            )
            .unwrap();
        let e = PgStore::open_writer(&url).map(drop).unwrap_err();
        assert!(matches!(e, StoreError::Newer { version: 999, .. }), "{e}");
    }
}
