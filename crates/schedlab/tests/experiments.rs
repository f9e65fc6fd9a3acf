//! End-to-end tests of `schedlab ab` (interleaved settings) and `schedlab campaign` (per-boot
//! kernels): ABBA order, restore on success, failure and Ctrl-C, paired comparison, campaign state.
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use predicates::prelude::*;

mod common;
use common::*;

fn log_command(log: &Path, word: &str) -> String {
    format!("echo {word} >> '{}'", log.display())
}

/// `ab` over `rounds` rounds under `label`, whose settings and restore append A, B and R to
/// `log`: the order they ran in, read back.
fn logging_ab(log: &Path, rounds: &str, label: &str) -> Vec<String> {
    let mut argv = vec!["ab".to_string()];
    for (flag, word) in [("--a", "A"), ("--b", "B"), ("--restore", "R")] {
        argv.extend([flag.to_string(), log_command(log, word)]);
    }
    argv.extend(["--rounds", rounds, "--label", label].map(String::from));
    argv
}

#[test]
fn ab_runs_abba_restores_and_compares_as_pairs() {
    let (dir, db) = temp_db();
    let log = dir.path().join("order.txt");
    let mut ab = schedlab(&db);
    ab.args(logging_ab(&log, "3", "gov"))
        .args(words("fake --iterations 3 --warmup 0"));
    assert_stdout_contains(&mut ab, &["schedlab compare gov-a gov-b"]);
    let order = std::fs::read_to_string(&log)
        .unwrap()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join("");
    assert_eq!(order, "ABBAABR");
    let doc = json_of_success(&db, &words("compare gov-a gov-b --format json"));
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
        .args(AB_OF_NOTHING)
        .args(words("--label gov fake"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
}

/// The hogs whose pids arm B wrote to a file, killed when this is dropped if the file is still
/// there: the restore would have removed it, so a test failing first does not leave them spinning
/// on every CPU. Only a pid that still runs the busy loop is killed, not one reused since.
struct HogsIn(PathBuf);

impl Drop for HogsIn {
    fn drop(&mut self) {
        let Ok(list) = std::fs::read_to_string(&self.0) else {
            return;
        };
        for pid in list
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
        {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            if String::from_utf8_lossy(&cmdline).contains("while :") {
                // SAFETY: kill has no memory effects; the pid runs a hog this test started.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        }
    }
}

/// `ab --until-decided` with a real CPU hog started by arm B on every CPU and stopped by arm A:
/// the rows are decided (marked) before the plan runs out, each row says at which round, and no
/// hog survives the experiment.
#[test]
fn ab_until_decided_stops_once_a_cpu_hog_is_marked() {
    let (dir, db) = temp_db();
    let pids = dir.path().join("hog.pids");
    // After `dir`, so dropped while the file is still there.
    let _hogs = HogsIn(pids.clone());
    // Started once: ABBA visits B twice in a row.
    let start = format!(
        "[ -f '{0}' ] || for c in $(seq 0 $(($(nproc) - 1))); do \
           taskset -c $c sh -c 'while :; do :; done' >/dev/null 2>&1 & echo $! >> '{0}'; done",
        pids.display()
    );
    let stop = format!(
        "if [ -f '{0}' ]; then xargs -r kill < '{0}'; rm -f '{0}'; fi; true",
        pids.display()
    );
    schedlab(&db)
        .args(["ab", "--a", &stop, "--b", &start, "--restore", &stop])
        // Room for a loaded machine, where arm A is noisy too and the hog decides later; a quiet
        // one decides at round 2 or 3.
        .args(words("--until-decided --max-rounds 8 --label hog"))
        .args(words("syscall --threads 2 --calls 200000"))
        .args(words("--iterations 3 --warmup 0"))
        .assert()
        .success()
        .stderr(predicate::str::contains("rows decided"));
    assert!(!pids.exists(), "the restore stopped the hog");
    let doc = json_of_success(&db, &words("compare hog-a hog-b --format json"));
    let sequential = &doc["sequential"];
    assert_eq!(sequential["plan"]["max_rounds"], 8);
    assert_eq!(sequential["plan"]["spending"], "obrien-fleming");
    let rounds = sequential["rounds"].as_u64().unwrap();
    assert!((2..8).contains(&rounds), "stopped early: {sequential}");
    // A round that can judge nothing yet (one pair, no calibration) spends nothing and is no look.
    let looks = sequential["looks"].as_array().unwrap();
    assert!(
        !looks.is_empty() && looks.len() as u64 <= rounds,
        "{sequential}"
    );
    assert_eq!(looks.last().unwrap()["rounds"].as_u64(), Some(rounds));
    let row = find_where(&doc["rows"], "metric", "nsec_per_call");
    assert_eq!(row["verdict"], "regression", "{row}");
    assert_eq!(row["design"], "pairs");
    assert!(row["decided_at_round"].as_u64().unwrap() <= rounds);
}

/// An A/A decided `≈` at an early look: the HTML forest names the level the equivalence test
/// spent there (about 99 %, not the fixed design's 90 %), the level the JSON's `interval_used`
/// carries.
#[test]
fn ab_until_decided_equivalence_is_drawn_at_the_level_its_look_spent() {
    let (dir, db) = temp_db();
    expect_success(schedlab(&db).args(words(
        "ab --a true --b true --until-decided --max-rounds 6 --label eq -q fake --iterations 3 --spread-pct 0.1",
    )));
    let c = json_of_success(&db, &words("compare eq-a eq-b --format json"));
    let used = &c["rows"][0]["interval_used"];
    assert_eq!(used["kind"], "equivalence", "{}", c["rows"][0]);
    let level = used["level"].as_f64().unwrap();
    assert!(level > 0.95, "{level}");
    let page = dir.path().join("eq.html");
    expect_success(
        schedlab(&db)
            .args(words("report eq-a eq-b --html"))
            .arg(&page),
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let shown = format!(
        "TOST's {} interval",
        schedlab_report::compare::phrases::level_text(level)
    );
    assert!(
        html.contains(&shown),
        "no {shown:?} in the forest's caption"
    );
    assert!(!html.contains("TOST's 90%"));
}

#[test]
fn ab_restores_when_a_setting_fails() {
    let (dir, db) = temp_db();
    let log = dir.path().join("order.txt");
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
        .args(words("--label broken fake --iterations 1"))
        .assert()
        .code(1)
        .stderr(predicate::str::contains("--b command"));
    assert_eq!(std::fs::read_to_string(&log).unwrap().trim(), "R");
}

#[test]
fn ab_restores_on_ctrl_c() {
    let (dir, db) = temp_db();
    let log = dir.path().join("order.txt");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("schedlab"))
        .env("SCHEDLAB_DB", &db)
        .args(logging_ab(&log, "50", "slow"))
        .args(words("fake --sleep-ms 200 --iterations 2"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .start();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(&log).map_or(true, |t| !t.contains('B')) {
        assert!(Instant::now() < deadline, "the B visit never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    send_signal(&child, libc::SIGINT);
    let (code, stderr) = finish(child, Duration::from_secs(120));
    assert_eq!(code, Some(130), "{stderr}");
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .trim_end()
        .ends_with('R'));
}

#[test]
fn ab_rejects_bad_input() {
    let (_d, db) = temp_db();
    let ab = |rest: &'static str| [&AB_OF_NOTHING[..], &words(rest)].concat();
    for args in [
        ab("--rounds 0 fake"),
        ab("--no-store fake"),
        words("ab --a true fake"),
        ab(""),
        ab("--until-decided fake"),
        ab("--max-rounds 4 fake"),
        ab("--until-decided --max-rounds 4 --rounds 2 fake"),
        ab("--until-decided --max-rounds 0 fake"),
    ] {
        assert_bad_input(&db, &args);
    }
}

#[test]
fn campaign_runs_the_slot_of_the_running_kernel_once_per_boot() {
    let (_d, db) = temp_db();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .unwrap()
        .trim()
        .to_string();
    schedlab(&db)
        .args(words(&format!(
            "campaign start k --a-kernel {kernel} --b-kernel other-kernel --boots 4 \
             fake --iterations 2"
        )))
        .assert()
        .success();
    assert_stdout_contains(
        schedlab(&db).args(words("campaign next k")),
        &["next: boot kernel other-kernel"],
    );
    // The same boot cannot take the next slot, and nothing reboots.
    schedlab(&db)
        .args(words("campaign next k"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already ran slot 1"));
    assert_stdout_contains(
        schedlab(&db).args(words("campaign status k")),
        &["1 of 4 boots done", "pending (kernel other-kernel)"],
    );
    schedlab(&db).args(words("show k-a")).assert().success();

    // Without a name: every campaign in a line, newest first.
    schedlab(&db)
        .args(words(
            "campaign start j --a-kernel x --b-kernel y --boots 4 fake",
        ))
        .assert()
        .success();
    let listed = stdout_of_success(&db, &words("campaign status"));
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(
        lines[0].starts_with("campaign j · running · 0 of 4 boots done · A = x"),
        "{listed}"
    );
    assert!(
        lines[1].starts_with("campaign k · running · 1 of 4 boots done"),
        "{listed}"
    );
    let (_d, empty) = temp_db();
    stdout_of_success(&empty, &words("run fake --iterations 1 -q"));
    assert_stdout_contains(
        schedlab(&empty).args(words("campaign status")),
        &["no campaigns stored"],
    );
}

#[test]
fn campaign_rejects_bad_plans() {
    let (_d, db) = temp_db();
    for args in [
        campaign_start("x", "y", &words("--boots 3 fake")),
        campaign_start("x", "x", &["fake"]),
        words("campaign next nope"),
        words("campaign status nope"),
    ] {
        assert_bad_input(&db, &args);
    }
    // The name and both releases are checked, each error naming what it is about; nothing is
    // stored.
    stdout_of_success(&db, &words("run fake --iterations 1 -q"));
    let long = "n".repeat(199);
    for (args, expected) in [
        (
            campaign_start_named("", "x", "y", &["fake"]),
            "schedlab: the campaign name must be printable text",
        ),
        (
            campaign_start_named("a\tb", "x", "y", &["fake"]),
            "schedlab: the campaign name must be printable text",
        ),
        (
            campaign_start_named(&long, "x", "y", &["fake"]),
            "schedlab: the campaign name is longer than 198 characters",
        ),
        (
            campaign_start("", "y", &["fake"]),
            "schedlab: --a-kernel must be printable text",
        ),
        (
            campaign_start("x", "x\ny", &["fake"]),
            "schedlab: --b-kernel must be printable text",
        ),
        (
            campaign_start("x", " ", &["fake"]),
            "schedlab: --b-kernel must be printable text",
        ),
    ] {
        let err = assert_bad_input(&db, &args);
        assert!(err.starts_with(expected), "{args:?}: {err}");
    }
    let listed = stdout_of_success(&db, &words("campaign status"));
    assert!(listed.contains("no campaigns stored"), "{listed}");
}
