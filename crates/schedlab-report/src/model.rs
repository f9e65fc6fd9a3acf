//! The report model: runs as users read them — the run's header and machine, and its cases as
//! the analysis summarised them ([`schedlab_analysis::case_summary`]: each metric's every
//! iteration's value and a summary over the measured ones, the schbench-style tables, and for a
//! matrix the same medians per scaling series). All formats render this.
use serde::Serialize;

use schedlab_analysis::case_summary::{summarise_cases, CaseSummary, RunScaling};
use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::latency::PerMille;
use schedlab_core::record::{RunRecord, RunStatus};

/// The version of the envelope every other JSON output shares (lists under a key of their own).
/// Bumped whenever a field is renamed or removed (adding fields keeps the version); see
/// docs/json-schema.md.
pub const SCHEMA_VERSION: u32 = 1;

/// The version of `run`'s and `show`'s document: 2 since a case's `background` became a list of
/// workloads (it was one scenario's keys).
pub const RUN_SCHEMA_VERSION: u32 = 2;

#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub schema_version: u32,
    pub runs: Vec<RunView>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunView {
    pub id: Option<i64>,
    pub label: Option<String>,
    pub suite: Option<String>,
    pub status: RunStatus,
    pub error: Option<String>,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub ended_at: Option<String>,
    pub iterations: u32,
    pub warmup: u32,
    /// The seed the cases were shuffled with, when they ran in random order; `cases` are listed
    /// in the plan's order all the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub order_seed: Option<u64>,
    pub fingerprint: Fingerprint,
    /// In the order the plan listed them ([`RunRecord::cases_as_listed`]).
    pub cases: Vec<CaseSummary>,
    /// The run's cases that differ in one numeric parameter, as tables against it; absent when
    /// there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scaling: Vec<RunScaling>,
}

pub fn format_time_ns(ns: i64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns.max(0) as u64);
    humantime::format_rfc3339_seconds(time).to_string()
}

impl RunReport {
    pub fn new(runs: &[RunRecord]) -> Self {
        Self::with_percentiles(runs, None)
    }

    /// As [`RunReport::new`], with the latency tables at `percentiles` (ascending) instead of
    /// schbench's.
    pub fn with_percentiles(runs: &[RunRecord], percentiles: Option<&[PerMille]>) -> Self {
        RunReport {
            schema_version: RUN_SCHEMA_VERSION,
            runs: runs
                .iter()
                .map(|run| RunView::new(run, percentiles))
                .collect(),
        }
    }
}

impl RunView {
    fn new(run: &RunRecord, percentiles: Option<&[PerMille]>) -> Self {
        let (cases, scaling) = summarise_cases(run, percentiles);
        RunView {
            scaling,
            id: run.id,
            label: run.label.clone(),
            suite: run.plan.suite.clone(),
            status: run.status,
            error: run.error.clone(),
            started_at: format_time_ns(run.started_at_ns),
            ended_at: run.ended_at_ns.map(format_time_ns),
            iterations: run.plan.iterations,
            warmup: run.plan.warmup,
            order_seed: run.plan.order_seed,
            fingerprint: run.fingerprint.clone(),
            cases,
        }
    }
}
