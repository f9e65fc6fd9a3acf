//! What the store hands back and takes besides runs themselves: a line of `schedlab runs`, a run's
//! provenance, a calibration, an experiment, and the reader's filter of measurements.
use schedlab_core::metric::{MetricShape, Role};
use schedlab_core::record::{ExperimentTag, RunStatus};

use crate::error::{Result, StoreError};
use crate::liveness;

/// Whether a reader wants a stored measurement, by its (current) name, role and shape: decided on
/// each stored row before anything of it is copied.
pub type KeepMeasurement<'a> = dyn Fn(&str, Role, MetricShape) -> bool + 'a;

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

/// Refuses to store `abandoned`, which every backend derives when runs are read.
pub(crate) fn refuse_derived_status(status: RunStatus) -> Result<()> {
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
