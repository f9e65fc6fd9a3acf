//! `--explain` and `--profile` for real: the scheduler tracepoints of this machine (root, tracefs;
//! CI runs as root), the binary storing what they saw, read back through the store. Wake
//! placement follows the CPUs a semaphore's tasks are pinned to; fanout's system-call mix shows
//! its one `write` per message; a probe the machine lacks is stored as unavailable, never as zero;
//! and the probed iterations are never among the run's iterations.
mod common;

use std::path::Path;

use common::{expect_success, schedlab, temp_db, words};
use schedlab_core::probe::{ProbeKind, ProbeRecord};
use schedlab_store::{Location, Store};

fn reader(db: &Path) -> Box<dyn Store> {
    schedlab_store::open_reader(&Location::Sqlite(db.to_path_buf())).unwrap()
}

/// Runs `line` (a `run` command with --explain) and returns the run's probe iterations.
fn probes_of(db: &Path, line: &str) -> Vec<(usize, ProbeRecord)> {
    expect_success(schedlab(db).args(words(line)));
    let store = reader(db);
    let id = store.list_runs(Some(1)).unwrap()[0].id;
    store.load_probes(id).unwrap()
}

/// An explanatory metric of the group (`None`: all the workload's tasks) of the first explained
/// iteration.
fn value(probes: &[(usize, ProbeRecord)], group: Option<&str>, name: &str) -> Option<f64> {
    let (_, probe) = probes.iter().find(|(_, p)| p.kind == ProbeKind::Explain)?;
    probe
        .explanatory
        .iter()
        .find(|m| m.group.as_deref() == group && m.measurement.name == name)
        .map(|m| m.measurement.value)
}

fn cross_cpu_pct(pin: &str) -> f64 {
    let (_dir, db) = temp_db();
    let probes = probes_of(
        &db,
        &format!("run --explain --iterations 1 --warmup 0 -q semaphore --items 5000 --pin {pin}"),
    );
    value(&probes, None, "wakeups_cross_cpu_pct").unwrap_or_else(|| {
        panic!(
            "no wakeups_cross_cpu_pct with --pin {pin}: {:?}",
            probes[0].1.unavailable
        )
    })
}

#[test]
fn semaphore_wakeups_cross_cpus_only_when_pinned_apart() {
    let apart = cross_cpu_pct("0,1");
    let together = cross_cpu_pct("0,0");
    assert!(
        apart > 95.0,
        "--pin 0,1: {apart} % of wake-ups on another CPU"
    );
    assert!(
        together < 5.0,
        "--pin 0,0: {together} % of wake-ups on another CPU"
    );
}

#[test]
fn fanout_writes_once_per_message() {
    let (_dir, db) = temp_db();
    let (workers, rounds) = (4.0, 500.0);
    let probes = probes_of(
        &db,
        "run --explain --iterations 1 --warmup 0 -q fanout --workers 4 --rounds 500",
    );
    let writes = value(&probes, Some("fanout worker"), "syscall_write_count")
        .expect("the workers' write count");
    let per_message = writes / (workers * rounds);
    assert!(
        (0.95..1.1).contains(&per_message),
        "{writes} writes by the workers for {} messages",
        workers * rounds
    );
    assert_eq!(
        value(&probes, Some("fanout worker"), "tasks_count"),
        Some(4.0)
    );
    // The run has exactly its measured iterations: the probed one is elsewhere.
    let store = reader(&db);
    let id = store.list_runs(Some(1)).unwrap()[0].id;
    assert_eq!(store.load_run(id).unwrap().cases[0].iterations.len(), 1);
}

/// Every probe whose metric is missing is stored as unavailable with a reason, and one that is
/// unavailable has no metric: on this machine (no PMU, no SCHEDSTATS) the first, on a bare-metal
/// one perhaps the second; never a zero in place of what was not measured.
#[test]
fn a_probe_the_machine_lacks_is_stored_as_unavailable() {
    let (_dir, db) = temp_db();
    let probes = probes_of(
        &db,
        "run --explain --profile --iterations 1 --warmup 0 -q pipe --loops 2000",
    );
    let (_, explained) = probes
        .iter()
        .find(|(_, p)| p.kind == ProbeKind::Explain)
        .expect("an explained iteration");
    for (probe, metric) in [
        ("hardware_counters", "cycles_count"),
        ("proc_schedstat", "schedstat_lb_count"),
        ("psi_cpu", "psi_cpu_some_usec"),
        ("sched/sched_switch", "runq_delay_count"),
        ("raw_syscalls/sys_exit", "syscalls_count"),
    ] {
        let unavailable = explained.unavailable.iter().find(|u| u.probe == probe);
        let measured = value(&probes, None, metric);
        match (unavailable, measured) {
            (Some(u), None) => assert!(!u.reason.is_empty(), "{probe}"),
            (None, Some(_)) => {}
            (u, m) => panic!("{probe}: unavailable {u:?} and {metric} {m:?}"),
        }
    }
    // The probed iteration keeps the workload's own metric: the probes' cost.
    assert!(explained
        .measurements
        .iter()
        .any(|m| m.name == "usec_per_op"));
    let (_, profiled) = probes
        .iter()
        .find(|(_, p)| p.kind == ProbeKind::Profile)
        .expect("a profiled iteration");
    let shares: f64 = profiled.symbols.iter().map(|s| s.share_pct).sum();
    assert!((shares - 100.0).abs() < 0.01, "shares sum to {shares}");
    assert!(
        profiled
            .symbols
            .iter()
            .any(|s| s.module == "[kernel.kallsyms]"),
        "pipe spends time in the kernel: {:?}",
        profiled.symbols
    );
}
