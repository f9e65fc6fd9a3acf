//! One stored run's cases as `run` and `show` print them: each metric's values per iteration and
//! their summary (median, min, max, std%) over the measured iterations, the schbench-style tables
//! of a wakeup case ([`crate::latency_table`]), and for a matrix the same medians arranged per
//! scaling series. The run report renders these; it computes none of them.
use serde::Serialize;

use schedlab_core::latency::PerMille;
use schedlab_core::metric::{Better, MetricShape, Role};
use schedlab_core::record::{CaseRecord, RunRecord};
use schedlab_stats::summary::{summarize, Summary};

use crate::grouping::{group, Grouping};
use crate::latency_table::{latency_tables, LatencyTable};

#[derive(Debug, Clone, Serialize)]
pub struct CaseSummary {
    pub name: String,
    pub workload: String,
    /// The workload's parameters, as in suite files.
    pub params: serde_json::Value,
    /// The co-runners run beside every iteration (a suite case's `background`, `run
    /// --background`), each a workload with its parameters as stored.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub background: Vec<serde_json::Value>,
    pub measured_iterations: usize,
    pub warmup_iterations: usize,
    /// Why the case failed; absent for a case that completed or never ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub metrics: Vec<MetricSummary>,
    /// schbench-style percentile tables (with sample counts) decoded from the latency histograms
    /// the measured iterations stored, merged; absent for workloads that store none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub latency_tables: Vec<LatencyTable>,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetricSummary {
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

/// One scaling series of a run (see [`group`]): per case, in the parameter's order, each primary
/// metric's median and std% over the measured iterations — the numbers the case tables print,
/// side by side.
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

/// A run's cases in the order its plan listed them ([`RunRecord::cases_as_listed`]), and the
/// scaling series among them; `percentiles` (ascending), when given, replace schbench's in the
/// latency tables.
pub fn summarise_cases(
    run: &RunRecord,
    percentiles: Option<&[PerMille]>,
) -> (Vec<CaseSummary>, Vec<RunScaling>) {
    let listed = run.cases_as_listed();
    let cases: Vec<CaseSummary> = listed
        .iter()
        .map(|case| CaseSummary::of(case, percentiles))
        .collect();
    let scaling = RunScaling::of(&listed, &cases);
    (cases, scaling)
}

impl RunScaling {
    fn of(listed: &[&CaseRecord], cases: &[CaseSummary]) -> Vec<RunScaling> {
        group(listed.iter().map(|c| &c.spec))
            .into_iter()
            .map(|grouping| {
                let members: Vec<Option<&CaseSummary>> = grouping
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

impl CaseSummary {
    pub fn of(case: &CaseRecord, percentiles: Option<&[PerMille]>) -> Self {
        let mut metrics: Vec<MetricSummary> = Vec::new();
        for iteration in &case.iterations {
            for m in &iteration.measurements {
                let view = match metrics.iter_mut().find(|v| v.name == m.name) {
                    Some(view) => view,
                    None => {
                        metrics.push(MetricSummary {
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
                        let last = metrics.len() - 1;
                        &mut metrics[last]
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
        CaseSummary {
            name: case.spec.name.clone(),
            workload: case.spec.workload.kind().to_string(),
            params: params_of(case),
            background: case
                .spec
                .background
                .iter()
                .filter_map(|b| serde_json::to_value(b).ok())
                .collect(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{record, PRIMARY, SECONDARY};
    use schedlab_core::record::RunStatus;

    fn metric<'a>(case: &'a CaseSummary, name: &str) -> &'a MetricSummary {
        case.metrics.iter().find(|m| m.name == name).unwrap()
    }

    #[test]
    fn summarises_the_measured_iterations_and_keeps_warm_ups_apart() {
        // testutil's runs start each case with a warm-up at 1e9, which no summary may see.
        let run = record(
            1,
            "boot",
            RunStatus::Complete,
            &[("c", &[3.0, 1.0, 2.0, 6.0])],
        );
        let (cases, scaling) = summarise_cases(&run, None);
        assert!(scaling.is_empty());
        let case = &cases[0];
        assert_eq!((case.measured_iterations, case.warmup_iterations), (4, 1));
        let names: Vec<&str> = case.metrics.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, [PRIMARY, SECONDARY], "primary first");
        let m = metric(case, PRIMARY);
        assert_eq!(m.values, [3.0, 1.0, 2.0, 6.0]);
        assert_eq!(m.warmup_values, [1e9]);
        let s = m.summary.unwrap();
        assert_eq!((s.median, s.min, s.max, s.mean), (2.5, 1.0, 6.0, 3.0));
        // sd of 3, 1, 2, 6 is √(14 / 3).
        let std_pct = s.std_pct.unwrap();
        assert!((std_pct - (14.0f64 / 3.0).sqrt() / 3.0 * 100.0).abs() < 1e-9);
    }

    #[test]
    fn one_iteration_has_no_spread_and_none_has_no_summary() {
        let run = record(
            1,
            "boot",
            RunStatus::Complete,
            &[("one", &[4.0]), ("none", &[])],
        );
        let (cases, _) = summarise_cases(&run, None);
        let one = metric(&cases[0], PRIMARY).summary.unwrap();
        assert_eq!((one.median, one.min, one.max), (4.0, 4.0, 4.0));
        assert_eq!(one.std_pct, None);
        // Only the warm-up gave the metric a value: it is listed, with nothing to summarise.
        let none = metric(&cases[1], PRIMARY);
        assert!(none.values.is_empty());
        assert!(none.summary.is_none());
        assert!(cases[1].latency_tables.is_empty());
    }
}
