//! Daemon arms (`ab --a-daemon/--b-daemon`, `campaign start --a-daemon`): a stand-in daemon that
//! exits in the middle of its arm's run fails that run, recorded failed with what the daemon
//! said, instead of measuring without it; one that stays up is started before each of its arm's
//! runs and stopped after (SIGTERM, its group), leaving no process behind; a scheduler named with
//! `--a-scx` that sched_ext does not show stops the arm before it measures.
mod common;

use std::path::Path;

use common::*;
use predicates::prelude::*;

/// Runs with a label, and their statuses, oldest first.
fn statuses(db: &Path) -> Vec<(String, String)> {
    let runs = json_of_success(db, &words("runs --format json"));
    let mut list: Vec<(String, String)> = runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["label"].as_str().unwrap_or_default().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    list.reverse();
    list
}

#[test]
fn a_daemon_that_exits_mid_arm_fails_the_run_and_is_recorded_failed() {
    let (dir, db) = temp_db();
    let marker = dir.path().to_str().unwrap().to_string();
    // Up long enough to be ready (0.2 s), gone 0.6 s into a run of four 300 ms iterations.
    let daemon = format!(
        "echo {marker} >/dev/null; echo starting; sleep 0.8; \
         echo 'scx_standin: ejected by the kernel'; exit 3"
    );
    let out = schedlab(&db)
        .args(words(
            "ab --a true --daemon-ready 0.2 --rounds 1 --label d -q",
        ))
        .arg("--b-daemon")
        .arg(&daemon)
        .args(words("fake --iterations 4 --warmup 0 --sleep-ms 300"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    for said in [
        "the --b-daemon command",
        "ended (status 3) after the run",
        "it said: scx_standin: ejected by the kernel",
        "stored as run 2",
    ] {
        assert!(stderr.contains(said), "{said:?} in {stderr}");
    }
    // Arm A measured; arm B's run is kept, failed, and out of the comparison.
    assert_eq!(
        statuses(&db),
        [
            ("d-a".to_string(), "complete".to_string()),
            ("d-b".to_string(), "failed".to_string())
        ]
    );
    let shown = show_json(&db, "2");
    let error = shown["runs"][0]["error"].as_str().unwrap_or_default();
    assert!(error.contains("--b-daemon"), "{shown}");
    schedlab(&db)
        .args(words("compare d-a d-b"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "d-b has no complete run (run 2 failed)",
        ));
    assert_no_strays(Path::new(&marker));
}

#[test]
fn a_daemon_is_started_before_each_run_of_its_arm_and_stopped_after() {
    let (dir, db) = temp_db();
    let log = dir.path().join("daemon.log");
    let log = log.to_str().unwrap();
    // SIGTERM reaches the shell and its sleep (one process group): the trap says so.
    let daemon = format!(
        "trap 'echo term >> {log}; exit 0' TERM; echo start >> {log}; \
         while :; do sleep 0.05; done"
    );
    let out = schedlab(&db)
        .args(words(
            "ab --a true --daemon-ready 0.1 --rounds 2 --label s -q",
        ))
        .arg("--b-daemon")
        .arg(&daemon)
        .args(words("fake --iterations 2 --warmup 0"))
        .output()
        .unwrap();
    assert_succeeded(&out, "ab with a daemon");
    // ABBA over 2 rounds: B runs twice, each beside a daemon of its own.
    let said = std::fs::read_to_string(log).unwrap();
    assert_eq!(
        said.split_whitespace().collect::<Vec<_>>(),
        ["start", "term", "start", "term"]
    );
    assert!(statuses(&db).iter().all(|(_, s)| s == "complete"));
    assert_no_strays(dir.path());
}

#[test]
fn a_daemon_that_does_not_come_up_stops_the_arm_before_it_measures() {
    let (_dir, db) = temp_db();
    let out = schedlab(&db)
        .args(words(
            "ab --b true --daemon-ready 0.5 --rounds 1 --label u -q",
        ))
        .arg("--a-daemon")
        .arg("echo 'no such scheduler' >&2; exit 7")
        .args(words("fake --iterations 2 --warmup 0"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("the --a-daemon command")
            && stderr.contains("ended (status 7) while it started")
            && stderr.contains("it said: no such scheduler"),
        "{stderr}"
    );
    assert!(statuses(&db).is_empty(), "nothing measured");
}

#[test]
fn a_scheduler_sched_ext_does_not_show_stops_the_arm() {
    let (dir, db) = temp_db();
    // Arm B names the scheduler: a kernel without sched_ext is refused before arm A measures.
    let out = schedlab(&db)
        .args(words(
            "ab --a true --b-scx rusty --daemon-ready 0.3 --rounds 1 -q",
        ))
        .arg("--b-daemon")
        .arg(format!("echo {}; sleep 30", dir.path().display()))
        .args(words("fake --iterations 2 --warmup 0"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let measured: Vec<String> = statuses(&db).into_iter().map(|(label, _)| label).collect();
    if Path::new("/sys/kernel/sched_ext").exists() {
        // A kernel with sched_ext, and no rusty loaded by `sleep`: arm A, held to the kernel's
        // own scheduler, measured; arm B stopped before it measured.
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("did not load the sched_ext scheduler rusty within 0.3 s"),
            "{stderr}"
        );
        assert!(
            measured.iter().all(|label| label.ends_with("-a")),
            "{measured:?}"
        );
    } else {
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(
                "--b-scx names the sched_ext scheduler rusty, but this kernel has no sched_ext"
            ),
            "{stderr}"
        );
        assert!(measured.is_empty(), "{measured:?}");
    }
    assert_no_strays(dir.path());

    // A scheduler without the daemon that loads it is a usage error.
    schedlab(&db)
        .args(words("ab --a true --b true --a-scx rusty fake"))
        .assert()
        .code(2);
}

#[test]
fn a_campaign_boot_whose_daemon_exits_fails_its_slot() {
    let (dir, db) = temp_db();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap()
        .trim()
        .to_string();
    let marker = dir.path().to_str().unwrap();
    expect_success(
        schedlab(&db)
            .args(words(&format!(
                "campaign start k --a-kernel {kernel} --b-kernel other --boots 4 --daemon-ready 0.2"
            )))
            .arg("--a-daemon")
            .arg(format!("echo {marker} >/dev/null; sleep 0.5; exit 4"))
            .args(words("fake --iterations 4 --warmup 0 --sleep-ms 300")),
    );
    schedlab(&db)
        .args(words("campaign next k -q"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("the --a-daemon command `echo"))
        .stderr(predicate::str::contains("ended (status 4) after the run"));
    assert_eq!(statuses(&db), [("k-a".to_string(), "failed".to_string())]);
    // The slot stays open for the next boot of the kernel.
    assert_stdout_contains(
        schedlab(&db).args(words("campaign status k")),
        &["0 of 4 boots done"],
    );
    assert_no_strays(dir.path());
}
