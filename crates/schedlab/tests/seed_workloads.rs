//! End-to-end tests of the seed-study workloads through the binary: semaphore, syscall, fanout,
//! cpudl and cpupri run, verify themselves and report their metrics; the cpudl equivalence check
//! fails with the step and both heaps; bad input is one line and exit code 2; an interrupted
//! process run leaves no task behind. Heap invariants, variant equivalence on random op streams
//! (proptest), hand-off counts, fan-out checksums and cpupri finds against the reference are
//! also tested next to each workload in schedlab-core.
use std::time::Duration;

use serde_json::Value;

mod common;
use common::*;

/// Runs `args` (one iteration, no warm-up, not stored) and returns the first case of the JSON.
fn run_case(args: &[&str]) -> Value {
    let (_d, db) = temp_db();
    let once = words("--iterations 1 --warmup 0 --no-store --format json");
    json_of_success(&db, &[&["run"], args, &once].concat())["runs"][0]["cases"][0].clone()
}

#[test]
fn list_names_the_seed_workloads_and_suites() {
    assert_list_names(&[
        "semaphore",
        "syscall",
        "fanout",
        "cpudl",
        "cpupri",
        "rump",
        "ipc-wait",
        "syscall-scaling",
        "cpudl-sweep",
        "rump-sweep",
    ]);
}

#[test]
fn semaphore_threads_and_processes_hand_off_every_item() {
    for extra in ["", " --processes"] {
        for wait in ["block", "spin", "adaptive:10000"] {
            let line = format!("semaphore --items 500 --work 500 --wait {wait}{extra}");
            let case = run_case(&words(&line));
            assert!(first_value(&case, "usec_per_item") > 0.0);
            assert!(first_value(&case, "time_sec") > 0.0);
            for name in [
                "producer_cpu_sec",
                "consumer_cpu_sec",
                "futex_sleeps_count",
                "futex_wakes_count",
                "voluntary_csw_count",
                "res_ipi_count",
            ] {
                assert!(has_metric(&case, name), "{name} missing for {line:?}");
            }
            let mode = if extra.is_empty() {
                "threads"
            } else {
                "process"
            };
            assert!(
                case["name"]
                    .as_str()
                    .unwrap()
                    .starts_with(&format!("semaphore:{mode} wait={wait}")),
                "{}",
                case["name"]
            );
        }
    }
}

#[test]
fn syscall_kinds_report_per_call_and_aggregate_rates() {
    for kind in ["getpid", "getrlimit", "write-devnull", "read-devzero"] {
        let case = run_case(&words(&format!(
            "syscall --kind {kind} --threads 2 --calls 5000"
        )));
        assert!(first_value(&case, "nsec_per_call") > 0.0, "{kind}");
        assert!(first_value(&case, "calls_per_sec") > 0.0, "{kind}");
    }
}

/// Seed 003's "virtual unicpu" as the host kernel sees it: two threads on one CPU, and apart.
#[test]
fn syscall_pins_two_threads_to_one_cpu_and_apart() {
    let allowed = schedlab_core::cpu_list::CpuList::allowed().unwrap();
    let (first, last) = (allowed.as_slice()[0], *allowed.as_slice().last().unwrap());
    for pin in [format!("{first},{first}"), format!("{first},{last}")] {
        let line = format!("syscall --kind getrlimit --threads 2 --calls 20000 --pin {pin}");
        let case = run_case(&words(&line));
        assert!(first_value(&case, "nsec_per_call") > 0.0, "{line}");
        assert!(
            case["name"]
                .as_str()
                .unwrap()
                .ends_with(&format!(" cpus={pin}")),
            "{}",
            case["name"]
        );
    }
}

/// Seed 003's mechanism: both rump schedulers run checked, their path counts add up.
#[test]
fn rump_schedulers_run_checked_and_count_their_paths() {
    for variant in ["cached", "freelist"] {
        let line =
            format!("rump --variant {variant} --threads 3 --vcpus 2 --syscalls 20000 --check");
        let case = run_case(&words(&line));
        assert!(first_value(&case, "nsec_per_op") > 0.0, "{line}");
        assert_eq!(first_value(&case, "checked_syscalls_count"), 60_000.0);
        let entries =
            first_value(&case, "fast_entries_count") + first_value(&case, "locked_entries_count");
        assert_eq!(entries, 60_000.0, "{line}");
        assert!(has_metric(&case, "op_spread_pct"), "{line}");
        if cfg!(target_arch = "x86_64") {
            assert!(first_value(&case, "cycles_per_op_p50") > 0.0);
        }
        assert_eq!(
            case["name"],
            format!("rump:{variant} vcpus=2 threads=3 syscalls=20000 check")
        );
    }
}

#[test]
fn fanout_processes_every_message() {
    let case = run_case(&words("fanout --workers 8 --rounds 100 --work 100"));
    let per_round = first_value(&case, "usec_per_round");
    let per_handoff = first_value(&case, "usec_per_handoff");
    assert!((per_round / per_handoff - 16.0).abs() < 1e-6);
}

#[test]
fn cpudl_times_checks_and_names_the_no_delete_mix() {
    let case = run_case(&words("cpudl --variant bugfix --cpus 64 --check"));
    assert!(first_value(&case, "nsec_per_op") > 0.0);
    assert_eq!(first_value(&case, "checked_ops_count"), 100_000.0);
    assert_eq!(first_value(&case, "deletes_count"), 0.0);
    assert!(case["name"].as_str().unwrap().contains("no real deletes"));
    if cfg!(target_arch = "x86_64") {
        assert!(first_value(&case, "cycles_per_op") > 0.0);
    }
    let case = run_case(&words(
        "cpudl --cpus 6 --ops 20000 --mix realistic --seed 9",
    ));
    assert!(first_value(&case, "deletes_count") > 0.0);
    let case = run_case(&words("cpudl --equivalence --cpus 256"));
    assert_eq!(first_value(&case, "identical_ops_count"), 100_000.0);
}

#[test]
fn cpudl_orig_against_bugfix_fails_with_the_step_and_both_heaps() {
    let (_d, db) = temp_db();
    let out = schedlab(&db)
        .args(words(
            "run cpudl --equivalence --variants orig,bugfix --cpus 32 --no-store",
        ))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    for needle in [
        "orig and bugfix diverge at op #2",
        "real divergence",
        "orig heap (size 2)",
        "bugfix heap (size 2)",
    ] {
        assert!(stderr.contains(needle), "{needle}: {stderr}");
    }
}

#[test]
fn cpudl_tie_order_splits_are_named_and_can_be_allowed() {
    let (_d, db) = temp_db();
    let tied = words(
        "run cpudl --equivalence --cpus 16 --ops 5000 --mix realistic --seed 7 \
         --deadline-granularity 10000000 --no-store --iterations 1 --warmup 0",
    );
    let out = schedlab(&db).args(&tied).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("tie-order difference only"), "{stderr}");
    schedlab(&db)
        .args(&tied)
        .arg("--allow-ties")
        .assert()
        .success();
}

#[test]
fn cpupri_layouts_agree_with_the_reference() {
    for layout in ["shared", "per-node"] {
        let case = run_case(&words(&format!(
            "cpupri --layout {layout} --nodes 2 --cpus 128 --threads 2 --ops 5000"
        )));
        assert!(first_value(&case, "nsec_per_set") > 0.0, "{layout}");
        assert!(first_value(&case, "nsec_per_find") > 0.0, "{layout}");
        assert!(case["name"].as_str().unwrap().contains("nodes=2"));
    }
}

#[test]
fn bad_input_gets_one_line_and_exit_code_2() {
    let (_d, db) = temp_db();
    let lines = [
        "run semaphore --items 0",
        "run semaphore --wait nap",
        "run semaphore --wait adaptive:0",
        "run semaphore --work -1",
        "run semaphore --cpus 0",
        "run semaphore --cpus 0,99999",
        "run syscall --threads 0",
        "run syscall --kind fork",
        "run syscall --calls 0",
        "run fanout --workers 0",
        "run fanout --rounds 0",
        "run cpudl --cpus 0",
        "run cpudl --cpus 4097",
        "run cpudl --ops 0",
        "run cpudl --variant best",
        "run cpudl --mix random",
        "run cpudl --seed 3",
        "run cpudl --variants orig,fast",
        "run cpudl --equivalence --variants orig",
        "run cpudl --equivalence --variants fast,fast",
        "run cpudl --equivalence --check",
        "run cpudl --allow-ties",
        "run cpudl --check --cpus 4096 --ops 10000000",
        "run cpupri --threads 0",
        "run cpupri --layout numa",
        "run cpupri --nodes 0",
        "run cpupri --layout per-node --nodes 1",
        "run cpupri --cpus 4 --threads 5",
        "run syscall --threads 3 --pin 0,0",
        "run syscall --pin 0,x",
        "run syscall --pin 99999",
        "run rump --threads 0",
        "run rump --vcpus 0",
        "run rump --variant lockless",
        "run rump --syscalls 0",
    ];
    assert_each_bad_input(&db, &lines);
}

/// Ctrl-C in the middle of a semaphore run over processes: exit 130, both sides reaped.
#[test]
fn interrupted_semaphore_processes_leave_nothing_behind() {
    let (_d, db) = temp_db();
    let args =
        words("run semaphore --processes --items 20000 --work 2000 --iterations 500 --warmup 0");
    let mut child = background(&db, &args).start();
    wait_for_a_stored_iteration(&db, &mut child, Duration::from_secs(120));
    std::thread::sleep(Duration::from_millis(100));
    send_signal(&child, libc::SIGINT);
    let (code, stderr) = exit_code_and_stderr(child);
    assert_eq!(code, Some(130), "{stderr}");
    assert_no_strays(&db);
}
