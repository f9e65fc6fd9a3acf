//! The history as it was built before runs were summarised first, kept as the oracle a history
//! from summaries must match, number for number, over many random sets of runs.
use schedlab_core::metric::{Better, MetricDef};
use schedlab_core::plan::RunPlan;
use schedlab_core::record::{CaseRecord, IterationRecord};
use schedlab_core::rng::SplitMix64;
use schedlab_core::workload::fake::FakeParams;
use schedlab_core::workload::WorkloadSpec;

use super::*;
use crate::series::{RunInput, Side};
use crate::testutil::{case_spec, stored_run};
use crate::units::summarise_run;

/// The history as it was built before runs were summarised first: from a comparison's side
/// of the runs, each point a [`summarise_run`] of the run's values. Kept as the oracle the
/// history from summaries must match, number for number.
fn history_via_side(
    runs: &[RunRecord],
    case: &str,
    metric: Option<&str>,
    include_incomplete: bool,
) -> Result<History, HistoryError> {
    let mut ordered: Vec<&RunRecord> = runs
        .iter()
        .filter(|r| r.cases.iter().any(|c| c.spec.name == case))
        .collect();
    ordered.sort_by_key(|r| (r.started_at_ns, r.id));
    let mut hosts: Vec<String> = ordered
        .iter()
        .map(|r| r.fingerprint.hostname.clone())
        .collect();
    hosts.sort();
    hosts.dedup();
    if hosts.len() > 1 {
        return Err(HistoryError::ManyHosts(hosts));
    }
    let inputs: Vec<RunInput> = ordered
        .iter()
        .map(|record| RunInput { record, tag: None })
        .collect();
    let filter = MetricFilter {
        names: metric.map(|m| vec![m.to_string()]).unwrap_or_default(),
        all: false,
    };
    let side = Side::from_runs(case, &inputs, &filter, include_incomplete);
    let Some(series) = side.series.iter().find(|s| s.case.name == case) else {
        if side.runs.is_empty() {
            return Err(HistoryError::NoRuns { case: case.into() });
        }
        let every = Side::from_runs(
            case,
            &inputs,
            &MetricFilter::every_metric(),
            include_incomplete,
        );
        return Err(HistoryError::NoMetric {
            case: case.into(),
            metric: metric.unwrap_or("(primary)").into(),
            available: every
                .series
                .iter()
                .filter(|s| s.case.name == case)
                .map(|s| s.metric.clone())
                .collect(),
        });
    };
    let scale = Scale::of(series.runs.iter().flat_map(|(_, v)| v.iter().copied()));
    let mut points = Vec::new();
    for (run, values) in series.runs.iter().filter(|(_, v)| !v.is_empty()) {
        let meta = &side.runs[*run];
        if values.iter().any(|v| !v.is_finite()) {
            return Err(HistoryError::NotFinite {
                case: case.into(),
                metric: series.metric.clone(),
                run_id: meta.id,
            });
        }
        let record = ordered.iter().find(|r| r.id == meta.id).copied();
        let summary = summarise_run(*run, values, scale);
        points.push(HistoryPoint {
            run_id: meta.id,
            label: record.and_then(|r| r.label.clone()),
            started_at_ns: record.map_or(0, |r| r.started_at_ns),
            kernel: meta.kernel.clone(),
            hostname: record.map_or_else(String::new, |r| r.fingerprint.hostname.clone()),
            status: meta.status,
            iterations: summary.n,
            value: scale.back(summary.mean),
            y: summary.mean,
            within_variance: summary.variance,
            measured_by: meta.measured_by.clone(),
        });
    }
    if points.is_empty() {
        return Err(HistoryError::NoRuns { case: case.into() });
    }
    Ok(History {
        key: HistoryKey {
            case: case.into(),
            metric: series.metric.clone(),
            unit: series.unit.clone(),
            better: series.better,
            scale,
            hostname: hosts.into_iter().next().unwrap_or_default(),
        },
        excluded_runs: side.excluded.iter().filter_map(|r| r.id).collect(),
        machine: side.runs.last().and_then(|r| r.machine.as_deref().cloned()),
        kernels: kernel_spans(&points),
        builds: build_spans(&points),
        points,
    })
}

const METRICS: [MetricDef; 4] = [
    MetricDef::primary("usec_per_op", "usec", Better::Lower),
    MetricDef::primary("ops_per_sec", "ops/sec", Better::Higher),
    MetricDef::secondary_count("migrations", Better::Lower),
    MetricDef::primary("requests_avg_per_sec", "rps", Better::Higher),
];

/// A run of random shape, as the store reads one back (metrics under their current names):
/// one to three cases named "c" or "d" (so a run may hold two cases of one name), warm-ups,
/// metrics that come and go, zeros and negatives, now and then a value that is not finite,
/// any status, now and then two hosts.
fn random_run(g: &mut SplitMix64, id: i64, hosts: u64) -> RunRecord {
    let pick = |g: &mut SplitMix64, n: u64| (g.next_u64() % n) as usize;
    let case_count = 1 + pick(g, 3);
    let names: Vec<&str> = (0..case_count)
        .map(|_| if pick(g, 3) == 0 { "d" } else { "c" })
        .collect();
    let workloads = names
        .iter()
        .map(|_| WorkloadSpec::Fake(FakeParams::default()))
        .collect();
    let mut plan = RunPlan::new(None, None, 1, 0, workloads).unwrap();
    if pick(g, 2) == 0 {
        plan = plan.shuffled(g.next_u64());
    }
    let cases = plan
        .cases
        .iter()
        .zip(&names)
        .map(|(_, name)| {
            let metrics: Vec<&MetricDef> = METRICS.iter().filter(|_| pick(g, 4) != 0).collect();
            let iterations = (0..pick(g, 5))
                .map(|index| IterationRecord {
                    index: index as u32,
                    warmup: pick(g, 4) == 0,
                    started_at_ns: 0,
                    measurements: metrics
                        .iter()
                        .map(|m| {
                            let value = match pick(g, 40) {
                                0 => 0.0,
                                1 => -3.0,
                                2 => f64::INFINITY,
                                _ => 100.0 * (1.0 + 0.1 * g.normal()).abs(),
                            };
                            m.value(value)
                        })
                        .collect(),
                    attachments: Vec::new(),
                    quiet: None,
                })
                .collect();
            CaseRecord {
                spec: case_spec(name),
                iterations,
                error: None,
            }
        })
        .collect();
    let statuses = [
        RunStatus::Complete,
        RunStatus::Complete,
        RunStatus::Complete,
        RunStatus::Interrupted,
        RunStatus::Abandoned,
    ];
    let mut run = stored_run(id, "boot", statuses[pick(g, 5)], plan, cases);
    run.started_at_ns = (g.next_u64() % 20) as i64;
    run.label = Some(format!("run{id}"));
    run.fingerprint.hostname = format!("host{}", pick(g, hosts));
    run.fingerprint.kernel_release = format!("6.{}", pick(g, 3));
    run.fingerprint.schedlab_commit = format!("c{}", pick(g, 2));
    run
}

/// Histories from summaries are the histories a side of the whole runs gives, in every
/// point, span and error, over a thousand random sets of runs.
#[test]
fn summaries_give_the_history_a_side_of_the_runs_gives() {
    let mut outcomes = std::collections::BTreeMap::new();
    for seed in 0..1_000u64 {
        let mut g = SplitMix64::new(seed);
        let hosts = 1 + seed % 4 / 3;
        let runs: Vec<RunRecord> = (0..1 + g.next_u64() % 12)
            .map(|i| random_run(&mut g, i as i64 + 1, hosts))
            .collect();
        for case in ["c", "d", "e"] {
            // `rps_avg`: a former name, as a user may type it.
            for metric in [
                None,
                Some("usec_per_op"),
                Some("rps_avg"),
                Some("migrations"),
            ] {
                for include in [false, true] {
                    let old = history_via_side(&runs, case, metric, include);
                    let new = history(&runs, case, metric, include);
                    assert_eq!(new, old, "seed {seed} case {case} {metric:?} {include}");
                    let kind = match &new {
                        Ok(h) if h.key.scale == Scale::Log => "log",
                        Ok(_) => "raw",
                        Err(HistoryError::NoRuns { .. }) => "no runs",
                        Err(HistoryError::NoMetric { .. }) => "no metric",
                        Err(HistoryError::ManyHosts(_)) => "many hosts",
                        Err(HistoryError::NotFinite { .. }) => "not finite",
                    };
                    *outcomes.entry(kind).or_insert(0) += 1;
                }
            }
        }
    }
    // Every outcome is met, so the comparison covers each path.
    assert_eq!(outcomes.len(), 6, "{outcomes:?}");
}

#[test]
fn the_newest_run_taken_finds_the_machine() {
    let mut g = SplitMix64::new(3);
    let runs: Vec<SummarisedRun> = (0..20)
        .map(|i| SummarisedRun::of(&random_run(&mut g, i + 1, 1), "c"))
        .collect();
    for include in [false, true] {
        let newest = newest_taken(&runs, include);
        let mut taken: Vec<&SummarisedRun> = runs.iter().filter(|r| r.is_taken(include)).collect();
        taken.sort_by_key(|r| (r.started_at_ns, r.id));
        assert_eq!(newest.map(|i| &runs[i]), taken.last().copied());
    }
}
