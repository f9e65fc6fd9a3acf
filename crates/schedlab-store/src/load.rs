//! Reading one run back: its row, its cases (every one, or those of one name), their iterations
//! with the measurements a reader keeps and (from V2) their attachments — six queries for the whole
//! run, however many iterations it has — and its status as a reader judges it ([`crate::liveness`]).
use std::collections::HashMap;

use schedlab_core::metric::{Better, Measurement, MetricShape, Role};
use schedlab_core::quiet::{Disturbance, QuietMark};
use schedlab_core::record::{Attachment, CaseRecord, IterationRecord, RunRecord, RunStatus};

use crate::liveness::{effective_status, Here, Silence, StoredOwner};
use crate::rows::{from_json, no_run, owner_columns, owner_of, parse_status};
use crate::schema::{V_ATTACHMENTS, V_METRIC_DEFS, V_QUIET, V_RUN_OWNER};
use crate::sql::{Db, SqlRow};
use crate::{KeepMeasurement, Result, StoreError};

/// What [`Store::load_run`] keeps of a run's measurements: every one.
pub(crate) fn every(_name: &str, _role: Role, _shape: MetricShape) -> bool {
    true
}

/// What of a run to read.
pub(crate) struct RunLoad<'a> {
    /// Only the cases of this name; every case when `None`.
    pub(crate) case: Option<&'a str>,
    /// The measurements to keep ([`every`] for all).
    pub(crate) keep: &'a KeepMeasurement<'a>,
    /// Whether to read the attachments (serialized histograms, the bulk of a latency run).
    pub(crate) attachments: bool,
}

impl RunLoad<'_> {
    /// The whole run.
    pub(crate) const WHOLE: RunLoad<'static> = RunLoad {
        case: None,
        keep: &every,
        attachments: true,
    };
}

/// One run as `what` says, its status derived as every reader derives it.
pub(crate) fn load_run_in<D: Db>(
    db: &mut D,
    version: i64,
    run_id: i64,
    what: &RunLoad<'_>,
    here: &Here,
) -> Result<RunRecord> {
    let (run, owner) = run_row(db, version, run_id)?;
    let mut iterations = iterations_by_case(db, version, run_id, what)?;
    let cases = cases_of(db, version, run_id, what.case, &mut iterations)?;
    judged(
        db,
        RunRecord { cases, ..run },
        &owner,
        what.case.is_some(),
        here,
    )
}

/// The run's own row, without its cases, and its owner.
fn run_row<D: Db>(db: &mut D, version: i64, run_id: i64) -> Result<(RunRecord, StoredOwner)> {
    let run_sql = format!(
        "SELECT label, plan_json, fingerprint_json, started_at_ns, ended_at_ns, status, error,
                hostname, {}, boot_id
           FROM runs WHERE id = $1",
        owner_columns(version, "")
    );
    db.query_opt(&run_sql, &[&run_id], |r| {
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
    .ok_or_else(|| no_run(run_id))
}

/// The iterations of the run's cases (those `what` names), by case id, in order, each with its
/// measurements and attachments.
fn iterations_by_case<D: Db>(
    db: &mut D,
    version: i64,
    run_id: i64,
    what: &RunLoad<'_>,
) -> Result<HashMap<i64, Vec<IterationRecord>>> {
    let mut measurements = measurements_by_iteration(db, version, run_id, what)?;
    let mut attachments = if what.attachments && version >= V_ATTACHMENTS {
        attachments_by_iteration(db, run_id, what.case)?
    } else {
        HashMap::new()
    };
    let mut quiet = if version >= V_QUIET {
        quiet_by_iteration(db, run_id, what.case)?
    } else {
        HashMap::new()
    };
    let iteration_rows = db.query(
        &format!(
            "SELECT i.case_id, i.id, i.position, i.warmup, i.started_at_ns
               FROM iterations i JOIN cases c ON i.case_id = c.id
              WHERE c.run_id = $1 AND {THE_CASE} ORDER BY i.case_id, i.position"
        ),
        &[&run_id, &what.case],
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
    let mut iterations: HashMap<i64, Vec<IterationRecord>> = HashMap::new();
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
                quiet: quiet.remove(&iteration_id),
            });
    }
    Ok(iterations)
}

/// The measurements `what` keeps of the run's cases, by iteration id, in the order stored.
fn measurements_by_iteration<D: Db>(
    db: &mut D,
    version: i64,
    run_id: i64,
    what: &RunLoad<'_>,
) -> Result<HashMap<i64, Vec<Measurement>>> {
    let definitions = definitions(db, version, run_id, what.case)?;
    let sql = of_iterations_in_order::<D>(
        "i.case_id, x.iteration_id, x.name, x.unit, x.better, x.role, x.value",
        "measurements",
    );
    let rows = db.query(&sql, &[&run_id, &what.case], |r| {
        let iteration_id = r.get::<i64>(1)?;
        let name = r.str_at(2)?;
        let definition = definitions
            .get(&r.get::<i64>(0)?)
            .and_then(|metrics| metrics.get(name));
        Ok(measurement_of(r, 2, definition, what.keep)?.map(|m| (iteration_id, m)))
    })?;
    Ok(by_iteration(rows.into_iter().flatten()))
}

/// The quiet-machine guard's marks of the run's iterations (only those of cases named `case`), by
/// iteration id; an iteration run without the guard has none.
fn quiet_by_iteration<D: Db>(
    db: &mut D,
    run_id: i64,
    case: Option<&str>,
) -> Result<HashMap<i64, QuietMark>> {
    let sql = of_iterations(
        "x.iteration_id, x.limit_pct, x.waited_ns, x.before_pct, x.disturbed",
        "iteration_quiet",
    );
    let rows = db.query(&sql, &[&run_id, &case], |r| {
        let disturbed = match r.get::<Option<String>>(4)? {
            None => None,
            Some(text) => Some(Disturbance::parse(&text).ok_or_else(|| {
                StoreError::Corrupt(format!("iteration_quiet.disturbed {text:?}"))
            })?),
        };
        let mark = QuietMark {
            limit_pct: r.get(1)?,
            waited_ns: u64::try_from(r.get::<i64>(2)?).unwrap_or(0),
            before_pct: r.get(3)?,
            disturbed,
        };
        Ok((r.get::<i64>(0)?, mark))
    })?;
    Ok(rows.into_iter().collect())
}

/// The attachments of the run's cases (only those named `case`), by iteration id, in order.
fn attachments_by_iteration<D: Db>(
    db: &mut D,
    run_id: i64,
    case: Option<&str>,
) -> Result<HashMap<i64, Vec<Attachment>>> {
    let sql =
        of_iterations_in_order::<D>("x.iteration_id, x.name, x.encoding, x.data", "attachments");
    let rows = db.query(&sql, &[&run_id, &case], |r| {
        let attachment = Attachment {
            name: r.get(1)?,
            encoding: r.get(2)?,
            data: r.get(3)?,
        };
        Ok((r.get::<i64>(0)?, attachment))
    })?;
    Ok(by_iteration(rows))
}

/// The query of `columns` (of `table`, as `x`) from the rows that belong to iterations of the
/// run `$1`'s cases (only those named `$2` when it is not null).
fn of_iterations(columns: &str, table: &str) -> String {
    format!(
        "SELECT {columns}
           FROM {table} x
           JOIN iterations i ON x.iteration_id = i.id
           JOIN cases c ON i.case_id = c.id
          WHERE c.run_id = $1 AND {THE_CASE}"
    )
}

/// [`of_iterations`] in the order the rows were stored.
fn of_iterations_in_order<D: Db>(columns: &str, table: &str) -> String {
    format!(
        "{} ORDER BY x.{}",
        of_iterations(columns, table),
        D::ROW_ORDER
    )
}

/// Rows gathered per iteration id, each iteration's in the order given.
fn by_iteration<T>(rows: impl IntoIterator<Item = (i64, T)>) -> HashMap<i64, Vec<T>> {
    let mut grouped: HashMap<i64, Vec<T>> = HashMap::new();
    for (iteration_id, row) in rows {
        grouped.entry(iteration_id).or_default().push(row);
    }
    grouped
}

/// The run's cases (only those named `case`) in the order they ran, each with its iterations
/// taken from `iterations`.
fn cases_of<D: Db>(
    db: &mut D,
    version: i64,
    run_id: i64,
    case: Option<&str>,
    iterations: &mut HashMap<i64, Vec<IterationRecord>>,
) -> Result<Vec<CaseRecord>> {
    let case_error = if version >= V_RUN_OWNER {
        "error"
    } else {
        "NULL"
    };
    let case_sql = format!(
        "SELECT id, spec_json, {case_error} FROM cases c
          WHERE run_id = $1 AND {THE_CASE} ORDER BY position"
    );
    db.query(&case_sql, &[&run_id, &case], |r| {
        Ok(CaseRecord {
            spec: from_json(&r.get::<String>(1)?, "a case")?,
            iterations: iterations.remove(&r.get::<i64>(0)?).unwrap_or_default(),
            error: r.get(2)?,
        })
    })
}

/// `run` with its status as readers derive it: a running run whose owner is gone, or which has
/// been silent too long, is abandoned, its error saying why. A running run is judged by when any
/// of its iterations started, not only those of the cases read (`partial`).
fn judged<D: Db>(
    db: &mut D,
    mut run: RunRecord,
    owner: &StoredOwner,
    partial: bool,
    here: &Here,
) -> Result<RunRecord> {
    let starts: Vec<i64> = if run.status != RunStatus::Running {
        Vec::new()
    } else if partial {
        db.query(
            "SELECT i.started_at_ns FROM iterations i JOIN cases c ON i.case_id = c.id
              WHERE c.run_id = $1",
            &[&run.id],
            |r| r.get::<i64>(0),
        )?
    } else {
        run.cases
            .iter()
            .flat_map(|c| c.iterations.iter().map(|i| i.started_at_ns))
            .collect()
    };
    let (status, abandoned) = effective_status(run.status, owner, here, || {
        Some(Silence::of(&run.plan, run.started_at_ns, &starts))
    });
    run.status = status;
    run.error = run.error.or(abandoned);
    Ok(run)
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
