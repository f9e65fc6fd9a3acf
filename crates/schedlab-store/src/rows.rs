//! How stored rows read back, for every query of either backend: JSON columns, statuses, a run's
//! owner columns (which older files lack) and the silence of running runs that liveness judges
//! them by; and the columns a measurement's definition is written to, which two tables share.
use std::collections::HashMap;

use schedlab_core::metric::Measurement;
use schedlab_core::plan::RunPlan;
use schedlab_core::record::RunStatus;

use crate::liveness::{Silence, StoredOwner};
use crate::schema::V_RUN_OWNER;
use crate::sql::{Db, Param, SqlRow};
use crate::{Result, StoreError};

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

pub(crate) fn no_run(run_id: i64) -> StoreError {
    StoreError::NotFound(format!("no run with id {run_id}"))
}

/// The row an insert `RETURNING` answers with.
pub(crate) fn one<T>(row: Option<T>) -> Result<T> {
    row.ok_or_else(|| StoreError::Corrupt("an insert returned no row".into()))
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

/// A measurement's definition as the `metrics` and `probe_measurements` tables keep it: name,
/// unit, better, role, shape, quantile_p and distribution, in that order.
pub(crate) struct DefinitionColumns<'a> {
    measurement: &'a Measurement,
    better: &'static str,
    role: &'static str,
    shape: &'static str,
    quantile_p: Option<f64>,
}

impl<'a> DefinitionColumns<'a> {
    pub(crate) fn of(measurement: &'a Measurement) -> Self {
        DefinitionColumns {
            measurement,
            better: measurement.better.as_str(),
            role: measurement.role.as_str(),
            shape: measurement.shape.as_str(),
            quantile_p: measurement.shape.p(),
        }
    }

    pub(crate) fn params(&self) -> [&dyn Param; 7] {
        [
            &self.measurement.name,
            &self.measurement.unit,
            &self.better,
            &self.role,
            &self.shape,
            &self.quantile_p,
            &self.measurement.distribution,
        ]
    }
}
