//! Probed and profiled iterations (`--explain`, `--profile`; V10): written and read apart from the
//! measured iterations, in tables of their own, so that nothing that reads `iterations` — every
//! comparison, history and calibration — can take one for a measured iteration. Each metric row
//! describes itself (unit, direction, role, shape) and names its task group ('' for all the
//! workload's tasks, or the whole machine).
use std::collections::HashMap;

use schedlab_core::attachment::Attachment;
use schedlab_core::metric::{Better, Measurement, MetricShape, Role};
use schedlab_core::probe::{
    GroupAttachment, Origin, ProbeKind, ProbeMeasurement, ProbeRecord, ProfileSymbol, Unavailable,
};

use crate::rows::DefinitionColumns;
use crate::sql::{Db, Param, SqlRow};
use crate::{Result, StoreError};

/// The schema version that brought these tables.
pub const V_PROBES: i64 = 10;

fn group_column(group: &Option<String>) -> &str {
    group.as_deref().unwrap_or("")
}

/// Inserts one probe iteration of the case `case_id` with everything it measured.
pub(crate) fn insert_probe(db: &mut impl Db, case_id: i64, probe: &ProbeRecord) -> Result<()> {
    let id = db
        .query_opt(
            "INSERT INTO probe_iterations (case_id, kind, position, started_at_ns)
             VALUES ($1, $2, $3, $4) RETURNING id",
            &[
                &case_id,
                &probe.kind.as_str(),
                &i64::from(probe.index),
                &probe.started_at_ns,
            ],
            |r| r.get::<i64>(0),
        )?
        .ok_or_else(|| StoreError::Corrupt("an insert returned no row".into()))?;
    let measured = probe.measurements.iter().map(|m| ("", m));
    let explanatory = probe
        .explanatory
        .iter()
        .map(|p| (group_column(&p.group), &p.measurement));
    for (group, m) in measured.chain(explanatory) {
        let definition = DefinitionColumns::of(m);
        db.execute(
            "INSERT INTO probe_measurements (probe_iteration_id, task_group, name, unit, better,
                                             role, shape, quantile_p, distribution, value)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
            &[
                &[&id as &dyn Param, &group],
                &definition.params()[..],
                &[&m.value],
            ]
            .concat(),
        )?;
    }
    for u in &probe.unavailable {
        db.execute(
            "INSERT INTO probe_unavailable (probe_iteration_id, probe, reason) VALUES ($1, $2, $3)
             ON CONFLICT (probe_iteration_id, probe) DO NOTHING",
            &[&id, &u.probe, &u.reason],
        )?;
    }
    for a in &probe.attachments {
        db.execute(
            "INSERT INTO probe_attachments (probe_iteration_id, task_group, name, encoding, data)
             VALUES ($1, $2, $3, $4, $5)",
            &[
                &id,
                &group_column(&a.group),
                &a.attachment.name,
                &a.attachment.encoding,
                &a.attachment.data,
            ],
        )?;
    }
    for s in &probe.symbols {
        db.execute(
            "INSERT INTO profile_symbols (probe_iteration_id, rank, symbol, module, origin,
                                          samples, share_pct)
             VALUES ($1, $2, $3, $4, $5, $6, $7)",
            &[
                &id,
                &i64::from(s.rank),
                &s.symbol,
                &s.module,
                &s.origin.as_str(),
                &(s.samples as i64),
                &s.share_pct,
            ],
        )?;
    }
    Ok(())
}

fn corrupt(what: &str, value: &str) -> StoreError {
    StoreError::Corrupt(format!("probe {what} {value:?}"))
}

fn group_of(text: String) -> Option<String> {
    (!text.is_empty()).then_some(text)
}

/// Every probe iteration of run `run_id`, each with its case's position, in case order, then
/// kind and position; none in a file older than V10.
pub(crate) fn load_probes_in<D: Db>(
    db: &mut D,
    version: i64,
    run_id: i64,
) -> Result<Vec<(usize, ProbeRecord)>> {
    if version < V_PROBES {
        return Ok(Vec::new());
    }
    let mut probes = RunProbes::new(load_probe_iterations(db, run_id)?);
    for (id, group, measurement) in load_probe_measurements(db, run_id)? {
        let Some(probe) = probes.get_mut(id) else {
            continue;
        };
        if measurement.role == Role::Explanatory {
            probe
                .explanatory
                .push(ProbeMeasurement { group, measurement });
        } else {
            probe.measurements.push(measurement);
        }
    }
    for (id, unavailable) in load_probe_unavailable(db, run_id)? {
        if let Some(probe) = probes.get_mut(id) {
            probe.unavailable.push(unavailable);
        }
    }
    for (id, attachment) in load_probe_attachments(db, run_id)? {
        if let Some(probe) = probes.get_mut(id) {
            probe.attachments.push(attachment);
        }
    }
    for (id, symbol) in load_profile_symbols(db, run_id)? {
        if let Some(probe) = probes.get_mut(id) {
            probe.symbols.push(symbol);
        }
    }
    Ok(probes
        .probes
        .into_iter()
        .map(|(_, case, probe)| (case, probe))
        .collect())
}

/// A run's probe iterations (`(row id, case position, record)`), found by row id as the rows of
/// the other probe tables join them.
struct RunProbes {
    probes: Vec<(i64, usize, ProbeRecord)>,
    index: HashMap<i64, usize>,
}

impl RunProbes {
    fn new(probes: Vec<(i64, usize, ProbeRecord)>) -> Self {
        let index = probes
            .iter()
            .enumerate()
            .map(|(i, (id, _, _))| (*id, i))
            .collect();
        RunProbes { probes, index }
    }

    fn get_mut(&mut self, id: i64) -> Option<&mut ProbeRecord> {
        let &i = self.index.get(&id)?;
        Some(&mut self.probes[i].2)
    }
}

/// What joins a probe table's rows (`x`) to run `$1`.
const OF_RUN: &str = "JOIN probe_iterations p ON x.probe_iteration_id = p.id
                  JOIN cases c ON p.case_id = c.id WHERE c.run_id = $1";

/// A probe table's rows in insertion order: SQLite's rowid, PostgreSQL's id column.
fn insertion_order<D: Db>() -> String {
    format!("x.{}", D::ROW_ORDER)
}

/// Run `run_id`'s probe iterations, as `(row id, case position, record)` with nothing measured
/// yet, in case order, then kind and position.
fn load_probe_iterations<D: Db>(db: &mut D, run_id: i64) -> Result<Vec<(i64, usize, ProbeRecord)>> {
    db.query(
        "SELECT p.id, c.position, p.kind, p.position, p.started_at_ns
           FROM probe_iterations p JOIN cases c ON p.case_id = c.id
          WHERE c.run_id = $1 ORDER BY c.position, p.kind, p.position",
        &[&run_id],
        |r| {
            let kind = r.str_at(2)?;
            Ok((
                r.get::<i64>(0)?,
                r.get::<i64>(1)? as usize,
                ProbeRecord {
                    kind: ProbeKind::parse(kind).ok_or_else(|| corrupt("kind", kind))?,
                    index: r.get::<i64>(3)? as u32,
                    started_at_ns: r.get(4)?,
                    measurements: Vec::new(),
                    explanatory: Vec::new(),
                    unavailable: Vec::new(),
                    attachments: Vec::new(),
                    symbols: Vec::new(),
                },
            ))
        },
    )
}

/// Run `run_id`'s probe measurements, as `(probe iteration id, task group, measurement)`.
fn load_probe_measurements<D: Db>(
    db: &mut D,
    run_id: i64,
) -> Result<Vec<(i64, Option<String>, Measurement)>> {
    let order = insertion_order::<D>();
    db.query(
        &format!(
            "SELECT x.probe_iteration_id, x.task_group, x.name, x.unit, x.better, x.role, x.shape,
                    x.quantile_p, x.distribution, x.value
               FROM probe_measurements x {OF_RUN} ORDER BY {order}"
        ),
        &[&run_id],
        |r| {
            let (better, role, shape) = (r.str_at(4)?, r.str_at(5)?, r.str_at(6)?);
            let measurement = Measurement {
                name: r.get(2)?,
                unit: r.get(3)?,
                better: Better::parse(better).ok_or_else(|| corrupt("direction", better))?,
                role: Role::parse(role).ok_or_else(|| corrupt("role", role))?,
                shape: MetricShape::parse(shape, r.get(7)?)
                    .ok_or_else(|| corrupt("shape", shape))?,
                distribution: r.get(8)?,
                value: r.get(9)?,
            };
            Ok((r.get::<i64>(0)?, group_of(r.get(1)?), measurement))
        },
    )
}

/// Run `run_id`'s probes that could not measure, as `(probe iteration id, why)`.
fn load_probe_unavailable<D: Db>(db: &mut D, run_id: i64) -> Result<Vec<(i64, Unavailable)>> {
    let order = insertion_order::<D>();
    db.query(
        &format!("SELECT x.probe_iteration_id, x.probe, x.reason FROM probe_unavailable x {OF_RUN} ORDER BY {order}"),
        &[&run_id],
        |r| {
            Ok((
                r.get::<i64>(0)?,
                Unavailable {
                    probe: r.get(1)?,
                    reason: r.get(2)?,
                },
            ))
        },
    )
}

/// Run `run_id`'s probe attachments, as `(probe iteration id, attachment)`.
fn load_probe_attachments<D: Db>(db: &mut D, run_id: i64) -> Result<Vec<(i64, GroupAttachment)>> {
    let order = insertion_order::<D>();
    db.query(
        &format!(
            "SELECT x.probe_iteration_id, x.task_group, x.name, x.encoding, x.data
               FROM probe_attachments x {OF_RUN} ORDER BY {order}"
        ),
        &[&run_id],
        |r| {
            Ok((
                r.get::<i64>(0)?,
                GroupAttachment {
                    group: group_of(r.get(1)?),
                    attachment: Attachment {
                        name: r.get(2)?,
                        encoding: r.get(3)?,
                        data: r.get(4)?,
                    },
                },
            ))
        },
    )
}

/// Run `run_id`'s profiles' symbols, as `(probe iteration id, symbol)`, by rank.
fn load_profile_symbols<D: Db>(db: &mut D, run_id: i64) -> Result<Vec<(i64, ProfileSymbol)>> {
    db.query(
        &format!(
            "SELECT x.probe_iteration_id, x.rank, x.symbol, x.module, x.origin, x.samples,
                    x.share_pct
               FROM profile_symbols x {OF_RUN} ORDER BY x.probe_iteration_id, x.rank"
        ),
        &[&run_id],
        |r| {
            let origin = r.str_at(4)?;
            Ok((
                r.get::<i64>(0)?,
                ProfileSymbol {
                    rank: r.get::<i64>(1)? as u32,
                    symbol: r.get(2)?,
                    module: r.get(3)?,
                    origin: Origin::parse(origin).ok_or_else(|| corrupt("origin", origin))?,
                    samples: r.get::<i64>(5)? as u64,
                    share_pct: r.get(6)?,
                },
            ))
        },
    )
}
