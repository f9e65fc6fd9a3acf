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
use std::cell::RefCell;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use postgres::{Client, IsolationLevel, NoTls, Transaction};
use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::metric::secondary;
use schedlab_core::plan::{CaseSpec, RunPlan};
use schedlab_core::record::{
    Arm, Attachment, CaseRecord, ExperimentTag, IterationRecord, RunOwner, RunRecord, RunStatus,
};

use crate::liveness::{effective_status, Here, StoredOwner};
use crate::location::PgUrl;
use crate::sqlite::{from_json, parse_status, to_json, MeasurementRow, OwnerColumns, Patience};
use crate::{
    Experiment, ExperimentKind, Result, RunProvenance, RunSummary, Store, StoreError,
    StoredCalibration,
};

mod schema;
mod tls;

pub use schema::known_version;

/// The longest pause between two attempts of a transaction that met a dropped connection.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

pub struct PgStore {
    client: RefCell<Client>,
    url: PgUrl,
    writer: bool,
    /// The schema version found when the store was opened (0: no schema yet).
    found_version: i64,
    /// The version queries run against: the current one for a writer, the found one for a reader.
    version: i64,
    patience: Patience,
}

/// The server's own message, or the driver's when the server said nothing.
pub(crate) fn error_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_string(),
        },
        None => {
            let mut text = e.to_string();
            let mut source = std::error::Error::source(e);
            while let Some(inner) = source {
                text = format!("{text}: {inner}");
                source = inner.source();
            }
            text
        }
    }
}

/// Errors worth a new attempt: the connection went away or the server asked to try again.
fn is_transient(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.code() {
        Some(code) => {
            let code = code.code();
            // serialization failure, deadlock, shutdown, cannot connect now, connection exceptions
            matches!(code, "40001" | "40P01" | "57P01" | "57P02" | "57P03")
                || code.starts_with("08")
        }
        None => std::error::Error::source(e)
            .is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some()),
    }
}

fn connect(url: &PgUrl) -> Result<Client> {
    let unopenable = |reason: String| StoreError::Unopenable {
        path: url.redacted().into(),
        reason,
    };
    let mut config = url.config();
    if config.get_password().is_none() {
        if let Some(password) = std::env::var_os("PGPASSWORD") {
            config.password(password.as_encoded_bytes());
        }
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(30));
    }
    config.application_name("schedlab");
    let tls = tls::client_config(url).map_err(unopenable)?;
    let client = match tls {
        None => config.connect(NoTls),
        Some(tls) => config.connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls)),
    };
    client.map_err(|e| unopenable(error_text(&e)))
}

impl PgStore {
    /// Opens the database for reading: nothing is created or migrated, and every query runs in a
    /// read-only transaction. A database with no schedlab schema yet reads as an empty store.
    pub fn open_reader(url: &PgUrl) -> Result<Self> {
        let mut client = connect(url)?;
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
        // Readers follow the schema of this schedlab: PostgreSQL arrived with V8 and migrates in
        // one transaction, so a database is empty or complete at a version some schedlab wrote.
        if version != 0 && version < known_version() {
            return Err(StoreError::NeedsUpgrade {
                path: shown.into(),
                version,
                oldest: known_version(),
            });
        }
        Ok(PgStore {
            client: RefCell::new(client),
            url: url.clone(),
            writer: false,
            found_version: version,
            version,
            patience: Patience::default(),
        })
    }

    /// Opens the database for writing, creating or upgrading schedlab's tables in it.
    pub fn open_writer(url: &PgUrl) -> Result<Self> {
        let mut client = connect(url)?;
        let shown = url.redacted();
        let found_version = schema::migrate(&mut client, &shown).map_err(|e| match e {
            StoreError::Postgres(e) => StoreError::Unwritable {
                path: shown.clone().into(),
                reason: error_text(&e),
            },
            other => other,
        })?;
        Ok(PgStore {
            client: RefCell::new(client),
            url: url.clone(),
            writer: true,
            found_version,
            version: known_version(),
            patience: Patience::default(),
        })
    }

    /// What `schedlab db check` says of a PostgreSQL database, read-only: its schema (version,
    /// history) and runs by status, with the abandoned ones. The server keeps its own pages
    /// sound, so there is no file-level check to make.
    pub fn check(url: &PgUrl) -> Result<crate::CheckReport> {
        let mut report = crate::CheckReport {
            path: url.redacted().into(),
            quick: false,
            integrity_problems: Vec::new(),
            schema_version: None,
            schema_problem: None,
            runs_by_status: Vec::new(),
            abandoned_runs: Vec::new(),
        };
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
            let rows = store.read(|tx| {
                Ok(tx.query("SELECT status, count(*) FROM runs GROUP BY status", &[])?)
            })?;
            for row in rows {
                let (status, n): (String, i64) = (row.try_get(0)?, row.try_get(1)?);
                match counts.iter_mut().find(|(s, _)| *s == status) {
                    Some(entry) => entry.1 = n,
                    None => counts.push((status, n)),
                }
            }
            for run in store.list_runs(None)? {
                if run.status == RunStatus::Abandoned {
                    let reason = store.load_run(run.id)?.error.unwrap_or_default();
                    report.abandoned_runs.push(crate::AbandonedRun {
                        id: run.id,
                        label: run.label,
                        started_at_ns: run.started_at_ns,
                        reason,
                    });
                }
            }
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

    /// Changes how long a transaction is retried after the connection dropped.
    pub fn set_patience(&mut self, patience: Patience) {
        self.patience = patience;
    }

    /// Runs `attempt` on the connection until it does not fail transiently, reconnecting when the
    /// connection is gone, for at most the store's patience. `attempt` learns whether an earlier
    /// attempt may have committed before its answer was lost.
    fn retry<T>(&self, mut attempt: impl FnMut(&mut Client, bool) -> Result<T>) -> Result<T> {
        let started = Instant::now();
        let mut pause = Duration::from_millis(50);
        let mut retrying = false;
        loop {
            let error = {
                let mut client = self.client.borrow_mut();
                let ready = if client.is_closed() {
                    match connect(&self.url) {
                        Ok(fresh) => {
                            *client = fresh;
                            Ok(())
                        }
                        Err(e) => Err(e.to_string()),
                    }
                } else {
                    Ok(())
                };
                match ready {
                    Ok(()) => match attempt(&mut client, retrying) {
                        Err(StoreError::Postgres(e)) if is_transient(&e) => error_text(&e),
                        other => return other,
                    },
                    Err(e) => e,
                }
            };
            let waited = started.elapsed();
            if waited >= self.patience.total {
                return Err(StoreError::Busy {
                    path: self.url.redacted().into(),
                    waited,
                    detail: error,
                });
            }
            std::thread::sleep(pause.min(self.patience.total - waited));
            pause = (pause * 2).min(MAX_BACKOFF);
            retrying = true;
        }
    }

    /// One write transaction, retried whole after a dropped connection.
    fn write<T>(&self, mut body: impl FnMut(&mut Transaction<'_>, bool) -> Result<T>) -> Result<T> {
        if !self.writer {
            return Err(StoreError::ReadOnly {
                path: self.url.redacted().into(),
            });
        }
        self.retry(|client, retrying| {
            let mut tx = client.transaction()?;
            let value = body(&mut tx, retrying)?;
            tx.commit()?;
            Ok(value)
        })
    }

    /// One read: a read-only, repeatable-read transaction, so it sees one snapshot and never
    /// makes a writer wait.
    fn read<T>(&self, mut body: impl FnMut(&mut Transaction<'_>) -> Result<T>) -> Result<T> {
        self.retry(|client, _| {
            let mut tx = client
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()?;
            let value = body(&mut tx)?;
            tx.commit()?;
            Ok(value)
        })
    }

    /// Whether the database holds a schema (a reader may meet an empty one).
    fn has_schema(&self) -> bool {
        self.version > 0
    }
}

fn unopenable(url: &PgUrl, e: &postgres::Error) -> StoreError {
    StoreError::Unopenable {
        path: url.redacted().into(),
        reason: error_text(e),
    }
}

/// Inserts a run's row and its cases; returns the run's id.
fn insert_run(
    tx: &mut Transaction<'_>,
    plan: &RunPlan,
    fingerprint: &Fingerprint,
    started_at_ns: i64,
    ended_at_ns: Option<i64>,
    provenance: &RunProvenance,
    experiment: Option<(i64, &str, i64)>,
) -> Result<i64> {
    let owner = &provenance.owner;
    let row = tx.query_one(
        "INSERT INTO runs (uuid, label, suite, plan_json, fingerprint_json, boot_id, kernel_release,
                           hostname, started_at_ns, ended_at_ns, status, error, schedlab_version,
                           owner_pid, owner_start_ticks, owner_boot_id, owner_host,
                           experiment_id, experiment_side, experiment_round)
         VALUES ($1::text::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16,
                 $17, $18, $19, $20)
         RETURNING id",
        &[
            &provenance.uuid,
            &plan.label,
            &plan.suite,
            &to_json(plan)?,
            &to_json(fingerprint)?,
            &fingerprint.boot_id,
            &fingerprint.kernel_release,
            &fingerprint.hostname,
            &started_at_ns,
            &ended_at_ns,
            &provenance.status.as_str(),
            &provenance.error,
            &fingerprint.schedlab_version,
            &owner.pid,
            &owner.start_ticks.map(|t| t as i64),
            &owner.boot_id,
            &owner.host,
            &experiment.map(|e| e.0),
            &experiment.map(|e| e.1),
            &experiment.map(|e| e.2),
        ],
    )?;
    let run_id: i64 = row.try_get(0)?;
    let insert = tx.prepare(
        "INSERT INTO cases (run_id, position, name, workload, spec_json) VALUES ($1, $2, $3, $4, $5)",
    )?;
    for (position, case) in plan.cases.iter().enumerate() {
        tx.execute(
            &insert,
            &[
                &run_id,
                &(position as i64),
                &case.name,
                &case.workload.kind(),
                &to_json(case)?,
            ],
        )?;
    }
    Ok(run_id)
}

/// Inserts one iteration with its measurements, metric definitions and attachments.
fn insert_iteration(
    tx: &mut Transaction<'_>,
    case_id: i64,
    iteration: &IterationRecord,
) -> Result<()> {
    let row = tx.query_one(
        "INSERT INTO iterations (case_id, position, warmup, started_at_ns) VALUES ($1, $2, $3, $4)
         RETURNING id",
        &[
            &case_id,
            &i64::from(iteration.index),
            &iteration.warmup,
            &iteration.started_at_ns,
        ],
    )?;
    let iteration_id: i64 = row.try_get(0)?;
    if !iteration.measurements.is_empty() {
        let insert = tx.prepare(
            "INSERT INTO measurements (iteration_id, name, unit, better, role, value)
             VALUES ($1, $2, $3, $4, $5, $6)",
        )?;
        // The first iteration to return a metric defines it for the case.
        let define = tx.prepare(
            "INSERT INTO metrics (case_id, name, unit, better, role, shape, quantile_p, distribution)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (case_id, name) DO NOTHING",
        )?;
        for m in &iteration.measurements {
            tx.execute(
                &insert,
                &[
                    &iteration_id,
                    &m.name,
                    &m.unit,
                    &m.better.as_str(),
                    &m.role.as_str(),
                    &m.value,
                ],
            )?;
            tx.execute(
                &define,
                &[
                    &case_id,
                    &m.name,
                    &m.unit,
                    &m.better.as_str(),
                    &m.role.as_str(),
                    &m.shape.as_str(),
                    &m.shape.p(),
                    &m.distribution,
                ],
            )?;
        }
    }
    if !iteration.attachments.is_empty() {
        let insert = tx.prepare(
            "INSERT INTO attachments (iteration_id, name, encoding, data) VALUES ($1, $2, $3, $4)",
        )?;
        for a in &iteration.attachments {
            tx.execute(&insert, &[&iteration_id, &a.name, &a.encoding, &a.data])?;
        }
    }
    Ok(())
}

fn case_id(tx: &mut Transaction<'_>, run_id: i64, case_index: usize) -> Result<i64> {
    let row = tx
        .query_opt(
            "SELECT id FROM cases WHERE run_id = $1 AND position = $2",
            &[&run_id, &(case_index as i64)],
        )?
        .ok_or_else(|| StoreError::NotFound(format!("case {case_index} of run {run_id}")))?;
    Ok(row.try_get(0)?)
}

fn experiment_kind(text: &str) -> Result<ExperimentKind> {
    match text {
        "ab" => Ok(ExperimentKind::Ab),
        "campaign" => Ok(ExperimentKind::Campaign),
        other => Err(StoreError::Corrupt(format!("experiment kind {other:?}"))),
    }
}

fn experiment_of(row: &postgres::Row) -> Result<Experiment> {
    Ok(Experiment {
        id: Some(row.try_get(0)?),
        kind: experiment_kind(row.try_get(1)?)?,
        name: row.try_get(2)?,
        spec: from_json(row.try_get(3)?, "an experiment's spec")?,
        state: from_json(row.try_get(4)?, "an experiment's state")?,
        status: parse_status(row.try_get(5)?)?,
        created_at_ns: row.try_get(6)?,
    })
}

const EXPERIMENT_COLUMNS: &str = "id, kind, name, spec_json, state_json, status, created_at_ns";

fn load_run_in(tx: &mut Transaction<'_>, run_id: i64, here: &Here) -> Result<RunRecord> {
    let row = tx
        .query_opt(
            "SELECT label, plan_json, fingerprint_json, started_at_ns, ended_at_ns, status, error,
                    hostname, owner_pid, owner_start_ticks, owner_boot_id, owner_host, boot_id
               FROM runs WHERE id = $1",
            &[&run_id],
        )?
        .ok_or_else(|| StoreError::NotFound(format!("no run with id {run_id}")))?;
    let owner = owner_of(&row, 7)?;
    let boot: String = row.try_get(12)?;
    let (status, abandoned) = effective_status(
        parse_status(row.try_get(5)?)?,
        &owner.with_fallback(&boot),
        here,
    );
    let error: Option<String> = row.try_get(6)?;
    let plan: RunPlan = from_json(row.try_get(1)?, "the run plan")?;
    let fingerprint: Fingerprint = from_json(row.try_get(2)?, "the fingerprint")?;

    // Four queries for the whole run, however many iterations it has.
    let mut measurements: HashMap<i64, Vec<MeasurementRow>> = HashMap::new();
    for r in tx.query(
        "SELECT m.iteration_id, m.name, m.unit, m.better, m.role, m.value,
                d.shape, d.quantile_p, d.distribution
           FROM measurements m
           JOIN iterations i ON m.iteration_id = i.id
           JOIN cases c ON i.case_id = c.id
           LEFT JOIN metrics d ON d.case_id = c.id AND d.name = m.name
          WHERE c.run_id = $1 ORDER BY m.id",
        &[&run_id],
    )? {
        measurements
            .entry(r.try_get(0)?)
            .or_default()
            .push(MeasurementRow {
                name: r.try_get(1)?,
                unit: r.try_get(2)?,
                better: r.try_get(3)?,
                role: r.try_get(4)?,
                value: r.try_get(5)?,
                shape: r.try_get(6)?,
                quantile_p: r.try_get(7)?,
                distribution: r.try_get(8)?,
            });
    }
    let mut attachments: HashMap<i64, Vec<Attachment>> = HashMap::new();
    for r in tx.query(
        "SELECT a.iteration_id, a.name, a.encoding, a.data
           FROM attachments a
           JOIN iterations i ON a.iteration_id = i.id
           JOIN cases c ON i.case_id = c.id
          WHERE c.run_id = $1 ORDER BY a.id",
        &[&run_id],
    )? {
        attachments
            .entry(r.try_get(0)?)
            .or_default()
            .push(Attachment {
                name: r.try_get(1)?,
                encoding: r.try_get(2)?,
                data: r.try_get(3)?,
            });
    }
    let mut iterations: HashMap<i64, Vec<IterationRecord>> = HashMap::new();
    for r in tx.query(
        "SELECT i.case_id, i.id, i.position, i.warmup, i.started_at_ns
           FROM iterations i JOIN cases c ON i.case_id = c.id
          WHERE c.run_id = $1 ORDER BY i.case_id, i.position",
        &[&run_id],
    )? {
        let iteration_id: i64 = r.try_get(1)?;
        let position: i64 = r.try_get(2)?;
        iterations
            .entry(r.try_get(0)?)
            .or_default()
            .push(IterationRecord {
                index: u32::try_from(position)
                    .map_err(|_| StoreError::Corrupt(format!("iteration position {position}")))?,
                warmup: r.try_get(3)?,
                started_at_ns: r.try_get(4)?,
                measurements: measurements
                    .remove(&iteration_id)
                    .unwrap_or_default()
                    .into_iter()
                    .map(MeasurementRow::into_measurement)
                    .collect::<Result<_>>()?,
                attachments: attachments.remove(&iteration_id).unwrap_or_default(),
            });
    }
    let mut cases = Vec::new();
    for r in tx.query(
        "SELECT id, spec_json, error FROM cases WHERE run_id = $1 ORDER BY position",
        &[&run_id],
    )? {
        let case_id: i64 = r.try_get(0)?;
        let spec: CaseSpec = from_json(r.try_get(1)?, "a case")?;
        cases.push(CaseRecord {
            spec,
            iterations: iterations.remove(&case_id).unwrap_or_default(),
            error: r.try_get(2)?,
        });
    }
    Ok(RunRecord {
        id: Some(run_id),
        label: row.try_get(0)?,
        plan,
        fingerprint,
        started_at_ns: row.try_get(3)?,
        ended_at_ns: row.try_get(4)?,
        status,
        error: error.or(abandoned),
        cases,
    })
}

/// The owner columns of a run row from `first` on: host name, then owner pid, start ticks, boot
/// id and host.
fn owner_of(r: &postgres::Row, first: usize) -> Result<OwnerColumns> {
    Ok(OwnerColumns {
        hostname: r.try_get(first)?,
        owner: StoredOwner {
            pid: r.try_get(first + 1)?,
            start_ticks: r.try_get::<_, Option<i64>>(first + 2)?.map(|t| t as u64),
            boot_id: r.try_get(first + 3)?,
            host: r.try_get(first + 4)?,
        },
    })
}

impl Store for PgStore {
    fn begin_run(
        &mut self,
        plan: &RunPlan,
        fingerprint: &Fingerprint,
        started_at_ns: i64,
    ) -> Result<i64> {
        let owner = RunOwner::current();
        let provenance = RunProvenance {
            uuid: Some(uuid::Uuid::new_v4().to_string()),
            status: RunStatus::Running,
            error: None,
            owner: StoredOwner {
                pid: Some(owner.pid),
                start_ticks: owner.start_ticks,
                boot_id: owner.boot_id,
                host: Some(owner.host),
            },
            tag: None,
        };
        self.write(|tx, retrying| {
            // An earlier attempt may have committed before the connection dropped.
            if retrying {
                let uuid = provenance.uuid.as_deref().unwrap_or_default();
                if let Some(row) =
                    tx.query_opt("SELECT id FROM runs WHERE uuid = $1::text::uuid", &[&uuid])?
                {
                    return Ok(row.try_get(0)?);
                }
            }
            insert_run(
                tx,
                plan,
                fingerprint,
                started_at_ns,
                None,
                &provenance,
                None,
            )
        })
    }

    fn record_iteration(
        &mut self,
        run_id: i64,
        case_index: usize,
        iteration: &IterationRecord,
    ) -> Result<()> {
        self.write(|tx, retrying| {
            let case_id = case_id(tx, run_id, case_index)?;
            if retrying {
                let landed = tx.query_opt(
                    "SELECT 1 FROM iterations WHERE case_id = $1 AND position = $2",
                    &[&case_id, &i64::from(iteration.index)],
                )?;
                if landed.is_some() {
                    return Ok(());
                }
            }
            insert_iteration(tx, case_id, iteration)
        })
    }

    fn finish_run(
        &mut self,
        run_id: i64,
        status: RunStatus,
        ended_at_ns: i64,
        error: Option<&str>,
    ) -> Result<()> {
        crate::refuse_derived_status(status)?;
        let changed = self.write(|tx, _| {
            Ok(tx.execute(
                "UPDATE runs SET status = $2, ended_at_ns = $3, error = $4 WHERE id = $1",
                &[&run_id, &status.as_str(), &ended_at_ns, &error],
            )?)
        })?;
        if changed != 1 {
            return Err(StoreError::NotFound(format!("run {run_id}")));
        }
        Ok(())
    }

    fn record_case_failure(&mut self, run_id: i64, case_index: usize, message: &str) -> Result<()> {
        let changed = self.write(|tx, _| {
            Ok(tx.execute(
                "UPDATE cases SET error = $3 WHERE run_id = $1 AND position = $2",
                &[&run_id, &(case_index as i64), &message],
            )?)
        })?;
        if changed != 1 {
            return Err(StoreError::NotFound(format!(
                "case {case_index} of run {run_id}"
            )));
        }
        Ok(())
    }

    fn list_runs(&self, limit: Option<usize>) -> Result<Vec<RunSummary>> {
        if !self.has_schema() {
            return Ok(Vec::new());
        }
        let here = Here::now();
        let limit = limit.map(|l| i64::try_from(l).unwrap_or(i64::MAX));
        self.read(|tx| {
            let rows = tx.query(
                "SELECT r.id, r.label, r.suite, r.status, r.started_at_ns, r.ended_at_ns,
                        r.kernel_release, r.boot_id,
                        (SELECT count(*) FROM cases c WHERE c.run_id = r.id),
                        (SELECT count(*) FROM iterations i JOIN cases c ON i.case_id = c.id
                          WHERE c.run_id = r.id AND NOT i.warmup),
                        (SELECT c.name FROM cases c WHERE c.run_id = r.id ORDER BY c.position LIMIT 1),
                        r.hostname, r.owner_pid, r.owner_start_ticks, r.owner_boot_id, r.owner_host
                   FROM runs r ORDER BY r.started_at_ns DESC, r.id DESC LIMIT $1",
                &[&limit],
            )?;
            rows.iter()
                .map(|r| {
                    let boot: String = r.try_get(7)?;
                    let owner = owner_of(r, 11)?.with_fallback(&boot);
                    let (status, _) = effective_status(parse_status(r.try_get(3)?)?, &owner, &here);
                    let suite: Option<String> = r.try_get(2)?;
                    let first: Option<String> = r.try_get(10)?;
                    let what = match (&suite, first) {
                        (Some(s), _) => format!("suite {s}"),
                        (None, Some(name)) => name,
                        (None, None) => String::new(),
                    };
                    Ok(RunSummary {
                        id: r.try_get(0)?,
                        label: r.try_get(1)?,
                        suite,
                        what,
                        case_count: r.try_get::<_, i64>(8)? as usize,
                        measured_iterations: r.try_get::<_, i64>(9)? as usize,
                        status,
                        started_at_ns: r.try_get(4)?,
                        ended_at_ns: r.try_get(5)?,
                        kernel_release: r.try_get(6)?,
                        boot_id: boot,
                        hostname: r.try_get(11)?,
                    })
                })
                .collect()
        })
    }

    fn load_run(&self, run_id: i64) -> Result<RunRecord> {
        if !self.has_schema() {
            return Err(StoreError::NotFound(format!("no run with id {run_id}")));
        }
        let here = Here::now();
        self.read(|tx| load_run_in(tx, run_id, &here))
    }

    fn resolve(&self, id_or_label: &str) -> Result<Vec<i64>> {
        let by_id = !id_or_label.is_empty() && id_or_label.chars().all(|c| c.is_ascii_digit());
        if by_id {
            let id: i64 = id_or_label
                .parse()
                .map_err(|_| StoreError::NotFound(format!("no run with id {id_or_label}")))?;
            let exists = self.has_schema()
                && self
                    .read(|tx| Ok(tx.query_opt("SELECT 1 FROM runs WHERE id = $1", &[&id])?))?
                    .is_some();
            return if exists {
                Ok(vec![id])
            } else {
                Err(StoreError::NotFound(format!("no run with id {id}")))
            };
        }
        let ids: Vec<i64> = if self.has_schema() {
            self.read(|tx| {
                tx.query(
                    "SELECT id FROM runs WHERE label = $1 ORDER BY started_at_ns, id",
                    &[&id_or_label],
                )?
                .iter()
                .map(|r| Ok(r.try_get(0)?))
                .collect()
            })?
        } else {
            Vec::new()
        };
        if ids.is_empty() {
            return Err(StoreError::NotFound(format!(
                "no run with id or label {id_or_label:?}"
            )));
        }
        Ok(ids)
    }

    fn median_wall_time_sec(&self, case_name: &str) -> Result<Option<f64>> {
        if !self.has_schema() {
            return Ok(None);
        }
        let wall_time = secondary::WALL_TIME_SEC;
        let mut values: Vec<f64> = self.read(|tx| {
            tx.query(
                "SELECT m.value FROM measurements m
                   JOIN iterations i ON m.iteration_id = i.id
                   JOIN cases c ON i.case_id = c.id
                  WHERE c.name = $1 AND m.name = $2 AND m.role = $3 AND NOT i.warmup
                  ORDER BY i.id DESC LIMIT 50",
                &[&case_name, &wall_time.name, &wall_time.role.as_str()],
            )?
            .iter()
            .map(|r| Ok(r.try_get(0)?))
            .collect()
        })?;
        if values.is_empty() {
            return Ok(None);
        }
        values.sort_by(f64::total_cmp);
        let mid = values.len() / 2;
        Ok(Some(if values.len().is_multiple_of(2) {
            (values[mid - 1] + values[mid]) / 2.0
        } else {
            values[mid]
        }))
    }

    fn create_experiment(&mut self, e: &Experiment) -> Result<i64> {
        self.write(|tx, _| {
            let exists = tx.query_opt(
                "SELECT id FROM experiments WHERE kind = $1 AND name = $2",
                &[&e.kind.as_str(), &e.name],
            )?;
            if exists.is_some() {
                return Err(StoreError::Exists(format!(
                    "a {} named {:?} already exists",
                    e.kind.as_str(),
                    e.name
                )));
            }
            let row = tx.query_one(
                "INSERT INTO experiments (kind, name, spec_json, state_json, status, created_at_ns)
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                &[
                    &e.kind.as_str(),
                    &e.name,
                    &e.spec.to_string(),
                    &e.state.to_string(),
                    &e.status.as_str(),
                    &e.created_at_ns,
                ],
            )?;
            Ok(row.try_get(0)?)
        })
    }

    fn experiment(&self, kind: ExperimentKind, name: &str) -> Result<Option<Experiment>> {
        if !self.has_schema() {
            return Ok(None);
        }
        self.read(|tx| {
            tx.query_opt(
                &format!(
                    "SELECT {EXPERIMENT_COLUMNS} FROM experiments WHERE kind = $1 AND name = $2"
                ),
                &[&kind.as_str(), &name],
            )?
            .as_ref()
            .map(experiment_of)
            .transpose()
        })
    }

    fn update_experiment(
        &mut self,
        id: i64,
        state: &serde_json::Value,
        status: RunStatus,
    ) -> Result<()> {
        let changed = self.write(|tx, _| {
            Ok(tx.execute(
                "UPDATE experiments SET state_json = $2, status = $3 WHERE id = $1",
                &[&id, &state.to_string(), &status.as_str()],
            )?)
        })?;
        if changed != 1 {
            return Err(StoreError::NotFound(format!("experiment {id}")));
        }
        Ok(())
    }

    fn tag_run(&mut self, run_id: i64, tag: ExperimentTag) -> Result<()> {
        let changed = self.write(|tx, _| {
            Ok(tx.execute(
                "UPDATE runs SET experiment_id = $2, experiment_side = $3, experiment_round = $4
                  WHERE id = $1",
                &[
                    &run_id,
                    &tag.experiment_id,
                    &tag.arm.as_str(),
                    &i64::from(tag.round),
                ],
            )?)
        })?;
        if changed != 1 {
            return Err(StoreError::NotFound(format!("run {run_id}")));
        }
        Ok(())
    }

    fn run_tag(&self, run_id: i64) -> Result<Option<ExperimentTag>> {
        match self.run_provenance(run_id) {
            Ok(provenance) => Ok(provenance.tag),
            Err(StoreError::NotFound(_)) => Ok(None),
            Err(e) => Err(e),
        }
    }

    fn experiment_by_id(&self, id: i64) -> Result<Option<Experiment>> {
        if !self.has_schema() {
            return Ok(None);
        }
        self.read(|tx| {
            tx.query_opt(
                &format!("SELECT {EXPERIMENT_COLUMNS} FROM experiments WHERE id = $1"),
                &[&id],
            )?
            .as_ref()
            .map(experiment_of)
            .transpose()
        })
    }

    fn save_calibration(&mut self, c: &StoredCalibration) -> Result<i64> {
        let run_ids = to_json(&c.run_ids)?;
        self.write(|tx, _| {
            let row = tx.query_one(
                "INSERT INTO calibrations (created_at_ns, label, hostname, run_ids_json, model_json)
                 VALUES ($1, $2, $3, $4, $5) RETURNING id",
                &[
                    &c.created_at_ns,
                    &c.label,
                    &c.hostname,
                    &run_ids,
                    &c.model.to_string(),
                ],
            )?;
            Ok(row.try_get(0)?)
        })
    }

    fn calibrations(&self) -> Result<Vec<StoredCalibration>> {
        if !self.has_schema() {
            return Ok(Vec::new());
        }
        self.read(|tx| {
            tx.query(
                "SELECT id, created_at_ns, label, hostname, run_ids_json, model_json
                   FROM calibrations ORDER BY created_at_ns DESC, id DESC",
                &[],
            )?
            .iter()
            .map(|r| {
                Ok(StoredCalibration {
                    id: Some(r.try_get(0)?),
                    created_at_ns: r.try_get(1)?,
                    label: r.try_get(2)?,
                    hostname: r.try_get(3)?,
                    run_ids: from_json(r.try_get(4)?, "a calibration's runs")?,
                    model: from_json(r.try_get(5)?, "a calibration")?,
                })
            })
            .collect()
        })
    }

    fn describe(&self) -> String {
        self.url.redacted()
    }

    fn run_provenance(&self, run_id: i64) -> Result<RunProvenance> {
        if !self.has_schema() {
            return Err(StoreError::NotFound(format!("no run with id {run_id}")));
        }
        self.read(|tx| {
            let r = tx
                .query_opt(
                    "SELECT uuid::text, status, error, owner_pid, owner_start_ticks, owner_boot_id,
                            owner_host, experiment_id, experiment_side, experiment_round
                       FROM runs WHERE id = $1",
                    &[&run_id],
                )?
                .ok_or_else(|| StoreError::NotFound(format!("no run with id {run_id}")))?;
            let tag = match (
                r.try_get::<_, Option<i64>>(7)?,
                r.try_get::<_, Option<String>>(8)?,
                r.try_get::<_, Option<i64>>(9)?,
            ) {
                (Some(experiment_id), Some(side), Some(round)) => Some(ExperimentTag {
                    experiment_id,
                    arm: Arm::parse(&side)
                        .ok_or_else(|| StoreError::Corrupt(format!("experiment side {side:?}")))?,
                    round: u32::try_from(round)
                        .map_err(|_| StoreError::Corrupt(format!("experiment round {round}")))?,
                }),
                _ => None,
            };
            Ok(RunProvenance {
                uuid: r.try_get(0)?,
                status: parse_status(r.try_get(1)?)?,
                error: r.try_get(2)?,
                owner: StoredOwner {
                    pid: r.try_get(3)?,
                    start_ticks: r.try_get::<_, Option<i64>>(4)?.map(|t| t as u64),
                    boot_id: r.try_get(5)?,
                    host: r.try_get(6)?,
                },
                tag,
            })
        })
    }

    fn run_by_uuid(&self, uuid: &str) -> Result<Option<i64>> {
        if !self.has_schema() || uuid::Uuid::parse_str(uuid).is_err() {
            return Ok(None);
        }
        self.read(|tx| {
            tx.query_opt("SELECT id FROM runs WHERE uuid = $1::text::uuid", &[&uuid])?
                .map(|r| Ok(r.try_get(0)?))
                .transpose()
        })
    }

    fn copy_run(
        &mut self,
        run: &RunRecord,
        provenance: &RunProvenance,
        experiment_id: Option<i64>,
    ) -> Result<Option<i64>> {
        let uuid = provenance
            .uuid
            .as_deref()
            .ok_or_else(|| StoreError::Corrupt("a run to copy has no uuid".into()))?;
        let experiment = match (experiment_id, &provenance.tag) {
            (Some(id), Some(tag)) => Some((id, tag.arm.as_str(), i64::from(tag.round))),
            _ => None,
        };
        let copied = self.write(|tx, _| {
            // Another writer may copy the same run at the same moment: the unique uuid decides,
            // and the loser stores nothing.
            if tx
                .query_opt("SELECT 1 FROM runs WHERE uuid = $1::text::uuid", &[&uuid])?
                .is_some()
            {
                return Ok(None);
            }
            let run_id = insert_run(
                tx,
                &run.plan,
                &run.fingerprint,
                run.started_at_ns,
                run.ended_at_ns,
                provenance,
                experiment,
            )?;
            for (index, case) in run.cases.iter().enumerate() {
                let case_id = case_id(tx, run_id, index)?;
                if let Some(error) = &case.error {
                    tx.execute(
                        "UPDATE cases SET error = $2 WHERE id = $1",
                        &[&case_id, error],
                    )?;
                }
                for iteration in &case.iterations {
                    insert_iteration(tx, case_id, iteration)?;
                }
            }
            Ok(Some(run_id))
        });
        match copied {
            Err(StoreError::Postgres(e))
                if e.as_db_error().and_then(|d| d.constraint()) == Some("runs_by_uuid") =>
            {
                Ok(None)
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::fresh_pg_database;

    /// A fresh database's URL with `query` added, and the CA that signed the test server's
    /// certificate; `None` without a test server.
    fn url_with(test: &str, query: &str) -> Option<(PgUrl, String)> {
        let url = fresh_pg_database(test)?;
        let ca = std::env::var("SCHEDLAB_TEST_PG_CA").expect("scripts/with-postgres sets it");
        let query = query.replace("{ca}", &ca);
        Some((PgUrl::parse(&format!("{url}?{query}")).unwrap(), ca))
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
