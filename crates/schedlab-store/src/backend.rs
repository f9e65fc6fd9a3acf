//! The [`Store`] both backends are: every query, guard and row mapping written once over
//! [`Db`], so a backend says only how it opens, reads and writes a transaction ([`Backend`]).
//!
//! A reader may hold an SQLite file older than this schedlab (PostgreSQL arrived at V8 and is
//! always current): a table or column that came later reads as empty or NULL, by
//! [`Backend::version`].
use std::collections::{HashMap, HashSet};

use schedlab_core::estimate::MeasuredCase;
use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::metric::{secondary, Better, Measurement, MetricShape, Role};
use schedlab_core::plan::{CaseSpec, RunPlan};
use schedlab_core::record::{
    Arm, Attachment, CaseRecord, ExperimentTag, IterationRecord, RunOwner, RunRecord, RunStatus,
};

use crate::liveness::{effective_status, Here, Silence, StoredOwner};
use crate::schema::{
    V_ATTACHMENTS, V_CALIBRATIONS, V_EXPERIMENTS, V_METRIC_DEFS, V_RUNS, V_RUN_OWNER, V_RUN_UUID,
};
use crate::select::RunSelection;
use crate::sql::{Db, Param, SqlRow};
use crate::{
    Experiment, ExperimentKind, KeepMeasurement, Result, RunProvenance, RunSummary, Store,
    StoreError, StoredCalibration,
};

/// What [`Store::load_run`] keeps of a run's measurements: every one.
fn every(_name: &str, _role: Role, _shape: MetricShape) -> bool {
    true
}

/// What a backend itself does; [`Store`] follows for every backend from these.
pub(crate) trait Backend {
    type Db<'t>: Db;
    /// The schema version queries run against (0: no schema yet, seen by a reader).
    fn version(&self) -> i64;
    /// One read-only transaction, seeing one snapshot, retried as the backend retries.
    fn read_tx<T>(&self, body: impl FnMut(&mut Self::Db<'_>) -> Result<T>) -> Result<T>;
    /// One write transaction, retried whole as the backend retries; `body` learns whether an
    /// earlier attempt may have committed before its answer was lost.
    fn write_tx<T>(&self, body: impl FnMut(&mut Self::Db<'_>, bool) -> Result<T>) -> Result<T>;
    /// Where the store is, for messages.
    fn location(&self) -> String;
    /// Whether `e` says another writer stored a run with the same uuid first.
    fn is_duplicate_uuid(_e: &StoreError) -> bool {
        false
    }
}

pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| StoreError::Corrupt(format!("cannot encode: {e}")))
}

pub(crate) fn from_json<T: serde::de::DeserializeOwned>(text: &str, what: &str) -> Result<T> {
    serde_json::from_str(text)
        .map_err(|e| StoreError::Corrupt(format!("cannot decode {what}: {e}")))
}

pub(crate) fn parse_status(text: &str) -> Result<RunStatus> {
    RunStatus::parse(text)
        .ok_or_else(|| StoreError::Corrupt(format!("unknown run status {text:?}")))
}

fn no_run(run_id: i64) -> StoreError {
    StoreError::NotFound(format!("no run with id {run_id}"))
}

/// Runs an update that must change exactly one row, else `what` is not found.
fn update_one(db: &mut impl Db, sql: &str, params: &[&dyn Param], what: String) -> Result<()> {
    if db.execute(sql, params)? != 1 {
        return Err(StoreError::NotFound(what));
    }
    Ok(())
}

/// What a run's row, its cases and its provenance are as stored, encoded once before a write
/// transaction that may be retried.
struct NewRun<'a> {
    plan: &'a RunPlan,
    plan_json: String,
    fingerprint: &'a Fingerprint,
    fingerprint_json: String,
    cases: Vec<(&'a CaseSpec, String)>,
    started_at_ns: i64,
    ended_at_ns: Option<i64>,
    provenance: &'a RunProvenance,
}

impl<'a> NewRun<'a> {
    fn new(
        plan: &'a RunPlan,
        fingerprint: &'a Fingerprint,
        (started_at_ns, ended_at_ns): (i64, Option<i64>),
        provenance: &'a RunProvenance,
    ) -> Result<Self> {
        Ok(NewRun {
            plan,
            plan_json: to_json(plan)?,
            fingerprint,
            fingerprint_json: to_json(fingerprint)?,
            cases: plan
                .cases
                .iter()
                .map(|case| Ok((case, to_json(case)?)))
                .collect::<Result<_>>()?,
            started_at_ns,
            ended_at_ns,
            provenance,
        })
    }

    /// Inserts the run's row and its cases (each with its error, if `case_errors` has one);
    /// returns the run's id and its cases' ids in order.
    fn insert(
        &self,
        db: &mut impl Db,
        experiment: Option<(i64, &str, i64)>,
        case_errors: &[Option<&str>],
    ) -> Result<(i64, Vec<i64>)> {
        let (plan, fingerprint, provenance) = (self.plan, self.fingerprint, self.provenance);
        let owner = &provenance.owner;
        let run_id = one(db.query_opt(
            "INSERT INTO runs (uuid, label, suite, plan_json, fingerprint_json, boot_id,
                               kernel_release, hostname, started_at_ns, ended_at_ns, status, error,
                               schedlab_version, owner_pid, owner_start_ticks, owner_boot_id,
                               owner_host, experiment_id, experiment_side, experiment_round)
             VALUES ($1::text::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
                     $16, $17, $18, $19, $20)
             RETURNING id",
            &[
                &provenance.uuid,
                &plan.label,
                &plan.suite,
                &self.plan_json,
                &self.fingerprint_json,
                &fingerprint.boot_id,
                &fingerprint.kernel_release,
                &fingerprint.hostname,
                &self.started_at_ns,
                &self.ended_at_ns,
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
            |r| r.get::<i64>(0),
        )?)?;
        let mut case_ids = Vec::with_capacity(self.cases.len());
        for (position, (case, spec_json)) in self.cases.iter().enumerate() {
            let error = case_errors.get(position).copied().flatten();
            case_ids.push(one(db.query_opt(
                "INSERT INTO cases (run_id, position, name, workload, spec_json, error)
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                &[
                    &run_id,
                    &(position as i64),
                    &case.name,
                    &case.workload.kind(),
                    spec_json,
                    &error,
                ],
                |r| r.get::<i64>(0),
            )?)?);
        }
        Ok((run_id, case_ids))
    }
}

/// The row an insert `RETURNING` answers with.
fn one<T>(row: Option<T>) -> Result<T> {
    row.ok_or_else(|| StoreError::Corrupt("an insert returned no row".into()))
}

/// Inserts one finished iteration of a case with its measurements, the case's definitions of
/// the metrics it returns, and its attachments.
fn insert_iteration(db: &mut impl Db, case_id: i64, iteration: &IterationRecord) -> Result<()> {
    let iteration_id = one(db.query_opt(
        "INSERT INTO iterations (case_id, position, warmup, started_at_ns) VALUES ($1, $2, $3, $4)
         RETURNING id",
        &[
            &case_id,
            &i64::from(iteration.index),
            &iteration.warmup,
            &iteration.started_at_ns,
        ],
        |r| r.get::<i64>(0),
    )?)?;
    for m in &iteration.measurements {
        db.execute(
            "INSERT INTO measurements (iteration_id, name, unit, better, role, value)
             VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &iteration_id,
                &m.name,
                &m.unit,
                &m.better.as_str(),
                &m.role.as_str(),
                &m.value,
            ],
        )?;
        // The first iteration to return a metric defines it for the case: the runner holds
        // every iteration of a case to the same declaration.
        db.execute(
            "INSERT INTO metrics (case_id, name, unit, better, role, shape, quantile_p, distribution)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (case_id, name) DO NOTHING",
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
    for a in &iteration.attachments {
        db.execute(
            "INSERT INTO attachments (iteration_id, name, encoding, data) VALUES ($1, $2, $3, $4)",
            &[&iteration_id, &a.name, &a.encoding, &a.data],
        )?;
    }
    Ok(())
}

fn case_id(db: &mut impl Db, run_id: i64, case_index: usize) -> Result<i64> {
    db.query_opt(
        "SELECT id FROM cases WHERE run_id = $1 AND position = $2",
        &[&run_id, &(case_index as i64)],
        |r| r.get(0),
    )?
    .ok_or_else(|| StoreError::NotFound(format!("case {case_index} of run {run_id}")))
}

fn run_id_by_uuid(db: &mut impl Db, uuid: &str) -> Result<Option<i64>> {
    db.query_opt(
        "SELECT id FROM runs WHERE uuid = $1::text::uuid",
        &[&uuid],
        |r| r.get(0),
    )
}

/// The four owner columns of `runs` (prefixed with `alias`), or NULLs before V5 brought them.
pub(crate) fn owner_columns(version: i64, alias: &str) -> String {
    if version >= V_RUN_OWNER {
        format!(
            "{alias}owner_pid, {alias}owner_start_ticks, {alias}owner_boot_id, {alias}owner_host"
        )
    } else {
        "NULL, NULL, NULL, NULL".to_string()
    }
}

/// The owner columns of a run row, from `first` on: the fingerprint's host name, then owner pid,
/// start ticks, boot id and host.
pub(crate) fn owner_of(r: &impl SqlRow, first: usize) -> Result<OwnerColumns> {
    Ok(OwnerColumns {
        hostname: r.get(first)?,
        owner: StoredOwner {
            pid: r.get(first + 1)?,
            start_ticks: r.get::<Option<i64>>(first + 2)?.map(|t| t as u64),
            boot_id: r.get(first + 3)?,
            host: r.get(first + 4)?,
        },
    })
}

pub(crate) struct OwnerColumns {
    pub(crate) hostname: String,
    pub(crate) owner: StoredOwner,
}

impl OwnerColumns {
    /// Runs stored before V5 have no owner columns; the fingerprint's boot id and host name still
    /// tell whether they ran in an earlier boot of this machine.
    pub(crate) fn with_fallback(self, boot_id: &str) -> StoredOwner {
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

/// An experiment tag from its three columns; `None` when the run is in no experiment.
fn tag_of(r: &impl SqlRow, first: usize) -> Result<Option<ExperimentTag>> {
    let columns = (
        r.get::<Option<i64>>(first)?,
        r.get::<Option<String>>(first + 1)?,
        r.get::<Option<i64>>(first + 2)?,
    );
    Ok(match columns {
        (Some(experiment_id), Some(side), Some(round)) => Some(ExperimentTag {
            experiment_id,
            arm: Arm::parse(&side)
                .ok_or_else(|| StoreError::Corrupt(format!("experiment side {side:?}")))?,
            round: u32::try_from(round)
                .map_err(|_| StoreError::Corrupt(format!("experiment round {round}")))?,
        }),
        _ => None,
    })
}

const EXPERIMENT_COLUMNS: &str = "id, kind, name, spec_json, state_json, status, created_at_ns";

fn experiment_of(row: &impl SqlRow) -> Result<Experiment> {
    let kind = match row.get::<String>(1)?.as_str() {
        "ab" => ExperimentKind::Ab,
        "campaign" => ExperimentKind::Campaign,
        other => return Err(StoreError::Corrupt(format!("experiment kind {other:?}"))),
    };
    Ok(Experiment {
        id: Some(row.get(0)?),
        kind,
        name: row.get(2)?,
        spec: from_json(&row.get::<String>(3)?, "an experiment's spec")?,
        state: from_json(&row.get::<String>(4)?, "an experiment's state")?,
        status: parse_status(&row.get::<String>(5)?)?,
        created_at_ns: row.get(6)?,
    })
}

fn experiment_where<B: Backend>(
    store: &B,
    condition: &str,
    params: &[&dyn Param],
) -> Result<Option<Experiment>> {
    if store.version() < V_EXPERIMENTS {
        return Ok(None);
    }
    let sql = format!("SELECT {EXPERIMENT_COLUMNS} FROM experiments WHERE {condition}");
    store.read_tx(|db| db.query_opt(&sql, params, |r| experiment_of(r)))
}

/// A case's definition of a metric as the `metrics` table holds it (from V7): what one value is.
struct Definition {
    shape: String,
    quantile_p: Option<f64>,
    distribution: Option<String>,
}

/// The definitions of every metric of a run's cases (only those named `case`), by case id, then
/// metric name.
fn definitions<D: Db>(
    db: &mut D,
    version: i64,
    run_id: i64,
    case: Option<&str>,
) -> Result<HashMap<i64, HashMap<String, Definition>>> {
    let mut definitions: HashMap<i64, HashMap<String, Definition>> = HashMap::new();
    // A measurement stored before V7 has no definition: its shape comes from its name.
    if version < V_METRIC_DEFS {
        return Ok(definitions);
    }
    for (case_id, name, definition) in db.query(
        &format!(
            "SELECT d.case_id, d.name, d.shape, d.quantile_p, d.distribution
               FROM metrics d JOIN cases c ON d.case_id = c.id
              WHERE c.run_id = $1 AND {THE_CASE}"
        ),
        &[&run_id, &case],
        |r| {
            let definition = Definition {
                shape: r.get(2)?,
                quantile_p: r.get(3)?,
                distribution: r.get(4)?,
            };
            Ok((r.get::<i64>(0)?, r.get::<String>(1)?, definition))
        },
    )? {
        definitions
            .entry(case_id)
            .or_default()
            .insert(name, definition);
    }
    Ok(definitions)
}

/// The measurement of a stored row (from column `first` on: name, unit, direction, role, value),
/// described by its case's `definition` of the metric where there is one; `None` when `keep`
/// does not take it, which is decided before any of its text is copied.
fn measurement_of(
    r: &impl SqlRow,
    first: usize,
    definition: Option<&Definition>,
    keep: &KeepMeasurement<'_>,
) -> Result<Option<Measurement>> {
    let stored_name = r.str_at(first)?;
    let unit = r.str_at(first + 1)?;
    let (shape, distribution) = match definition {
        Some(d) => {
            let shape = MetricShape::parse(&d.shape, d.quantile_p)
                .filter(|s| s.of_distribution() == d.distribution.is_some())
                .ok_or_else(|| {
                    StoreError::Corrupt(format!(
                        "metric {stored_name:?}: shape {:?} with p {:?} and distribution {:?}",
                        d.shape, d.quantile_p, d.distribution
                    ))
                })?;
            (shape, d.distribution.clone())
        }
        None => crate::legacy::shape_before_v7(stored_name, unit),
    };
    let better = r.str_at(first + 2)?;
    let better = Better::parse(better)
        .ok_or_else(|| StoreError::Corrupt(format!("direction {better:?}")))?;
    let role = r.str_at(first + 3)?;
    let role = Role::parse(role).ok_or_else(|| StoreError::Corrupt(format!("role {role:?}")))?;
    // The shape of an old row came from its name as stored; readers get the current name.
    let name = schedlab_core::metric::current_name(stored_name);
    if !keep(name, role, shape) {
        return Ok(None);
    }
    Ok(Some(Measurement {
        name: name.to_string(),
        unit: unit.to_string(),
        better,
        role,
        shape,
        distribution,
        value: r.get(first + 4)?,
    }))
}

/// The condition on `cases c` that keeps the case named by parameter `$2`, or every case when
/// it is NULL.
const THE_CASE: &str = "(CAST($2 AS TEXT) IS NULL OR c.name = $2)";

/// One run with every case (or only the cases named `case`), iteration, measurement that `keep`
/// takes and (from V2) attachment: six queries for the whole run, however many iterations it
/// has.
fn load_run_in<D: Db>(
    db: &mut D,
    version: i64,
    run_id: i64,
    case: Option<&str>,
    keep: &KeepMeasurement<'_>,
    here: &Here,
) -> Result<RunRecord> {
    let run_sql = format!(
        "SELECT label, plan_json, fingerprint_json, started_at_ns, ended_at_ns, status, error,
                hostname, {}, boot_id
           FROM runs WHERE id = $1",
        owner_columns(version, "")
    );
    let (run, owner) = db
        .query_opt(&run_sql, &[&run_id], |r| {
            let owner = owner_of(r, 7)?.with_fallback(&r.get::<String>(12)?);
            let run = RunRecord {
                id: Some(run_id),
                label: r.get(0)?,
                plan: from_json(&r.get::<String>(1)?, "the run plan")?,
                fingerprint: from_json(&r.get::<String>(2)?, "the fingerprint")?,
                started_at_ns: r.get(3)?,
                ended_at_ns: r.get(4)?,
                status: parse_status(&r.get::<String>(5)?)?,
                error: r.get(6)?,
                cases: Vec::new(),
            };
            Ok((run, owner))
        })?
        .ok_or_else(|| no_run(run_id))?;

    let order = D::ROW_ORDER;
    let definitions = definitions(db, version, run_id, case)?;
    let mut measurements: HashMap<i64, Vec<Measurement>> = HashMap::new();
    let measurement_sql = format!(
        "SELECT i.case_id, m.iteration_id, m.name, m.unit, m.better, m.role, m.value
           FROM measurements m
           JOIN iterations i ON m.iteration_id = i.id
           JOIN cases c ON i.case_id = c.id
          WHERE c.run_id = $1 AND {THE_CASE} ORDER BY m.{order}"
    );
    for (iteration_id, measurement) in db
        .query(&measurement_sql, &[&run_id, &case], |r| {
            let iteration_id = r.get::<i64>(1)?;
            let name = r.str_at(2)?;
            let definition = definitions
                .get(&r.get::<i64>(0)?)
                .and_then(|metrics| metrics.get(name));
            Ok(measurement_of(r, 2, definition, keep)?.map(|m| (iteration_id, m)))
        })?
        .into_iter()
        .flatten()
    {
        measurements
            .entry(iteration_id)
            .or_default()
            .push(measurement);
    }
    let mut attachments: HashMap<i64, Vec<Attachment>> = HashMap::new();
    if version >= V_ATTACHMENTS {
        let attachment_sql = format!(
            "SELECT a.iteration_id, a.name, a.encoding, a.data
               FROM attachments a
               JOIN iterations i ON a.iteration_id = i.id
               JOIN cases c ON i.case_id = c.id
              WHERE c.run_id = $1 AND {THE_CASE} ORDER BY a.{order}"
        );
        for (iteration_id, attachment) in db.query(&attachment_sql, &[&run_id, &case], |r| {
            let attachment = Attachment {
                name: r.get(1)?,
                encoding: r.get(2)?,
                data: r.get(3)?,
            };
            Ok((r.get::<i64>(0)?, attachment))
        })? {
            attachments
                .entry(iteration_id)
                .or_default()
                .push(attachment);
        }
    }
    let mut iterations: HashMap<i64, Vec<IterationRecord>> = HashMap::new();
    let iteration_rows = db.query(
        &format!(
            "SELECT i.case_id, i.id, i.position, i.warmup, i.started_at_ns
               FROM iterations i JOIN cases c ON i.case_id = c.id
              WHERE c.run_id = $1 AND {THE_CASE} ORDER BY i.case_id, i.position"
        ),
        &[&run_id, &case],
        |r| {
            Ok((
                r.get::<i64>(0)?,
                r.get::<i64>(1)?,
                r.get::<i64>(2)?,
                r.get::<bool>(3)?,
                r.get::<i64>(4)?,
            ))
        },
    )?;
    for (case_id, iteration_id, position, warmup, started_at_ns) in iteration_rows {
        iterations
            .entry(case_id)
            .or_default()
            .push(IterationRecord {
                index: u32::try_from(position)
                    .map_err(|_| StoreError::Corrupt(format!("iteration position {position}")))?,
                warmup,
                started_at_ns,
                measurements: measurements.remove(&iteration_id).unwrap_or_default(),
                attachments: attachments.remove(&iteration_id).unwrap_or_default(),
            });
    }
    let case_error = if version >= V_RUN_OWNER {
        "error"
    } else {
        "NULL"
    };
    let case_sql = format!(
        "SELECT id, spec_json, {case_error} FROM cases c
          WHERE run_id = $1 AND {THE_CASE} ORDER BY position"
    );
    let cases = db.query(&case_sql, &[&run_id, &case], |r| {
        Ok(CaseRecord {
            spec: from_json(&r.get::<String>(1)?, "a case")?,
            iterations: iterations.remove(&r.get::<i64>(0)?).unwrap_or_default(),
            error: r.get(2)?,
        })
    })?;
    let mut run = RunRecord { cases, ..run };
    // A running run is judged by when any of its iterations started, not only the case's.
    let starts: Vec<i64> = if run.status != RunStatus::Running {
        Vec::new()
    } else if case.is_some() {
        db.query(
            "SELECT i.started_at_ns FROM iterations i JOIN cases c ON i.case_id = c.id
              WHERE c.run_id = $1",
            &[&run_id],
            |r| r.get::<i64>(0),
        )?
    } else {
        run.cases
            .iter()
            .flat_map(|c| c.iterations.iter().map(|i| i.started_at_ns))
            .collect()
    };
    let (status, abandoned) = effective_status(run.status, &owner, here, || {
        Some(Silence::of(&run.plan, run.started_at_ns, &starts))
    });
    run.status = status;
    run.error = run.error.or(abandoned);
    Ok(run)
}

/// The [`Silence`] of every run stored as `running`, by id: what a reader needs to judge the
/// runs whose process it cannot look up. Few runs are running at once, so this reads little.
pub(crate) fn running_silences<D: Db>(db: &mut D) -> Result<HashMap<i64, Silence>> {
    let runs = db.query(
        "SELECT id, plan_json, started_at_ns FROM runs WHERE status = 'running'",
        &[],
        |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?, r.get::<i64>(2)?)),
    )?;
    let mut starts: HashMap<i64, Vec<i64>> = HashMap::new();
    for (run_id, started_at_ns) in db.query(
        "SELECT c.run_id, i.started_at_ns
           FROM iterations i JOIN cases c ON i.case_id = c.id JOIN runs r ON c.run_id = r.id
          WHERE r.status = 'running'",
        &[],
        |r| Ok((r.get::<i64>(0)?, r.get::<i64>(1)?)),
    )? {
        starts.entry(run_id).or_default().push(started_at_ns);
    }
    // A plan this schedlab cannot read (a newer one's workload) leaves its run unjudged.
    Ok(runs
        .into_iter()
        .filter_map(|(id, plan, started_at_ns)| {
            let plan: RunPlan = from_json(&plan, "the run plan").ok()?;
            let starts = starts.remove(&id).unwrap_or_default();
            Some((id, Silence::of(&plan, started_at_ns, &starts)))
        })
        .collect())
}

impl<B: Backend> Store for B {
    fn begin_run(
        &mut self,
        plan: &RunPlan,
        fingerprint: &Fingerprint,
        started_at_ns: i64,
    ) -> Result<i64> {
        // The process that begins a run is the one that runs it.
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
        let run = NewRun::new(plan, fingerprint, (started_at_ns, None), &provenance)?;
        let uuid = provenance.uuid.as_deref().unwrap_or_default();
        self.write_tx(|db, retrying| {
            // An earlier attempt may have committed before the connection dropped.
            if retrying {
                if let Some(id) = run_id_by_uuid(db, uuid)? {
                    return Ok(id);
                }
            }
            Ok(run.insert(db, None, &[])?.0)
        })
    }

    fn record_iteration(
        &mut self,
        run_id: i64,
        case_index: usize,
        iteration: &IterationRecord,
    ) -> Result<()> {
        self.write_tx(|db, retrying| {
            let case_id = case_id(db, run_id, case_index)?;
            if retrying {
                let landed = db.query_opt(
                    "SELECT 1 FROM iterations WHERE case_id = $1 AND position = $2",
                    &[&case_id, &i64::from(iteration.index)],
                    |_| Ok(()),
                )?;
                if landed.is_some() {
                    return Ok(());
                }
            }
            insert_iteration(db, case_id, iteration)
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
        self.write_tx(|db, _| {
            update_one(
                db,
                "UPDATE runs SET status = $2, ended_at_ns = $3, error = $4 WHERE id = $1",
                &[&run_id, &status.as_str(), &ended_at_ns, &error],
                format!("run {run_id}"),
            )
        })
    }

    fn record_probe(
        &mut self,
        run_id: i64,
        case_index: usize,
        probe: &schedlab_core::probe::ProbeRecord,
    ) -> Result<()> {
        self.write_tx(|db, retrying| {
            let case_id = case_id(db, run_id, case_index)?;
            if retrying {
                let landed = db.query_opt(
                    "SELECT 1 FROM probe_iterations WHERE case_id = $1 AND kind = $2
                        AND position = $3",
                    &[&case_id, &probe.kind.as_str(), &i64::from(probe.index)],
                    |_| Ok(()),
                )?;
                if landed.is_some() {
                    return Ok(());
                }
            }
            crate::probes::insert_probe(db, case_id, probe)
        })
    }

    fn load_probes(&self, run_id: i64) -> Result<Vec<(usize, schedlab_core::probe::ProbeRecord)>> {
        let version = self.version();
        self.read_tx(|db| crate::probes::load_probes_in(db, version, run_id))
    }

    fn record_case_failure(&mut self, run_id: i64, case_index: usize, message: &str) -> Result<()> {
        self.write_tx(|db, _| {
            update_one(
                db,
                "UPDATE cases SET error = $3 WHERE run_id = $1 AND position = $2",
                &[&run_id, &(case_index as i64), &message],
                format!("case {case_index} of run {run_id}"),
            )
        })
    }

    fn list_runs(&self, limit: Option<usize>) -> Result<Vec<RunSummary>> {
        if self.version() < V_RUNS {
            return Ok(Vec::new());
        }
        let here = Here::now();
        let limit = limit.map_or(String::new(), |l| format!("LIMIT {l}"));
        let sql = format!(
            "SELECT r.id, r.label, r.suite, r.status, r.started_at_ns, r.ended_at_ns,
                    r.kernel_release, r.boot_id,
                    (SELECT count(*) FROM cases c WHERE c.run_id = r.id),
                    (SELECT count(*) FROM iterations i JOIN cases c ON i.case_id = c.id
                      WHERE c.run_id = r.id AND NOT i.warmup),
                    (SELECT c.name FROM cases c WHERE c.run_id = r.id ORDER BY c.position LIMIT 1),
                    r.hostname, {}
               FROM runs r ORDER BY r.started_at_ns DESC, r.id DESC {limit}",
            owner_columns(self.version(), "r.")
        );
        self.read_tx(|db| {
            let silences = running_silences(db)?;
            db.query(&sql, &[], |r| {
                let boot: String = r.get(7)?;
                let owner = owner_of(r, 11)?;
                let hostname = owner.hostname.clone();
                let owner = owner.with_fallback(&boot);
                let id: i64 = r.get(0)?;
                let (status, _) =
                    effective_status(parse_status(&r.get::<String>(3)?)?, &owner, &here, || {
                        silences.get(&id).copied()
                    });
                let suite: Option<String> = r.get(2)?;
                let what = match (&suite, r.get::<Option<String>>(10)?) {
                    (Some(s), _) => format!("suite {s}"),
                    (None, Some(name)) => name,
                    (None, None) => String::new(),
                };
                Ok(RunSummary {
                    id: r.get(0)?,
                    label: r.get(1)?,
                    suite,
                    what,
                    case_count: r.get::<i64>(8)? as usize,
                    measured_iterations: r.get::<i64>(9)? as usize,
                    status,
                    started_at_ns: r.get(4)?,
                    ended_at_ns: r.get(5)?,
                    kernel_release: r.get(6)?,
                    boot_id: boot,
                    hostname,
                })
            })
        })
    }

    /// Host, kernel and case in SQL, fingerprint fields on the stored fingerprint alone (no
    /// iteration is read); answers as [`crate::select::select_runs_default`] does.
    fn select_runs(
        &self,
        selection: &RunSelection,
        limit: Option<usize>,
    ) -> Result<Vec<RunSummary>> {
        if self.version() < V_RUNS {
            return Ok(Vec::new());
        }
        let chosen: HashSet<i64> = self.read_tx(|db| {
            let rows = db.query(
                "SELECT r.id, r.fingerprint_json FROM runs r
                 WHERE (CAST($1 AS TEXT) IS NULL OR r.hostname = $1)
                   AND (CAST($2 AS TEXT) IS NULL OR r.kernel_release = $2)
                   AND (CAST($3 AS TEXT) IS NULL OR EXISTS (SELECT 1 FROM cases c
                                              WHERE c.run_id = r.id AND c.name = $3))",
                &[&selection.host, &selection.kernel, &selection.case],
                |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?)),
            )?;
            let mut ids = HashSet::new();
            for (id, json) in rows {
                if !selection.fields.is_empty() {
                    let fingerprint: Fingerprint = from_json(&json, "a run's fingerprint")?;
                    if !selection.matches_fingerprint(&fingerprint) {
                        continue;
                    }
                }
                ids.insert(id);
            }
            Ok(ids)
        })?;
        let mut runs: Vec<RunSummary> = self
            .list_runs(None)?
            .into_iter()
            .filter(|r| chosen.contains(&r.id))
            .collect();
        if let Some(limit) = limit {
            runs.truncate(limit);
        }
        Ok(runs)
    }

    fn load_run(&self, run_id: i64) -> Result<RunRecord> {
        if self.version() < V_RUNS {
            return Err(no_run(run_id));
        }
        let here = Here::now();
        self.read_tx(|db| load_run_in(db, self.version(), run_id, None, &every, &here))
    }

    fn load_run_keeping(&self, run_id: i64, keep: &KeepMeasurement<'_>) -> Result<RunRecord> {
        if self.version() < V_RUNS {
            return Err(no_run(run_id));
        }
        let here = Here::now();
        self.read_tx(|db| load_run_in(db, self.version(), run_id, None, keep, &here))
    }

    fn load_runs_of_case(&self, run_ids: &[i64], case: &str) -> Result<Vec<RunRecord>> {
        if self.version() < V_RUNS {
            return match run_ids.first() {
                Some(&id) => Err(no_run(id)),
                None => Ok(Vec::new()),
            };
        }
        let here = Here::now();
        self.read_tx(|db| {
            run_ids
                .iter()
                .map(|&id| load_run_in(db, self.version(), id, Some(case), &every, &here))
                .collect()
        })
    }

    fn case_names(&self, run_ids: &[i64]) -> Result<Vec<Vec<String>>> {
        if self.version() < V_RUNS {
            return Ok(vec![Vec::new(); run_ids.len()]);
        }
        self.read_tx(|db| {
            run_ids
                .iter()
                .map(|&id| {
                    let names = db.query(
                        "SELECT name FROM cases WHERE run_id = $1 ORDER BY position",
                        &[&id],
                        |r| r.get::<String>(0),
                    )?;
                    let plan =
                        db.query_opt("SELECT plan_json FROM runs WHERE id = $1", &[&id], |r| {
                            r.get::<String>(0)
                        })?;
                    // A plan this version cannot read leaves the names in the order they ran.
                    Ok(
                        match plan.and_then(|p| from_json::<RunPlan>(&p, "the run plan").ok()) {
                            Some(plan) => plan.as_listed(names, |name| name),
                            None => names,
                        },
                    )
                })
                .collect()
        })
    }

    fn resolve(&self, id_or_label: &str) -> Result<Vec<i64>> {
        let by_id = !id_or_label.is_empty() && id_or_label.chars().all(|c| c.is_ascii_digit());
        if by_id {
            let id: i64 = id_or_label
                .parse()
                .map_err(|_| StoreError::NotFound(format!("no run with id {id_or_label}")))?;
            let exists = self.version() >= V_RUNS
                && self
                    .read_tx(|db| {
                        db.query_opt("SELECT 1 FROM runs WHERE id = $1", &[&id], |_| Ok(()))
                    })?
                    .is_some();
            return if exists {
                Ok(vec![id])
            } else {
                Err(no_run(id))
            };
        }
        let ids: Vec<i64> = if self.version() >= V_RUNS {
            self.read_tx(|db| {
                db.query(
                    "SELECT id FROM runs WHERE label = $1 ORDER BY started_at_ns, id",
                    &[&id_or_label],
                    |r| r.get(0),
                )
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

    fn measured_cases(&self, hostname: &str, workload: &str) -> Result<Vec<MeasuredCase>> {
        if self.version() < V_RUNS {
            return Ok(Vec::new());
        }
        let wall_time = secondary::WALL_TIME_SEC;
        // The newest 50 values of each case, with the case's newest parameters on its first row.
        let rows: Vec<(String, f64, Option<String>)> = self.read_tx(|db| {
            db.query(
                "SELECT name, value, CASE WHEN k = 1 THEN spec_json END FROM (
                   SELECT c.name AS name, m.value AS value, c.spec_json AS spec_json,
                          ROW_NUMBER() OVER (PARTITION BY c.name ORDER BY i.id DESC) AS k
                     FROM runs r
                     JOIN cases c ON c.run_id = r.id
                     JOIN iterations i ON i.case_id = c.id
                     JOIN measurements m ON m.iteration_id = i.id
                    WHERE r.hostname = $1 AND c.workload = $2 AND m.name = $3 AND m.role = $4
                      AND NOT i.warmup
                 ) newest WHERE k <= 50 ORDER BY name, k",
                &[
                    &hostname,
                    &workload,
                    &wall_time.name,
                    &wall_time.role.as_str(),
                ],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
        })?;
        let mut cases = Vec::new();
        for chunk in rows.chunk_by(|a, b| a.0 == b.0) {
            let Some(Ok(spec)) = chunk[0].2.as_deref().map(serde_json::from_str::<CaseSpec>) else {
                continue;
            };
            let values: Vec<f64> = chunk.iter().map(|row| row.1).collect();
            let Ok(median_sec) = schedlab_stats::summary::median(&values) else {
                continue;
            };
            cases.push(MeasuredCase {
                name: spec.name,
                workload: spec.workload,
                median_sec,
            });
        }
        Ok(cases)
    }

    fn create_experiment(&mut self, e: &Experiment) -> Result<i64> {
        let (spec, state) = (e.spec.to_string(), e.state.to_string());
        self.write_tx(|db, _| {
            let exists = db.query_opt(
                "SELECT id FROM experiments WHERE kind = $1 AND name = $2",
                &[&e.kind.as_str(), &e.name],
                |_| Ok(()),
            )?;
            if exists.is_some() {
                return Err(StoreError::Exists(format!(
                    "a {} named {:?} already exists",
                    e.kind.as_str(),
                    e.name
                )));
            }
            one(db.query_opt(
                "INSERT INTO experiments (kind, name, spec_json, state_json, status, created_at_ns)
                 VALUES ($1, $2, $3, $4, $5, $6) RETURNING id",
                &[
                    &e.kind.as_str(),
                    &e.name,
                    &spec,
                    &state,
                    &e.status.as_str(),
                    &e.created_at_ns,
                ],
                |r| r.get(0),
            )?)
        })
    }

    fn experiment(&self, kind: ExperimentKind, name: &str) -> Result<Option<Experiment>> {
        experiment_where(self, "kind = $1 AND name = $2", &[&kind.as_str(), &name])
    }

    fn experiments(&self, kind: ExperimentKind) -> Result<Vec<Experiment>> {
        if self.version() < V_EXPERIMENTS {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT {EXPERIMENT_COLUMNS} FROM experiments WHERE kind = $1
              ORDER BY created_at_ns DESC, id DESC"
        );
        self.read_tx(|db| db.query(&sql, &[&kind.as_str()], |r| experiment_of(r)))
    }

    fn update_experiment(
        &mut self,
        id: i64,
        state: &serde_json::Value,
        status: RunStatus,
    ) -> Result<()> {
        let state = state.to_string();
        self.write_tx(|db, _| {
            update_one(
                db,
                "UPDATE experiments SET state_json = $2, status = $3 WHERE id = $1",
                &[&id, &state, &status.as_str()],
                format!("experiment {id}"),
            )
        })
    }

    fn tag_run(&mut self, run_id: i64, tag: ExperimentTag) -> Result<()> {
        self.write_tx(|db, _| {
            update_one(
                db,
                "UPDATE runs SET experiment_id = $2, experiment_side = $3, experiment_round = $4
                  WHERE id = $1",
                &[
                    &run_id,
                    &tag.experiment_id,
                    &tag.arm.as_str(),
                    &i64::from(tag.round),
                ],
                format!("run {run_id}"),
            )
        })
    }

    fn run_tag(&self, run_id: i64) -> Result<Option<ExperimentTag>> {
        if self.version() < V_EXPERIMENTS {
            return Ok(None);
        }
        let tag = self.read_tx(|db| {
            db.query_opt(
                "SELECT experiment_id, experiment_side, experiment_round FROM runs WHERE id = $1",
                &[&run_id],
                |r| tag_of(r, 0),
            )
        })?;
        Ok(tag.flatten())
    }

    fn experiment_by_id(&self, id: i64) -> Result<Option<Experiment>> {
        experiment_where(self, "id = $1", &[&id])
    }

    fn save_calibration(&mut self, c: &StoredCalibration) -> Result<i64> {
        let (run_ids, model) = (to_json(&c.run_ids)?, c.model.to_string());
        self.write_tx(|db, _| {
            one(db.query_opt(
                "INSERT INTO calibrations (created_at_ns, label, hostname, run_ids_json, model_json)
                 VALUES ($1, $2, $3, $4, $5) RETURNING id",
                &[&c.created_at_ns, &c.label, &c.hostname, &run_ids, &model],
                |r| r.get(0),
            )?)
        })
    }

    fn calibrations(&self) -> Result<Vec<StoredCalibration>> {
        if self.version() < V_CALIBRATIONS {
            return Ok(Vec::new());
        }
        self.read_tx(|db| {
            db.query(
                "SELECT id, created_at_ns, label, hostname, run_ids_json, model_json
                   FROM calibrations ORDER BY created_at_ns DESC, id DESC",
                &[],
                |r| {
                    Ok(StoredCalibration {
                        id: Some(r.get(0)?),
                        created_at_ns: r.get(1)?,
                        label: r.get(2)?,
                        hostname: r.get(3)?,
                        run_ids: from_json(&r.get::<String>(4)?, "a calibration's runs")?,
                        model: from_json(&r.get::<String>(5)?, "a calibration")?,
                    })
                },
            )
        })
    }

    fn describe(&self) -> String {
        self.location()
    }

    fn run_provenance(&self, run_id: i64) -> Result<RunProvenance> {
        if self.version() < V_RUNS {
            return Err(no_run(run_id));
        }
        let sql = format!(
            "SELECT {}, status, error, {}, {} FROM runs WHERE id = $1",
            if self.version() >= V_RUN_UUID {
                "CAST(uuid AS TEXT)"
            } else {
                "NULL"
            },
            owner_columns(self.version(), ""),
            if self.version() >= V_EXPERIMENTS {
                "experiment_id, experiment_side, experiment_round"
            } else {
                "NULL, NULL, NULL"
            }
        );
        self.read_tx(|db| {
            db.query_opt(&sql, &[&run_id], |r| {
                Ok(RunProvenance {
                    uuid: r.get(0)?,
                    status: parse_status(&r.get::<String>(1)?)?,
                    error: r.get(2)?,
                    owner: StoredOwner {
                        pid: r.get(3)?,
                        start_ticks: r.get::<Option<i64>>(4)?.map(|t| t as u64),
                        boot_id: r.get(5)?,
                        host: r.get(6)?,
                    },
                    tag: tag_of(r, 7)?,
                })
            })?
            .ok_or_else(|| no_run(run_id))
        })
    }

    fn run_by_uuid(&self, uuid: &str) -> Result<Option<i64>> {
        // No stored uuid is other than a uuid's text, and PostgreSQL refuses to compare one.
        if self.version() < V_RUN_UUID || uuid::Uuid::parse_str(uuid).is_err() {
            return Ok(None);
        }
        self.read_tx(|db| run_id_by_uuid(db, uuid))
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
        let new = NewRun::new(
            &run.plan,
            &run.fingerprint,
            (run.started_at_ns, run.ended_at_ns),
            provenance,
        )?;
        let experiment = match (experiment_id, &provenance.tag) {
            (Some(id), Some(tag)) => Some((id, tag.arm.as_str(), i64::from(tag.round))),
            _ => None,
        };
        let case_errors: Vec<Option<&str>> = run.cases.iter().map(|c| c.error.as_deref()).collect();
        let copied = self.write_tx(|db, _| {
            // Another writer may copy the same run at the same moment: the unique uuid decides,
            // and the loser stores nothing.
            if run_id_by_uuid(db, uuid)?.is_some() {
                return Ok(None);
            }
            let (run_id, case_ids) = new.insert(db, experiment, &case_errors)?;
            for (case_id, case) in case_ids.into_iter().zip(&run.cases) {
                for iteration in &case.iterations {
                    insert_iteration(db, case_id, iteration)?;
                }
            }
            Ok(Some(run_id))
        });
        match copied {
            Err(e) if B::is_duplicate_uuid(&e) => Ok(None),
            other => other,
        }
    }
}
