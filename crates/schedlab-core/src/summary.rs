//! Each run's summary of each metric of a case: how many measured iterations returned it, and the
//! mean and sample variance of ln x (when every value is positive) and of x. That is all
//! `history` and `changes` judge a run by, so the store keeps these per run, case and metric and
//! those commands never read the iterations (docs/store.md).
//!
//! Cases of one name in one run are one case here, their measured iterations in the order the
//! plan listed the cases, and metrics come in the order they first appear: the order and grouping
//! in which a comparison's side reads a run (`schedlab_analysis::series`), so a summary is what
//! the analysis computes from the same values, bit for bit ([`schedlab_stats::summary::run_moments`]).
use std::collections::HashMap;

use crate::metric::{Better, Measurement, Role};
use crate::record::{CaseRecord, IterationRecord, RunRecord, RunStatus};

/// The mean and sample variance of a run's values (or of their logarithms).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Moments {
    pub mean: f64,
    /// `None` with one value.
    pub variance: Option<f64>,
}

impl Moments {
    fn of(values: &[f64]) -> Moments {
        let (mean, variance) = schedlab_stats::summary::run_moments(values);
        Moments { mean, variance }
    }
}

/// One run's summary of one metric of one case.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricSummary {
    /// The metric's current name ([`crate::metric::current_name`]).
    pub metric: String,
    /// Unit, direction and role as the first measurement of it in the run has them.
    pub unit: String,
    pub better: Better,
    pub role: Role,
    /// Measured iterations that returned the metric.
    pub n: usize,
    /// Of ln x, when every value is positive and finite (the analysis' log scale).
    pub log: Option<Moments>,
    /// Of x, when every value is finite; `None` when one is not, which no summary can use.
    pub raw: Option<Moments>,
}

impl MetricSummary {
    /// Whether every value was a finite number.
    pub fn is_finite(&self) -> bool {
        self.raw.is_some()
    }

    fn of(first: &Measurement, values: &[f64]) -> MetricSummary {
        let finite = values.iter().all(|v| v.is_finite());
        let positive = finite && values.iter().all(|v| *v > 0.0);
        let logs: Vec<f64> = if positive {
            values.iter().map(|v| v.ln()).collect()
        } else {
            Vec::new()
        };
        MetricSummary {
            metric: crate::metric::current_name(&first.name).to_string(),
            unit: first.unit.clone(),
            better: first.better,
            role: first.role,
            n: values.len(),
            log: positive.then(|| Moments::of(&logs)),
            raw: finite.then(|| Moments::of(values)),
        }
    }
}

/// The summaries of `cases` — a run's cases of one name, in the order its plan listed them —
/// over their measured iterations: one per metric, in the order the metrics first appear.
pub fn summarise<'a>(cases: impl IntoIterator<Item = &'a CaseRecord>) -> Vec<MetricSummary> {
    summarise_iterations(cases.into_iter().flat_map(|c| &c.iterations))
}

/// [`summarise`] of the iterations themselves, in order; warm-ups are passed over.
pub fn summarise_iterations<'a>(
    iterations: impl IntoIterator<Item = &'a IterationRecord>,
) -> Vec<MetricSummary> {
    let mut metrics: Vec<(&Measurement, Vec<f64>)> = Vec::new();
    let mut at: HashMap<&str, usize> = HashMap::new();
    for iteration in iterations.into_iter().filter(|i| !i.warmup) {
        for m in &iteration.measurements {
            let name = crate::metric::current_name(&m.name);
            let index = *at.entry(name).or_insert_with(|| {
                metrics.push((m, Vec::new()));
                metrics.len() - 1
            });
            metrics[index].1.push(m.value);
        }
    }
    metrics
        .iter()
        .map(|(first, values)| MetricSummary::of(first, values))
        .collect()
}

/// Every case name of `run`, in the order its plan listed them, with the summaries of its cases
/// of that name ([`summarise`]).
pub fn summarise_run(run: &RunRecord) -> Vec<(String, Vec<MetricSummary>)> {
    let listed = run.cases_as_listed();
    let mut names: Vec<&str> = Vec::new();
    for case in &listed {
        if !names.contains(&case.spec.name.as_str()) {
            names.push(&case.spec.name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let cases = listed.iter().copied().filter(|c| c.spec.name == name);
            (name.to_string(), summarise(cases))
        })
        .collect()
}

/// One run of a case as a history needs it: who ran it where, how it ended, and its summaries
/// of the case's metrics, in the order the metrics first appeared in it.
#[derive(Debug, Clone, PartialEq)]
pub struct SummarisedRun {
    pub id: Option<i64>,
    pub label: Option<String>,
    pub started_at_ns: i64,
    /// The kernel release and host name, as the fingerprint has them.
    pub kernel: String,
    pub hostname: String,
    /// As a reader derives it (a silent running run reads abandoned).
    pub status: RunStatus,
    /// The build or tool that measured it
    /// ([`crate::fingerprint::Fingerprint::measured_by`]).
    pub measured_by: Option<String>,
    pub summaries: Vec<MetricSummary>,
}

impl SummarisedRun {
    /// `run`'s cases named `case` summarised.
    pub fn of(run: &RunRecord, case: &str) -> SummarisedRun {
        let cases = run.cases_as_listed();
        SummarisedRun {
            id: run.id,
            label: run.label.clone(),
            started_at_ns: run.started_at_ns,
            kernel: run.fingerprint.kernel_release.clone(),
            hostname: run.fingerprint.hostname.clone(),
            status: run.status,
            measured_by: run.fingerprint.measured_by(),
            summaries: summarise(cases.into_iter().filter(|c| c.spec.name == case)),
        }
    }

    /// Whether a history takes the run: complete, or any with `include_incomplete`.
    pub fn is_taken(&self, include_incomplete: bool) -> bool {
        include_incomplete || self.status == RunStatus::Complete
    }
}

/// The index in `runs` of the newest run a history takes (the one whose machine finds its
/// calibration), in start order, the last of equals as a stable sort leaves it.
pub fn newest_taken(runs: &[SummarisedRun], include_incomplete: bool) -> Option<usize> {
    (0..runs.len())
        .filter(|&i| runs[i].is_taken(include_incomplete))
        .max_by_key(|&i| (runs[i].started_at_ns, runs[i].id))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::MetricShape;
    use crate::plan::CaseSpec;
    use crate::record::IterationRecord;
    use crate::workload::WorkloadSpec;

    fn measurement(name: &str, value: f64, role: Role) -> Measurement {
        Measurement {
            name: name.into(),
            unit: "usec".into(),
            better: Better::Lower,
            role,
            shape: MetricShape::Scalar,
            distribution: None,
            value,
        }
    }

    fn case(iterations: Vec<(bool, Vec<Measurement>)>) -> CaseRecord {
        CaseRecord {
            spec: CaseSpec::new(WorkloadSpec::Fake(Default::default())).unwrap(),
            iterations: iterations
                .into_iter()
                .enumerate()
                .map(|(index, (warmup, measurements))| IterationRecord {
                    index: index as u32,
                    warmup,
                    started_at_ns: 0,
                    measurements,
                    attachments: Vec::new(),
                    quiet: None,
                })
                .collect(),
            error: None,
        }
    }

    #[test]
    fn metrics_in_order_of_appearance_over_measured_iterations_only() {
        let primary = |v| measurement("usec_per_op", v, Role::Primary);
        let secondary = |v| measurement("cpu_time_usec", v, Role::Secondary);
        let a = case(vec![
            (true, vec![primary(100.0)]),
            (false, vec![secondary(4.0), primary(2.0)]),
            (false, vec![primary(8.0), secondary(0.0)]),
        ]);
        let b = case(vec![(false, vec![primary(4.0), secondary(-1.0)])]);
        let summaries = summarise([&a, &b]);
        assert_eq!(summaries.len(), 2);
        let (time, per_op) = (&summaries[0], &summaries[1]);
        assert_eq!(time.metric, "cpu_time_usec");
        assert_eq!(time.n, 3);
        assert!(time.log.is_none(), "a value of 0 or less has no log");
        assert_eq!(time.raw.unwrap().mean, 1.0);
        assert_eq!(per_op.metric, "usec_per_op");
        assert_eq!(per_op.role, Role::Primary);
        assert_eq!(per_op.n, 3);
        let log = per_op.log.unwrap();
        assert!((log.mean - 64f64.ln() / 3.0).abs() < 1e-15);
        assert!(log.variance.unwrap() > 0.0);
    }

    #[test]
    fn a_value_that_is_not_finite_leaves_no_moments_and_former_names_read_as_current() {
        let c = case(vec![
            (
                false,
                vec![measurement("rps_avg", f64::INFINITY, Role::Primary)],
            ),
            (false, vec![measurement("rps_avg", 2.0, Role::Primary)]),
        ]);
        let summaries = summarise([&c]);
        assert_eq!(summaries[0].metric, "requests_avg_per_sec");
        assert!(!summaries[0].is_finite());
        assert!(summaries[0].log.is_none());
        let one = case(vec![(
            false,
            vec![measurement("x_usec", 3.0, Role::Primary)],
        )]);
        let s = &summarise([&one])[0];
        assert_eq!(s.raw.unwrap().variance, None);
        assert_eq!(s.raw.unwrap().mean, 3.0);
    }
}
