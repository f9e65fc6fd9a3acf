//! Co-runners of any workload (issue 37, deliverable 3): `run --background 'WORKLOAD [ARGS…]'`
//! and a suite case's `[case.background]` with `workload = …` start a workload beside every
//! iteration, measured, warm-up and probed alike, and store what it achieved with the iteration;
//! a co-runner that fails fails the case naming it; bad input is one line before anything runs;
//! and no process of a co-runner outlives the run, however it ends (real signals, the watchdog,
//! SIGKILL).
mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::*;

fn only_case(db: &Path, label: &str) -> serde_json::Value {
    let run = show_json(db, label);
    let cases = run["runs"][0]["cases"].as_array().unwrap().clone();
    assert_eq!(cases.len(), 1, "{run}");
    cases[0].clone()
}

/// Every value of `name`, measured and warm-up, is above zero; returns how many there were.
fn all_positive(case: &serde_json::Value, name: &str) -> usize {
    let m = metric(case, name);
    assert_eq!(m["role"], "secondary", "{m}");
    let values: Vec<f64> = ["values", "warmup_values"]
        .iter()
        .flat_map(|key| m[key].as_array().unwrap().iter())
        .map(|v| v.as_f64().unwrap())
        .collect();
    assert!(values.iter().all(|v| *v > 0.0), "{name}: {values:?}");
    values.len()
}

#[test]
fn a_pipe_beside_a_semaphore_case_stores_its_throughput_for_every_iteration() {
    let (_dir, db) = temp_db();
    let args = [
        "run",
        "--iterations",
        "3",
        "--warmup",
        "1",
        "--quiet",
        "--label",
        "beside",
        "--background",
        "pipe --loops 2000",
        "semaphore",
        "--items",
        "20000",
        "--work",
        "200",
    ];
    expect_success(schedlab(&db).args(args));
    let case = only_case(&db, "beside");
    let name = case["name"].as_str().unwrap();
    assert!(
        name.starts_with("semaphore:") && name.contains(" beside pipe:"),
        "{name}"
    );
    assert_eq!(case["background"][0]["workload"], "pipe", "{case}");
    assert_eq!(case["background"][0]["loops"], 2000, "{case}");
    for name in [
        "background_pipe_iterations_count",
        "background_pipe_iterations_per_sec",
        "background_pipe_usec_per_op",
    ] {
        assert_eq!(
            all_positive(&case, name),
            4,
            "{name}: 3 measured, 1 warm-up"
        );
    }
    assert!(has_metric(&case, "usec_per_item"), "{case}");
    assert_no_strays(&db);
}

/// A suite names co-runners as it names cases: `workload` and its keys, one table or a list of
/// them (a scenario among them), beside every case.
#[test]
fn a_suite_names_any_workload_as_a_co_runner() {
    let (dir, db) = temp_db();
    let suite = write_file(
        dir.path(),
        "beside.toml",
        r#"
description = "fake beside a pipe and a hog"
iterations = 2
warmup = 0

[[case]]
workload = "fake"
sleep_ms = 50
[[case.background]]
workload = "pipe"
loops = 500
[[case.background]]
workload = "scenario"
[[case.background.group]]
name = "hog"
phases = [{ run = "1ms" }]
"#,
    );
    run_suite(&db, &suite, &["--label", "suite"]);
    let case = only_case(&db, "suite");
    let name = case["name"].as_str().unwrap();
    assert!(name.contains(" beside pipe:"), "{name}");
    assert!(name.contains(", scenario:"), "{name}");
    assert_eq!(all_positive(&case, "background_pipe_iterations_count"), 2);
    assert!(has_metric(&case, "background_hog_duty_cycle_pct"), "{case}");
    assert_no_strays(&db);

    let bad = write_file(
        dir.path(),
        "bad.toml",
        "description = \"x\"\n[[case]]\nworkload = \"fake\"\n[case.background]\nworkload = \
         \"pipe\"\nloopz = 3\n",
    );
    let err = assert_bad_input(&db, &["run", "--suite", bad.to_str().unwrap()]);
    assert!(err.contains("background") && err.contains("loopz"), "{err}");
}

/// `--explain` iterations run beside the same co-runners as the measured ones: what they achieved
/// is stored with the probed iteration.
#[test]
fn probed_iterations_run_beside_the_same_co_runners() {
    let (_dir, db) = temp_db();
    let args = [
        "run",
        "--iterations",
        "1",
        "--warmup",
        "0",
        "--quiet",
        "--explain",
        "--background",
        "pipe --loops 500",
        "fake",
        "--sleep-ms",
        "50",
    ];
    expect_success(schedlab(&db).args(args));
    let probed: i64 = sql_value(
        &db,
        "SELECT count(*) FROM probe_measurements m JOIN probe_iterations p \
         ON p.id = m.probe_iteration_id \
         WHERE p.kind = 'explain' AND m.name = 'background_pipe_iterations_count' AND m.value >= 1",
    );
    assert_eq!(probed, 1);
    assert_no_strays(&db);
}

#[test]
fn a_co_runner_that_fails_fails_the_case_naming_it() {
    let (_dir, db) = temp_db();
    let out = schedlab(&db)
        .args(["run", "--iterations", "2", "--warmup", "0", "--quiet"])
        .args(["--background", "fake --fail-at 0", "pipe", "--loops", "100"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("co-runner `fake:") && stderr.contains("--fail-at"),
        "{stderr}"
    );
    assert_no_strays(&db);
}

#[test]
fn bad_co_runners_are_refused_before_anything_runs() {
    let (_dir, db) = temp_db();
    for (line, needle) in [
        ("pipe --loopz 3", "--loopz"),
        ("pipe --loops 0", "--loops"),
        ("nosuch", "nosuch"),
        ("", "empty"),
        ("pipe 'x", "quote"),
    ] {
        let err = assert_bad_input(&db, &["run", "--background", line, "fake"]);
        assert!(
            err.contains("--background") && err.contains(needle),
            "{line:?}: {err}"
        );
    }
    let err = assert_bad_input(
        &db,
        &[
            "run",
            "--background",
            "pipe",
            "--background",
            "pipe --loops 9",
            "fake",
        ],
    );
    assert!(err.contains("pipe is named twice"), "{err}");
    assert_eq!(stored_iterations(&db), 0);
}

/// A run of one long fake iteration beside a pipe; returns once the co-runner's process and its
/// tasks are running (more processes of the run than schedlab alone).
fn start_beside_a_pipe(db: &Path, extra: &[&str]) -> Running {
    let mut args = vec!["run", "--iterations", "1", "--warmup", "0", "--quiet"];
    args.extend(extra);
    args.extend([
        "--background",
        "pipe --loops 100000",
        "fake",
        "--sleep-ms",
        "60000",
    ]);
    let mut child = background(db, &args).start();
    let marker = db.to_str().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while processes_mentioning(marker).len() < 3 {
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        assert!(Instant::now() < deadline, "no co-runner within a minute");
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

#[test]
fn no_co_runner_outlives_the_run_however_it_ends() {
    let (_dir, db) = temp_db();
    for (signal, code) in [
        (libc::SIGINT, 130),
        (libc::SIGTERM, 143),
        (libc::SIGHUP, 129),
    ] {
        let child = start_beside_a_pipe(&db, &[]);
        send_signal(&child, signal);
        let (exit, stderr) = exit_code_and_stderr(child);
        assert_eq!(exit, Some(code), "signal {signal}: {stderr}");
        assert_no_strays(&db);
    }
    // The watchdog: the deadline ends the case's iteration, and its co-runner with it.
    let child = start_beside_a_pipe(&db, &["--iteration-timeout", "2"]);
    let (exit, stderr) = exit_code_and_stderr(child);
    assert_eq!(exit, Some(1), "{stderr}");
    assert!(stderr.contains("no result within 2 s"), "{stderr}");
    assert_no_strays(&db);
    // SIGKILL: nothing of schedlab runs to stop it; the co-runner dies with it, its tasks with
    // the co-runner (PR_SET_PDEATHSIG, both).
    let child = start_beside_a_pipe(&db, &[]);
    send_signal(&child, libc::SIGKILL);
    let (exit, _) = exit_code_and_stderr(child);
    assert_eq!(exit, None, "killed by a signal");
    assert_no_strays(&db);
}
