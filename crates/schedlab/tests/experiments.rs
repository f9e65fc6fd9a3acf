//! End-to-end tests of `schedlab ab` (interleaved settings) and `schedlab campaign` (per-boot
//! kernels): ABBA order, restore on success, failure and Ctrl-C, paired comparison, campaign state.
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use predicates::prelude::*;

mod common;
use common::*;

fn log_command(log: &Path, word: &str) -> String {
    format!("echo {word} >> '{}'", log.display())
}

#[test]
fn ab_runs_abba_restores_and_compares_as_pairs() {
    let dir = tempfile::tempdir().unwrap();
    let (db, log) = (dir.path().join("r.db"), dir.path().join("order.txt"));
    schedlab(&db)
        .args([
            "ab",
            "--a",
            &log_command(&log, "A"),
            "--b",
            &log_command(&log, "B"),
        ])
        .args([
            "--restore",
            &log_command(&log, "R"),
            "--rounds",
            "3",
            "--label",
            "gov",
        ])
        .args(["fake", "--iterations", "3", "--warmup", "0"])
        .assert()
        .success()
        .stdout(predicate::str::contains("schedlab compare gov-a gov-b"));
    let order = std::fs::read_to_string(&log)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("");
    assert_eq!(order, "ABBAABR");
    let json = schedlab(&db)
        .args(["compare", "gov-a", "gov-b", "--format", "json"])
        .output()
        .unwrap();
    assert!(
        json.status.success(),
        "{}",
        String::from_utf8_lossy(&json.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(doc["rows"][0]["design"], "pairs");
    assert_eq!(
        doc["rows"][0]["base_side"]["units"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    // A name is taken once.
    schedlab(&db)
        .args(["ab", "--a", "true", "--b", "true", "--label", "gov", "fake"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
}

#[test]
fn ab_restores_when_a_setting_fails() {
    let dir = tempfile::tempdir().unwrap();
    let (db, log) = (dir.path().join("r.db"), dir.path().join("order.txt"));
    schedlab(&db)
        .args([
            "ab",
            "--a",
            "true",
            "--b",
            "exit 3",
            "--restore",
            &log_command(&log, "R"),
        ])
        .args(["--label", "broken", "fake", "--iterations", "1"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--b command"));
    assert_eq!(std::fs::read_to_string(&log).unwrap().trim(), "R");
}

#[test]
fn ab_restores_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let (db, log) = (dir.path().join("r.db"), dir.path().join("order.txt"));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("schedlab"))
        .env("SCHEDLAB_DB", &db)
        .args([
            "ab",
            "--a",
            &log_command(&log, "A"),
            "--b",
            &log_command(&log, "B"),
        ])
        .args([
            "--restore",
            &log_command(&log, "R"),
            "--rounds",
            "50",
            "--label",
            "slow",
        ])
        .args(["fake", "--sleep-ms", "200", "--iterations", "2"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(&log).map_or(true, |t| !t.contains('B')) {
        assert!(Instant::now() < deadline, "the B visit never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .trim_end()
        .ends_with('R'));
}

#[test]
fn ab_rejects_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for args in [
        vec!["ab", "--a", "true", "--b", "true", "--rounds", "0", "fake"],
        vec!["ab", "--a", "true", "--b", "true", "--no-store", "fake"],
        vec!["ab", "--a", "true", "fake"],
        vec!["ab", "--a", "true", "--b", "true"],
    ] {
        let out = schedlab(&db).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr)
                .trim_end()
                .lines()
                .count(),
            1,
            "{args:?}"
        );
    }
}

#[test]
fn campaign_runs_the_slot_of_the_running_kernel_once_per_boot() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap()
        .trim()
        .to_string();
    schedlab(&db)
        .args([
            "campaign",
            "start",
            "k",
            "--a-kernel",
            &kernel,
            "--b-kernel",
            "other-kernel",
            "--boots",
            "4",
        ])
        .args(["fake", "--iterations", "2"])
        .assert()
        .success();
    schedlab(&db)
        .args(["campaign", "next", "k"])
        .assert()
        .success()
        .stdout(predicate::str::contains("next: boot kernel other-kernel"));
    // The same boot cannot take the next slot, and nothing reboots.
    schedlab(&db)
        .args(["campaign", "next", "k"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already ran slot 1"));
    schedlab(&db)
        .args(["campaign", "status", "k"])
        .assert()
        .success()
        .stdout(predicate::str::contains("1 of 4 boots done"))
        .stdout(predicate::str::contains("pending (kernel other-kernel)"));
    schedlab(&db).args(["show", "k-a"]).assert().success();
}

#[test]
fn campaign_rejects_bad_plans() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for args in [
        vec![
            "campaign",
            "start",
            "c",
            "--a-kernel",
            "x",
            "--b-kernel",
            "y",
            "--boots",
            "3",
            "fake",
        ],
        vec![
            "campaign",
            "start",
            "c",
            "--a-kernel",
            "x",
            "--b-kernel",
            "x",
            "fake",
        ],
        vec!["campaign", "next", "nope"],
        vec!["campaign", "status", "nope"],
    ] {
        let out = schedlab(&db).args(&args).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
