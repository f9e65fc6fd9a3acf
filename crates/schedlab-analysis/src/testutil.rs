//! Hand-made stored runs and sides for the unit tests: every number a test checks is one it
//! chose, so expected values can be worked out by hand.
use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::metric::{Better, MetricDef};
use schedlab_core::plan::{CaseSpec, RunPlan};
use schedlab_core::record::{Arm, CaseRecord, IterationRecord, RunRecord, RunStatus};
use schedlab_core::workload::fake::FakeParams;
use schedlab_core::workload::WorkloadSpec;

use crate::series::{CaseLabel, Origin, RunMeta, Series, Side};

/// The primary metric of the hand-made runs, and a secondary one every iteration also records.
pub const PRIMARY: &str = "usec_per_op";
pub const SECONDARY: &str = "migrations";
pub const PRIMARY_METRIC: MetricDef = MetricDef::primary(PRIMARY, "usec", Better::Lower);
const SECONDARY_METRIC: MetricDef = MetricDef::secondary_count(SECONDARY, Better::Lower);

/// A fake case named `name` (the name is what the analysis matches cases by).
pub fn case_spec(name: &str) -> CaseSpec {
    CaseSpec {
        name: name.to_string(),
        workload: WorkloadSpec::Fake(FakeParams::default()),
        background: Vec::new(),
    }
}

/// A stored run on `boot`: per case, one warm-up iteration (value 1e9, which no test may ever
/// see) and then one measured iteration per given value, each with the primary metric at that
/// value and the secondary one at 7.
pub fn record(id: i64, boot: &str, status: RunStatus, cases: &[(&str, &[f64])]) -> RunRecord {
    let workloads = cases
        .iter()
        .map(|_| WorkloadSpec::Fake(FakeParams::default()))
        .collect();
    let plan = RunPlan::new(None, None, 1, 1, workloads).expect("a valid plan");
    let iteration = |index: u32, warmup: bool, value: f64| IterationRecord {
        index,
        warmup,
        started_at_ns: 0,
        measurements: vec![PRIMARY_METRIC.value(value), SECONDARY_METRIC.value(7.0)],
        attachments: Vec::new(),
        quiet: None,
    };
    let cases = cases
        .iter()
        .map(|(name, values)| CaseRecord {
            spec: case_spec(name),
            iterations: std::iter::once(iteration(0, true, 1e9))
                .chain(
                    values
                        .iter()
                        .enumerate()
                        .map(|(i, v)| iteration(i as u32 + 1, false, *v)),
                )
                .collect(),
            error: None,
        })
        .collect();
    stored_run(id, boot, status, plan, cases)
}

/// A stored run of `plan` with `cases`, on host `testhost` and boot `boot`.
pub fn stored_run(
    id: i64,
    boot: &str,
    status: RunStatus,
    plan: RunPlan,
    cases: Vec<CaseRecord>,
) -> RunRecord {
    RunRecord {
        id: Some(id),
        label: None,
        plan,
        fingerprint: Fingerprint {
            hostname: "testhost".into(),
            boot_id: boot.into(),
            cpu_model: "Test CPU".into(),
            ..Fingerprint::default()
        },
        started_at_ns: 0,
        ended_at_ns: None,
        status,
        error: None,
        cases,
    }
}

/// A run of a side built by hand: its id, boot, status and experiment tag.
pub fn meta(id: i64, boot: &str, status: RunStatus, tag: Option<(i64, Arm, u32)>) -> RunMeta {
    RunMeta {
        id: Some(id),
        boot_id: boot.into(),
        kernel: String::new(),
        status,
        experiment_id: tag.map(|t| t.0),
        arm: tag.map(|t| t.1),
        round: tag.map(|t| t.2),
        machine: Some(Box::default()),
        ..RunMeta::default()
    }
}

/// A side of one case × metric ("case", [`PRIMARY`]): run i is `runs[i]` with `values[i]`.
pub fn side(name: &str, runs: Vec<RunMeta>, values: Vec<Vec<f64>>) -> Side {
    assert_eq!(runs.len(), values.len());
    Side {
        runs,
        series: vec![Series {
            case: CaseLabel {
                name: "case".into(),
                short: "case".into(),
                load: "-".into(),
            },
            metric: PRIMARY.into(),
            unit: PRIMARY_METRIC.unit.into(),
            better: PRIMARY_METRIC.better,
            shape: PRIMARY_METRIC.shape,
            distribution: None,
            restates: None,
            runs: values.into_iter().enumerate().collect(),
        }],
        ..Side::empty(name, Origin::Runs)
    }
}
