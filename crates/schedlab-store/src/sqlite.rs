//! The SQLite backend: one file, migrated by refinery, marked with an application id so schedlab
//! never writes into somebody else's database, in WAL mode so a killed run loses nothing committed.
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, ErrorCode, OptionalExtension};
use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::metric::{Better, Measurement, Role};
use schedlab_core::plan::{CaseSpec, RunPlan};
use schedlab_core::record::{
    Arm, Attachment, CaseRecord, ExperimentTag, IterationRecord, RunOwner, RunRecord, RunStatus,
};

use crate::liveness::{effective_status, Here, StoredOwner};
use crate::{Experiment, ExperimentKind, Result, RunSummary, Store, StoreError, StoredCalibration};

mod embedded {
    refinery::embed_migrations!("migrations/sqlite");
}

/// `PRAGMA application_id` of schedlab databases ("SchL").
const APPLICATION_ID: i32 = 0x5363_684C;

pub struct SqliteStore {
    conn: Connection,
    path: PathBuf,
}

impl SqliteStore {
    /// Opens (creating if needed) a results database at `path`, migrating it to the current
    /// schema. Refuses files that are not schedlab databases.
    pub fn open(path: &Path) -> Result<Self> {
        let unwritable = |reason: String| StoreError::Unwritable {
            path: path.to_path_buf(),
            reason,
        };
        if path.is_dir() {
            return Err(unwritable("it is a directory".into()));
        }
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| unwritable(e.to_string()))?;
        }
        let mut conn = Connection::open(path).map_err(|e| classify(path, e))?;
        let store_path = path.to_path_buf();
        check_is_schedlab(&conn, path)?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| classify(path, e))?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(|e| classify(path, e))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(|e| classify(path, e))?;
        embedded::migrations::runner()
            .run(&mut conn)
            .map_err(|e| unwritable(format!("migration failed: {e}")))?;
        conn.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(|e| classify(path, e))?;
        Ok(SqliteStore {
            conn,
            path: store_path,
        })
    }

    /// Opens a database that must already exist (for commands that only read).
    pub fn open_existing(path: &Path) -> Result<Self> {
        if !path.exists() {
            return Err(StoreError::NotFound(format!(
                "no results database at {} (nothing has been stored yet)",
                path.display()
            )));
        }
        SqliteStore::open(path)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs SQLite's own consistency check; `Ok(())` when it answers "ok".
    pub fn integrity_check(&self) -> Result<()> {
        let answer: String = self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
        if answer == "ok" {
            Ok(())
        } else {
            Err(StoreError::Corrupt(answer))
        }
    }
}

fn classify(path: &Path, e: rusqlite::Error) -> StoreError {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => StoreError::NotSchedlab {
            path: path.to_path_buf(),
        },
        Some(ErrorCode::CannotOpen | ErrorCode::ReadOnly | ErrorCode::PermissionDenied) => {
            StoreError::Unwritable {
                path: path.to_path_buf(),
                reason: e.to_string(),
            }
        }
        _ => StoreError::Database(e),
    }
}

/// A database that already has tables must carry schedlab's application id.
fn check_is_schedlab(conn: &Connection, path: &Path) -> Result<()> {
    let app_id: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(|e| classify(path, e))?;
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .map_err(|e| classify(path, e))?;
    if tables > 0 && app_id != APPLICATION_ID {
        return Err(StoreError::NotSchedlab {
            path: path.to_path_buf(),
        });
    }
    Ok(())
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(format!("cannot encode: {e}")))
}

fn from_json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text)
        .map_err(|e| StoreError::Corrupt(format!("cannot decode {what}: {e}")))
}

impl Store for SqliteStore {
    fn begin_run(
        &mut self,
        plan: &RunPlan,
        fingerprint: &Fingerprint,
        started_at_ns: i64,
    ) -> Result<i64> {
        // The process that begins a run is the one that runs it.
        let owner = RunOwner::current();
        let tx = self.conn.transaction()?;
        tx.execute(
            "INSERT INTO runs (label, suite, plan_json, fingerprint_json, boot_id, kernel_release,
                               hostname, started_at_ns, status, schedlab_version,
                               owner_pid, owner_start_ticks, owner_boot_id, owner_host)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'running', ?9, ?10, ?11, ?12, ?13)",
            params![
                plan.label,
                plan.suite,
                to_json(plan)?,
                to_json(fingerprint)?,
                fingerprint.boot_id,
                fingerprint.kernel_release,
                fingerprint.hostname,
                started_at_ns,
                fingerprint.schedlab_version,
                owner.pid,
                owner.start_ticks.map(|t| t as i64),
                owner.boot_id,
                owner.host,
            ],
        )?;
        let run_id = tx.last_insert_rowid();
        for (position, case) in plan.cases.iter().enumerate() {
            tx.execute(
                "INSERT INTO cases (run_id, position, name, workload, spec_json)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    run_id,
                    position as i64,
                    case.name,
                    case.workload.kind(),
                    to_json(case)?
                ],
            )?;
        }
        tx.commit()?;
        Ok(run_id)
    }

    fn record_iteration(
        &mut self,
        run_id: i64,
        case_index: usize,
        iteration: &IterationRecord,
    ) -> Result<()> {
        let tx = self.conn.transaction()?;
        let case_id: i64 = tx
            .query_row(
                "SELECT id FROM cases WHERE run_id = ?1 AND position = ?2",
                params![run_id, case_index as i64],
                |r| r.get(0),
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound(format!("case {case_index} of run {run_id}")))?;
        tx.execute(
            "INSERT INTO iterations (case_id, position, warmup, started_at_ns) VALUES (?1, ?2, ?3, ?4)",
            params![case_id, iteration.index, iteration.warmup, iteration.started_at_ns],
        )?;
        let iteration_id = tx.last_insert_rowid();
        {
            let mut insert = tx.prepare(
                "INSERT INTO measurements (iteration_id, name, unit, better, role, value)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for m in &iteration.measurements {
                insert.execute(params![
                    iteration_id,
                    m.name,
                    m.unit,
                    m.better.as_str(),
                    m.role.as_str(),
                    m.value
                ])?;
            }
        }
        {
            let mut insert = tx.prepare(
                "INSERT INTO attachments (iteration_id, name, encoding, data) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for a in &iteration.attachments {
                insert.execute(params![iteration_id, a.name, a.encoding, a.data])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn finish_run(
        &mut self,
        run_id: i64,
        status: RunStatus,
        ended_at_ns: i64,
        error: Option<&str>,
    ) -> Result<()> {
        if status == RunStatus::Abandoned {
            return Err(StoreError::Corrupt(
                "`abandoned` is derived when runs are read and is never stored".into(),
            ));
        }
        let changed = self.conn.execute(
            "UPDATE runs SET status = ?2, ended_at_ns = ?3, error = ?4 WHERE id = ?1",
            params![run_id, status.as_str(), ended_at_ns, error],
        )?;
        if changed != 1 {
            return Err(StoreError::NotFound(format!("run {run_id}")));
        }
        Ok(())
    }

    fn record_case_failure(&mut self, run_id: i64, case_index: usize, message: &str) -> Result<()> {
        let changed = self.conn.execute(
            "UPDATE cases SET error = ?3 WHERE run_id = ?1 AND position = ?2",
            params![run_id, case_index as i64, message],
        )?;
        if changed != 1 {
            return Err(StoreError::NotFound(format!(
                "case {case_index} of run {run_id}"
            )));
        }
        Ok(())
    }

    fn list_runs(&self, limit: Option<usize>) -> Result<Vec<RunSummary>> {
        let here = Here::now();
        let mut stmt = self.conn.prepare(&format!(
            "SELECT r.id, r.label, r.suite, r.status, r.started_at_ns, r.ended_at_ns,
                    r.kernel_release, r.boot_id,
                    (SELECT count(*) FROM cases c WHERE c.run_id = r.id),
                    (SELECT count(*) FROM iterations i JOIN cases c ON i.case_id = c.id
                      WHERE c.run_id = r.id AND i.warmup = 0),
                    (SELECT c.name FROM cases c WHERE c.run_id = r.id ORDER BY c.position LIMIT 1),
                    r.hostname, {}
             FROM runs r ORDER BY r.started_at_ns DESC, r.id DESC LIMIT ?1",
            self.owner_columns("r.")?
        ))?;
        let limit = limit.map_or(-1, |l| l as i64);
        let rows = stmt.query_map([limit], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<String>>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, Option<i64>>(5)?,
                r.get::<_, String>(6)?,
                r.get::<_, String>(7)?,
                r.get::<_, i64>(8)?,
                r.get::<_, i64>(9)?,
                r.get::<_, Option<String>>(10)?,
                owner_of(r, 11)?,
            ))
        })?;
        let mut out = Vec::new();
        for row in rows {
            let (
                id,
                label,
                suite,
                status,
                started,
                ended,
                kernel,
                boot,
                cases,
                measured,
                first,
                owner,
            ) = row?;
            let owner = owner.with_fallback(&boot);
            let (status, _) = effective_status(parse_status(&status)?, &owner, &here);
            let what = match (&suite, first) {
                (Some(s), _) => format!("suite {s}"),
                (None, Some(name)) => name,
                (None, None) => String::new(),
            };
            out.push(RunSummary {
                id,
                label,
                suite,
                what,
                case_count: cases as usize,
                measured_iterations: measured as usize,
                status,
                started_at_ns: started,
                ended_at_ns: ended,
                kernel_release: kernel,
                boot_id: boot,
            });
        }
        Ok(out)
    }

    fn load_run(&self, run_id: i64) -> Result<RunRecord> {
        let row = self
            .conn
            .query_row(
                &format!(
                    "SELECT label, plan_json, fingerprint_json, started_at_ns, ended_at_ns, status,
                            error, hostname, {}, boot_id
                     FROM runs WHERE id = ?1",
                    self.owner_columns("")?
                ),
                [run_id],
                |r| {
                    Ok((
                        r.get::<_, Option<String>>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, i64>(3)?,
                        r.get::<_, Option<i64>>(4)?,
                        r.get::<_, String>(5)?,
                        r.get::<_, Option<String>>(6)?,
                        owner_of(r, 7)?,
                        r.get::<_, String>(12)?,
                    ))
                },
            )
            .optional()?
            .ok_or_else(|| StoreError::NotFound(format!("no run with id {run_id}")))?;
        let (
            label,
            plan_json,
            fingerprint_json,
            started_at_ns,
            ended_at_ns,
            status,
            error,
            owner,
            boot,
        ) = row;
        let (status, abandoned) = effective_status(
            parse_status(&status)?,
            &owner.with_fallback(&boot),
            &Here::now(),
        );
        let error = error.or(abandoned);
        let plan: RunPlan = from_json(&plan_json, "the run plan")?;
        let fingerprint: Fingerprint = from_json(&fingerprint_json, "the fingerprint")?;

        let case_error = if self.has_column("cases", "error")? {
            "error"
        } else {
            "NULL"
        };
        let mut cases_stmt = self.conn.prepare(&format!(
            "SELECT id, spec_json, {case_error} FROM cases WHERE run_id = ?1 ORDER BY position"
        ))?;
        let mut iterations_stmt = self.conn.prepare(
            "SELECT id, position, warmup, started_at_ns FROM iterations WHERE case_id = ?1 ORDER BY position",
        )?;
        let mut measurements_stmt = self.conn.prepare(
            "SELECT name, unit, better, role, value FROM measurements WHERE iteration_id = ?1 ORDER BY rowid",
        )?;
        let mut attachments_stmt = self.conn.prepare(
            "SELECT name, encoding, data FROM attachments WHERE iteration_id = ?1 ORDER BY rowid",
        )?;
        let case_rows: Vec<(i64, String, Option<String>)> = cases_stmt
            .query_map([run_id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
            .collect::<rusqlite::Result<_>>()?;
        let mut cases = Vec::with_capacity(case_rows.len());
        for (case_id, spec_json, case_error) in case_rows {
            let spec: CaseSpec = from_json(&spec_json, "a case")?;
            let iteration_rows: Vec<(i64, u32, bool, i64)> = iterations_stmt
                .query_map([case_id], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })?
                .collect::<rusqlite::Result<_>>()?;
            let mut iterations = Vec::with_capacity(iteration_rows.len());
            for (iteration_id, index, warmup, started_at_ns) in iteration_rows {
                let raw: Vec<(String, String, String, String, f64)> = measurements_stmt
                    .query_map([iteration_id], |r| {
                        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                    })?
                    .collect::<rusqlite::Result<_>>()?;
                let measurements = raw
                    .into_iter()
                    .map(|(name, unit, better, role, value)| {
                        Ok(Measurement {
                            better: Better::parse(&better).ok_or_else(|| {
                                StoreError::Corrupt(format!("direction {better:?}"))
                            })?,
                            role: Role::parse(&role)
                                .ok_or_else(|| StoreError::Corrupt(format!("role {role:?}")))?,
                            name,
                            unit,
                            value,
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                let attachments = attachments_stmt
                    .query_map([iteration_id], |r| {
                        Ok(Attachment {
                            name: r.get(0)?,
                            encoding: r.get(1)?,
                            data: r.get(2)?,
                        })
                    })?
                    .collect::<rusqlite::Result<Vec<_>>>()?;
                iterations.push(IterationRecord {
                    index,
                    warmup,
                    started_at_ns,
                    measurements,
                    attachments,
                });
            }
            cases.push(CaseRecord {
                spec,
                iterations,
                error: case_error,
            });
        }
        Ok(RunRecord {
            id: Some(run_id),
            label,
            plan,
            fingerprint,
            started_at_ns,
            ended_at_ns,
            status,
            error,
            cases,
        })
    }

    fn resolve(&self, id_or_label: &str) -> Result<Vec<i64>> {
        if !id_or_label.is_empty() && id_or_label.chars().all(|c| c.is_ascii_digit()) {
            let id: i64 = id_or_label
                .parse()
                .map_err(|_| StoreError::NotFound(format!("no run with id {id_or_label}")))?;
            let exists: Option<i64> = self
                .conn
                .query_row("SELECT id FROM runs WHERE id = ?1", [id], |r| r.get(0))
                .optional()?;
            return exists
                .map(|id| vec![id])
                .ok_or_else(|| StoreError::NotFound(format!("no run with id {id}")));
        }
        let mut stmt = self
            .conn
            .prepare("SELECT id FROM runs WHERE label = ?1 ORDER BY started_at_ns, id")?;
        let ids: Vec<i64> = stmt
            .query_map([id_or_label], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        if ids.is_empty() {
            return Err(StoreError::NotFound(format!(
                "no run with id or label {id_or_label:?}"
            )));
        }
        Ok(ids)
    }

    fn create_experiment(&mut self, e: &Experiment) -> Result<i64> {
        let exists: Option<i64> = self
            .conn
            .query_row(
                "SELECT id FROM experiments WHERE kind = ?1 AND name = ?2",
                params![e.kind.as_str(), e.name],
                |r| r.get(0),
            )
            .optional()?;
        if exists.is_some() {
            return Err(StoreError::Exists(format!(
                "a {} named {:?} already exists",
                e.kind.as_str(),
                e.name
            )));
        }
        self.conn.execute(
            "INSERT INTO experiments (kind, name, spec_json, state_json, status, created_at_ns)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                e.kind.as_str(),
                e.name,
                e.spec.to_string(),
                e.state.to_string(),
                e.status.as_str(),
                e.created_at_ns
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    fn experiment(&self, kind: ExperimentKind, name: &str) -> Result<Option<Experiment>> {
        self.experiment_where("kind = ?1 AND name = ?2", params![kind.as_str(), name])
    }

    fn experiment_by_id(&self, id: i64) -> Result<Option<Experiment>> {
        self.experiment_where("id = ?1", params![id])
    }

    fn save_calibration(&mut self, c: &StoredCalibration) -> Result<i64> {
        self.conn.execute(
            "INSERT INTO calibrations (created_at_ns, label, hostname, run_ids_json, model_json)
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                c.created_at_ns,
                c.label,
                c.hostname,
                to_json(&c.run_ids)?,
                c.model.to_string()
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    fn calibrations(&self) -> Result<Vec<StoredCalibration>> {
        let mut stmt = self.conn.prepare(
            "SELECT id, created_at_ns, label, hostname, run_ids_json, model_json FROM calibrations
              ORDER BY created_at_ns DESC, id DESC",
        )?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        rows.into_iter()
            .map(|(id, created_at_ns, label, hostname, run_ids, model)| {
                Ok(StoredCalibration {
                    id: Some(id),
                    created_at_ns,
                    label,
                    hostname,
                    run_ids: from_json(&run_ids, "a calibration's runs")?,
                    model: from_json(&model, "a calibration")?,
                })
            })
            .collect()
    }

    fn update_experiment(
        &mut self,
        id: i64,
        state: &serde_json::Value,
        status: RunStatus,
    ) -> Result<()> {
        let changed = self.conn.execute(
            "UPDATE experiments SET state_json = ?2, status = ?3 WHERE id = ?1",
            params![id, state.to_string(), status.as_str()],
        )?;
        if changed != 1 {
            return Err(StoreError::NotFound(format!("experiment {id}")));
        }
        Ok(())
    }

    fn tag_run(&mut self, run_id: i64, tag: ExperimentTag) -> Result<()> {
        let changed = self.conn.execute(
            "UPDATE runs SET experiment_id = ?2, experiment_side = ?3, experiment_round = ?4 WHERE id = ?1",
            params![run_id, tag.experiment_id, tag.arm.as_str(), tag.round],
        )?;
        if changed != 1 {
            return Err(StoreError::NotFound(format!("run {run_id}")));
        }
        Ok(())
    }

    fn run_tag(&self, run_id: i64) -> Result<Option<ExperimentTag>> {
        let row: Option<(Option<i64>, Option<String>, Option<u32>)> = self
            .conn
            .query_row(
                "SELECT experiment_id, experiment_side, experiment_round FROM runs WHERE id = ?1",
                [run_id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .optional()?;
        Ok(match row {
            Some((Some(experiment_id), Some(side), Some(round))) => Some(ExperimentTag {
                experiment_id,
                arm: Arm::parse(&side)
                    .ok_or_else(|| StoreError::Corrupt(format!("experiment side {side:?}")))?,
                round,
            }),
            _ => None,
        })
    }

    fn median_wall_time_sec(&self, case_name: &str) -> Result<Option<f64>> {
        let mut stmt = self.conn.prepare(
            "SELECT m.value FROM measurements m
               JOIN iterations i ON m.iteration_id = i.id
               JOIN cases c ON i.case_id = c.id
              WHERE c.name = ?1 AND m.name = 'wall_time_sec' AND i.warmup = 0
              ORDER BY i.id DESC LIMIT 50",
        )?;
        let mut values: Vec<f64> = stmt
            .query_map([case_name], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
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
}

impl SqliteStore {
    /// Whether `table` has `column`. A reader may meet a database a writer has not migrated to
    /// V5 yet (if it opens without migrating); its runs then read with unknown owners.
    fn has_column(&self, table: &str, column: &str) -> Result<bool> {
        let count: i64 = self.conn.query_row(
            "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
            params![table, column],
            |r| r.get(0),
        )?;
        Ok(count > 0)
    }

    /// The four owner columns of `runs` (prefixed with `alias`), or NULLs before V5.
    fn owner_columns(&self, alias: &str) -> Result<String> {
        Ok(if self.has_column("runs", "owner_pid")? {
            format!(
                "{alias}owner_pid, {alias}owner_start_ticks, {alias}owner_boot_id, {alias}owner_host"
            )
        } else {
            "NULL, NULL, NULL, NULL".to_string()
        })
    }

    fn experiment_where(
        &self,
        condition: &str,
        args: impl rusqlite::Params,
    ) -> Result<Option<Experiment>> {
        let row = self
            .conn
            .query_row(
                &format!(
                    "SELECT id, kind, name, spec_json, state_json, status, created_at_ns
                       FROM experiments WHERE {condition}"
                ),
                args,
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, String>(2)?,
                        r.get::<_, String>(3)?,
                        r.get::<_, String>(4)?,
                        r.get::<_, String>(5)?,
                        r.get::<_, i64>(6)?,
                    ))
                },
            )
            .optional()?;
        let Some((id, kind, name, spec, state, status, created_at_ns)) = row else {
            return Ok(None);
        };
        let kind = match kind.as_str() {
            "ab" => ExperimentKind::Ab,
            "campaign" => ExperimentKind::Campaign,
            other => return Err(StoreError::Corrupt(format!("experiment kind {other:?}"))),
        };
        Ok(Some(Experiment {
            id: Some(id),
            kind,
            name,
            spec: from_json(&spec, "an experiment's spec")?,
            state: from_json(&state, "an experiment's state")?,
            status: parse_status(&status)?,
            created_at_ns,
        }))
    }
}

/// The owner columns of a run row, from `first` on: the fingerprint's host name, then owner pid,
/// start ticks, boot id and host.
fn owner_of(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<OwnerColumns> {
    Ok(OwnerColumns {
        hostname: r.get(first)?,
        owner: StoredOwner {
            pid: r.get(first + 1)?,
            start_ticks: r.get::<_, Option<i64>>(first + 2)?.map(|t| t as u64),
            boot_id: r.get(first + 3)?,
            host: r.get(first + 4)?,
        },
    })
}

struct OwnerColumns {
    hostname: String,
    owner: StoredOwner,
}

impl OwnerColumns {
    /// Runs stored before V5 have no owner columns; the fingerprint's boot id and host name still
    /// tell whether they ran in an earlier boot of this machine.
    fn with_fallback(self, boot_id: &str) -> StoredOwner {
        let OwnerColumns {
            hostname,
            mut owner,
        } = self;
        if owner.boot_id.is_none() && !boot_id.is_empty() {
            owner.boot_id = Some(boot_id.to_string());
        }
        if owner.host.is_none() && !hostname.is_empty() {
            owner.host = Some(hostname);
        }
        owner
    }
}

fn parse_status(text: &str) -> Result<RunStatus> {
    RunStatus::parse(text)
        .ok_or_else(|| StoreError::Corrupt(format!("unknown run status {text:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::runner::{execute, Silent};
    use schedlab_core::workload::fake::FakeParams;
    use schedlab_core::workload::WorkloadSpec;

    use crate::StoreSink;

    fn plan(label: &str) -> RunPlan {
        let fake = WorkloadSpec::Fake(FakeParams::default());
        RunPlan::new(None, Some(label.into()), 3, 1, vec![fake]).unwrap()
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
    fn attachments_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let plan = plan("blobs");
        let id = store.begin_run(&plan, &Fingerprint::collect(), 5).unwrap();
        let iteration = IterationRecord {
            index: 0,
            warmup: false,
            started_at_ns: 6,
            measurements: vec![],
            attachments: vec![Attachment {
                name: "wakeup_latency".into(),
                encoding: "hdrhistogram-v2-deflate".into(),
                data: vec![0, 1, 2, 255],
            }],
        };
        store.record_iteration(id, 0, &iteration).unwrap();
        let run = store.load_run(id).unwrap();
        assert_eq!(run.cases[0].iterations[0], iteration);
    }

    #[test]
    fn labels_name_many_runs_and_ids_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let a = run_into(&mut store, &plan("kernel-a"));
        let b = run_into(&mut store, &plan("kernel-a"));
        let c = run_into(&mut store, &plan("kernel-b"));
        assert_eq!(store.resolve("kernel-a").unwrap(), vec![a, b]);
        assert_eq!(store.resolve(&c.to_string()).unwrap(), vec![c]);
        assert!(store.resolve("kernel-z").is_err());
        assert!(store.resolve("999").is_err());
        let listed: Vec<i64> = store
            .list_runs(None)
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(listed, vec![c, b, a]);
        assert_eq!(store.list_runs(Some(1)).unwrap().len(), 1);
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
        let id = store.begin_run(&plan, &Fingerprint::collect(), 5).unwrap();
        let iteration = IterationRecord {
            index: 0,
            warmup: false,
            started_at_ns: 6,
            measurements: vec![],
            attachments: vec![],
        };
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
        // Another host's run cannot be judged from here.
        set(&store, "UPDATE runs SET owner_host = 'elsewhere'");
        assert_eq!(status(&store), (RunStatus::Running, None));
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
    fn a_database_without_the_v5_columns_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = SqliteStore::open(&dir.path().join("r.db")).unwrap();
        let id = store
            .begin_run(&plan("old"), &Fingerprint::collect(), 5)
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
            .execute("ALTER TABLE cases DROP COLUMN error", [])
            .unwrap();
        // This boot's run with no recorded process cannot be judged: it stays running.
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
        let id = store
            .begin_run(&plan("cases"), &Fingerprint::collect(), 5)
            .unwrap();
        store
            .record_case_failure(id, 0, "worker 1 was stopped")
            .unwrap();
        assert!(store.record_case_failure(id, 9, "no such case").is_err());
        let run = store.load_run(id).unwrap();
        assert_eq!(run.cases[0].error.as_deref(), Some("worker 1 was stopped"));
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
            Err(StoreError::Unwritable { .. })
        ));
    }
}
