//! End-to-end tests of the `wakeup` workload (alias `schbench`) through the binary: the JSON
//! shape, the schbench-style text tables decoded from stored histograms, the built-in suites, bad
//! input, and Ctrl-C in the middle of an iteration. Runtimes are 1 s; nothing asserts timing.
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::*;

/// The one case `schedlab run ARGS --iterations N --warmup 0 --format json` reports; the run must
/// succeed.
fn run_case(db: &Path, args: &[&str], iterations: &str) -> Value {
    let tail = format!("--iterations {iterations} --warmup 0 --format json");
    json_of_success(db, &[&["run"], args, &words(&tail)].concat())["runs"][0]["cases"][0].clone()
}

#[test]
fn request_mode_json_carries_quantiles_counts_and_tables() {
    let (_d, db) = temp_db();
    let case = &run_case(
        &db,
        &words("wakeup -m 1 -t 2 -r 1 --cache-footprint 32"),
        "2",
    );
    assert_eq!(case["workload"], "wakeup");
    assert_eq!(
        case["name"],
        "wakeup:request m=1 t=2 runtime=1 sleep=100 ops=5 footprint=32"
    );
    assert_eq!(case["params"]["workers"], 2);
    assert_eq!(case["params"]["cache_footprint"], 32);
    for prefix in ["wakeup", "request"] {
        for q in ["p50", "p90", "p99", "p99_9", "max"] {
            let m = metric(case, &format!("{prefix}_{q}_usec"));
            assert_eq!(m["unit"], "usec");
            assert_eq!(m["better"], "lower");
            assert_eq!(m["role"], "primary");
            assert_eq!(m["values"].as_array().unwrap().len(), 2);
        }
        let count = metric(case, &format!("{prefix}_samples_count"));
        assert_eq!(count["better"], "higher");
        assert!(count["values"][0].as_f64().unwrap() >= 1.0);
    }
    for name in ["requests_p50_per_sec", "requests_avg_per_sec"] {
        assert_eq!(metric(case, name)["better"], "higher");
    }
    // Quantiles are ordered within an iteration.
    assert!(first_value(case, "wakeup_p50_usec") <= first_value(case, "wakeup_p99_usec"));
    assert!(first_value(case, "wakeup_p99_usec") <= first_value(case, "wakeup_max_usec"));
    // The runner's secondary counters are still there.
    assert_eq!(metric(case, "user_cpu_sec")["role"], "secondary");

    let tables = case["latency_tables"].as_array().unwrap();
    let titles: Vec<&str> = tables
        .iter()
        .map(|t| t["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Wakeup Latencies", "Request Latencies", "RPS"]);
    let wakeup = &tables[0];
    assert_eq!(wakeup["iterations"], 2);
    let rows = wakeup["rows"].as_array().unwrap();
    let percentiles: Vec<f64> = rows
        .iter()
        .map(|r| r["percentile"].as_f64().unwrap())
        .collect();
    assert_eq!(percentiles, [50.0, 90.0, 99.0, 99.9]);
    let counted: u64 = rows.iter().map(|r| r["samples"].as_u64().unwrap()).sum();
    let total = wakeup["total_samples"].as_u64().unwrap();
    assert!(
        counted <= total && counted * 10 >= total * 9,
        "{counted} of {total}"
    );
    // Merged over both iterations: the table holds every sample the metrics counted.
    let samples: f64 = metric(case, "wakeup_samples_count")["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .sum();
    assert_eq!(total as f64, samples);

    // `show` decodes the stored histograms into the same schbench-style block.
    assert_stdout_contains(
        schedlab(&db).args(words("show 1")),
        &[
            "all iterations' samples merged",
            "Wakeup Latencies percentiles (usec) runtime 1 (s) (",
            "* 99.0th:",
            "RPS percentiles (requests)",
            "min=",
        ],
    );

    // The stored histograms hold the percentiles schbench printed before 2023 too: the rows are
    // those asked for, in order, and still share out every sample the default rows did.
    let shown = json_of_success(
        &db,
        &words("show 1 --format json --percentiles 99.5,75,50,95,99.9,90,99,75"),
    );
    let asked = &shown["runs"][0]["cases"][0]["latency_tables"][0];
    let rows = asked["rows"].as_array().unwrap();
    let percentiles: Vec<f64> = rows
        .iter()
        .map(|r| r["percentile"].as_f64().unwrap())
        .collect();
    assert_eq!(percentiles, [50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9]);
    let values: Vec<f64> = rows.iter().map(|r| r["value"].as_f64().unwrap()).collect();
    assert!(values.windows(2).all(|w| w[0] <= w[1]), "{values:?}");
    let shared: u64 = rows.iter().map(|r| r["samples"].as_u64().unwrap()).sum();
    assert_eq!(shared, counted, "the 99.9th is last in both");
    // Each refusal gives the reason that applies to the value.
    for (bad, why) in [
        ("100", "above 0 and below 100"),
        ("0", "above 0 and below 100"),
        ("99.95", "(99.9, not 99.95)"),
        ("0.04", "(99.9, not 99.95)"),
        ("x", "not a number"),
        ("NaN", "not a number"),
        ("inf", "above 0 and below 100"),
        ("1e999", "above 0 and below 100"),
        ("75,,99", "not a number"),
        ("0.00000001", "0.1 to 99.9"),
        ("99.99999999", "0.1 to 99.9"),
    ] {
        let err = assert_bad_input(&db, &["show", "1", "--percentiles", bad]);
        assert!(
            err.contains("--percentiles") && err.contains(why),
            "{bad}: {err}"
        );
    }
    assert_bad_input(&db, &words("show 1 --percentiles 75 --format csv"));
}

#[test]
fn pipe_mode_reports_transfers() {
    let (_d, db) = temp_db();
    let case = &run_case(&db, &words("schbench -m 2 -t 2 --pipe 4096 -r 1"), "1");
    assert_eq!(case["workload"], "wakeup");
    assert_eq!(case["name"], "wakeup:pipe bytes=4096 m=2 t=2 runtime=1");
    for name in ["ops_per_sec", "worker_ops_per_sec", "mib_per_sec"] {
        let m = metric(case, name);
        assert_eq!(m["better"], "higher");
        assert!(m["values"][0].as_f64().unwrap() > 0.0);
    }
    assert!(!has_metric(case, "request_p50_usec"));
    let tables = case["latency_tables"].as_array().unwrap();
    assert_eq!(tables.len(), 1);
    assert_eq!(tables[0]["rows"][0]["percentile"], 20.0);
}

#[test]
fn open_loop_mode_runs() {
    let (_d, db) = temp_db();
    let case = &run_case(&db, &words("wakeup -t 2 --rps 200 -F 16 -r 1"), "1");
    assert!(case["name"]
        .as_str()
        .unwrap()
        .starts_with("wakeup:rps rate=200 m=1 t=2"));
    assert_eq!(metric(case, "requests_dropped_count")["better"], "lower");
    assert!(first_value(case, "request_samples_count") > 0.0);
}

#[test]
fn list_names_the_workload_and_its_suites() {
    assert_list_names(&["wakeup", "schbench", "schbench-matrix", "vcpu-preempt"]);
}

#[test]
fn bad_input_is_refused_with_exit_code_2() {
    let (_d, db) = temp_db();
    for (line, needle) in [
        // (`-t 0` is schbench's "the default": tests/reference_flags.rs.)
        ("-t 5000", "--workers"),
        ("-m 0", "--message-threads"),
        ("-r 0", "--runtime"),
        ("--pipe 2000000", "--pipe"),
        ("--pipe 4096 -s 50", "no effect with --pipe"),
        ("--pipe 64 --rps 10", "cannot be combined"),
        ("-t 64 -F 4194304", "--cache-footprint"),
        ("--worker-cpus x", "--worker-cpus"),
        ("--message-cpus 100000", "--message-cpus"),
    ] {
        let stderr = assert_bad_input(&db, &words(&format!("run wakeup {line}")));
        assert!(stderr.contains(needle), "{line:?}: {stderr}");
        // Stricter than assert_bad_input's count: not even a blank line follows.
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

#[test]
fn ctrl_c_mid_iteration_joins_every_thread_and_keeps_results() {
    let (_d, db) = temp_db();
    let args = words("run wakeup -m 2 -t 3 -F 16 -r 1 --iterations 100 --warmup 0");
    let mut child = background(&db, &args).start();
    wait_for_a_stored_iteration(&db, &mut child, Duration::from_secs(60));
    // Land inside the next iteration's measured second.
    std::thread::sleep(Duration::from_millis(400));
    let signalled = Instant::now();
    send_signal(&child, libc::SIGINT);
    let (code, stderr) = exit_code_and_stderr(child);
    // A bound on hanging, not a timing: generous for a loaded machine, far below the 100
    // iterations the run would otherwise take.
    assert!(
        signalled.elapsed() < Duration::from_secs(30),
        "took {:?} to stop",
        signalled.elapsed()
    );
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");

    assert_interrupted_in_a_sound_database(&db);
    let attachments: i64 = sql_value(&db, "SELECT count(*) FROM attachments");
    assert!(
        attachments >= 3,
        "each stored iteration keeps its histograms"
    );
}

/// Each metric's declared shape reaches the JSON of `run` and, through the store, of `show`:
/// the latencies as quantiles (with their percentile) and max of their distribution, counts as
/// counts, the rest as scalars.
#[test]
fn metric_shapes_are_stored_and_shown() {
    let (_d, db) = temp_db();
    let ran = json_of_success(
        &db,
        &words("run wakeup -t 2 -r 1 --pipe 64 --iterations 1 --warmup 0 --format json"),
    );
    let shown = show_json(&db, "1");
    for doc in [&ran, &shown] {
        let case = &doc["runs"][0]["cases"][0];
        let p99_9 = metric(case, "wakeup_p99_9_usec");
        assert_eq!(p99_9["shape"], "quantile", "{p99_9}");
        assert_eq!(p99_9["quantile_p"], 99.9);
        assert_eq!(p99_9["distribution"], "wakeup");
        let max = metric(case, "wakeup_max_usec");
        assert_eq!(max["shape"], "max");
        assert_eq!(max["distribution"], "wakeup");
        assert!(max.get("quantile_p").is_none(), "{max}");
        for (name, shape) in [
            ("wakeup_samples_count", "count"),
            ("voluntary_csw_count", "count"),
            ("ops_per_sec", "scalar"),
            ("wall_time_sec", "scalar"),
        ] {
            let m = metric(case, name);
            assert_eq!(m["shape"], shape, "{m}");
            assert!(m.get("distribution").is_none(), "{m}");
        }
    }
}
