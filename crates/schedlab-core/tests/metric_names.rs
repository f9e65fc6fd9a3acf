//! Every metric schedlab declares is named with its unit last (`wakeup_p99_usec`,
//! `requests_p50_per_sec`), and no current name is one a former metric was renamed from: each
//! workload in each of its modes, the runner's own metrics and those of every imported tool.
use schedlab_core::import::{PlainOptions, Tool};
use schedlab_core::metric::{self, current_name, names_its_unit, MetricDef, FORMER_NAMES};
use schedlab_core::workload::{WorkloadSpec, WORKLOADS};
use serde_json::json;

/// Cases whose modes declare metrics the defaults do not.
fn modes() -> Vec<WorkloadSpec> {
    [
        json!({"workload": "wakeup", "pipe": 4096}),
        json!({"workload": "wakeup", "rps": 1000}),
        json!({"workload": "cpudl", "equivalence": true}),
        json!({"workload": "contention", "testcase": "futex-wake-storm"}),
        json!({"workload": "contention", "testcase": "pthread-mutex"}),
        json!({"workload": "external", "parser": "perf-bench", "command": ["true"]}),
    ]
    .into_iter()
    .map(|case| serde_json::from_value(case.clone()).unwrap_or_else(|e| panic!("{case}: {e}")))
    .collect()
}

fn declared() -> Vec<(String, MetricDef)> {
    let mut all = Vec::new();
    let specs = WORKLOADS.iter().map(|w| w.default_spec()).chain(modes());
    for spec in specs {
        let Ok(workload) = spec.build() else {
            // `external` needs a command; its mode above has one.
            assert_eq!(spec.kind(), "external", "{spec:?} does not build");
            continue;
        };
        let case = spec.case_name();
        all.extend(workload.metrics().iter().map(|d| (case.clone(), *d)));
    }
    all.extend(metric::secondary::all().map(|d| ("runner".to_string(), *d)));
    for tool in [Tool::PerfBench, Tool::Hackbench, Tool::Schbench] {
        let metrics = tool.metrics(&PlainOptions::default());
        all.extend(metrics.into_iter().map(|d| (tool.as_str().to_string(), d)));
    }
    all
}

#[test]
fn every_declared_metric_ends_with_its_unit() {
    let declared = declared();
    assert!(declared.len() > 100, "{} metrics", declared.len());
    let misnamed: Vec<String> = declared
        .iter()
        .filter(|(_, d)| !names_its_unit(d.name, d.unit))
        .map(|(case, d)| format!("{case}: {} ({})", d.name, d.unit))
        .collect();
    assert!(misnamed.is_empty(), "{misnamed:#?}");
}

#[test]
fn former_names_read_as_current_names_that_are_declared() {
    let declared = declared();
    let is_declared = |name: &str| declared.iter().any(|(_, d)| d.name == name);
    for (former, current) in FORMER_NAMES {
        assert!(!is_declared(former), "{former} is declared again");
        assert!(is_declared(current), "{current} is not declared");
        assert_eq!(current_name(former), *current);
        assert_eq!(current_name(current), *current);
    }
    assert_eq!(current_name("wakeup_p99_usec"), "wakeup_p99_usec");
}

#[test]
fn the_unit_rule_reads_rates_costs_and_percentages() {
    for (name, unit) in [
        ("wakeup_p99_9_usec", "usec"),
        ("requests_p50_per_sec", "requests/sec"),
        ("mib_per_sec", "MiB/sec"),
        ("nsec_per_op", "nsec"),
        ("holder_off_cpu_pct", "%"),
        ("cal_ipi_count", "count"),
    ] {
        assert!(names_its_unit(name, unit), "{name} ({unit})");
    }
    for (name, unit) in [
        ("rps_p50", "requests/sec"),
        ("requests_per_sec_p50", "requests/sec"),
        ("wakeup_usec_p99", "usec"),
        ("time", "sec"),
        ("time_usec", "sec"),
        ("holder_off_cpu", "%"),
    ] {
        assert!(!names_its_unit(name, unit), "{name} ({unit})");
    }
}
