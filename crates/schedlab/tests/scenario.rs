//! `schedlab run scenario` end to end: scenario files (TOML and rt-app JSON) and suites run and
//! store the scenario whole; the example files docs/scenarios.md shows all run; bad input is one
//! line and exit 2 before anything runs. The cgroups a run makes are removed on every way it can
//! end: crates/schedlab/tests/scenario_cleanup.rs. Real-time policies and cgroups need root, as
//! CI has; on a machine without them these tests fail saying so.
mod common;

use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;

use common::*;

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/scenarios")
}

fn example(name: &str) -> String {
    examples().join(name).to_str().unwrap().to_string()
}

/// The one case of the run stored as `label`.
fn only_case(db: &Path, label: &str) -> serde_json::Value {
    let run = show_json(db, label);
    let cases = run["runs"][0]["cases"].as_array().unwrap().clone();
    assert_eq!(cases.len(), 1, "{run}");
    cases[0].clone()
}

#[test]
fn a_toml_file_runs_and_is_stored_whole() {
    let (_dir, db, file) = temp_db_with(
        "two.toml",
        r#"
name = "two groups"
duration = "500ms"
[[group]]
name = "ticker"
phases = [{ run = "200us" }, { timer = "5ms" }]
[[group]]
name = "sleeper"
count = "1x"
policy = "idle"
phases = [{ sleep = "1ms" }, "yield"]
"#,
    );
    expect_success(schedlab(&db).args(words(&format!(
        "run --iterations 2 --warmup 0 --quiet --label t scenario --file {}",
        file.display()
    ))));
    let case = only_case(&db, "t");
    let name = case["name"].as_str().unwrap();
    assert!(name.starts_with("scenario:two groups@"), "{name}");
    for metric in [
        "ticker_duty_cycle_pct",
        "ticker_run_units_per_sec",
        "ticker_wakeup_p99_usec",
        "ticker_lateness_max_usec",
        "ticker_missed_deadlines_count",
        "sleeper_loops_per_sec",
        "sleeper_wakeup_p50_usec",
        "work_unit_nsec",
        "calibration_error_pct",
        "voluntary_csw_count",
    ] {
        assert!(has_metric(&case, metric), "{metric} missing: {case}");
    }
    // The scenario is stored, not the path alone: the file may change or go.
    assert_eq!(case["workload"], "scenario", "{case}");
    let params = &case["params"];
    assert_eq!(params["source"], file.to_str().unwrap(), "{params}");
    assert_eq!(params["group"][1]["name"], "sleeper", "{params}");
    std::fs::remove_file(&file).unwrap();
    show_json(&db, "t");
}

#[test]
fn an_rt_app_file_and_a_suite_run() {
    let (dir, db) = temp_db();
    expect_success(schedlab(&db).args(words(&format!(
        "run --iterations 1 --warmup 0 --quiet --label rtapp scenario --file {}",
        example("rtapp-periodic.json")
    ))));
    let case = only_case(&db, "rtapp");
    assert!(case["name"]
        .as_str()
        .unwrap()
        .starts_with("scenario:rtapp-periodic@"));
    let wall = first_value(&case, "thread0_run_wall_pct");
    assert!(wall > 50.0 && wall < 200.0, "{wall}");

    let suite = write_file(
        dir.path(),
        "suite.toml",
        format!(
            r#"
description = "a scenario by file and one inline"
iterations = 1
warmup = 0

[[case]]
workload = "scenario"
file = "{}"

[[case]]
workload = "scenario"
name = "inline"
duration = "300ms"
[[case.group]]
name = "spin"
count = "50%"
phases = [{{ run = "1ms" }}, {{ sleep = "1ms" }}]
"#,
            example("periodic.toml")
        ),
    );
    run_suite(&db, &suite, &["--label", "suite"]);
    let run = show_json(&db, "suite");
    let names: Vec<&str> = run["runs"][0]["cases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names[0].starts_with("scenario:periodic@"), "{names:?}");
    assert!(names[1].starts_with("scenario:inline@"), "{names:?}");
}

#[test]
fn every_example_scenario_is_valid_here() {
    let (_d, db) = temp_db();
    let mut files: Vec<PathBuf> = std::fs::read_dir(examples())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    for file in files {
        expect_success(schedlab(&db).args(words(&format!(
            "run --dry-run --quiet scenario --file {}",
            file.display()
        ))));
    }
    // And two of them run, briefly.
    for name in ["pipeline.toml", "deadline.toml"] {
        expect_success(schedlab(&db).args(words(&format!(
            "run --no-store --iterations 1 --warmup 0 --quiet scenario --file {}",
            example(name)
        ))));
    }
}

#[test]
fn bad_scenarios_are_one_line_and_exit_2() {
    let (dir, db) = temp_db();
    let group = |settings: &str, phases: &str| {
        format!("duration = \"1s\"\n[[group]]\nname = \"g\"\n{settings}\nphases = [{phases}]\n")
    };
    let cases = [
        (
            group("policy = \"fifo\"\npriority = 100", "\"yield\""),
            "priority must be between 1 and 99 for fifo, not 100",
        ),
        (
            group(
                "policy = \"deadline\"\nruntime = \"20ms\"\nperiod = \"10ms\"",
                "\"yield\"",
            ),
            "runtime 20ms exceeds its period 10ms",
        ),
        (group("speed = 3", "\"yield\""), "unknown field `speed`"),
        (
            group("", "{ run = \"1ms\" }, \"wait\""),
            "does `wait` but no group wakes it",
        ),
        (group("", "{ wake = \"g\" }"), "never does `wait`"),
        (
            "[[group]]\nname = \"g\"\nphases = [{ run = \"1ms\" }]\n".to_string(),
            "loops forever",
        ),
        (group("cpus = \"1000\"", "\"yield\""), "cpus names CPU 1000"),
    ];
    for (i, (text, says)) in cases.iter().enumerate() {
        let file = write_file(dir.path(), &format!("bad{i}.toml"), text);
        let err = assert_bad_input(
            &db,
            &words(&format!(
                "run --no-store scenario --file {}",
                file.display()
            )),
        );
        assert!(err.contains(says), "{text}\n→ {err}");
    }
    let json = write_file(
        dir.path(),
        "bad.json",
        r#"{"tasks": {"t": {"run": 1000, "suspend": "x"}}, "global": {"duration": 1}}"#,
    );
    let err = assert_bad_input(
        &db,
        &words(&format!(
            "run --no-store scenario --file {}",
            json.display()
        )),
    );
    assert!(err.contains("unsupported key \"suspend\""), "{err}");
    let err = assert_bad_input(
        &db,
        &words("run --no-store scenario --file /nonexistent.toml"),
    );
    assert!(
        err.contains("cannot read scenario file /nonexistent.toml"),
        "{err}"
    );
    // Nothing ran: no database was made.
    assert!(!db.exists());
}

/// A real-time policy without the privilege for it: root without CAP_SYS_NICE (setpriv drops it)
/// and with no RLIMIT_RTPRIO is refused before anything runs, naming what it needs.
#[test]
fn a_real_time_policy_without_the_privilege_is_refused() {
    assert!(
        Path::new("/usr/bin/setpriv").exists(),
        "this test needs util-linux's setpriv (CI runs on Debian, which has it)"
    );
    let (_dir, db, file) = temp_db_with(
        "fifo.toml",
        "duration = \"1s\"\n[[group]]\nname = \"rt\"\npolicy = \"fifo\"\npriority = 20\nphases = [\"yield\"]\n",
    );
    let out = StdCommand::new("/usr/bin/setpriv")
        .args(["--inh-caps=-sys_nice", "--bounding-set=-sys_nice", "--"])
        .arg("/bin/sh")
        .arg("-c")
        .arg("ulimit -r 0 && exec \"$0\" \"$@\"")
        .arg(assert_cmd::cargo::cargo_bin("schedlab"))
        .args(["run", "--no-store", "scenario", "--file"])
        .arg(&file)
        .env("SCHEDLAB_DB", &db)
        .output()
        .unwrap();
    let err = assert_refused(&out, "fifo without CAP_SYS_NICE");
    assert!(
        err.contains("group \"rt\": SCHED_FIFO priority 20 is not permitted"),
        "{err}"
    );
}

/// Issue 37's done-when: a background hog is started before every iteration of a case and stopped
/// after it, and its own throughput is stored with each iteration (warm-up included); the case's
/// name says it ran beside the hog, and nothing of the hog is left once the run ends.
#[test]
fn a_background_hog_runs_around_every_iteration_and_its_throughput_is_stored() {
    let (_dir, db, suite) = temp_db_with(
        "beside.toml",
        r#"
description = "the semaphore test beside a SCHED_IDLE hog"
iterations = 3
warmup = 1

[[case]]
workload = "semaphore"
items = 20000
[case.background]
name = "hog"
[[case.background.group]]
name = "hog"
policy = "idle"
phases = [{ run = "1ms" }]
"#,
    );
    run_suite(&db, &suite, &["--label", "beside"]);
    let case = only_case(&db, "beside");
    let name = case["name"].as_str().unwrap();
    assert!(
        name.starts_with("semaphore:") && name.contains(" beside scenario:hog@"),
        "{name}"
    );
    assert_eq!(case["background"]["group"][0]["name"], "hog", "{case}");
    let units = metric(&case, "background_hog_run_units_per_sec");
    let values = units["values"].as_array().unwrap();
    assert_eq!(values.len(), 3, "one value per measured iteration: {units}");
    for value in values {
        assert!(
            value.as_f64().unwrap() > 0.0,
            "the hog ran in every iteration: {units}"
        );
    }
    assert!(has_metric(&case, "background_hog_duty_cycle_pct"), "{case}");
    assert!(
        has_metric(&case, "items_per_sec") || has_metric(&case, "usec_per_item"),
        "{case}"
    );
    // Stopped after the last iteration: no task of the hog outlives the run.
    let me = std::process::id().to_string();
    let children = std::fs::read_to_string(format!("/proc/{me}/task/{me}/children")).unwrap();
    assert!(children.trim().is_empty(), "left behind: {children}");
}

/// A built-in scenario suite runs here, as CI runs it (as root): seed 004's bursts of FIFO-99 tasks
/// beside a CFS load, with the real-time group's wake-up latency and both groups' throughput.
#[test]
fn the_rt_cpupri_suite_runs() {
    let (_d, db) = temp_db();
    expect_success(schedlab(&db).args(words(
        "run --suite rt-cpupri --iterations 1 --warmup 0 --quiet --label rt",
    )));
    let run = show_json(&db, "rt");
    let cases = run["runs"][0]["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 2, "{run}");
    let beside = &cases[0];
    assert!(beside["name"]
        .as_str()
        .unwrap()
        .starts_with("scenario:rt-burst-beside-cfs@"));
    for name in [
        "rt_wakeup_p99_usec",
        "rt_run_units_per_sec",
        "cfs_run_units_per_sec",
    ] {
        assert!(first_value(beside, name) > 0.0, "{name}: {beside}");
    }
}
