//! The report model: runs as users read them — each case's metrics with every iteration's value
//! and a summary (median, min, max, std%) over the measured iterations, and for a matrix the
//! same medians arranged per scaling series. All formats render this.
use serde::Serialize;

use schedlab_analysis::scaling::{group, Grouping};
use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::metric::{Better, MetricShape, Role};
use schedlab_core::record::{CaseRecord, RunRecord, RunStatus};
use schedlab_stats::summary::{summarize, Summary};

use crate::latency::{latency_tables, LatencyTable};
use schedlab_core::workload::wakeup::latency::PerMille;

/// Bumped whenever a field is renamed or removed (adding fields keeps the version); see
/// docs/json-schema.md.
pub const SCHEMA_VERSION: u32 = 1;

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
    pub cases: Vec<CaseView>,
    /// The run's cases that differ in one numeric parameter, as tables against it; absent when
    /// there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scaling: Vec<RunScaling>,
}

/// One scaling series of a run (see `schedlab_analysis::scaling::group`): per case, in the
/// parameter's order, each primary metric's median and std% over the measured iterations — the
/// numbers the case tables print, side by side.
#[derive(Debug, Clone, Serialize)]
pub struct RunScaling {
    #[serde(flatten)]
    pub grouping: Grouping,
    pub metrics: Vec<RunScalingMetric>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunScalingMetric {
    pub metric: String,
    pub unit: String,
    pub better: Better,
    /// Per case of the series; null where the case has no measured iteration of the metric.
    pub median: Vec<Option<f64>>,
    /// Per case: the iterations' std% (null with fewer than two).
    pub std_pct: Vec<Option<f64>>,
}

impl RunScaling {
    fn of(listed: &[&CaseRecord], cases: &[CaseView]) -> Vec<RunScaling> {
        group(listed.iter().map(|c| &c.spec))
            .into_iter()
            .map(|grouping| {
                let members: Vec<Option<&CaseView>> = grouping
                    .cases
                    .iter()
                    .map(|name| cases.iter().find(|c| c.name == *name))
                    .collect();
                let mut metrics: Vec<RunScalingMetric> = Vec::new();
                for view in members.iter().flatten() {
                    for m in view.metrics.iter().filter(|m| m.role == Role::Primary) {
                        if metrics.iter().any(|x| x.metric == m.name) {
                            continue;
                        }
                        let summaries: Vec<Option<&Summary>> = members
                            .iter()
                            .map(|c| {
                                c.and_then(|c| c.metrics.iter().find(|x| x.name == m.name))
                                    .and_then(|x| x.summary.as_ref())
                            })
                            .collect();
                        metrics.push(RunScalingMetric {
                            metric: m.name.clone(),
                            unit: m.unit.clone(),
                            better: m.better,
                            median: summaries.iter().map(|s| s.map(|s| s.median)).collect(),
                            std_pct: summaries
                                .iter()
                                .map(|s| s.and_then(|s| s.std_pct))
                                .collect(),
                        });
                    }
                }
                RunScaling { grouping, metrics }
            })
            .collect()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct CaseView {
    pub name: String,
    pub workload: String,
    /// The workload's parameters, as in suite files.
    pub params: serde_json::Value,
    pub measured_iterations: usize,
    pub warmup_iterations: usize,
    /// Why the case failed; absent for a case that completed or never ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub metrics: Vec<MetricView>,
    /// schbench-style percentile tables (with sample counts) decoded from the latency histograms
    /// the measured iterations stored, merged; absent for workloads that store none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latency_tables: Vec<LatencyTable>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricView {
    pub name: String,
    pub unit: String,
    pub better: Better,
    pub role: Role,
    /// What one value is, written as its name (`scalar`, `count`, `quantile`, `max`).
    #[serde(serialize_with = "shape_name")]
    pub shape: MetricShape,
    /// The percentile of a quantile (99.9); absent for the other shapes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantile_p: Option<f64>,
    /// What a quantile or max summarises (`wakeup`); absent for the other shapes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub distribution: Option<String>,
    /// One value per measured iteration, in order.
    pub values: Vec<f64>,
    /// One value per warm-up iteration (not summarised).
    pub warmup_values: Vec<f64>,
    /// Over `values`; absent when no measured iteration finished.
    pub summary: Option<Summary>,
}

fn shape_name<S: serde::Serializer>(shape: &MetricShape, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(shape.as_str())
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
            schema_version: SCHEMA_VERSION,
            runs: runs
                .iter()
                .map(|run| RunView::new(run, percentiles))
                .collect(),
        }
    }
}

impl RunView {
    fn new(run: &RunRecord, percentiles: Option<&[PerMille]>) -> Self {
        let listed = run.cases_as_listed();
        let cases: Vec<CaseView> = listed
            .iter()
            .map(|case| CaseView::new(case, percentiles))
            .collect();
        RunView {
            scaling: RunScaling::of(&listed, &cases),
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

impl CaseView {
    fn new(case: &CaseRecord, percentiles: Option<&[PerMille]>) -> Self {
        let mut metrics: Vec<MetricView> = Vec::new();
        for iteration in &case.iterations {
            for m in &iteration.measurements {
                let view = match metrics.iter_mut().find(|v| v.name == m.name) {
                    Some(view) => view,
                    None => {
                        metrics.push(MetricView {
                            name: m.name.clone(),
                            unit: m.unit.clone(),
                            better: m.better,
                            role: m.role,
                            shape: m.shape,
                            quantile_p: m.shape.p(),
                            distribution: m.distribution.clone(),
                            values: Vec::new(),
                            warmup_values: Vec::new(),
                            summary: None,
                        });
                        metrics.last_mut().expect("just pushed")
                    }
                };
                if iteration.warmup {
                    view.warmup_values.push(m.value);
                } else {
                    view.values.push(m.value);
                }
            }
        }
        // Primary metrics first, each group in the order the workload reported them.
        metrics.sort_by_key(|m| m.role == Role::Secondary);
        for m in &mut metrics {
            m.summary = summarize(&m.values).ok();
        }
        CaseView {
            name: case.spec.name.clone(),
            workload: case.spec.workload.kind().to_string(),
            params: params_of(case),
            measured_iterations: case.measured().count(),
            warmup_iterations: case.iterations.iter().filter(|i| i.warmup).count(),
            error: case.error.clone(),
            metrics,
            latency_tables: latency_tables(case, percentiles),
        }
    }
}

fn params_of(case: &CaseRecord) -> serde_json::Value {
    let mut value = serde_json::to_value(&case.spec.workload).unwrap_or(serde_json::Value::Null);
    if let Some(map) = value.as_object_mut() {
        map.remove("workload");
    }
    value
}
