//! The [`Store`] both backends are: every query, guard and row mapping written once over
//! [`Db`], so a backend says only how it opens, reads and writes a transaction ([`Backend`]).
//!
//! A reader may hold an SQLite file older than this schedlab (PostgreSQL arrived at V8 and is
//! always current): a table or column that came later reads as empty or NULL, by
//! [`Backend::version`].
use std::ops::ControlFlow;

use schedlab_core::estimate::MeasuredCase;
use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::metric::secondary;
use schedlab_core::plan::{CaseSpec, RunPlan};
use schedlab_core::record::{Arm, ExperimentTag, IterationRecord, RunOwner, RunRecord, RunStatus};

use crate::fleet;
use crate::liveness::{Here, StoredOwner};
use crate::load::{load_run_in, RunLoad};
use crate::rows::{
    from_json, no_run, one, owner_columns, parse_status, to_json, DefinitionColumns,
};
use crate::schema::{V_CALIBRATIONS, V_EXPERIMENTS, V_RUNS, V_RUN_UUID};
use crate::select::{HostSummary, RunSelection};
use crate::sql::{Db, Param, SqlRow};
use crate::summaries;
use crate::transactions::Backend;
use crate::{
    CaseSeries, Experiment, ExperimentKind, KeepMeasurement, Result, RunProvenance, RunSummary,
    SeriesQuery, Store, StoreError, StoredCalibration,
};

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
                               owner_host, experiment_id, experiment_side, experiment_round,
                               measured_by)
             VALUES ($1::text::uuid, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15,
                     $16, $17, $18, $19, $20, $21)
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
                &fingerprint.measured_by(),
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
        let definition = DefinitionColumns::of(m);
        db.execute(
            "INSERT INTO metrics (case_id, name, unit, better, role, shape, quantile_p, distribution)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
             ON CONFLICT (case_id, name) DO NOTHING",
            &[&[&case_id as &dyn Param], &definition.params()[..]].concat(),
        )?;
    }
    for a in &iteration.attachments {
        db.execute(
            "INSERT INTO attachments (iteration_id, name, encoding, data) VALUES ($1, $2, $3, $4)",
            &[&iteration_id, &a.name, &a.encoding, &a.data],
        )?;
    }
    if let Some(quiet) = &iteration.quiet {
        db.execute(
            "INSERT INTO iteration_quiet (iteration_id, limit_pct, waited_ns, before_pct, disturbed)
             VALUES ($1, $2, $3, $4, $5)",
            &[
                &iteration_id,
                &quiet.limit_pct,
                &i64::try_from(quiet.waited_ns).unwrap_or(i64::MAX),
                &quiet.before_pct,
                &quiet.disturbed.map(|d| d.as_str()),
            ],
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
            insert_iteration(db, case_id, iteration)?;
            // An iteration stored after its run ended (no command does, the trait allows it)
            // keeps the summaries current: readers trust an ended run's.
            let ended = db.query_opt(
                "SELECT status FROM runs WHERE id = $1 AND status <> 'running'",
                &[&run_id],
                |_| Ok(()),
            )?;
            if ended.is_some() {
                let case: String = db
                    .query_opt("SELECT name FROM cases WHERE id = $1", &[&case_id], |r| {
                        r.get(0)
                    })?
                    .unwrap_or_default();
                summaries::store_case(db, run_id, &case, &Here::now())?;
            }
            Ok(())
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
        let here = Here::now();
        self.write_tx(|db, _| {
            // The case it stopped in, and any whose iterations grew since, are summarised now.
            summaries::store_stale(db, run_id, &here)?;
            update_one(
                db,
                "UPDATE runs SET status = $2, ended_at_ns = $3, error = $4 WHERE id = $1",
                &[&run_id, &status.as_str(), &ended_at_ns, &error],
                format!("run {run_id}"),
            )
        })
    }

    fn summarise_case(&mut self, run_id: i64, case_index: usize) -> Result<()> {
        let here = Here::now();
        self.write_tx(|db, _| {
            let case: String = db
                .query_opt(
                    "SELECT name FROM cases WHERE run_id = $1 AND position = $2",
                    &[&run_id, &(case_index as i64)],
                    |r| r.get(0),
                )?
                .ok_or_else(|| {
                    StoreError::NotFound(format!("case {case_index} of run {run_id}"))
                })?;
            summaries::store_case(db, run_id, &case, &here)
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
        self.select_runs(&RunSelection::default(), limit)
    }

    /// Host, kernel, time, run ids and case in SQL, fingerprint fields through a JSON condition
    /// confirmed on the stored fingerprint (no iteration is read); answers as
    /// [`crate::defaults::select_runs_default`] does.
    fn select_runs(
        &self,
        selection: &RunSelection,
        limit: Option<usize>,
    ) -> Result<Vec<RunSummary>> {
        self.read_tx(|db| {
            let filter = fleet::RunFilter::of(selection, fleet::dialect_of(db));
            fleet::list(db, self.version(), &filter, selection, limit)
        })
    }

    fn hosts(&self) -> Result<Vec<HostSummary>> {
        self.read_tx(|db| fleet::hosts(db, self.version()))
    }

    fn fingerprint(&self, run_id: i64) -> Result<Fingerprint> {
        if self.version() < V_RUNS {
            return Err(no_run(run_id));
        }
        self.read_tx(|db| fleet::fingerprint(db, run_id))
    }

    fn case_series(
        &self,
        query: &SeriesQuery,
        visit: &mut dyn FnMut(CaseSeries) -> ControlFlow<()>,
    ) -> Result<()> {
        fleet::case_series(self, query, visit)
    }

    fn load_run(&self, run_id: i64) -> Result<RunRecord> {
        if self.version() < V_RUNS {
            return Err(no_run(run_id));
        }
        let here = Here::now();
        self.read_tx(|db| load_run_in(db, self.version(), run_id, &RunLoad::WHOLE, &here))
    }

    fn load_run_keeping(&self, run_id: i64, keep: &KeepMeasurement<'_>) -> Result<RunRecord> {
        if self.version() < V_RUNS {
            return Err(no_run(run_id));
        }
        let here = Here::now();
        let what = RunLoad {
            case: None,
            keep,
            attachments: true,
        };
        self.read_tx(|db| load_run_in(db, self.version(), run_id, &what, &here))
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
        let summarised = summaries::of_run(run);
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
            for (case, summaries) in &summarised {
                summaries::write(db, run_id, case, summaries)?;
            }
            Ok(Some(run_id))
        });
        match copied {
            Err(e) if B::is_duplicate_uuid(&e) => Ok(None),
            other => other,
        }
    }
}
