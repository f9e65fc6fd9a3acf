//! `timer-latency` through the binary, as root (CI runs as root): it runs with real SCHED_FIFO
//! threads and reports ordered latencies; a priority out of range and a real-time policy without
//! CAP_SYS_NICE (dropped with util-linux's `setpriv`) are one line and exit code 2 before anything
//! runs; Ctrl-C in the middle of a long iteration ends the run at once, the timer threads with it.
use std::process::Command as StdCommand;
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::*;

fn run_case(args: &[&str]) -> Value {
    let (_d, db) = temp_db();
    let once = words("--iterations 1 --warmup 0 --no-store --format json");
    json_of_success(&db, &[&["run", "timer-latency"], args, &once].concat())["runs"][0]["cases"][0]
        .clone()
}

#[test]
fn fifo_timer_threads_report_ordered_latencies() {
    for line in [
        "--loops 300 --interval 500",
        "--loops 100 --policy other -t 2",
    ] {
        let case = run_case(&words(line));
        let at = |name| first_value(&case, name);
        let (min, p50, p99, max) = (
            at("latency_min_usec"),
            at("latency_p50_usec"),
            at("latency_p99_usec"),
            at("latency_max_usec"),
        );
        assert!(min > 0.0 && min <= p50, "{line}: {case}");
        assert!(
            p50 <= p99 && p99 <= at("latency_p99_9_usec"),
            "{line}: {case}"
        );
        // Quantiles are the tops of their histogram buckets (3 significant digits); the max exact.
        assert!(at("latency_p99_9_usec") <= max * 1.001, "{line}: {case}");
        assert!(at("overruns_count") >= 0.0);
        assert!(has_metric(&case, "worst_thread_p99_usec"));
    }
}

#[test]
fn bad_settings_are_refused_in_one_line() {
    let (_d, db) = temp_db();
    assert_each_bad_input(
        &db,
        &[
            "run timer-latency --priority 100",
            "run timer-latency --priority 0",
            "run timer-latency --policy other --priority 50",
            "run timer-latency --policy deadline",
            "run timer-latency --interval 5",
            "run timer-latency --cpus 99999",
        ],
    );
}

/// Without CAP_SYS_NICE (and with root's RLIMIT_RTPRIO of 0) SCHED_FIFO is not allowed: the run is
/// refused before it starts, and nothing is stored.
#[test]
fn a_realtime_policy_without_the_privilege_is_refused_before_anything_runs() {
    let (_d, db) = temp_db();
    let out = StdCommand::new("setpriv")
        .args(["--inh-caps=-sys_nice", "--bounding-set=-sys_nice"])
        .arg(assert_cmd::cargo::cargo_bin("schedlab"))
        .args(words(
            "run timer-latency --loops 10 --iterations 1 --warmup 0 --db",
        ))
        .arg(&db)
        .env_remove("SCHEDLAB_DB")
        .output()
        .expect("setpriv (util-linux) runs");
    let err = assert_refused(&out, "run timer-latency without CAP_SYS_NICE");
    assert!(
        err.contains("timer-latency: SCHED_FIFO 99 is not allowed to this process"),
        "{err}"
    );
    assert!(err.contains("CAP_SYS_NICE"), "{err}");
    assert!(stored_iterations(&db) == 0 && !db.exists(), "nothing ran");
    // The same without the real-time policy runs.
    let out = StdCommand::new("setpriv")
        .args(["--inh-caps=-sys_nice", "--bounding-set=-sys_nice"])
        .arg(assert_cmd::cargo::cargo_bin("schedlab"))
        .args(words(
            "run timer-latency --policy other --loops 10 --iterations 1 --warmup 0 --no-store --db",
        ))
        .arg(&db)
        .env_remove("SCHEDLAB_DB")
        .output()
        .unwrap();
    assert_succeeded(&out, "timer-latency --policy other without CAP_SYS_NICE");
}

/// Ctrl-C in a 20-second iteration: the threads see the stop at their next wake (an interval at
/// most), so the run ends within seconds, interrupted, its process and threads gone.
#[test]
fn ctrl_c_ends_a_long_iteration_at_once() {
    let (_d, db) = temp_db();
    let child = background(
        &db,
        &words("run timer-latency --interval 200000 --loops 100 --iterations 1 --warmup 0 --quiet"),
    )
    .start();
    // Long enough for the threads to be asleep in the timed loop.
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Instant::now();
    send_signal(&child, libc::SIGINT);
    let (code, stderr) = finish(child, Duration::from_secs(30));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(stderr.contains("interrupted by SIGINT"), "{stderr}");
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "took {:?}",
        sent.elapsed()
    );
    assert_no_strays(&db);
    assert_interrupted_in_a_sound_database(&db);
}
